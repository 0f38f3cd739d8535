/* SPDX-License-Identifier: MIT */
/*
 * What the daemon has dealt with of one process's shared memory
 * (daemon/uffd.c): sorted, disjoint ranges, never registered again while
 * they last.  Each is live (registered with the process's userfaultfd
 * now) or not (released after a fault, refused by the kernel, or given up
 * to a userfaultfd of the program's own), so that the daemon unregisters
 * only what is its own: another userfaultfd's range is the program's.
 * Neighbours alike are one range: a live range holds whole the kernel's
 * VMAs the daemon registered there, which merge as they do.
 */
#ifndef PTSHARED_UFFD_RANGES_H
#define PTSHARED_UFFD_RANGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct uffd_range {
	uint64_t start, end;
	uint32_t huge_shift; /* hugetlb page size, 0 for shmem */
	bool live;           /* registered with our userfaultfd now */
};

struct uffd_ranges {
	struct uffd_range *r;
	size_t nr, cap;
};

/* Index of the first range ending above addr (nr if none). */
size_t ranges_first_after(const struct uffd_ranges *l, uint64_t addr);
/* A range after the last one (joined to it when alike and adjacent):
 * 0, or -ENOMEM. */
int ranges_append(struct uffd_ranges *l, uint64_t start, uint64_t end,
		  uint32_t huge_shift, bool live);
/* Ranges [i, j) replaced by the n of with (sorted, disjoint, between the
 * neighbours), joined to those alike: 0, or -ENOMEM (the list unchanged). */
int ranges_splice(struct uffd_ranges *l, size_t i, size_t j,
		  const struct uffd_range *with, size_t n);
/* [start, end) is no longer dealt with (unmapped, moved, mapped over): cut
 * out of the ranges it meets.  Whether it met any. */
bool ranges_forget(struct uffd_ranges *l, uint64_t start, uint64_t end);
/* [start, end) of the ranges it meets is no longer live: 0, or -ENOMEM
 * (then the ranges it meets are kept whole, still live). */
int ranges_release(struct uffd_ranges *l, uint64_t start, uint64_t end);
void ranges_free(struct uffd_ranges *l);

#endif
