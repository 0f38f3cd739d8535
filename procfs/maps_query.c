/* SPDX-License-Identifier: MIT */
/*
 * /proc/PID/maps through PROCMAP_QUERY (Linux 6.11): one mapping an ioctl,
 * in binary, with no text to print and parse, and a path only where it is
 * not known yet (names.c), belongs to no file (an anonymous mapping's,
 * [heap] or [anon:NAME], costs the kernel no d_path) or says what a shmem
 * object is (keeps_path).  What it gives is
 * what procfs_maps_read gives, but [vsyscall] (not a VMA of the process)
 * and the paths of known objects, which are the first ones read.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/sysmacros.h>

#include "image.h"
#include "procfs_internal.h"

/* The mapping at or after addr (covering: at addr only), with its path
 * into name (cap bytes) when cap: 0, -ENOENT past the last one, or the
 * ioctl's -errno. */
static int query(int fd, uint64_t addr, bool covering, char *name,
		 size_t cap, struct procmap_query *q)
{
	*q = (struct procmap_query){
		.size = sizeof(*q),
		.query_flags = covering ? 0 : PROCMAP_QUERY_COVERING_OR_NEXT_VMA,
		.query_addr = addr,
		.vma_name_size = (uint32_t)cap,
		.vma_name_addr = (uint64_t)(uintptr_t)name,
	};
	return ioctl(fd, PROCMAP_QUERY, q) ? -errno : 0;
}

static void vma_of(const struct procmap_query *q, struct procfs_vma *v)
{
	*v = (struct procfs_vma){
		.start = q->vma_start,
		.end = q->vma_end,
		.offset = q->vma_offset,
		.dev = makedev(q->dev_major, q->dev_minor),
		.ino = q->inode,
		.shared = q->vma_flags & PROCMAP_QUERY_VMA_SHARED,
		.path = "",
	};
	if (q->vma_flags & PROCMAP_QUERY_VMA_READABLE)
		v->prot |= MM_PROT_READ;
	if (q->vma_flags & PROCMAP_QUERY_VMA_WRITABLE)
		v->prot |= MM_PROT_WRITE;
	if (q->vma_flags & PROCMAP_QUERY_VMA_EXECUTABLE)
		v->prot |= MM_PROT_EXEC;
}

/*
 * Whether v's path is kept for the next readings: a file's on a device
 * that fs does not list.  On a tmpfs or hugetlbfs one, and on the kernel's
 * internal mounts (SysV segments, memfds, shared anonymous memory), the
 * path says what the object is, and an inode number comes back for
 * another object (a SysV segment's is its shmid): asked every time.
 */
static bool keeps_path(const struct procfs_vma *v,
		       const struct procfs_fs_table *fs)
{
	return v->ino && fs && !procfs_fs_find(fs, v->dev);
}

/*
 * v's path, asked again with the name (the mapping is read again: the
 * process may have changed it since).  One kept goes into names; another
 * ([heap], [anon:NAME], none, a shmem object's) after the maps' text so
 * far (*at: where).  -ENOENT when no mapping covers v's start any more:
 * it is left out.
 */
static int name_vma(int fd, const struct procfs_fs_table *fs,
		    struct procfs_names *names, struct procfs_maps *out,
		    struct procfs_vma *v, size_t *at)
{
	char name[PATH_MAX + sizeof(" (deleted)")];
	struct procmap_query q;
	int err = query(fd, v->start, true, name, sizeof(name), &q);
	if (err == -ENAMETOOLONG)
		err = query(fd, v->start, true, NULL, 0, &q);
	if (err)
		return err;
	vma_of(&q, v);
	size_t len = q.vma_name_size ? q.vma_name_size - 1 : 0;
	name[len] = '\0';
	bool deleted = procfs_path_cut_deleted(name, &len);
	if (keeps_path(v, fs)) {
		const struct procfs_name *e =
			procfs_names_add(names, v->dev, v->ino, name, deleted);
		if (!e)
			return -ENOMEM;
		v->path = e->path;
		v->deleted = e->deleted;
		return 0;
	}
	struct procfs_text *t = &out->text;
	v->deleted = deleted;
	if (grow_array((void **)&t->data, &t->cap, t->len + len + 1, 1))
		return -ENOMEM;
	memcpy(t->data + t->len, name, len + 1);
	*at = t->len;
	t->len += len + 1;
	return 0;
}

static int query_all(int fd, const struct procfs_fs_table *fs,
		     struct procfs_names *names, struct procfs_maps *out)
{
	size_t *at = NULL, cap_at = 0; /* where the text's paths are */
	uint64_t addr = 0;
	int err;
	out->n = 0;
	out->has_smaps = false;
	out->text.len = 0;
	for (;;) {
		struct procmap_query q;
		if ((err = query(fd, addr, false, NULL, 0, &q)))
			break;
		if (grow_array((void **)&out->vmas, &out->cap, out->n + 1,
			       sizeof(*out->vmas)) ||
		    grow_array((void **)&at, &cap_at, out->n + 1, sizeof(*at))) {
			err = -ENOMEM;
			break;
		}
		struct procfs_vma *v = &out->vmas[out->n];
		const struct procfs_name *e;
		vma_of(&q, v);
		addr = q.vma_end;
		at[out->n] = SIZE_MAX;
		if (keeps_path(v, fs) &&
		    (e = procfs_names_find(names, v->dev, v->ino))) {
			v->path = e->path;
			v->deleted = e->deleted;
		} else if ((err = name_vma(fd, fs, names, out, v, &at[out->n]))) {
			if (err != -ENOENT)
				break;
			err = 0;
			continue;
		}
		addr = v->end;
		out->n++;
	}
	for (size_t i = 0; i < out->n; i++) {
		if (at[i] != SIZE_MAX)
			out->vmas[i].path = out->text.data + at[i];
		procfs_classify(&out->vmas[i], fs);
	}
	free(at);
	return err == -ENOENT ? 0 : err;
}

int procfs_maps_query(int pid, const struct procfs_fs_table *fs,
		      struct procfs_names *names, struct procfs_maps *out)
{
	int fd = procfs_open(pid, "maps");
	if (fd < 0)
		return fd;
	procfs_names_trim(names);
	int err = query_all(fd, fs, names, out);
	close(fd);
	if (!err && !procfs_maps_ordered(out))
		err = -EAGAIN;
	if (err)
		out->n = 0;
	return err;
}
