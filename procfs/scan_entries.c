/* SPDX-License-Identifier: MIT */
/*
 * procfs_scan for kernels before 6.7: one 8-byte /proc/PID/pagemap entry per
 * page (Documentation/admin-guide/mm/pagemap.rst).  It tells present,
 * swapped and file-or-shared pages, but not huge mappings nor the zero page.
 */
#include <errno.h>
#include <unistd.h>

#include "procfs_internal.h"

#define PM_PRESENT (1ULL << 63)
#define PM_SWAPPED (1ULL << 62)
#define PM_FILE (1ULL << 61) /* page cache or shared anonymous (shmem) */

/* Entries read per pread: 16 MiB of address space. */
#define ENTRIES_PER_READ 4096

ssize_t procfs_pagemap_entries(int fd, uint64_t at, uint64_t end,
			       uint64_t *e, size_t cap)
{
	uint64_t pages = (end - at) >> MM_PAGE_SHIFT;
	size_t want = pages < cap ? pages : cap;
	ssize_t r = pread(fd, e, want * sizeof(*e),
			  (off_t)((at >> MM_PAGE_SHIFT) * sizeof(*e)));
	if (r < 0)
		return -errno;
	/* A process reaped since the open reads as end of file. */
	if (r == 0 || r % sizeof(*e))
		return r ? -EPROTO : -ESRCH;
	return r / (ssize_t)sizeof(*e);
}

int procfs_scan_entries(int fd, uint64_t start, uint64_t end, bool file,
			struct procfs_runs *out)
{
	uint64_t e[ENTRIES_PER_READ];

	for (uint64_t at = start; at < end;) {
		ssize_t r = procfs_pagemap_entries(fd, at, end, e, ENTRIES_PER_READ);
		if (r < 0)
			return (int)r;
		for (ssize_t i = 0; i < r; i++, at += MM_PAGE_SIZE) {
			if (!(e[i] & (PM_PRESENT | PM_SWAPPED)))
				continue;
			uint8_t bits = (file && e[i] & PM_FILE ? PROCFS_PAGE_FILE : 0) |
				       (e[i] & PM_SWAPPED ? PROCFS_PAGE_SWAPPED : 0);
			int err = procfs_runs_append(out, at, at + MM_PAGE_SIZE,
						     false, bits);
			if (err)
				return err;
		}
	}
	return 0;
}
