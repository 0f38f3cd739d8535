/* SPDX-License-Identifier: MIT */
/* Building the report from the worlds. */
#include "report.h"
#include "lib/grow.h"
#include "ptshare/wire.h"
#include "symbols.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

const char *report_kind_name(enum mm_obj_kind kind)
{
	static const char *const names[MM_OBJ_NR_KINDS] = {
		[MM_OBJ_ANON] = "anon", [MM_OBJ_FILE] = "file",
		[MM_OBJ_SHMEM] = "shmem", [MM_OBJ_SYSV] = "sysv",
		[MM_OBJ_HUGETLB] = "hugetlb",
	};
	return kind < MM_OBJ_NR_KINDS ? names[kind] : "?";
}

const char *report_policy_label(const struct mm_policy *p, char *buf,
				size_t len)
{
	static const char *const level[PT_NR_LEVELS] = { "pte", "pmd", "pud" };
	struct mm_policy builtin;
	char err[8];
	if (mm_policy_parse(p->name, &builtin, err, sizeof(err)) ||
	    builtin.levels == p->levels)
		return p->name;
	size_t n = (size_t)snprintf(buf, len, "%s:", p->name);
	for (unsigned l = 0; l < PT_NR_LEVELS && n < len; l++)
		if (p->levels & (1u << l))
			n += (size_t)snprintf(buf + n, len - n, "%s%s",
					      buf[n - 1] == ':' ? "" : "+", level[l]);
	return buf;
}

static int by_pid(const void *a, const void *b)
{
	uint32_t x = ((const struct report_row *)a)->proc->pid;
	uint32_t y = ((const struct report_row *)b)->proc->pid;
	return (x > y) - (x < y);
}

static struct report_row *row_of(struct report *r, uint32_t pid)
{
	struct report_proc key = { .pid = pid };
	struct report_row k = { .proc = &key };
	return bsearch(&k, r->rows, r->nrows, sizeof(k), by_pid);
}

static int fill_rows(struct report *r, const struct report_input *in)
{
	r->procs = malloc((in->nprocs + 1) * sizeof(*r->procs));
	r->rows = calloc(in->nprocs + 1, sizeof(*r->rows));
	struct mm_proc_stats *s = calloc(in->nprocs + 1, sizeof(*s));
	if (!r->procs || !r->rows || !s) {
		free(s);
		return -ENOMEM;
	}
	if (in->nprocs)
		memcpy(r->procs, in->procs, in->nprocs * sizeof(*r->procs));
	for (size_t i = 0; i < in->nprocs; i++)
		r->rows[i].proc = &r->procs[i];
	r->nrows = in->nprocs;
	qsort(r->rows, r->nrows, sizeof(*r->rows), by_pid);
	for (size_t k = 0; k < in->ws->n; k++) {
		int n = mm_world_stats(in->ws->w[k], s, in->nprocs, &r->totals[k]);
		for (int i = 0; i < n && (size_t)i < in->nprocs; i++) {
			struct report_row *row = row_of(r, s[i].pid);
			if (row)
				row->s[k] = s[i];
			r->pss[k] += s[i].pss_bytes;
		}
	}
	free(s);
	for (size_t i = 0; i < r->nrows; i++) {
		const struct report_row *row = &r->rows[i];
		if (row->proc->vmpte_kb < 0)
			continue;
		uint64_t kb = 4 * (row->s[0].tables[PT_PTE] + row->s[0].tables[PT_PMD] +
				   row->s[0].tables[PT_PUD]);
		r->model_kb += kb;
		r->kernel_kb += (uint64_t)row->proc->vmpte_kb;
		r->exact += kb == (uint64_t)row->proc->vmpte_kb;
	}
	return 0;
}

/* One VMA of one process in one world, before grouping. */
struct vma_entry {
	struct mm_vma_info v;
	uint32_t pid;
	size_t world;
};

struct collect {
	struct vma_entry *e;
	size_t n, cap;
	uint32_t pid;
	size_t world;
};

static int collect_vma(const struct mm_vma_info *v, void *arg)
{
	struct collect *c = arg;
	if (grow_array((void **)&c->e, &c->cap, c->n + 1, sizeof(*c->e)))
		return -ENOMEM;
	c->e[c->n++] = (struct vma_entry){ *v, c->pid, c->world };
	return 0;
}

#define CMP(a, b) do { if ((a) != (b)) return (a) < (b) ? -1 : 1; } while (0)

static int cmp_obj(const struct mm_object_id *a, const struct mm_object_id *b)
{
	CMP(a->kind, b->kind);
	CMP(a->dev, b->dev);
	CMP(a->ino, b->ino);
	return 0;
}

/* Same mapping: object, range, offset, protection, flags, anon pages. */
static int cmp_mapping(const struct mm_vma_info *a, const struct mm_vma_info *b)
{
	int c = cmp_obj(&a->obj, &b->obj);
	if (c)
		return c;
	CMP(a->start, b->start);
	CMP(a->end, b->end);
	CMP(a->offset, b->offset);
	CMP(a->prot, b->prot);
	CMP(a->flags, b->flags);
	CMP(a->anon_pages, b->anon_pages);
	return 0;
}

static int cmp_entry(const void *x, const void *y)
{
	const struct vma_entry *a = x, *b = y;
	int c = cmp_mapping(&a->v, &b->v);
	if (c)
		return c;
	CMP(a->world, b->world);
	CMP(a->pid, b->pid);
	return 0;
}

static int cmp_named(const void *x, const void *y)
{
	return cmp_obj(&((const struct report_object *)x)->id,
		       &((const struct report_object *)y)->id);
}

static int by_tables(const void *x, const void *y)
{
	const struct report_mapping *a = x, *b = y;
	CMP(b->pol[0].tables, a->pol[0].tables);
	CMP(b->end - b->start, a->end - a->start);
	CMP(a->first_pid, b->first_pid);
	CMP(a->start, b->start);
	return 0;
}

/* For a shareable mapping that shares nothing: what the other mappings of
 * the same object (maps[lo, hi)) tell. */
static enum report_why why_unshared(const struct report *r, size_t g,
				    size_t lo, size_t hi, size_t k)
{
	const struct report_mapping *m = &r->maps[g];
	const struct mm_policy *p = &r->pol[k].p;
	if (m->nprocs > 1)
		return WHY_NOT_POPULATED;
	if (hi - lo == 1)
		return WHY_ALONE;
	bool slot = false;
	for (size_t i = lo; i < hi; i++) {
		const struct report_mapping *o = &r->maps[i];
		if (i == g)
			continue;
		if (o->start == m->start && o->end == m->end &&
		    o->offset == m->offset)
			return WHY_FLAGS_DIFFER;
		slot |= ((o->start - o->offset) ^ (m->start - m->offset)) %
				MM_SPAN(PT_PTE) == 0;
	}
	if (p->match == MM_MATCH_SAME_RANGE)
		return WHY_OTHER_ADDRESS;
	return slot ? WHY_NOT_POPULATED : WHY_OTHER_SLOT;
}

/* A copy of s owned by the report; NULL stays NULL, and so does a copy
 * memory could not be found for (-ENOMEM in *err). */
const char *report_keep(struct report *r, const char *s, int *err)
{
	if (!s)
		return NULL;
	char *copy = NULL;
	if (!grow_array((void **)&r->strings, &r->cap_strings, r->nstrings + 1,
			sizeof(*r->strings)) &&
	    (copy = strdup(s)))
		r->strings[r->nstrings++] = copy;
	else
		*err = -ENOMEM;
	return copy;
}

/* The name of obj, owned by the report (consecutive groups of one object
 * share it). */
static const char *name_of(struct report *r, const struct report_object *names,
			   size_t n, const struct mm_object_id *obj, int *err)
{
	if (r->nmaps > 1 && !cmp_obj(&r->maps[r->nmaps - 2].obj, obj))
		return r->maps[r->nmaps - 2].name;
	struct report_object key = { .id = *obj };
	const struct report_object *o = bsearch(&key, names, n, sizeof(key), cmp_named);
	const char *name = o ? report_keep(r, o->name, err) : NULL;
	return name ? name : "";
}

/* The call site that created the mapping e belongs to, if the input knows
 * one. */
static int take_site(struct report *r, const struct report_input *in,
		     struct report_mapping *m, const struct vma_entry *e)
{
	struct report_site src;
	int err = 0;
	if (m->site.n || e->world || !in->site_of ||
	    !in->site_of(in->site_ctx, e->pid, e->v.start, &src))
		return 0;
	m->site.n = src.n < PTS_MAX_FRAMES ? src.n : PTS_MAX_FRAMES;
	for (size_t i = 0; i < m->site.n; i++)
		m->site.f[i] = (struct report_frame){
			.object = report_keep(r, src.f[i].object, &err),
			.offset = src.f[i].offset,
		};
	return err;
}

/*
 * The regions of each row from the VMAs collected: world k's VMAs of row i
 * are c->e[block[k * nrows + i], block[k * nrows + i + 1]), in address
 * order, the same in every world.  VMAs that meet no PTE table are left
 * out: the strips show tables.
 */
static int fill_regions(struct report *r, const struct collect *c,
			const size_t *block, size_t nworlds)
{
	if (!(r->regions = calloc(c->n + 1, sizeof(*r->regions))))
		return -ENOMEM;
	for (size_t i = 0; i < r->nrows; i++) {
		struct report_row *row = &r->rows[i];
		size_t lo = block[i], len = block[i + 1] - lo;
		row->regions = &r->regions[r->nregions];
		for (size_t j = 0; j < len; j++) {
			const struct mm_vma_info *v0 = &c->e[lo + j].v;
			struct report_region cur = { .start = v0->start, .end = v0->end,
						     .nmaps = 1 };
			uint64_t any = 0;
			for (size_t k = 0; k < nworlds; k++) {
				size_t b = k * r->nrows + i;
				const struct mm_vma_info *v = &c->e[block[b] + j].v;
				if (block[b + 1] - block[b] != len || v->start != v0->start)
					continue; /* the worlds disagree: left blank */
				cur.pol[k].reason = v->reason;
				cur.pol[k].tables = v->tables;
				cur.pol[k].shared = v->shared;
				any |= v->tables;
			}
			if (!any)
				continue;
			struct report_region *last = row->nregions
				? &r->regions[r->nregions - 1] : NULL;
			bool same = last;
			for (size_t k = 0; same && k < nworlds; k++)
				same = last->pol[k].reason == cur.pol[k].reason;
			if (!same) {
				r->regions[r->nregions++] = cur;
				row->nregions++;
				continue;
			}
			last->end = cur.end;
			last->nmaps++;
			for (size_t k = 0; k < nworlds; k++) {
				last->pol[k].tables += cur.pol[k].tables;
				last->pol[k].shared += cur.pol[k].shared;
			}
		}
	}
	return 0;
}

/* Every VMA of every row in every world, blocks marking where each (world,
 * row) starts. */
static int collect_all(const struct report *r, const struct report_input *in,
		       struct collect *c, size_t **block)
{
	size_t nb = in->ws->n * r->nrows;
	if (!(*block = calloc(nb + 1, sizeof(**block))))
		return -ENOMEM;
	for (size_t k = 0; k < in->ws->n; k++)
		for (size_t i = 0; i < r->nrows; i++) {
			c->pid = r->rows[i].proc->pid;
			c->world = k;
			(*block)[k * r->nrows + i] = c->n;
			if (mm_proc_vmas(in->ws->w[k], c->pid, collect_vma, c) == -ENOMEM)
				return -ENOMEM;
		}
	(*block)[nb] = c->n;
	return 0;
}

static int fill_mappings(struct report *r, const struct report_input *in)
{
	struct collect c = { 0 };
	size_t *block = NULL;
	struct report_object *names = NULL;
	int err = collect_all(r, in, &c, &block);
	if (err || (err = fill_regions(r, &c, block, in->ws->n)))
		goto out;
	size_t big = 0;
	for (size_t i = 0; i < c.n; i++)
		if (c.e[i].v.end - c.e[i].v.start >= in->min_mapping)
			c.e[big++] = c.e[i];
	c.n = big;
	if (c.n)
		qsort(c.e, c.n, sizeof(*c.e), cmp_entry);
	err = -ENOMEM;
	if (!(names = malloc((in->nobjects + 1) * sizeof(*names))) ||
	    !(r->maps = calloc(c.n + 1, sizeof(*r->maps))))
		goto out;
	err = 0;
	if (in->nobjects)
		memcpy(names, in->objects, in->nobjects * sizeof(*names));
	qsort(names, in->nobjects, sizeof(*names), cmp_named);
	for (size_t i = 0; i < c.n && !err; i++) {
		const struct vma_entry *e = &c.e[i];
		struct report_mapping *m = &r->maps[r->nmaps];
		if (!i || cmp_mapping(&c.e[i - 1].v, &e->v)) {
			m = &r->maps[r->nmaps++];
			*m = (struct report_mapping){
				.obj = e->v.obj, .start = e->v.start, .end = e->v.end,
				.offset = e->v.offset, .prot = e->v.prot,
				.flags = e->v.flags, .anon_pages = e->v.anon_pages,
				.first_pid = e->pid,
			};
			m->name = name_of(r, names, in->nobjects, &e->v.obj, &err);
		} else {
			m = &r->maps[r->nmaps - 1];
		}
		m->nprocs += e->world == 0;
		m->pol[e->world].reason = e->v.reason;
		m->pol[e->world].tables += e->v.tables;
		m->pol[e->world].shared += e->v.shared;
		err = err ? err : take_site(r, in, m, e);
	}
	/* Groups of one object are adjacent: judge each against its peers. */
	for (size_t lo = 0, hi; lo < r->nmaps; lo = hi) {
		for (hi = lo + 1; hi < r->nmaps &&
				  !cmp_obj(&r->maps[hi].obj, &r->maps[lo].obj); hi++)
			;
		for (size_t g = lo; g < hi; g++)
			for (size_t k = 0; k < r->npol; k++) {
				struct report_mapping *m = &r->maps[g];
				m->pol[k].why = m->pol[k].reason != MM_REASON_SHAREABLE
							? WHY_MODEL
						: m->pol[k].shared ? WHY_SHARED
						: why_unshared(r, g, lo, hi, k);
			}
	}
	qsort(r->maps, r->nmaps, sizeof(*r->maps), by_tables);
out:
	free(names);
	free(block);
	free(c.e);
	return err;
}

static void symbolize_site(struct report *r, struct symbols *sy,
			   struct report_site *site, int *err)
{
	for (size_t j = 0; j < site->n; j++) {
		struct report_frame *f = &site->f[j];
		struct symbol s;
		if (!f->object || report_symbols_lookup(sy, f->object, f->offset, &s))
			continue;
		f->function = report_keep(r, s.function, err);
		f->file = report_keep(r, s.file, err);
		f->line = s.line;
	}
}

int report_symbolize(struct report *r, struct symbols *sy)
{
	int err = 0;
	for (size_t i = 0; i < r->nmaps; i++)
		symbolize_site(r, sy, &r->maps[i].site, &err);
	for (size_t i = 0; i < r->nflames; i++)
		symbolize_site(r, sy, &r->flames[i].site, &err);
	return err;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

const char *report_frame_text(const struct report_frame *f, char *buf,
			      size_t len)
{
	if (f->function && f->file && f->line)
		snprintf(buf, len, "%s (%s:%" PRIu32 ")", f->function,
			 base_name(f->file), f->line);
	else if (f->function)
		snprintf(buf, len, "%s (%s+%#" PRIx64 ")", f->function,
			 base_name(f->object), f->offset);
	else if (f->object)
		snprintf(buf, len, "%s+%#" PRIx64, base_name(f->object), f->offset);
	else
		snprintf(buf, len, "%#" PRIx64, f->offset);
	return buf;
}

const char *report_why_text(const struct report_mapping *m, size_t policy)
{
	switch (m->pol[policy].why) {
	case WHY_SHARED:
		return "shared";
	case WHY_ALONE:
		return "no other process maps it";
	case WHY_OTHER_ADDRESS:
		return "different address in other processes";
	case WHY_OTHER_SLOT:
		return "offset modulo the table span differs in other processes";
	case WHY_FLAGS_DIFFER:
		return "protection or flags differ in other processes";
	case WHY_NOT_POPULATED:
		return "no span populated by two processes";
	case WHY_MODEL:
		break;
	}
	return mm_reason_name(m->pol[policy].reason);
}

const char *report_checkpoint_name(uint32_t reason)
{
	static const char *const names[] = {
		[PTS_CK_CONNECT] = "connect", [PTS_CK_FORK] = "fork",
		[PTS_CK_EXEC] = "exec", [PTS_CK_EXIT] = "exit",
		[PTS_CK_TIMER] = "timer", [PTS_CK_RESYNC] = "resync",
		[PTS_CK_FINAL] = "final",
	};
	return reason < sizeof(names) / sizeof(names[0]) ? names[reason] : "?";
}

const char *report_drop_name(uint32_t why)
{
	static const char *const names[] = {
		[REPORT_DROP_NONE] = NULL,
		[REPORT_DROP_MALFORMED] = "malformed records",
		[REPORT_DROP_DEAF] = "unread acks",
	};
	return why < sizeof(names) / sizeof(names[0]) ? names[why] : "?";
}

const char *report_untraced_name(uint32_t why)
{
	static const char *const names[] = {
		[REPORT_TRACED] = NULL,
		[REPORT_UNTRACED_CLOSED] = "connection closed",
		[REPORT_UNTRACED_EXEC] = "exec without the shim",
		[REPORT_UNTRACED_NO_FD] = "no fd to load the shim",
		[REPORT_UNTRACED_USER] = "another user",
	};
	return why < sizeof(names) / sizeof(names[0]) ? names[why] : "?";
}

uint64_t report_sum3(const uint64_t *t)
{
	return t[PT_PTE] + t[PT_PMD] + t[PT_PUD];
}

static int fill_header(struct report *r, const struct report_input *in)
{
	snprintf(r->command, sizeof(r->command), "%s", in->command);
	r->min_mapping = in->min_mapping;
	r->npol = in->ws->n;
	for (size_t k = 0; k < r->npol; k++) {
		struct report_policy *p = &r->pol[k];
		p->p = in->ws->policy[k];
		char label[sizeof(p->label)];
		snprintf(p->label, sizeof(p->label), "%s",
			 report_policy_label(&p->p, label, sizeof(label)));
		p->nfindings = mm_world_findings(in->ws->w[k], p->findings,
						 sizeof(p->findings) / sizeof(p->findings[0]));
	}
	r->skips = malloc((in->nskips + 1) * sizeof(*r->skips));
	if (!r->skips)
		return -ENOMEM;
	if (in->nskips)
		memcpy(r->skips, in->skips, in->nskips * sizeof(*r->skips));
	r->nskips = in->nskips;
	return report_set_finals(r, NULL, 0, NULL, in->stream);
}

bool report_final_plain(const struct report_final *x, size_t npol)
{
	for (size_t k = 0; k < npol; k++)
		if (x->policy_kb[k] < 0)
			return false;
	return x->model_kb >= 0 && x->model_kb == x->proc.vmpte_kb &&
	       x->proc.stable && !x->alive && !x->untraced && !x->lost &&
	       !x->malformed && !x->refused && !x->dropped && !x->fault_err &&
	       !x->own_uffd_ranges;
}

void report_fold_final(struct report_folded *f, const struct report_final *x,
		       size_t npol)
{
	f->processes++;
	f->records += x->records;
	f->resyncs += x->resyncs;
	f->no_uffd += x->fault_mode == PTS_FAULTS_OFF;
	f->vmpte_kb += x->proc.vmpte_kb;
	for (size_t k = 0; k < npol; k++) {
		f->policy_kb[k] += x->policy_kb[k];
		f->faults[k] += x->faults[k];
		f->observed[k] += x->observed[k];
	}
}

uint64_t report_finals_seen(const struct report *r)
{
	return r->nfinals + r->folded.processes;
}

void report_finals_faults(const struct report *r, size_t k, uint64_t *seen,
			  uint64_t *pagemap)
{
	*seen = r->folded.faults[k];
	*pagemap = r->folded.observed[k];
	for (size_t i = 0; i < r->nfinals; i++) {
		*seen += r->finals[i].faults[k];
		*pagemap += r->finals[i].observed[k];
	}
}

int report_set_finals(struct report *r, const struct report_final *finals,
		      size_t n, const struct report_folded *folded,
		      const struct report_stream *stream)
{
	struct report_final *copy = malloc((n + 1) * sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	if (n)
		memcpy(copy, finals, n * sizeof(*copy));
	free(r->finals);
	r->finals = copy;
	r->nfinals = n;
	r->folded = folded ? *folded : (struct report_folded){ 0 };
	r->finals_exact = 0;
	for (size_t i = 0; i < n; i++)
		r->finals_exact += copy[i].model_kb >= 0 &&
				   copy[i].model_kb == copy[i].proc.vmpte_kb;
	if ((r->has_stream = stream))
		r->stream = *stream;
	return 0;
}

int report_build(struct report *r, const struct report_input *in)
{
	*r = (struct report){ 0 };
	r->group_by = in->group_by;
	if (fill_header(r, in) || fill_rows(r, in) || fill_mappings(r, in) ||
	    (in->flames && report_flames_build(r, in)) || report_group(r)) {
		report_free(r);
		return -ENOMEM;
	}
	return 0;
}

void report_free(struct report *r)
{
	for (size_t i = 0; i < r->nstrings; i++)
		free(r->strings[i]);
	free(r->strings);
	free(r->procs);
	free(r->rows);
	free(r->maps);
	free(r->regions);
	free(r->skips);
	free(r->finals);
	report_series_free(&r->series);
	free(r->flames);
	for (size_t i = 0; i < r->nbuild_ids; i++)
		free(r->build_ids[i].object);
	free(r->build_ids);
	free(r->groups);
	*r = (struct report){ 0 };
}
