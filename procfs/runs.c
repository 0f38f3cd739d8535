/* SPDX-License-Identifier: MIT */
/* The growable list of populated runs that a page scan fills. */
#include <errno.h>
#include <stdlib.h>

#include "procfs_internal.h"

int procfs_runs_append(struct procfs_runs *r, uint64_t start, uint64_t end,
		       bool huge, uint8_t pages)
{
	if (r->n) {
		struct mm_run *last = &r->runs[r->n - 1];
		if (last->end == start && last->huge == huge &&
		    r->pages[r->n - 1] == pages) {
			last->end = end;
			return 0;
		}
	}
	/* Both arrays share cap: grow pages first with a copy of it. */
	size_t cap = r->cap;
	if (grow_array((void **)&r->pages, &cap, r->n + 1, sizeof(*r->pages)) ||
	    grow_array((void **)&r->runs, &r->cap, r->n + 1, sizeof(*r->runs)))
		return -ENOMEM;
	r->runs[r->n] = (struct mm_run){ start, end, huge, false, false };
	r->pages[r->n++] = pages;
	return 0;
}

void procfs_runs_free(struct procfs_runs *r)
{
	free(r->runs);
	free(r->pages);
	*r = (struct procfs_runs){ 0 };
}
