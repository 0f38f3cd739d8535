/* SPDX-License-Identifier: MIT */
/*
 * Whether this kernel maps the shared zero page on a read fault in private
 * anonymous memory, asked of one page of our own.  Stock kernels do; one
 * where mm_forbids_zeropage() holds, or one booted with pvm_no_zero_page=1,
 * allocates an anonymous page and the VMA's anon_vma, and fork then copies
 * the VMA's tables: the model must know which (mm_world_set_zero_page).
 */
#include <errno.h>
#include <stdint.h>
#include <unistd.h>
#include <sys/mman.h>

#include "procfs_internal.h"

/* 1 when the page at addr, present, is the zero page, 0 when it is not. */
static int page_is_zero(uint64_t addr)
{
	int fd = procfs_pagemap_open(getpid());
	if (fd < 0)
		return fd;
	struct procfs_runs runs = { 0 };
	int r = procfs_scan(fd, addr, addr + MM_PAGE_SIZE, PROCFS_SCAN_NO_FILE,
			    &runs);
	close(fd);
	if (!r)
		r = !runs.exact ? -EOPNOTSUPP
		    : runs.n != 1 ? -EPROTO
		    : (runs.pages[0] & PROCFS_PAGE_ZERO) != 0;
	procfs_runs_free(&runs);
	return r;
}

int procfs_zero_page(void)
{
	volatile const char *p = mmap(NULL, MM_PAGE_SIZE, PROT_READ,
				      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	(void)*p; /* the read fault */
	int r = page_is_zero((uintptr_t)p);
	munmap((void *)p, MM_PAGE_SIZE);
	return r;
}
