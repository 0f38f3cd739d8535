/* SPDX-License-Identifier: MIT */
/*
 * Page presence through the PAGEMAP_SCAN ioctl of /proc/PID/pagemap (Linux
 * 6.7), which returns populated ranges rather than an entry per page.
 */
#include <errno.h>
#include <stdint.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include "pagemap_scan.h"
#include "procfs_internal.h"

/*
 * The kernel fills its own buffer of at most 512 regions and, while the
 * caller's vector has room, flushes it and restarts the walk, setting
 * walk_end to the restart address.  A restarted walk that then reaches end
 * leaves walk_end there instead of at end, and resuming from it would report
 * regions twice (docs/procfs.md).  With vec_len <= 512 no call restarts, and
 * walk_end is exact.
 */
#define SCAN_VEC_LEN 512

static uint8_t page_bits(__u64 categories)
{
	return (categories & PAGE_IS_FILE ? PROCFS_PAGE_FILE : 0) |
	       (categories & PAGE_IS_SWAPPED ? PROCFS_PAGE_SWAPPED : 0) |
	       (categories & PAGE_IS_PFNZERO ? PROCFS_PAGE_ZERO : 0);
}

/* -ENOTTY: the kernel has no PAGEMAP_SCAN. */
static int scan_ioctl(int fd, uint64_t start, uint64_t end, bool file,
		      struct procfs_runs *out)
{
	/* Zeroed, though the kernel fills what it returns: valgrind (3.19)
	 * does not know PAGEMAP_SCAN, and would take it all for uninitialised
	 * (docs/valgrind.md). */
	struct page_region vec[SCAN_VEC_LEN] = { 0 };
	struct pm_scan_arg arg = {
		.size = sizeof(arg),
		.vec = (uintptr_t)vec,
		.vec_len = SCAN_VEC_LEN,
		.category_anyof_mask = PAGE_IS_PRESENT | PAGE_IS_SWAPPED,
		.return_mask = (file ? PAGE_IS_FILE : 0) | PAGE_IS_PRESENT |
			       PAGE_IS_SWAPPED | PAGE_IS_PFNZERO | PAGE_IS_HUGE,
	};

	for (uint64_t at = start; at < end; at = arg.walk_end) {
		arg.start = at;
		arg.end = end;
		int n = ioctl(fd, PAGEMAP_SCAN, &arg);
		if (n < 0)
			return -errno;
		for (int i = 0; i < n; i++) {
			int err = procfs_runs_append(out, vec[i].start, vec[i].end,
						     vec[i].categories & PAGE_IS_HUGE,
						     page_bits(vec[i].categories));
			if (err)
				return err;
		}
		/* A walk that makes no progress would loop forever. */
		if (arg.walk_end <= at || arg.walk_end > end)
			return -EPROTO;
	}
	return 0;
}

int procfs_pagemap_open(int pid)
{
	return procfs_open(pid, "pagemap");
}

int procfs_scan(int pagemap_fd, uint64_t start, uint64_t end, unsigned flags,
		struct procfs_runs *out)
{
	int err = -ENOTTY;

	out->n = 0;
	out->exact = true;
	if (start >= end || (start | end) & (MM_PAGE_SIZE - 1) ||
	    end > MM_TASK_SIZE)
		return -EINVAL;
	bool file = !(flags & PROCFS_SCAN_NO_FILE);
	if (!(flags & PROCFS_SCAN_PAGEMAP_ENTRIES))
		err = scan_ioctl(pagemap_fd, start, end, file, out);
	if (err == -ENOTTY && !(flags & PROCFS_SCAN_IOCTL)) {
		out->n = 0;
		out->exact = false;
		err = procfs_scan_entries(pagemap_fd, start, end, file, out);
	}
	if (err)
		out->n = 0;
	return err;
}
