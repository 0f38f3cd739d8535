/* SPDX-License-Identifier: MIT */
/* Which call site made which range of a process, kept beside the model as
 * the model's own mappings change: mapped over, unmapped, moved by mremap,
 * inherited at fork. */
#include <errno.h>
#include <stdlib.h>

#include "callsite.h"

struct site_range {
	uint64_t start, end;
	uint32_t site;
	struct avl_node node;
};

static struct site_range *range_of(const struct avl_node *n)
{
	return n ? avl_entry(n, struct site_range, node) : NULL;
}

static struct site_range *next_of(const struct site_range *r)
{
	return range_of(r->node.next);
}

/* A range's start only ever moves up to its end, never past the next
 * range's: the order holds. */
static bool starts_before(const struct avl_node *a, const struct avl_node *b)
{
	return range_of(a)->start < range_of(b)->start;
}

static bool ends_above(const struct avl_node *n, const void *addr)
{
	return range_of(n)->end > *(const uint64_t *)addr;
}

/* The first range that ends after addr. */
static struct site_range *first_after(const struct site_ranges *s,
				      uint64_t addr)
{
	return range_of(avl_first_from(&s->t, ends_above, &addr));
}

static struct site_range *range_new(uint64_t start, uint64_t end, uint32_t site)
{
	struct site_range *r = malloc(sizeof(*r));
	if (r)
		*r = (struct site_range){ .start = start, .end = end, .site = site };
	return r;
}

static void range_free(struct site_ranges *s, struct site_range *r)
{
	avl_remove(&s->t, &r->node);
	free(r);
}

int ingest_site_ranges_set(struct site_ranges *s, uint64_t start, uint64_t end,
			   uint32_t site)
{
	if (start >= end)
		return 0;
	struct site_range *r = first_after(s, start);
	/* start and end inside one range: it splits around them. */
	bool split = r && r->start < start && r->end > end;
	struct site_range *tail = split ? range_new(end, r->end, r->site) : NULL;
	struct site_range *made = site ? range_new(start, end, site) : NULL;
	if ((split && !tail) || (site && !made)) {
		free(tail);
		free(made);
		return -ENOMEM;
	}
	if (split) {
		r->end = start;
		avl_insert(&s->t, &tail->node, starts_before);
	} else {
		if (r && r->start < start) {
			r->end = start;
			r = next_of(r);
		}
		while (r && r->end <= end) {
			struct site_range *next = next_of(r);
			range_free(s, r);
			r = next;
		}
		if (r && r->start < end)
			r->start = end;
	}
	if (made)
		avl_insert(&s->t, &made->node, starts_before);
	return 0;
}

int ingest_site_ranges_move(struct site_ranges *s, uint64_t old,
			    uint64_t old_len,
			    uint64_t new, uint64_t new_len, bool keep_old,
			    uint32_t site)
{
	uint64_t keep = old_len < new_len ? old_len : new_len;
	struct site_ranges moved = { 0 };
	int r = 0;
	for (struct site_range *m = first_after(s, old);
	     !r && m && m->start < old + keep; m = next_of(m)) {
		uint64_t a = m->start > old ? m->start : old;
		uint64_t b = m->end < old + keep ? m->end : old + keep;
		r = ingest_site_ranges_set(&moved, a - old + new, b - old + new,
					   m->site);
	}
	if (!r && !keep_old)
		r = ingest_site_ranges_set(s, old, old + old_len, 0);
	if (!r)
		r = ingest_site_ranges_set(s, new, new + new_len, 0);
	for (struct site_range *m = range_of(moved.t.first); !r && m;
	     m = next_of(m))
		r = ingest_site_ranges_set(s, m->start, m->end, m->site);
	if (!r && new_len > old_len)
		r = ingest_site_ranges_set(s, new + old_len, new + new_len,
					   site);
	ingest_site_ranges_free(&moved);
	return r;
}

uint32_t ingest_site_ranges_at(const struct site_ranges *s, uint64_t addr)
{
	const struct site_range *r = first_after(s, addr);
	return r && r->start <= addr ? r->site : 0;
}

int ingest_site_ranges_copy(struct site_ranges *dst,
			    const struct site_ranges *src)
{
	ingest_site_ranges_free(dst);
	for (const struct site_range *r = range_of(src->t.first); r;
	     r = next_of(r)) {
		struct site_range *c = range_new(r->start, r->end, r->site);
		if (!c) {
			ingest_site_ranges_free(dst);
			return -ENOMEM;
		}
		avl_insert(&dst->t, &c->node, starts_before);
	}
	return 0;
}

void ingest_site_ranges_free(struct site_ranges *s)
{
	for (struct site_range *r = range_of(s->t.first), *next; r; r = next) {
		next = next_of(r);
		free(r);
	}
	s->t = (struct avl_tree){ 0 };
}

void ingest_site_ranges_place(struct site_ranges *s, struct callsites *t,
			      const struct code_map *code)
{
	for (struct site_range *r = first_after(s, 0); r; r = next_of(r))
		r->site = ingest_callsites_place(t, code, r->site);
}
