/* SPDX-License-Identifier: MIT */
/* A live process as /proc shows it, read consistently, and put into the
 * model: its mappings, then its populated pages. */
#ifndef PTSHARE_PROC_IMAGE_H
#define PTSHARE_PROC_IMAGE_H

#include "ptshare/procfs.h"
#include "ptshare/mm.h"

struct proc_image {
	struct procfs_status status;
	struct procfs_maps maps;
	/* Populated pages, mapping by mapping; anon set where they are
	 * anonymous pages of a private mapping. */
	struct mm_run *runs;
	size_t nruns, cap_runs;
	/* VmPTE did not change while maps and pagemap were read (after a few
	 * tries): the model and the kernel describe the same moment. */
	bool stable;
};

/*
 * Reads pid.  -ENODATA for a process without an address space (kernel
 * thread, zombie); -ESRCH when it exits meanwhile; -EACCES/-EPERM when the
 * caller may not read it.
 */
int ingest_proc_image_read(int pid, const struct procfs_fs_table *fs,
			   struct proc_image *img);

/* The tmpfs and hugetlbfs devices of each mount namespace, read once. */
#define FS_CACHE_SIZE 8
struct fs_cache {
	struct {
		char ns[64];
		struct procfs_fs_table fs;
	} e[FS_CACHE_SIZE];
	size_t n;
};

const struct procfs_fs_table *ingest_fs_cache_get(struct fs_cache *c, int pid);
void ingest_fs_cache_free(struct fs_cache *c);
void ingest_proc_image_free(struct proc_image *img);

/* Creates the process in every world, maps its VMAs and observes its pages.
 * On a model error, returns it with the world's message in err. */
int ingest_proc_image_load(struct mm_worlds *ws, const struct proc_image *img,
			   char *err,
			   size_t errlen);

#endif
