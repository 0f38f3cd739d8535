/* SPDX-License-Identifier: MIT */
/* Growing an array by doubling: the one way every list in ptshare (procfs
 * readings, the ingest's tables, the daemon's connections) makes room. */
#ifndef PTSHARE_LIB_GROW_H
#define PTSHARE_LIB_GROW_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/*
 * Makes *arr (*cap elements of size bytes) hold at least need elements,
 * doubling from 16.  0, or -ENOMEM with *arr and *cap untouched when memory
 * is short or the size would not fit in a size_t.
 */
static inline int grow_array(void **arr, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap : 16;
	while (n < need) {
		if (n > SIZE_MAX / 2)
			return -ENOMEM;
		n *= 2;
	}
	if (n > SIZE_MAX / size)
		return -ENOMEM;
	void *p = realloc(*arr, n * size);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = n;
	return 0;
}

#endif
