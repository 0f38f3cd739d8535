/* SPDX-License-Identifier: MIT */
/* A live process as /proc shows it, read consistently: its status, its
 * mappings, its populated pages (the daemon's readings, ptshare snapshot). */
#ifndef PTSHARE_PROCFS_IMAGE_H
#define PTSHARE_PROCFS_IMAGE_H

#include "ptshare/procfs.h"
#include "ptshare/mm.h"

struct procfs_image {
	struct procfs_status status;
	struct procfs_maps maps;
	/* Populated pages, mapping by mapping; anon set where they are
	 * anonymous pages of a private mapping, written where of those the
	 * process maps alone (exclusive.c). */
	struct mm_run *runs;
	size_t nruns, cap_runs;
	/* VmPTE did not change while maps and pagemap were read (after a few
	 * tries): the model and the kernel describe the same moment. */
	bool stable;
	/* In: mark the written pages (8 bytes read per anonymous page, for
	 * cow-pte); else runs are never written. */
	bool written;
	/* In: the paths known (names.c), for maps read through PROCMAP_QUERY
	 * where the kernel has it; NULL: maps read as text. */
	struct procfs_names *names;
	/* In: the process's mark (procfs_status.rest) at its last reading,
	 * 0: none.  Out: its mark for the next one, 0 when it ran while it
	 * was read (or does not rest). */
	uint64_t rest;
	/* Out: it still had the mark it came with: it has not run since its
	 * last reading, which holds; only its status and run time were read
	 * (no maps, no runs), and it is stable. */
	bool at_rest;
	/* In: its last reading (it exits once read): no mark for a next. */
	bool last;
};

/* The paths of file objects, kept from one reading to the next. */
struct procfs_names *procfs_names_new(void);
void procfs_names_free(struct procfs_names *t);
/* maps through PROCMAP_QUERY (maps_query.c): as procfs_maps_read, but
 * without [vsyscall], a known object's path its first one read; -ENOTTY
 * before Linux 6.11. */
int procfs_maps_query(int pid, const struct procfs_fs_table *fs,
		      struct procfs_names *names, struct procfs_maps *out);

/*
 * Reads pid.  -ENODATA for a process without an address space (kernel
 * thread, zombie); -ESRCH when it exits meanwhile; -EACCES/-EPERM when the
 * caller may not read it.
 */
int procfs_image_read(int pid, const struct procfs_fs_table *fs,
		      struct procfs_image *img);

/* exclusive.c: the run m appended to img's, its anonymous small pages cut
 * (when img->written) where pagemap (fd) says the process maps them alone,
 * those written.  0,
 * -ENOMEM, or the read's error (-ESRCH: the process was reaped). */
int procfs_image_add_run(int fd, struct procfs_image *img,
			 const struct mm_run *m);

/* The tmpfs and hugetlbfs devices of each mount namespace, read once. */
#define PROCFS_FS_CACHE_SIZE 8
struct procfs_fs_cache {
	struct {
		char ns[64];
		struct procfs_fs_table fs;
	} e[PROCFS_FS_CACHE_SIZE];
	size_t n;
};

const struct procfs_fs_table *procfs_fs_cache_get(struct procfs_fs_cache *c,
						  int pid);
void procfs_fs_cache_free(struct procfs_fs_cache *c);
void procfs_image_free(struct procfs_image *img);

#endif
