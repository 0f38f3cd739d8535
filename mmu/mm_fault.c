/* SPDX-License-Identifier: MIT */
/* Pages becoming present: faults, and pagemap observations. */
#include <limits.h>
#include <stdlib.h>

#include "mm_internal.h"
#include "lib/bsearch.h"

static unsigned popcount_map(const struct pt_table *t, const uint64_t *mask)
{
	unsigned n = 0;
	for (unsigned i = 0; i < PT_ENTRIES / 64; i++)
		n += __builtin_popcountll(t->e[i] & mask[i]);
	return n;
}

/* cow-pte: whether t, a PTE table, is shared by a fork not yet broken. */
static bool cow_shared(const struct mm_world *w, const struct pt_table *t)
{
	return w->policy.cow_pte && t->share > 1;
}

/* cow-pte: whether t, a shared PTE table mm links at sb, is shared with a
 * process that maps its pages still: one not exiting (mm_exiting), or a
 * link not found at sb in an exiting one.  Else the kernel dropped the
 * others' links, and t is mm's alone. */
static bool cow_shared_with_running(const struct mm_world *w,
				    const struct mm_space *mm, uint64_t sb,
				    const struct pt_table *t)
{
	uint32_t exiting = 0;
	if (!w->exiting)
		return true;
	for (const struct mm_space *o = w->first; o; o = o->next)
		exiting += o != mm && o->exiting &&
			   mm_pt_lookup(o->pgd, sb, PT_PTE, NULL) == t;
	return t->share - exiting > 1;
}

/* cow-pte: the PTE table at addr, *t, made mm's own copy (break_cow_pte());
 * 0 or -ENOMEM.  *shared as mm_pt_lookup() says it of the copy. */
static int cow_own(struct mm_world *w, struct mm_space *mm, uint64_t addr,
		   struct pt_table **t, bool *shared)
{
	if (mm_cow_break_at(w, mm, addr))
		return -ENOMEM;
	*t = mm_pt_lookup(mm->pgd, addr, PT_PTE, shared);
	return 0;
}

/*
 * Makes addr present in tm (mm, or the mshare host at the host's address)
 * at level leaf; sv: the VMA whose sharers the walk may link (NULL in the
 * host).  Returns 1 when it was not present in the table tm uses, 0 when
 * it was, or -ENOMEM.
 */
static int populate_at(struct mm_world *w, struct mm_space *tm,
		       struct mm_vma *v, struct mm_vma *sv, uint64_t addr,
		       unsigned leaf, bool write)
{
	struct pt_table *t = leaf == PT_PTE ? mm_pte_hint(w, tm, addr) : NULL;
	int r = t ? 0 : mm_pt_walk_alloc(w, tm, sv, addr, leaf, &t, NULL);
	if (r)
		return r < 0 ? r : 0;
	unsigned i = pt_index(addr, leaf);
	/* cow-pte: a write, or a page to add, breaks a shared table. */
	if (leaf == PT_PTE && cow_shared(w, t) && (write || !pt_test(t, i)) &&
	    cow_own(w, tm, addr, &t, NULL))
		return -ENOMEM;
	if (leaf == PT_PTE) {
		if (pt_test(t, i))
			return 0;
		t->e[i / 64] |= 1ULL << (i % 64);
		return 1;
	}
	if (t->e[i])
		return 0;
	mm_pt_set_leaf(w, t, i, !v->obj && !v->huge_shift);
	return 1;
}

/*
 * hugetlb-2m: a page of an edge span (mm_span_edge) is part of a 2 MiB
 * page the kernel would map by a PMD entry of its own: the walk makes the
 * PMD page on its path and stops there, leaving the span's entry to the
 * small pages of other mappings.  Nothing of the page is kept, so a touch
 * of it is never counted as a fault.  sv: as populate_at().
 */
static int map_edge(struct mm_world *w, struct mm_space *tm,
		    struct mm_vma *sv, uint64_t addr)
{
	struct pt_table *pmd;
	int r = mm_pt_walk_alloc(w, tm, sv, addr, PT_PMD, &pmd, NULL);
	return r < 0 ? r : 0;
}

/* Makes v's page at addr present in mm, or in the mshare host when v is in
 * a region (a page past the region's end is not modelled). */
static int populate(struct mm_world *w, struct mm_space *mm, struct mm_vma *v,
		    uint64_t addr, bool write)
{
	if (mm_span_edge(v, addr))
		return map_edge(w, mm, v, addr);
	unsigned leaf = mm_leaf_level_at(v, addr);
	if (!v->mshare)
		return populate_at(w, mm, v, v, addr, leaf, write);
	struct mm_space *host = mm_mshare_host(w);
	if (!host)
		return -ENOMEM;
	return mm_mshare_addr(v, addr, &addr)
		       ? populate_at(w, host, v, NULL, addr, leaf, write) : 0;
}

/* The VMA a fault at addr is in, when it allows the access (else NULL,
 * *err the refusal), ready to take the page. */
static struct mm_vma *fault_vma(struct mm_world *w, struct mm_space *mm,
				uint64_t addr, bool write, int *err)
{
	struct mm_vma *v = addr < MM_TASK_SIZE ? mm_vma_find(mm, addr) : NULL;
	if (!v) {
		*err = mm_fail(w, -EFAULT, "fault at %#llx outside any mapping",
			       (unsigned long long)addr);
		return NULL;
	}
	if (write ? !(v->prot & MM_PROT_WRITE) : !v->prot) {
		*err = mm_fail(w, -EACCES, "%s fault at %#llx not allowed by "
			       "the protection", write ? "write" : "read",
			       (unsigned long long)addr);
		return NULL;
	}
	/* A write to a private page is a copy-on-write: anon_vma_prepare().
	 * A read of private anonymous memory maps the zero page, except on a
	 * kernel without one, where do_anonymous_page() allocates the page
	 * and the anon_vma as for a write. */
	bool anon_page = write || (w->no_zero_page && mm_vma_is_anonymous(v));
	if (anon_page && !(v->flags & MM_VMA_SHARED) && !v->anon)
		v->anon = ++w->next_anon;
	return v;
}

int mm_fault(struct mm_world *w, uint32_t pid, uint64_t addr, bool write)
{
	int r;
	struct mm_space *mm = mm_begin_on(w, pid, &r);
	if (!mm)
		return r;
	if (mm->layout && !mm_layout_addr(mm, addr, &addr))
		return mm_fail(w, -EFAULT, "fault at %#llx outside any mapping",
			       (unsigned long long)addr);
	struct mm_vma *v = fault_vma(w, mm, addr, write, &r);
	if (!v)
		return r;
	r = populate(w, mm, v, addr, write);
	if (r > 0)
		mm->c.faults++;
	return r;
}

/* Whether pages [lo, hi) of PTE table t are not all present. */
static bool adds_pages(const struct pt_table *t, unsigned lo, unsigned hi)
{
	for (unsigned k = 0; k < PT_ENTRIES / 64; k++)
		if (pt_mask_word(lo, hi, k) & ~t->e[k])
			return true;
	return false;
}

/*
 * The pages of [start, end) in tm made present as faults one by one would
 * make them; *faults counts those that were not (a hugetlb page counts
 * leaf_pages).  Small pages a PTE table at a time: the walk the first page
 * of the table's span would make (it allocates, or finds a sharer's table,
 * for the rest), then its bits.  tm, sv: as populate_at(); the addresses
 * are tm's.
 */
static int populate_span(struct mm_world *w, struct mm_space *tm,
			 struct mm_vma *v, struct mm_vma *sv, uint64_t start,
			 uint64_t end, uint64_t leaf_pages, bool write,
			 uint64_t *faults)
{
	uint64_t unit = v->huge_shift ? 1ULL << v->huge_shift : MM_SPAN(PT_PTE);
	for (uint64_t a = start, next; a < end; a = next) {
		next = min_u64(align_down(a, unit) + unit, end);
		if (mm_span_edge(v, a)) {
			int r = map_edge(w, tm, sv, a);
			if (r)
				return r;
			continue;
		}
		bool as_huge = !v->mshare && mm_span_huge(v, a);
		if (v->huge_shift || as_huge) {
			int r = populate_at(w, tm, v, sv, a,
					    as_huge ? PT_PMD : v->leaf,
					    write);
			if (r < 0)
				return r;
			*faults += (uint64_t)r * (as_huge ? 1 : leaf_pages);
			continue;
		}
		struct pt_table *t;
		int r = mm_pt_walk_alloc(w, tm, sv, a, PT_PTE, &t, NULL);
		if (r < 0)
			return r;
		if (r) /* a huge leaf maps the span: every page is present */
			continue;
		uint64_t sb = align_down(a, unit);
		unsigned lo = (a - sb) >> MM_PAGE_SHIFT, hi = (next - sb) >> MM_PAGE_SHIFT;
		if (cow_shared(w, t) && (write || adds_pages(t, lo, hi)) &&
		    cow_own(w, tm, a, &t, NULL))
			return -ENOMEM;
		for (unsigned k = lo / 64; k <= (hi - 1) / 64; k++)
			*faults += pt_word_add(&t->e[k], pt_mask_word(lo, hi, k));
	}
	return 0;
}

/* populate_span() of [start, end) of v, in mm or in v's mshare region. */
static int populate_in(struct mm_world *w, struct mm_space *mm,
		       struct mm_vma *v, uint64_t start, uint64_t end,
		       uint64_t leaf_pages, bool write, uint64_t *faults)
{
	if (!v->mshare)
		return populate_span(w, mm, v, v, start, end, leaf_pages, write,
				     faults);
	uint64_t hs, he, last;
	if (!mm_mshare_addr(v, start, &hs))
		return 0;
	he = mm_mshare_addr(v, end - MM_PAGE_SIZE, &last) ? last + MM_PAGE_SIZE
		: v->obj->mshare_base + (uint64_t)v->obj->mshare_slots *
						MM_SPAN(PT_PUD);
	struct mm_space *host = mm_mshare_host(w);
	return host ? populate_span(w, host, v, NULL, hs, he, leaf_pages, write,
				    faults)
		    : -ENOMEM;
}

static int fault_piece(struct mm_world *w, struct mm_space *mm,
		       uint64_t start, uint64_t end, uint64_t from, void *arg)
{
	const bool *write = arg;
	uint64_t faults = 0;
	int r = 0;
	(void)from;
	for (uint64_t a = start; a < end && !r;) {
		struct mm_vma *v = fault_vma(w, mm, a, *write, &r);
		if (v) {
			r = populate_in(w, mm, v, a, min_u64(end, v->end), 1,
					*write, &faults);
			a = v->end;
		}
	}
	mm->c.faults += faults;
	return r < 0 ? r : 0;
}

int mm_fault_range(struct mm_world *w, uint32_t pid, uint64_t addr,
		   uint64_t len, bool write)
{
	int r;
	struct mm_space *mm = mm_begin_on(w, pid, &r);
	if (!mm)
		return r;
	if (!len)
		return 0;
	if ((r = mm_check_range(w, addr, len)))
		return r;
	uint64_t before = mm->c.faults;
	r = mm_layout_each(w, mm, addr, addr + len, fault_piece, &write);
	uint64_t faults = mm->c.faults - before;
	return r < 0 ? r : faults > INT_MAX ? INT_MAX : (int)faults;
}

/* Runs sorted, aligned and inside the window; hugetlb pages whole. */
static int check_observation(struct mm_world *w, struct mm_space *mm,
			     uint64_t start, uint64_t end,
			     const struct mm_run *runs, size_t n)
{
	if (end <= start)
		return mm_fail(w, -EINVAL, "empty observation window");
	int r = mm_check_range(w, start, end - start);
	if (r)
		return r;
	if ((r = mm_vma_check_huge_edges(w, mm, start, end)))
		return r;
	uint64_t prev = start;
	for (size_t i = 0; i < n; i++) {
		const struct mm_run *run = &runs[i];
		uint64_t align = run->huge ? MM_SPAN(PT_PTE) : MM_PAGE_SIZE;
		if (run->start < prev || run->end <= run->start ||
		    run->end > end || (run->start | run->end) & (align - 1))
			return mm_fail(w, -EINVAL,
				       "run %zu [%#llx, %#llx) is unaligned, "
				       "unsorted or outside [%#llx, %#llx)", i,
				       (unsigned long long)run->start,
				       (unsigned long long)run->end,
				       (unsigned long long)start,
				       (unsigned long long)end);
		prev = run->end;
	}
	return 0;
}

/* The 2 MiB span at sb is mapped by one PMD leaf (a THP). */
static int observe_thp(struct mm_world *w, struct mm_space *mm,
		       struct mm_vma *v, uint64_t sb, uint64_t *newly)
{
	struct pt_table *pmd;
	int r = mm_pt_walk_alloc(w, mm, v, sb, PT_PMD, &pmd, NULL);
	if (r)
		return r < 0 ? r : 0;
	unsigned i = pt_index(sb, PT_PMD);
	uint64_t e = pmd->e[i];
	if (pt_entry_is_leaf(e))
		return 0;
	unsigned had = 0;
	if (e) {
		static const uint64_t all[PT_ENTRIES / 64] = {
			~0ULL, ~0ULL, ~0ULL, ~0ULL, ~0ULL, ~0ULL, ~0ULL, ~0ULL
		};
		had = popcount_map(pt_entry_table(e), all);
		/* khugepaged: an anonymous THP keeps the old table as its
		 * deposit; a file THP's table is freed. */
		mm_pt_clear_entry(w, pmd, i);
	}
	mm_pt_set_leaf(w, pmd, i, !v->obj);
	*newly += PT_ENTRIES - had;
	return 0;
}

/* Small pages of [lo, hi) inside one 2 MiB span: present exactly where
 * the runs say, except that a shared table is only ever added to. */
static int observe_small(struct mm_world *w, struct mm_space *mm,
			 struct mm_vma *v, uint64_t lo, uint64_t hi,
			 const struct mm_run *runs, size_t n, size_t ri,
			 uint64_t *newly)
{
	uint64_t sb = align_down(lo, MM_SPAN(PT_PTE));
	unsigned a = (lo - sb) >> MM_PAGE_SHIFT, b = (hi - sb) >> MM_PAGE_SHIFT;
	unsigned ka = a / 64, kb = (b - 1) / 64; /* the words [a, b) is in */
	uint64_t mask[PT_ENTRIES / 64] = { 0 }, obs[PT_ENTRIES / 64] = { 0 };
	bool written = false;
	pt_map_set(mask, a, b);
	for (size_t j = ri; j < n && runs[j].start < hi; j++) {
		uint64_t rs = max_u64(runs[j].start, lo), re = min_u64(runs[j].end, hi);
		if (rs >= re)
			continue;
		written |= runs[j].written;
		pt_map_set(obs, (rs - sb) >> MM_PAGE_SHIFT,
			   (re - sb) >> MM_PAGE_SHIFT);
	}
	/* The PTE table is looked up from the PMD page: one walk. */
	bool shared = false, want = false;
	struct pt_table *pmd = mm_pt_lookup(mm->pgd, sb, PT_PMD, &shared);
	unsigned i = pt_index(sb, PT_PMD);
	if (pmd && pt_entry_is_leaf(pmd->e[i]) && mm_pt_split_leaf(w, pmd, i))
		return -ENOMEM;
	struct pt_table *t = pmd && pt_entry_is_table(pmd->e[i])
				     ? pt_entry_table(pmd->e[i]) : NULL;
	shared = t && (shared || t->share > 1);
	for (unsigned k = ka; k <= kb; k++)
		want |= (obs[k] & ~(t ? t->e[k] : 0)) != 0;
	if (want) {
		/* The walk when the table is missing, not again to find it. */
		int r = t ? 0 : mm_pt_walk_alloc(w, mm, v, sb, PT_PTE, &t,
						 &shared);
		if (r)
			return r < 0 ? r : 0;
		if (cow_shared(w, t) && cow_own(w, mm, sb, &t, &shared))
			return -ENOMEM;
		for (unsigned k = ka; k <= kb; k++)
			*newly += pt_word_add(&t->e[k], obs[k]);
	}
	/* cow-pte: a page gone from a shared table, or one this process maps
	 * alone (written since the fork, by it or by the other side), is a
	 * change: the table breaks first.  Not a page alone because the
	 * others sharing the table are exiting: their exit, not a write. */
	bool changed = false;
	for (unsigned k = ka; t && cow_shared(w, t) && k <= kb; k++)
		changed |= (t->e[k] & mask[k] & ~obs[k]) != 0;
	if (!changed && written && t && cow_shared(w, t))
		changed = cow_shared_with_running(w, mm, sb, t);
	if (changed && cow_own(w, mm, sb, &t, &shared))
		return -ENOMEM;
	if (t && !shared)
		for (unsigned k = ka; k <= kb; k++)
			t->e[k] &= ~(mask[k] & ~obs[k]);
	return 0;
}

/* The index of the first run ending after addr. */
static size_t run_after(const struct mm_run *runs, size_t n, uint64_t addr)
{
	return bsearch_first(runs, n, r, r->end <= addr);
}

/* A unit of v mapped by one leaf at level leaf from base: present when
 * any of its pages was seen (one fault, pages counted in *newly); seen
 * empty as a whole (whole), gone.  A sharer's leaf is left to it. */
static int observe_leaf(struct mm_world *w, struct mm_space *mm,
			struct mm_vma *v, uint64_t base, unsigned leaf, bool any,
			bool whole, uint64_t pages, uint64_t *newly)
{
	if (any) {
		int r = populate(w, mm, v, base, false);
		*newly += r > 0 ? pages : 0;
		return r < 0 ? r : 0;
	}
	bool shared;
	struct pt_table *t = mm_pt_lookup(mm->pgd, base, leaf, &shared);
	unsigned i = pt_index(base, leaf);
	if (whole && t && !shared && pt_entry_is_leaf(t->e[i]))
		mm_pt_clear_entry(w, t, i);
	return 0;
}

/*
 * [cb, ce) of v, inside one unit: a huge page of a hugetlb VMA, present as a
 * whole or not; or a 2 MiB span of small pages, which may be one THP.
 * runs[ri]: the first run ending after cb.
 */
static int observe_unit(struct mm_world *w, struct mm_space *mm,
			struct mm_vma *v, uint64_t cb, uint64_t ce,
			const struct mm_run *runs, size_t n, size_t ri,
			uint64_t *newly)
{
	bool any = ri < n && runs[ri].start < ce;
	if (v->huge_shift)
		return observe_leaf(w, mm, v, cb, v->leaf, any, true,
				    (ce - cb) >> MM_PAGE_SHIFT, newly);
	uint64_t sb = align_down(cb, MM_SPAN(PT_PTE));
	/* As if hugetlb or shmem THP: a page seen anywhere in the span was
	 * one fault mapping all of it; a whole span seen empty was zapped. */
	if (mm_span_huge(v, cb))
		return observe_leaf(w, mm, v, sb, PT_PMD, any,
				    cb == sb && ce == sb + MM_SPAN(PT_PTE), 1,
				    newly);
	if (mm_span_edge(v, cb))
		return any ? map_edge(w, mm, v, cb) : 0;
	bool thp = any && runs[ri].huge && runs[ri].start <= sb &&
		   runs[ri].end >= sb + MM_SPAN(PT_PTE) && v->start <= sb &&
		   sb + MM_SPAN(PT_PTE) <= v->end;
	return thp ? observe_thp(w, mm, v, sb, newly)
		   : observe_small(w, mm, v, cb, ce, runs, n, ri, newly);
}

struct absent {
	struct mm_world *w;
	struct mm_space *mm;
	struct mm_vma *v;
	uint64_t lo, hi, unit;
	const struct mm_run *runs;
	size_t n;
	uint64_t *newly;
};

/* A shared PTE table, which a scan only ever adds to (observe_small) but
 * under cow-pte: nothing of it can be absent.  A forked server's children
 * share hundreds of them (a PostgreSQL backend's shared_buffers). */
static bool kept_shared(const struct mm_world *w, uint64_t e)
{
	const struct pt_table *t = pt_entry_table(e);
	return t->level == PT_PTE && t->share > 1 && !w->policy.cow_pte;
}

/* The units below t the model holds something in but no run meets: what
 * the scan says is gone. */
static int clear_absent(struct absent *a, struct pt_table *t, uint64_t tbase)
{
	uint64_t esz = MM_ENTRY(t->level);
	unsigned lo, hi;
	pt_entries_in(t, tbase, a->lo, a->hi, &lo, &hi);
	for (unsigned i = lo; i <= hi; i++) {
		uint64_t e = t->e[i], eb = tbase + i * esz;
		if (!e || (pt_entry_is_table(e) && kept_shared(a->w, e)))
			continue;
		if (esz > a->unit) {
			if (pt_entry_is_table(e) &&
			    clear_absent(a, pt_entry_table(e), eb))
				return -ENOMEM;
			continue;
		}
		uint64_t cb = max_u64(eb, a->lo), ce = min_u64(eb + esz, a->hi);
		size_t ri = run_after(a->runs, a->n, cb);
		if ((ri == a->n || a->runs[ri].start >= ce) &&
		    observe_unit(a->w, a->mm, a->v, cb, ce, a->runs, a->n, ri,
				 a->newly))
			return -ENOMEM;
	}
	return 0;
}

/*
 * The units the runs meet, then those the model holds with no run: never a
 * walk of the whole VMA, which may span terabytes (a sanitizer's shadow, a
 * reserved heap) of which the scan saw a few pages.
 */
static int observe_vma(struct mm_world *w, struct mm_space *mm,
		       struct mm_vma *v, uint64_t lo, uint64_t hi,
		       const struct mm_run *runs, size_t n, uint64_t *newly)
{
	/* In an mshare region: the pages seen join the host's, which one
	 * process's scan cannot take away from the others. */
	if (v->mshare) {
		uint64_t unit = v->huge_shift ? 1ULL << v->huge_shift : MM_PAGE_SIZE;
		for (size_t j = 0; j < n && runs[j].start < hi; j++) {
			uint64_t rs = max_u64(runs[j].start, lo);
			uint64_t re = min_u64(runs[j].end, hi);
			int r = rs < re ? populate_in(w, mm, v, rs, re,
						      unit >> MM_PAGE_SHIFT,
						      false, newly)
					: 0;
			if (r)
				return r;
		}
		return 0;
	}
	/* Anonymous pages in a private mapping: it was written (anon_vma). */
	for (size_t j = 0; !v->anon && !(v->flags & MM_VMA_SHARED) && j < n &&
			   runs[j].start < hi; j++)
		if (runs[j].anon && runs[j].end > lo)
			v->anon = ++w->next_anon;
	uint64_t unit = v->huge_shift ? 1ULL << v->huge_shift : MM_SPAN(PT_PTE);
	uint64_t done = lo; /* the units before it, each run before j's end */
	uint64_t met = 0;   /* units a run meets, each once */
	for (size_t j = 0; j < n && runs[j].start < hi; j++) {
		uint64_t cb = max_u64(done, max_u64(lo, align_down(runs[j].start, unit)));
		uint64_t re = min_u64(runs[j].end, hi);
		for (; cb < re; cb = done, met++) {
			done = min_u64(align_down(cb, unit) + unit, hi);
			int r = observe_unit(w, mm, v, cb, done, runs, n, j,
					     newly);
			if (r)
				return r;
		}
	}
	/* A run met every unit: none is left for clear_absent to find (most
	 * of a short-lived program's VMAs are a few pages, all seen). */
	if (met == (align_down(hi - 1, unit) - align_down(lo, unit)) / unit + 1)
		return 0;
	struct absent a = { w, mm, v, lo, hi, unit, runs, n, newly };
	return clear_absent(&a, mm->pgd, 0);
}

/* The runs of an observation, and what the pieces saw. */
struct observation {
	const struct mm_run *runs;
	size_t n;
	struct mm_run *moved; /* scratch: runs at the world's addresses */
	uint64_t newly;
};

/* The runs of the program's [from, from + end - start) at the world's
 * [start, end): a huge run moved off its alignment is small pages. */
static size_t runs_at(const struct observation *o, uint64_t start,
		      uint64_t end, uint64_t from)
{
	uint64_t to = from + (end - start);
	size_t k = 0;
	for (size_t i = run_after(o->runs, o->n, from);
	     i < o->n && o->runs[i].start < to; i++) {
		const struct mm_run *run = &o->runs[i];
		struct mm_run *m = &o->moved[k++];
		*m = *run;
		m->start = max_u64(run->start, from) - from + start;
		m->end = min_u64(run->end, to) - from + start;
		m->huge = run->huge && !((m->start | m->end | (start - from)) &
					 (MM_SPAN(PT_PTE) - 1));
	}
	return k;
}

/* The piece's runs: the program's, or those moved to its addresses. */
static const struct mm_run *piece_runs(struct observation *o, uint64_t start,
				       uint64_t end, uint64_t from, size_t *n)
{
	if (!o->moved) {
		*n = o->n;
		return o->runs;
	}
	*n = runs_at(o, start, end, from);
	return o->moved;
}

static int check_piece(struct mm_world *w, struct mm_space *mm, uint64_t start,
		       uint64_t end, uint64_t from, void *arg)
{
	size_t nruns;
	const struct mm_run *runs = piece_runs(arg, start, end, from, &nruns);
	return check_observation(w, mm, start, end, runs, nruns);
}

static int observe_piece(struct mm_world *w, struct mm_space *mm,
			 uint64_t start, uint64_t end, uint64_t from, void *arg)
{
	struct observation *o = arg;
	size_t nruns, first = 0; /* the first run that may meet this VMA */
	const struct mm_run *runs = piece_runs(o, start, end, from, &nruns);
	struct mm_vma *v;
	vma_for_each_in(v, mm, start, end) {
		/* The walk waits on each VMA's line: the next one's is
		 * fetched while this one is observed. */
		__builtin_prefetch(v->node.next);
		while (first < nruns && runs[first].end <= v->start)
			first++;
		/* No runs may come as NULL, which takes no offset, not even
		 * 0 (UBSan: a checkpoint that saw no page). */
		int r = observe_vma(w, mm, v, max_u64(start, v->start),
				    min_u64(end, v->end),
				    nruns ? runs + first : runs, nruns - first,
				    &o->newly);
		if (r)
			return r;
	}
	return 0;
}

int mm_observe(struct mm_world *w, uint32_t pid, uint64_t start, uint64_t end,
	       const struct mm_run *runs, size_t nruns)
{
	int r;
	struct mm_space *mm = mm_begin_on(w, pid, &r);
	if (!mm)
		return r;
	struct observation o = { runs, nruns, NULL, 0 };
	if (mm->layout) {
		/* The program's runs, checked where it had them. */
		if ((r = check_observation(w, mm, start, end, runs, nruns)))
			return r;
		if (!(o.moved = malloc((nruns + 1) * sizeof(*o.moved))))
			return mm_nomem(w, "an observation");
	}
	r = mm_layout_each(w, mm, start, end, check_piece, &o);
	if (!r)
		r = mm_layout_each(w, mm, start, end, observe_piece, &o);
	free(o.moved);
	if (r)
		return r;
	mm->c.faults_observed += o.newly;
	return o.newly > INT_MAX ? INT_MAX : (int)o.newly;
}
