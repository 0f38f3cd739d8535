/* SPDX-License-Identifier: MIT */
/*
 * Which devices hold shmem and hugetlb files.  A mapping's device number is
 * the cheapest reliable way to tell a tmpfs or hugetlbfs file from an ordinary
 * one: maps already carries it, and the table is built once per mount
 * namespace.  smaps says it per mapping too (KernelPageSize, "ht"), but costs
 * a walk of every page table (docs/procfs.md has the figures).
 */
#define _GNU_SOURCE /* memfd_create */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "procfs_internal.h"

#ifndef MFD_HUGE_SHIFT
#define MFD_HUGE_SHIFT 26
#endif

static int fs_add(struct procfs_fs_table *t, uint64_t dev,
		  enum mm_obj_kind kind, uint32_t huge_shift)
{
	if (grow_array((void **)&t->fs, &t->cap, t->n + 1, sizeof(*t->fs)))
		return -ENOMEM;
	t->fs[t->n++] = (struct procfs_fs){ dev, kind, huge_shift };
	return 0;
}

static int cmp_dev(const void *a, const void *b)
{
	uint64_t x = ((const struct procfs_fs *)a)->dev;
	uint64_t y = ((const struct procfs_fs *)b)->dev;

	return (x > y) - (x < y);
}

/* Sorted by device, each once, for procfs_fs_find(). */
static void fs_sort(struct procfs_fs_table *t)
{
	size_t n = 0;

	if (!t->n)
		return;
	qsort(t->fs, t->n, sizeof(*t->fs), cmp_dev);
	for (size_t i = 1; i < t->n; i++)
		if (t->fs[i].dev != t->fs[n].dev)
			t->fs[++n] = t->fs[i];
	t->n = n + 1;
}

const struct procfs_fs *procfs_fs_find(const struct procfs_fs_table *t,
				       uint64_t dev)
{
	struct procfs_fs key = { .dev = dev };

	if (!t || !t->n)
		return NULL;
	return bsearch(&key, t->fs, t->n, sizeof(*t->fs), cmp_dev);
}

/* Splits off the next space-separated field of a mountinfo line. */
static bool next_field(struct procfs_cursor *line, struct procfs_cursor *field)
{
	procfs_skip_blanks(line);
	if (line->p == line->end)
		return false;
	field->p = line->p;
	while (line->p < line->end && *line->p != ' ')
		line->p++;
	field->end = line->p;
	return true;
}

static bool field_is(const struct procfs_cursor *f, const char *s)
{
	size_t n = strlen(s);

	return (size_t)(f->end - f->p) == n && !memcmp(f->p, s, n);
}

/* "pagesize=2M" among the super options, as a shift; 0 if absent. */
static uint32_t option_page_shift(struct procfs_cursor opts)
{
	static const char key[] = "pagesize=";

	while (opts.p < opts.end) {
		const char *comma = memchr(opts.p, ',', (size_t)(opts.end - opts.p));
		struct procfs_cursor o = { opts.p, comma ? comma : opts.end };
		opts.p = comma ? comma + 1 : opts.end;
		uint64_t v;

		if ((size_t)(o.end - o.p) <= sizeof(key) - 1 ||
		    memcmp(o.p, key, sizeof(key) - 1))
			continue;
		o.p += sizeof(key) - 1;
		if (!procfs_parse_dec(&o, &v))
			return 0;
		if (procfs_parse_char(&o, 'K'))
			v <<= 10;
		else if (procfs_parse_char(&o, 'M'))
			v <<= 20;
		else if (procfs_parse_char(&o, 'G'))
			v <<= 30;
		return o.p == o.end ? procfs_log2(v) : 0;
	}
	return 0;
}

/*
 * "36 35 0:23 / /dev/shm rw,relatime shared:5 - tmpfs tmpfs rw,size=..."
 * Paths are octal-escaped, so fields never contain spaces.
 */
static int mountinfo_line(struct procfs_cursor line, struct procfs_fs_table *t)
{
	struct procfs_cursor f, devf, type, opts;
	uint64_t major, minor;

	if (!next_field(&line, &f) || !next_field(&line, &f) ||
	    !next_field(&line, &devf))
		return -EPROTO;
	if (!procfs_parse_dec(&devf, &major) || !procfs_parse_char(&devf, ':') ||
	    !procfs_parse_dec(&devf, &minor) || devf.p != devf.end)
		return -EPROTO;
	do {	/* root, mount point, options, optional fields up to "-" */
		if (!next_field(&line, &f))
			return -EPROTO;
	} while (!field_is(&f, "-"));
	if (!next_field(&line, &type) || !next_field(&line, &f) ||
	    !next_field(&line, &opts))
		return -EPROTO;

	uint64_t dev = makedev(major, minor);
	if (field_is(&type, "tmpfs"))
		return fs_add(t, dev, MM_OBJ_SHMEM, 0);
	if (field_is(&type, "hugetlbfs")) {
		uint32_t shift = option_page_shift(opts);
		return shift ? fs_add(t, dev, MM_OBJ_HUGETLB, shift) : -EPROTO;
	}
	return 0;
}

static int mountinfo_parse(const char *text, size_t len,
			   struct procfs_fs_table *t)
{
	const char *pos = text;
	struct procfs_cursor line;

	while (procfs_next_line(&pos, text + len, &line)) {
		int err = mountinfo_line(line, t);
		if (err)
			return err;
	}
	return 0;
}

int procfs_fs_table_parse(const char *text, size_t len,
			  struct procfs_fs_table *out)
{
	out->n = 0;
	int err = mountinfo_parse(text, len, out);
	fs_sort(out);
	return err;
}

/*
 * The device of the kernel-internal mount a new memfd lands on.  A memfd we
 * may not make (no huge pages of that size, a seccomp filter) leaves the
 * table without it: not an error, the names still tell shmem apart, and
 * smaps still tells hugetlb.
 */
static int probe_memfd(struct procfs_fs_table *t, unsigned flags,
		       enum mm_obj_kind kind, uint32_t huge_shift)
{
	struct stat st;
	int fd = memfd_create("ptshare-probe", MFD_CLOEXEC | flags);

	if (fd < 0)
		return 0;
	int err = fstat(fd, &st) ? 0 : fs_add(t, st.st_dev, kind, huge_shift);
	close(fd);
	return err;
}

/*
 * memfds, SysV segments and shared anonymous memory live on internal mounts
 * that no mountinfo lists: shm_mnt for shmem, one hugetlbfs mount per huge
 * page size (shared by MFD_HUGETLB memfds and SHM_HUGETLB segments).  Their
 * devices are global, so a memfd of our own finds them.
 */
static int probe_internal_mounts(struct procfs_fs_table *t)
{
	int err = probe_memfd(t, 0, MM_OBJ_SHMEM, 0);
	DIR *d = opendir("/sys/kernel/mm/hugepages");
	struct dirent *e;

	if (!d)	/* no hugetlb in this kernel */
		return err;
	while (!err && (e = readdir(d))) {
		unsigned long kb;
		if (sscanf(e->d_name, "hugepages-%lukB", &kb) != 1)
			continue;
		uint32_t shift = procfs_log2((uint64_t)kb << 10);
		err = probe_memfd(t, MFD_HUGETLB | (shift << MFD_HUGE_SHIFT),
				  MM_OBJ_HUGETLB, shift);
	}
	closedir(d);
	return err;
}

int procfs_fs_table_read(int pid, struct procfs_fs_table *out)
{
	struct procfs_text t = { 0 };
	int err = procfs_read_file(pid, "mountinfo", &t, false);

	out->n = 0;
	if (!err)
		err = mountinfo_parse(t.data, t.len, out);
	if (!err)
		err = probe_internal_mounts(out);
	free(t.data);
	fs_sort(out);
	return err;
}

void procfs_fs_table_free(struct procfs_fs_table *t)
{
	free(t->fs);
	*t = (struct procfs_fs_table){ 0 };
}
