/* SPDX-License-Identifier: MIT */
/* What each process and the world hold: tables, sharing, PSS, findings. */
#include <stdlib.h>

#include "mm_internal.h"
#include "lib/grow.h"

/* A process's view below upper table t: tables per level (deposits count
 * as PTE tables) and those shared (some link on the path has share > 1). */
static void count_view(const struct pt_table *t, bool shared,
		       struct mm_proc_stats *s)
{
	if (t->level == PT_PMD) {
		unsigned n = t->nr_tables + t->nr_deposits;
		s->tables[PT_PTE] += n;
		if (shared) {
			s->shared[PT_PTE] += n;
			return;
		}
	}
	pt_for_each_used(i, t) {
		if (!pt_entry_is_table(t->e[i]))
			continue;
		const struct pt_table *c = pt_entry_table(t->e[i]);
		bool sh = shared || c->share > 1;
		if (c->level == PT_PTE) {
			s->shared[PT_PTE] += sh;
			continue;
		}
		s->tables[c->level]++;
		s->shared[c->level] += sh;
		count_view(c, sh, s);
	}
}

/* Its counters, and unless counters_only its tables and mapped bytes. */
static void proc_stats(const struct mm_space *mm, struct mm_proc_stats *s,
		       bool counters_only)
{
	*s = (struct mm_proc_stats){
		.pid = mm->pid,
		.faults = mm->c.faults,
		.faults_observed = mm->c.faults_observed,
		.fork_tables_copied = mm->c.fork_tables_copied,
		.fork_pages_copied = mm->c.fork_pages_copied,
		.fork_tables_linked = mm->c.fork_tables_linked,
		.cow_copies = mm->c.cow_copies,
		.vmas = mm->vmas.n,
	};
	if (counters_only)
		return;
	for (const struct mm_vma *v = vma_first(mm); v; v = vma_next(v))
		s->mapped_bytes += v->end - v->start;
	count_view(mm->pgd, false, s);
}

static int proc_stats_of(const struct mm_world *w, uint32_t pid,
			 struct mm_proc_stats *out, bool counters_only)
{
	const struct mm_space *mm = mm_find(mm_data_of(w), pid);
	if (!mm)
		return -ESRCH;
	proc_stats(mm, out, counters_only);
	return 0;
}

int mm_proc_stats(const struct mm_world *w, uint32_t pid,
		  struct mm_proc_stats *out)
{
	return proc_stats_of(w, pid, out, false);
}

int mm_proc_counters(const struct mm_world *w, uint32_t pid,
		     struct mm_proc_stats *out)
{
	return proc_stats_of(w, pid, out, true);
}

/* One walk over every path, three uses: count each table's users, sum a
 * process's 4 KiB / users, and clear the counts again. */
enum users_pass { USERS_COUNT, USERS_PSS, USERS_CLEAR };

static double users_walk(struct pt_table *t, enum users_pass pass)
{
	double pss = 0;
	pt_for_each_used(i, t) {
		uint64_t e = t->e[i];
		if (pt_entry_is_leaf(e)) {
			/* A deposit is used by whoever uses its PMD page. */
			if (e == PT_LEAF_DEPOSIT && pass == USERS_PSS)
				pss += (double)MM_PAGE_SIZE / t->users;
			continue;
		}
		struct pt_table *c = pt_entry_table(e);
		switch (pass) {
		case USERS_COUNT:
			c->users++;
			break;
		case USERS_PSS:
			pss += (double)MM_PAGE_SIZE / c->users;
			break;
		case USERS_CLEAR:
			c->users = 0;
			break;
		}
		if (c->level != PT_PTE)
			pss += users_walk(c, pass);
	}
	return pss;
}

/* Tables below t, t included (its deposits too). */
static uint64_t tables_below(const struct pt_table *t)
{
	uint64_t n = 1 + (t->level == PT_PMD ? t->nr_deposits : 0);
	if (t->level == PT_PTE)
		return n;
	pt_for_each_used(i, t)
		if (pt_entry_is_table(t->e[i]))
			n += tables_below(pt_entry_table(t->e[i]));
	return n;
}

void mm_mshare_tables(const struct mm_world *w, uint64_t out[PT_NR_LEVELS])
{
	struct mm_proc_stats s = { 0 };
	if (w->host)
		count_view(w->host->pgd, false, &s);
	memcpy(out, s.tables, sizeof(s.tables));
}

/* Each region's tables, shared out among the processes mapping it. */
void mm_mshare_pss(struct mm_world *w)
{
	for (struct mm_space *mm = w->first; mm; mm = mm->next)
		mm->host_pss = 0;
	if (!w->host)
		return;
	uint64_t gen = w->mshare_gen; /* a process counted once per region */
	for (size_t i = 0; i < w->objects.cap; i++) {
		const struct mm_object *o = w->objects.slot[i].item;
		if (!o || !o->mshare_slots)
			continue;
		uint64_t n = 0, tables = 0, s0 = o->mshare_base / MM_SPAN(PT_PUD);
		for (uint64_t s = s0; s < s0 + o->mshare_slots; s++)
			if (pt_entry_is_table(w->host->pgd->e[s]))
				tables += tables_below(
					pt_entry_table(w->host->pgd->e[s]));
		gen++;
		for (const struct mm_vma *v = o->first; v; v = v->obj_next)
			if (v->mshare && v->mm->mark != gen) {
				v->mm->mark = gen;
				n++;
			}
		gen++;
		for (const struct mm_vma *v = o->first; v; v = v->obj_next)
			if (v->mshare && v->mm->mark != gen) {
				v->mm->mark = gen;
				v->mm->host_pss += (double)(tables * MM_PAGE_SIZE) / n;
			}
	}
	w->mshare_gen = gen;
}

/* PTE tables (deposits too) below t whose span meets a private VMA. */
static uint64_t private_ptes(const struct mm_space *mm, const struct pt_table *t,
			     uint64_t tbase)
{
	uint64_t n = 0, esz = MM_ENTRY(t->level);
	pt_for_each_used(i, t) {
		uint64_t e = t->e[i], eb = tbase + i * esz;
		if (pt_entry_is_leaf(e) && e != PT_LEAF_DEPOSIT)
			continue;
		if (t->level > PT_PMD) {
			if (pt_entry_is_table(e))
				n += private_ptes(mm, pt_entry_table(e), eb);
			continue;
		}
		const struct mm_vma *v;
		uint64_t start = eb, end = eb + esz; /* the macro's names */
		vma_for_each_in(v, mm, start, end) {
			if (!(v->flags & MM_VMA_SHARED)) {
				n++;
				break;
			}
		}
	}
	return n;
}

/* Of a world that follows, the model it follows, under its own policy
 * (mm_follow.c). */
int mm_world_stats(struct mm_world *w, struct mm_proc_stats *out, size_t cap,
		   struct mm_world_totals *totals)
{
	struct mm_world_totals t = { 0 };
	struct mm_world *d = mm_data_of(w);
	for (unsigned l = 0; l < PT_NR_LEVELS; l++)
		t.distinct[l] = d->tables[l];
	mm_mshare_tables(d, t.host);
	mm_mshare_pss(d);
	for (struct mm_space *mm = d->first; mm; mm = mm->next) {
		mm->pgd->users = 1;
		users_walk(mm->pgd, USERS_COUNT);
	}
	for (struct mm_space *mm = d->first; mm; mm = mm->next) {
		struct mm_proc_stats s;
		proc_stats(mm, &s, false);
		s.pss_bytes = users_walk(mm->pgd, USERS_PSS) + mm->host_pss;
		if (w->policy.mshare)
			s.private_pte_tables = private_ptes(mm, mm->pgd, 0);
		for (unsigned l = 0; l < PT_NR_LEVELS; l++)
			t.linked[l] += s.tables[l];
		if (t.processes < cap)
			out[t.processes] = s;
		t.processes++;
	}
	for (struct mm_space *mm = d->first; mm; mm = mm->next)
		users_walk(mm->pgd, USERS_CLEAR);
	if (totals)
		*totals = t;
	return t.processes > INT32_MAX ? INT32_MAX : (int)t.processes;
}

size_t mm_world_findings(const struct mm_world *w, struct mm_finding *out,
			 size_t cap)
{
	static const struct mm_finding kinds[MM_FINDING_NR] = {
		[MM_FINDING_EXTRA_LINKS] = {
			.name = "fault-search-extra-links",
			.what = "links the posted patch's fault-time search "
				"would take after the first sharer (each a "
				"leaked table reference)" },
		[MM_FINDING_UNSHARE_PAST_END] = {
			.name = "unshare-past-end",
			.what = "shared tables the posted patch's unshare loop "
				"would detach just past the end of an "
				"mprotect/mremap range" },
		[MM_FINDING_UNSHARE_MISSED] = {
			.name = "unshare-misses-table",
			.what = "shared tables inside an mprotect/mremap range "
				"that the posted patch's unshare loop would "
				"leave shared" },
		[MM_FINDING_PRIVATE_ANON] = {
			.name = "private-anon-pages-shared",
			.what = "times the posted patch would share the tables "
				"of a private mapping holding copied-on-write "
				"pages" },
	};
	if (!w->policy.patch_findings)
		return 0;
	for (size_t i = 0; i < MM_FINDING_NR && i < cap; i++) {
		out[i] = kinds[i];
		out[i].count = w->findings[i];
	}
	return MM_FINDING_NR;
}

/* PTE tables (deposits too) of the spans [start, end) meets, and how many
 * of them are shared. */
static void count_range(const struct pt_table *t, uint64_t tbase,
			uint64_t start, uint64_t end, bool shared,
			uint64_t *tables, uint64_t *nshared)
{
	uint64_t esz = MM_ENTRY(t->level);
	unsigned lo, hi;
	pt_entries_in(t, tbase, start, end, &lo, &hi);
	for (unsigned i = lo; i <= hi; i++) {
		uint64_t e = t->e[i];
		if (!e || (pt_entry_is_leaf(e) && e != PT_LEAF_DEPOSIT))
			continue;
		const struct pt_table *c = pt_entry_is_leaf(e) ? NULL
								: pt_entry_table(e);
		bool sh = shared || (c && c->share > 1);
		if (!c || c->level == PT_PTE) {
			*tables += 1;
			*nshared += sh;
		} else {
			count_range(c, tbase + i * esz, start, end, sh, tables,
				    nshared);
		}
	}
}

int mm_proc_vmas(const struct mm_world *w, uint32_t pid,
		 int (*fn)(const struct mm_vma_info *vma, void *arg), void *arg)
{
	return mm_proc_vmas_in(w, pid, 0, UINT64_MAX, fn, arg);
}

/* What v is under w's policy (its tables not counted). */
static struct mm_vma_info vma_info(const struct mm_world *w,
				   const struct mm_vma *v)
{
	return (struct mm_vma_info){
		.start = v->start,
		.end = v->end,
		.offset = v->obj ? v->pgoff << MM_PAGE_SHIFT : 0,
		.obj = v->obj ? v->obj->id
			      : (struct mm_object_id){ MM_OBJ_ANON, 0, 0 },
		.prot = v->prot,
		.flags = v->flags,
		.huge_shift = v->huge_shift,
		.anon_pages = v->anon != 0,
		.reason = mm_vma_reason(&w->policy, v),
	};
}

/* v's part at the world's wstart, at the program's [start, end). */
static struct mm_vma_info part_info(const struct mm_world *w,
				    const struct mm_vma *v, uint64_t start,
				    uint64_t end, uint64_t wstart)
{
	struct mm_vma_info info = vma_info(w, v);
	if (v->obj)
		info.offset += wstart - v->start;
	info.start = start;
	info.end = end;
	return info;
}

/* The range of the mshare host's tables v's pages are in, if it is
 * placed there. */
static bool host_range(const struct mm_world *w, const struct mm_vma *v,
		       uint64_t *start, uint64_t *end)
{
	uint64_t last;
	if (!v->mshare || !w->host || !mm_mshare_addr(v, v->start, start) ||
	    !mm_mshare_addr(v, v->end - MM_PAGE_SIZE, &last))
		return false;
	*end = last + MM_PAGE_SIZE;
	return true;
}

/* v's part at the world's wstart, the program's [start, end), its tables
 * counted. */
static struct mm_vma_info vma_info_counted(const struct mm_world *w,
					   const struct mm_space *mm,
					   const struct mm_vma *v,
					   uint64_t start, uint64_t end,
					   uint64_t wstart)
{
	struct mm_vma_info info = part_info(w, v, start, end, wstart);
	uint64_t hs, he;
	if (host_range(w, v, &hs, &he)) {
		/* The host's tables for it, shared by definition. */
		count_range(w->host->pgd, 0, hs, he, true, &info.tables,
			    &info.shared);
	} else {
		count_range(mm->pgd, 0, wstart, wstart + (end - start), false,
			    &info.tables, &info.shared);
	}
	return info;
}

static int by_start(const void *a, const void *b)
{
	const struct mm_vma_info *x = a, *y = b;
	return (x->start > y->start) - (x->start < y->start);
}

struct program_vmas {
	const struct mm_world *w;
	const struct mm_space *mm;
	const struct mm_vma *v;
	struct mm_vma_info *all;
	size_t n, cap;
};

/* A part of the program's mapping in v: a VMA of the program's. */
static int program_part(uint64_t start, uint64_t end, uint64_t wstart,
			void *arg)
{
	struct program_vmas *p = arg;
	if (grow_array((void **)&p->all, &p->cap, p->n + 1, sizeof(*p->all)))
		return -ENOMEM;
	p->all[p->n++] = vma_info_counted(p->w, p->mm, p->v, start, end,
					  wstart);
	return 0;
}

/* hugetlb-2m's layout: the program's VMAs, in its order, which is not the
 * world's for those the kernel put elsewhere; a world VMA the moves
 * merged is the program's parts of it. */
static int vmas_moved(const struct mm_world *w, const struct mm_space *mm,
		      uint64_t start, uint64_t end,
		      int (*fn)(const struct mm_vma_info *vma, void *arg),
		      void *arg)
{
	struct program_vmas p = { .w = w, .mm = mm };
	int r = 0;
	for (p.v = vma_first(mm); p.v && !r; p.v = vma_next(p.v))
		r = mm_layout_each_program(mm, p.v->start, p.v->end,
					   program_part, &p);
	if (!r && p.n)
		qsort(p.all, p.n, sizeof(*p.all), by_start);
	for (size_t i = 0; i < p.n && !r; i++)
		if (p.all[i].end > start && p.all[i].start < end)
			r = fn(&p.all[i], arg);
	free(p.all);
	return r;
}

int mm_proc_vmas_in(const struct mm_world *w, uint32_t pid, uint64_t start,
		    uint64_t end,
		    int (*fn)(const struct mm_vma_info *vma, void *arg),
		    void *arg)
{
	const struct mm_space *mm = mm_find(mm_data_of(w), pid);
	if (!mm)
		return -ESRCH;
	if (mm->layout)
		return vmas_moved(w, mm, start, end, fn, arg);
	const struct mm_vma *v;
	vma_for_each_in(v, mm, start, end) {
		struct mm_vma_info info = vma_info_counted(w, mm, v, v->start,
							   v->end, v->start);
		int r = fn(&info, arg);
		if (r)
			return r;
	}
	return 0;
}

/*
 * The PTE tables below t that [start, end) meets and no mapping owns yet
 * (users 0), now owned (users 1).  A deposit goes with its PMD table: to
 * the process that met the table first (its users, the process's stamp).
 */
static uint64_t own_range(struct pt_table *t, uint64_t tbase, uint64_t start,
			  uint64_t end, uint32_t stamp)
{
	uint64_t n = 0, esz = MM_ENTRY(t->level);
	unsigned lo, hi;
	pt_entries_in(t, tbase, start, end, &lo, &hi);
	if (t->level == PT_PMD && !t->users)
		t->users = stamp;
	for (unsigned i = lo; i <= hi; i++) {
		uint64_t e = t->e[i];
		if (!e)
			continue;
		if (pt_entry_is_leaf(e)) {
			n += e == PT_LEAF_DEPOSIT && t->users == stamp;
			continue;
		}
		struct pt_table *c = pt_entry_table(e);
		if (c->level != PT_PTE) {
			n += own_range(c, tbase + i * esz, start, end, stamp);
		} else if (!c->users) {
			c->users = 1;
			n++;
		}
	}
	return n;
}

static void clear_users(struct mm_world *w)
{
	for (struct mm_space *mm = w->first; mm; mm = mm->next)
		users_walk(mm->pgd, USERS_CLEAR);
	if (w->host)
		users_walk(w->host->pgd, USERS_CLEAR);
}

struct owner_walk {
	struct mm_world *w;
	const struct mm_space *mm;
	const struct mm_vma *v;
	uint32_t stamp;
	int (*fn)(uint32_t pid, const struct mm_vma_info *v, uint64_t tables,
		  void *arg);
	void *arg;
};

static int own_part(uint64_t start, uint64_t end, uint64_t wstart, void *arg)
{
	struct owner_walk *o = arg;
	uint64_t hs, he, n = host_range(o->w, o->v, &hs, &he)
		? own_range(o->w->host->pgd, 0, hs, he, o->stamp)
		: own_range(o->mm->pgd, 0, wstart, wstart + (end - start),
			    o->stamp);
	if (!n)
		return 0;
	struct mm_vma_info info = part_info(o->w, o->v, start, end, wstart);
	return o->fn(o->mm->pid, &info, n, o->arg);
}

int mm_world_pte_owners(struct mm_world *w,
			int (*fn)(uint32_t pid, const struct mm_vma_info *v,
				  uint64_t tables, void *arg),
			void *arg)
{
	struct owner_walk o = { .w = w, .stamp = 1, .fn = fn, .arg = arg };
	struct mm_world *d = mm_data_of(w);
	int r = 0; /* stamp 1 marks a PTE table; a process's are 2... */
	clear_users(d);
	for (struct mm_space *mm = d->first; mm && !r; mm = mm->next) {
		o.mm = mm;
		o.stamp++;
		for (o.v = vma_first(mm); o.v && !r; o.v = vma_next(o.v))
			r = mm_layout_each_program(mm, o.v->start, o.v->end,
						   own_part, &o);
	}
	clear_users(d);
	return r;
}
