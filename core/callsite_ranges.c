/* SPDX-License-Identifier: MIT */
/* Which call site made which range of a process, kept beside the model as
 * the model's own mappings change: mapped over, unmapped, moved by mremap,
 * inherited at fork. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "callsite.h"

/* The first range that ends after addr. */
static size_t first_after(const struct site_ranges *s, uint64_t addr)
{
	size_t lo = 0, hi = s->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (s->r[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int reserve(struct site_ranges *s, size_t more)
{
	if (s->n + more <= s->cap)
		return 0;
	size_t cap = s->cap ? 2 * s->cap : 16;
	while (cap < s->n + more)
		cap *= 2;
	struct site_range *r = realloc(s->r, cap * sizeof(*r));
	if (!r)
		return -ENOMEM;
	s->r = r;
	s->cap = cap;
	return 0;
}

int site_ranges_set(struct site_ranges *s, uint64_t start, uint64_t end,
		    uint32_t site)
{
	if (start >= end)
		return 0;
	/* At most one range splits in two, and one is added. */
	if (reserve(s, 2))
		return -ENOMEM;
	size_t i = first_after(s, start);
	if (i < s->n && s->r[i].start < start && s->r[i].end > end) {
		/* start and end fall inside one range: it splits around them */
		memmove(&s->r[i + 1], &s->r[i], (s->n - i) * sizeof(*s->r));
		s->n++;
		s->r[i].end = start;
		s->r[i + 1].start = end;
		i++;
	} else {
		if (i < s->n && s->r[i].start < start)
			s->r[i++].end = start;
		size_t j = i;
		while (j < s->n && s->r[j].end <= end)
			j++;
		if (j < s->n && s->r[j].start < end)
			s->r[j].start = end;
		memmove(&s->r[i], &s->r[j], (s->n - j) * sizeof(*s->r));
		s->n -= j - i;
	}
	if (!site)
		return 0;
	memmove(&s->r[i + 1], &s->r[i], (s->n - i) * sizeof(*s->r));
	s->r[i] = (struct site_range){ start, end, site };
	s->n++;
	return 0;
}

int site_ranges_move(struct site_ranges *s, uint64_t old, uint64_t old_len,
		     uint64_t new, uint64_t new_len, bool keep_old,
		     uint32_t site)
{
	uint64_t keep = old_len < new_len ? old_len : new_len;
	struct site_ranges moved = { 0 };
	int r = 0;
	for (size_t i = first_after(s, old); !r && i < s->n &&
					       s->r[i].start < old + keep; i++) {
		uint64_t a = s->r[i].start > old ? s->r[i].start : old;
		uint64_t b = s->r[i].end < old + keep ? s->r[i].end : old + keep;
		r = site_ranges_set(&moved, a - old + new, b - old + new, s->r[i].site);
	}
	if (!r && !keep_old)
		r = site_ranges_set(s, old, old + old_len, 0);
	if (!r)
		r = site_ranges_set(s, new, new + new_len, 0);
	for (size_t i = 0; !r && i < moved.n; i++)
		r = site_ranges_set(s, moved.r[i].start, moved.r[i].end, moved.r[i].site);
	if (!r && new_len > old_len)
		r = site_ranges_set(s, new + old_len, new + new_len, site);
	site_ranges_free(&moved);
	return r;
}

uint32_t site_ranges_at(const struct site_ranges *s, uint64_t addr)
{
	size_t i = first_after(s, addr);
	return i < s->n && s->r[i].start <= addr ? s->r[i].site : 0;
}

int site_ranges_copy(struct site_ranges *dst, const struct site_ranges *src)
{
	dst->n = 0;
	if (reserve(dst, src->n))
		return -ENOMEM;
	if (src->n)
		memcpy(dst->r, src->r, src->n * sizeof(*src->r));
	dst->n = src->n;
	return 0;
}

void site_ranges_free(struct site_ranges *s)
{
	free(s->r);
	*s = (struct site_ranges){ 0 };
}
