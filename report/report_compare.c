/* SPDX-License-Identifier: MIT */
/* Two reports compared mapping by mapping (report_compare.h). */
#include "report_compare.h"
#include "lib/bsearch.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A mapping group of one report, with the command of its first process. */
struct entry {
	const struct report_mapping *m;
	const char *command;
};

static const char *command_of(const struct report *r, uint32_t pid)
{
	/* rows are by pid */
	size_t i = bsearch_first(r->rows, r->nrows, row, row->proc->pid < pid);
	return i < r->nrows && r->rows[i].proc->pid == pid ?
	       r->rows[i].proc->name : "";
}

#define CMP(a, b) do { if ((a) != (b)) return (a) < (b) ? -1 : 1; } while (0)

static int cmp_key(const struct entry *a, const struct entry *b)
{
	CMP(a->m->obj.kind, b->m->obj.kind);
	int c = strcmp(a->m->name, b->m->name);
	if (c)
		return c;
	CMP(a->m->offset, b->m->offset);
	CMP(a->m->end - a->m->start, b->m->end - b->m->start);
	CMP(a->m->prot, b->m->prot);
	CMP(a->m->flags, b->m->flags);
	return strcmp(a->command, b->command);
}

static int cmp_entry(const void *x, const void *y)
{
	const struct entry *a = x, *b = y;
	int c = cmp_key(a, b);
	if (c)
		return c;
	CMP(a->m->start, b->m->start);
	return 0;
}

/* r's mappings by key, then address. */
static struct entry *entries_of(const struct report *r)
{
	struct entry *e = malloc((r->nmaps + 1) * sizeof(*e));
	if (!e)
		return NULL;
	for (size_t i = 0; i < r->nmaps; i++)
		e[i] = (struct entry){ &r->maps[i],
				       command_of(r, r->maps[i].first_pid) };
	qsort(e, r->nmaps, sizeof(*e), cmp_entry);
	return e;
}

static uint64_t slot_of(const struct report_mapping *m)
{
	return (m->start - m->offset) & (MM_SPAN(PT_PTE) - 1);
}

/* The groups e[lo, hi) of one key, into s. */
static void fill_side(struct compare_side *s, const struct entry *e, size_t lo,
		      size_t hi, size_t npol)
{
	s->present = true;
	s->start = e[lo].m->start;
	for (size_t i = lo; i < hi; i++) {
		const struct report_mapping *m = e[i].m;
		bool new_slot = true;
		for (size_t j = lo; j < i && new_slot; j++)
			new_slot = slot_of(e[j].m) != slot_of(m);
		s->nprocs += m->nprocs;
		s->addresses += i == lo || m->start != e[i - 1].m->start;
		s->slots += new_slot;
		for (size_t k = 0; k < npol; k++) {
			s->pol[k].tables += m->pol[k].tables;
			s->pol[k].shared += m->pol[k].shared;
			s->pol[k].whys |= 1u << m->pol[k].why;
			if (m->pol[k].why == WHY_MODEL)
				s->pol[k].reason = m->pol[k].reason;
		}
	}
}

/* The end of the key that starts at e[lo]. */
static size_t key_end(const struct entry *e, size_t lo, size_t n)
{
	size_t hi = lo + 1;
	while (hi < n && !cmp_key(&e[lo], &e[hi]))
		hi++;
	return hi;
}

/* The change in shared tables, summed over the sharing policies. */
static uint64_t change(const struct compare_mapping *m, size_t npol)
{
	uint64_t d = 0;
	for (size_t k = 1; k < npol; k++) {
		uint64_t a = m->run[0].pol[k].shared, b = m->run[1].pol[k].shared;
		d += a > b ? a - b : b - a;
	}
	return d;
}

static int by_change(const void *x, const void *y)
{
	const struct compare_mapping *a = x, *b = y;
	CMP(b->change, a->change);
	CMP(b->size, a->size);
	return strcmp(a->name, b->name);
}

static bool same_policies(const struct report *a, const struct report *b)
{
	if (a->npol != b->npol)
		return false;
	for (size_t k = 0; k < a->npol; k++)
		if (strcmp(a->pol[k].label, b->pol[k].label))
			return false;
	return true;
}

static void fill_totals(struct compare_totals *t, const struct report *r)
{
	for (size_t k = 0; k < r->npol; k++) {
		t[k].tables = report_sum3(r->totals[k].distinct);
		for (size_t i = 0; i < r->nrows; i++)
			t[k].shared += report_sum3(r->rows[i].s[k].shared);
		t[k].bytes = t[k].tables * MM_PAGE_SIZE;
		t[k].saved_bytes = (int64_t)t[0].bytes - (int64_t)t[k].bytes;
	}
}

int report_compare(struct report_compare *c, const struct report *a,
		   const struct report *b)
{
	*c = (struct report_compare){ 0 };
	if (!same_policies(a, b))
		return -EINVAL;
	fill_totals(c->totals[0], a);
	fill_totals(c->totals[1], b);
	struct entry *e[COMPARE_RUNS] = { entries_of(a), entries_of(b) };
	c->maps = calloc(a->nmaps + b->nmaps + 1, sizeof(*c->maps));
	if (!e[0] || !e[1] || !c->maps) {
		free(e[0]);
		free(e[1]);
		report_compare_free(c);
		return -ENOMEM;
	}
	/* Both lists are in key order: walk them side by side. */
	for (size_t i = 0, j = 0; i < a->nmaps || j < b->nmaps; c->compared++) {
		int order = i == a->nmaps ? 1 : j == b->nmaps ? -1
					     : cmp_key(&e[0][i], &e[1][j]);
		size_t at[COMPARE_RUNS] = { i, j };
		const struct entry *key = order <= 0 ? &e[0][i] : &e[1][j];
		struct compare_mapping *m = &c->maps[c->nmaps];
		*m = (struct compare_mapping){
			.kind = key->m->obj.kind, .name = key->m->name,
			.command = key->command, .offset = key->m->offset,
			.size = key->m->end - key->m->start,
			.prot = key->m->prot, .flags = key->m->flags,
		};
		if (order <= 0) {
			i = key_end(e[0], at[0], a->nmaps);
			fill_side(&m->run[0], e[0], at[0], i, a->npol);
		}
		if (order >= 0) {
			j = key_end(e[1], at[1], b->nmaps);
			fill_side(&m->run[1], e[1], at[1], j, b->npol);
		}
		m->change = change(m, a->npol);
		c->nmaps += m->change != 0;
	}
	free(e[0]);
	free(e[1]);
	qsort(c->maps, c->nmaps, sizeof(*c->maps), by_change);
	return 0;
}

void report_compare_free(struct report_compare *c)
{
	free(c->maps);
	*c = (struct report_compare){ 0 };
}

const char *report_compare_why_text(const struct compare_side *s, size_t k,
				    char *buf,
				    size_t len)
{
	struct report_mapping m = { 0 };
	size_t n = 0;
	buf[0] = '\0';
	m.pol[k].reason = s->pol[k].reason;
	for (unsigned w = 0; w < 32 && n < len; w++) {
		if (!(s->pol[k].whys & (1u << w)))
			continue;
		m.pol[k].why = (enum report_why)w;
		n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? "; " : "",
				      report_why_text(&m, k));
	}
	return buf;
}
