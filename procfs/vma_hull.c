/* SPDX-License-Identifier: MIT */
/*
 * The kernel's VMAs around a range, through the PROCMAP_QUERY ioctl of
 * /proc/PID/maps (Linux 6.11), which answers for one address without a
 * reading of the whole file.
 */
#include <errno.h>
#include <stdint.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include "procfs_internal.h"

/* The VMA covering addr: 0, -ENOENT when none does, or the ioctl's. */
static int covering(int fd, uint64_t addr, struct procmap_query *q)
{
	*q = (struct procmap_query){ .size = sizeof(*q), .query_addr = addr };
	return ioctl(fd, PROCMAP_QUERY, q) ? -errno : 0;
}

int procfs_vma_hull(int pid, uint64_t start, uint64_t end, uint64_t *lo,
		    uint64_t *hi)
{
	struct procmap_query q;
	int fd = procfs_open(pid, "maps");
	if (fd < 0)
		return fd;
	int err = covering(fd, start, &q);
	*lo = err ? start : q.vma_start;
	if (!err || err == -ENOENT)
		err = covering(fd, end - 1, &q);
	*hi = err ? end : q.vma_end;
	close(fd);
	return err == -ENOENT ? 0 : err;
}
