/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/grow.h"
#include "uffd_ranges.h"
#include "lib/bsearch.h"

size_t ranges_first_after(const struct uffd_ranges *l, uint64_t addr)
{
	return bsearch_first(l->r, l->nr, r, r->end <= addr);
}

static bool alike(const struct uffd_range *a, const struct uffd_range *b)
{
	return a->end == b->start && a->huge_shift == b->huge_shift &&
	       a->live == b->live;
}

int ranges_append(struct uffd_ranges *l, uint64_t start, uint64_t end,
		  uint32_t huge_shift, bool live)
{
	struct uffd_range r = { start, end, huge_shift, live };
	if (l->nr && alike(&l->r[l->nr - 1], &r)) {
		l->r[l->nr - 1].end = end;
		return 0;
	}
	if (grow_array((void **)&l->r, &l->cap, l->nr + 1, sizeof(*l->r)))
		return -ENOMEM;
	l->r[l->nr++] = r;
	return 0;
}

/* Alike neighbours among ranges [i, j] joined (j < nr). */
static void join(struct uffd_ranges *l, size_t i, size_t j)
{
	size_t out = i;
	for (size_t k = i + 1; k <= j; k++) {
		if (alike(&l->r[out], &l->r[k]))
			l->r[out].end = l->r[k].end;
		else
			l->r[++out] = l->r[k];
	}
	size_t gone = j - out;
	if (gone) {
		memmove(&l->r[out + 1], &l->r[out + 1 + gone],
			(l->nr - out - 1 - gone) * sizeof(*l->r));
		l->nr -= gone;
	}
}

int ranges_splice(struct uffd_ranges *l, size_t i, size_t j,
		  const struct uffd_range *with, size_t n)
{
	size_t nr = l->nr - (j - i) + n;
	if (grow_array((void **)&l->r, &l->cap, nr, sizeof(*l->r)))
		return -ENOMEM;
	if (l->nr > j)
		memmove(&l->r[i + n], &l->r[j], (l->nr - j) * sizeof(*l->r));
	if (n)
		memcpy(&l->r[i], with, n * sizeof(*with));
	l->nr = nr;
	if (nr)
		join(l, i ? i - 1 : 0, i + n < nr ? i + n : nr - 1);
	return 0;
}

/* Room for one more range at index i. */
static int make_room(struct uffd_ranges *l, size_t i)
{
	if (grow_array((void **)&l->r, &l->cap, l->nr + 1, sizeof(*l->r)))
		return -ENOMEM;
	memmove(&l->r[i + 1], &l->r[i], (l->nr - i) * sizeof(*l->r));
	l->nr++;
	return 0;
}

bool ranges_forget(struct uffd_ranges *l, uint64_t start, uint64_t end)
{
	bool met = false;
	for (size_t i = ranges_first_after(l, start);
	     i < l->nr && l->r[i].start < end;) {
		struct uffd_range *r = &l->r[i];
		met = true;
		if (r->start < start && r->end > end) {
			if (make_room(l, i + 1))
				return met; /* the tail is dealt with again */
			l->r[i + 1] = l->r[i];
			l->r[i].end = start;
			l->r[i + 1].start = end;
			return met;
		} else if (r->start < start) {
			r->end = start;
			i++;
		} else if (r->end > end) {
			r->start = end;
			i++;
		} else {
			memmove(r, r + 1, (l->nr - i - 1) * sizeof(*r));
			l->nr--;
		}
	}
	return met;
}

/* The range holding addr cut in two there (nothing when addr is already
 * a boundary, or in no range): 0, or -ENOMEM. */
static int cut_at(struct uffd_ranges *l, uint64_t addr)
{
	size_t i = ranges_first_after(l, addr);
	if (i == l->nr || l->r[i].start >= addr)
		return 0;
	if (make_room(l, i + 1))
		return -ENOMEM;
	l->r[i + 1] = l->r[i];
	l->r[i].end = addr;
	l->r[i + 1].start = addr;
	return 0;
}

int ranges_release(struct uffd_ranges *l, uint64_t start, uint64_t end)
{
	if (cut_at(l, start) || cut_at(l, end))
		return -ENOMEM;
	size_t i = ranges_first_after(l, start), j = i;
	for (; j < l->nr && l->r[j].start < end; j++)
		l->r[j].live = false;
	if (l->nr)
		join(l, i ? i - 1 : 0, j < l->nr ? j : l->nr - 1);
	return 0;
}

void ranges_free(struct uffd_ranges *l)
{
	free(l->r);
	*l = (struct uffd_ranges){ 0 };
}
