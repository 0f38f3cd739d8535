/* SPDX-License-Identifier: MIT */
#include "image.h"
#include "procfs_internal.h"
#include "lib/grow.h"
#include "lib/ptr_map.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define READ_TRIES 3

/* A mapping whose scan asks which pages are page cache: a private file
 * one, whose anonymous pages are its copied-on-write ones, and a small one
 * between them.  The question costs the kernel about 3 times more a
 * populated page, so big anonymous and shared mappings (every page of
 * either is what its mapping says) are scanned without it. */
#define FILE_SCAN_SMALL (1u << 20)

static bool scan_asks_file(const struct procfs_vma *v)
{
	return (!v->shared && v->kind != MM_OBJ_ANON) ||
	       v->end - v->start <= FILE_SCAN_SMALL;
}

/*
 * The populated runs of the n mappings v, in one PAGEMAP_SCAN for each
 * stretch of them that asks the same (the gaps between cost nothing), or
 * without the ioctl (before Linux 6.7) from the pagemap entries of each
 * mapping, not of the gaps.  An ioctl per mapping took a Python process
 * of 235 mappings 1,012 us to read here, stretches 668 us
 * (docs/procfs.md).
 */
static int scan_all(int fd, const struct procfs_vma *v, size_t n,
		    struct procfs_runs *all)
{
	struct procfs_runs part = { 0 };
	bool each = false;
	int r = 0;
	all->n = 0;
	for (size_t i = 0, j; i < n && !r; i = j) {
		bool file = scan_asks_file(&v[i]);
		for (j = i + 1; !each && j < n && scan_asks_file(&v[j]) == file; j++)
			;
		r = procfs_scan(fd, v[i].start, v[j - 1].end,
				(file ? 0 : PROCFS_SCAN_NO_FILE) |
					(each ? 0 : PROCFS_SCAN_IOCTL),
				&part);
		if (r == -ENOTTY && !each) {
			each = true; /* again from v[i], one mapping at a time */
			r = 0;
			j = i;
		}
		for (size_t k = 0; k < part.n && !r; k++)
			r = procfs_runs_append(all, part.runs[k].start,
					       part.runs[k].end, part.runs[k].huge,
					       part.pages[k]);
	}
	procfs_runs_free(&part);
	return r;
}

/* The runs of every mapping, cut at the mappings' bounds: a page is
 * anonymous or not by its mapping (in private anonymous memory every page
 * but the zero page is; in shared memory none is). */
static int scan_mappings(int fd, struct procfs_image *img)
{
	const struct procfs_vma *v = img->maps.vmas;
	size_t n = img->maps.n;
	img->nruns = 0;
	while (n && v[n - 1].end > MM_TASK_SIZE)
		n--; /* [vsyscall] */
	struct procfs_runs all = { 0 };
	int r = scan_all(fd, v, n, &all);
	for (size_t i = 0, k = 0; i < n && !r; i++) {
		bool priv_file = !v[i].shared && v[i].kind != MM_OBJ_ANON;
		uint8_t not_anon = priv_file ? PROCFS_PAGE_FILE | PROCFS_PAGE_ZERO
					     : PROCFS_PAGE_ZERO;
		while (k < all.n && all.runs[k].end <= v[i].start)
			k++;
		for (size_t j = k; j < all.n && all.runs[j].start < v[i].end && !r;
		     j++) {
			struct mm_run m = all.runs[j];
			m.start = m.start > v[i].start ? m.start : v[i].start;
			m.end = m.end < v[i].end ? m.end : v[i].end;
			m.anon = !v[i].shared && !(all.pages[j] & not_anon);
			r = procfs_image_add_run(fd, img, &m);
		}
	}
	procfs_runs_free(&all);
	return r;
}

/* status through fd from its start: read again, the kernel prints it
 * anew.  A second open of the file cost as much as its printing. */
static int status_at(int fd, struct procfs_text *t, struct procfs_status *st)
{
	if (lseek(fd, 0, SEEK_SET) < 0)
		return -errno;
	int r = procfs_read_fd(fd, t, false);
	return r ? r : procfs_status_parse(t->data, t->len, st);
}

/* Through PROCMAP_QUERY when the caller keeps the objects' paths (it
 * chooses: daemon/readings.c), unless the kernel has none (before 6.11). */
static int maps_read(int pid, const struct procfs_fs_table *fs,
		     struct procfs_image *img)
{
	static bool no_query;
	if (img->names && !no_query) {
		int r = procfs_maps_query(pid, fs, img->names, &img->maps);
		if (r != -ENOTTY && r != -EINVAL)
			return r;
		no_query = true; /* before Linux 6.11 */
	}
	return procfs_maps_read(pid, fs, 0, &img->maps);
}

/*
 * The mark of a process at rest (procfs_image.rest): its status's, and
 * how long it has run.  status cannot tell a task it caught on its way to
 * sleep (S already, still on its CPU), woken before it switched out, from
 * one that slept, nor count the switches of one that never switched out
 * again; its run time moves whenever it ran.  0: it does not rest.
 */
static uint64_t rest_mark(int pid, const struct procfs_status *st)
{
	uint64_t ns;
	if (!st->rest || procfs_runtime_ns(pid, &ns))
		return 0;
	return ptr_map_hash(st->rest ^ ptr_map_hash(ns)) | 1; /* never 0 */
}

/* status, the mappings, their pages, and status again through the same
 * fd: VmPTE unmoved across the reading makes it stable, and the mark
 * unmoved says the process did not run meanwhile.  A process still at
 * rest since its last reading (the mark it came with) is not read
 * further: an idle one costs its status and run time (docs/procfs.md). */
static int read_with(int pid, int status_fd, struct procfs_text *t,
		     const struct procfs_fs_table *fs, struct procfs_image *img)
{
	int r = status_at(status_fd, t, &img->status);
	if (r)
		return r;
	if (!img->status.has_mm)
		return -ENODATA;
	uint64_t mark = img->rest || !img->last ? rest_mark(pid, &img->status)
						 : 0;
	img->at_rest = img->rest && mark == img->rest;
	if (img->at_rest) {
		img->stable = true;
		return 0;
	}
	if ((r = maps_read(pid, fs, img)))
		return r;
	int fd = procfs_pagemap_open(pid);
	if (fd < 0)
		return fd;
	r = scan_mappings(fd, img);
	close(fd);
	if (r < 0)
		return r;
	struct procfs_status after;
	if ((r = status_at(status_fd, t, &after)))
		return r;
	if (!after.has_mm)
		return -ESRCH;
	img->stable = after.vmpte_kb == img->status.vmpte_kb;
	img->rest = mark && after.rest == img->status.rest &&
			    rest_mark(pid, &after) == mark
		    ? mark : 0;
	return 0;
}

static int read_once(int pid, const struct procfs_fs_table *fs,
		     struct procfs_image *img)
{
	struct procfs_text t = { 0 };
	int fd = procfs_open(pid, "status");
	if (fd < 0)
		return fd;
	int r = read_with(pid, fd, &t, fs, img);
	close(fd);
	free(t.data);
	return r;
}

int procfs_image_read(int pid, const struct procfs_fs_table *fs,
		      struct procfs_image *img)
{
	uint64_t rest = img->rest;
	int r;
	for (int i = 0; i < READ_TRIES; i++) {
		img->rest = rest;
		r = read_once(pid, fs, img);
		if (r == -EAGAIN) /* its maps changed while read */
			continue;
		if (r || img->stable)
			break;
	}
	if (r)
		img->rest = 0;
	return r;
}

void procfs_image_free(struct procfs_image *img)
{
	procfs_maps_free(&img->maps);
	free(img->runs);
	img->runs = NULL;
	img->nruns = img->cap_runs = 0;
}

const struct procfs_fs_table *procfs_fs_cache_get(struct procfs_fs_cache *c,
						  int pid)
{
	char path[64], ns[64] = "self";
	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", pid);
	ssize_t n = readlink(path, ns, sizeof(ns) - 1);
	ns[n > 0 ? n : 4] = '\0';
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->e[i].ns, ns))
			return &c->e[i].fs;
	size_t i = c->n < PROCFS_FS_CACHE_SIZE ? c->n++ : PROCFS_FS_CACHE_SIZE - 1;
	procfs_fs_table_free(&c->e[i].fs);
	snprintf(c->e[i].ns, sizeof(c->e[i].ns), "%s", ns);
	if (procfs_fs_table_read(n > 0 ? pid : getpid(), &c->e[i].fs) < 0)
		procfs_fs_table_free(&c->e[i].fs); /* names alone then */
	return &c->e[i].fs;
}

void procfs_fs_cache_free(struct procfs_fs_cache *c)
{
	for (size_t i = 0; i < c->n; i++)
		procfs_fs_table_free(&c->e[i].fs);
	c->n = 0;
}
