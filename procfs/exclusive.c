/* SPDX-License-Identifier: MIT */
/*
 * Which anonymous pages a process maps alone: pagemap's PM_MMAP_EXCLUSIVE
 * (bit 56 of each 8-byte entry).  After a fork every anonymous page is
 * mapped by both sides; a page one side writes becomes its own copy, and
 * the other side's original is mapped once again: both turn exclusive.
 * cow-pte copies a shared PTE table when either side writes in its span,
 * and this is how the model learns of those writes at a checkpoint
 * (bench/cow_written measured it against userfaultfd write-protect with
 * PAGEMAP_SCAN's written bit, which costs the program a fault per page it
 * writes: docs/procfs.md, "Written pages").
 */
#include <errno.h>

#include "image.h"
#include "procfs_internal.h"
#include "lib/grow.h"

#define PM_PRESENT (1ULL << 63)
#define PM_EXCLUSIVE (1ULL << 56)
#define ENTRIES_PER_READ 512 /* one PTE table's span */

/* Appends [start, end) of m with written as given, merged with the last
 * run when that is its continuation. */
static int append(struct procfs_image *img, const struct mm_run *m,
		  uint64_t start, uint64_t end, bool written)
{
	struct mm_run *last = img->nruns ? &img->runs[img->nruns - 1] : NULL;
	if (last && last->end == start && last->written == written &&
	    last->anon == m->anon && last->huge == m->huge) {
		last->end = end;
		return 0;
	}
	if (grow_array((void **)&img->runs, &img->cap_runs, img->nruns + 1,
		       sizeof(*img->runs)))
		return -ENOMEM;
	img->runs[img->nruns++] = (struct mm_run){ start, end, m->huge, m->anon,
						   written };
	return 0;
}

int procfs_image_add_run(int fd, struct procfs_image *img,
			 const struct mm_run *m)
{
	if (!img->written || !m->anon || m->huge)
		return append(img, m, m->start, m->end, false);
	uint64_t e[ENTRIES_PER_READ];
	for (uint64_t at = m->start; at < m->end;) {
		ssize_t r = procfs_pagemap_entries(fd, at, m->end, e,
						   ENTRIES_PER_READ);
		if (r < 0)
			return (int)r;
		for (ssize_t i = 0; i < r; i++, at += MM_PAGE_SIZE) {
			bool alone = (e[i] & (PM_PRESENT | PM_EXCLUSIVE)) ==
				     (PM_PRESENT | PM_EXCLUSIVE);
			int err = append(img, m, at, at + MM_PAGE_SIZE, alone);
			if (err)
				return err;
		}
	}
	return 0;
}
