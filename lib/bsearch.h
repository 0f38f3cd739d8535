/* SPDX-License-Identifier: MIT */
/* The binary search over sorted arrays: where a key is, or would go. */
#ifndef PTSHARE_LIB_BSEARCH_H
#define PTSHARE_LIB_BSEARCH_H

#include <stddef.h>

/*
 * The index of the first of the n elements of array for which before (an
 * expression of elem, a pointer to the element looked at) is false, or n.
 * before must hold for a prefix of the array and for nothing after it:
 * "elem->end <= addr" finds the first range ending after addr.  A macro, so
 * that the comparison is the caller's own expression, typed and inlined.
 */
#define bsearch_first(array, n, elem, before)                             \
	({                                                                \
		size_t lo_ = 0, hi_ = (n);                                \
		while (lo_ < hi_) {                                       \
			size_t mid_ = lo_ + (hi_ - lo_) / 2;              \
			__typeof__(&(array)[0]) elem = &(array)[mid_];    \
			if (before)                                       \
				lo_ = mid_ + 1;                           \
			else                                              \
				hi_ = mid_;                               \
		}                                                         \
		lo_;                                                      \
	})

#endif
