/* SPDX-License-Identifier: MIT */
/* Paths through a process's tables: lookup, allocation, linking, freeing. */
#include "mm_internal.h"

struct pt_table *mm_pt_alloc(struct mm_world *w, unsigned level)
{
	uint64_t n = 0;
	for (unsigned l = 0; l < PT_NR_LEVELS; l++)
		n += w->tables[l];
	struct pt_table *t = !w->max_tables || n < w->max_tables
				     ? mm_pt_pool_get(&w->pool, level) : NULL;
	if (!t) {
		mm_nomem(w, "a table page");
		return NULL;
	}
	w->tables[level]++;
	return t;
}

/* Drops one link to t; the last one frees it and drops what it links. */
static void pt_put(struct mm_world *w, struct pt_table *t)
{
	if (--t->share) {
		w->shared_tables -= t->share == 1;
		return;
	}
	if (t->level != PT_PTE)
		pt_for_each_used(i, t)
			mm_pt_clear_entry(w, t, i);
	w->tables[t->level]--;
	mm_pt_pool_put(&w->pool, t);
}

void mm_pt_link(struct mm_world *w, struct pt_table *parent, unsigned idx,
		 struct pt_table *child)
{
	parent->e[idx] = (uint64_t)(uintptr_t)child;
	pt_mark_used(parent, idx);
	parent->nr_tables++;
	w->shared_tables += ++child->share == 2;
}

void mm_pt_set_leaf(struct mm_world *w, struct pt_table *t, unsigned idx,
		    bool deposit)
{
	t->e[idx] = deposit ? PT_LEAF_DEPOSIT : PT_LEAF;
	pt_mark_used(t, idx);
	t->nr_leaves++;
	if (deposit) {
		t->nr_deposits++;
		w->tables[PT_PTE]++;
	}
}

/* Clears an upper entry: unlinks a table (detaching it when shared, freeing
 * it when this was its last link) or removes a leaf and its deposit. */
void mm_pt_clear_entry(struct mm_world *w, struct pt_table *t, unsigned idx)
{
	uint64_t e = t->e[idx];
	t->e[idx] = 0;
	pt_mark_unused(t, idx);
	w->unlinks++;
	if (pt_entry_is_table(e)) {
		t->nr_tables--;
		pt_put(w, pt_entry_table(e));
		return;
	}
	t->nr_leaves--;
	if (e == PT_LEAF_DEPOSIT) {
		t->nr_deposits--;
		w->tables[PT_PTE]--;
	}
}

/*
 * Splits the 2 MiB leaf at pmd->e[idx] into small pages: an anonymous THP's
 * deposit becomes its PTE table, every page present; a file leaf is simply
 * cleared (it refaults), as __split_huge_pmd() does.
 */
int mm_pt_split_leaf(struct mm_world *w, struct pt_table *pmd, unsigned idx)
{
	bool deposit = pmd->e[idx] == PT_LEAF_DEPOSIT;
	mm_pt_clear_entry(w, pmd, idx);
	if (!deposit)
		return 0;
	struct pt_table *pte = mm_pt_alloc(w, PT_PTE);
	if (!pte)
		return -ENOMEM;
	memset(pte->e, 0xff, PT_ENTRIES / 8);
	mm_pt_link(w, pmd, idx, pte);
	return 0;
}

struct pt_table *mm_pt_cow_break(struct mm_world *w, struct mm_space *mm,
				 struct pt_table *pmd, unsigned idx)
{
	struct pt_table *old = pt_entry_table(pmd->e[idx]);
	if (old->share == 1)
		return old; /* the last one: reused (cow_pte_count() == 1) */
	struct pt_table *copy = mm_pt_alloc(w, PT_PTE);
	if (!copy)
		return NULL;
	memcpy(copy->e, old->e, PT_ENTRIES / 8);
	mm_pt_clear_entry(w, pmd, idx); /* share - 1 */
	mm_pt_link(w, pmd, idx, copy);
	mm->c.cow_copies++;
	return copy;
}

int mm_cow_break_at(struct mm_world *w, struct mm_space *mm, uint64_t addr)
{
	if (!w->policy.cow_pte || !w->shared_tables)
		return 0;
	struct pt_table *pmd = mm_pt_lookup(mm->pgd, addr, PT_PMD, NULL);
	unsigned i = pt_index(addr, PT_PMD);
	if (!pmd || !pt_entry_is_table(pmd->e[i]) ||
	    pt_entry_table(pmd->e[i])->share == 1)
		return 0;
	return mm_pt_cow_break(w, mm, pmd, i) ? 0 : -ENOMEM;
}

/* The table at `level` covering addr, without allocating: NULL when a table
 * above is missing or a leaf maps addr.  *shared: the path is shared.
 * The levels are counted down from the root's, and a table's header is
 * read for its share only when asked: a step of the walk touches the one
 * cache line of its entry (splits and unmaps of every record walk to the
 * PMD page in each world). */
struct pt_table *mm_pt_lookup(struct pt_table *pgd, uint64_t addr,
			      unsigned level,
			      bool *shared)
{
	struct pt_table *t = pgd;
	bool sh = false;
	for (unsigned l = PT_PGD; l > level; l--) {
		uint64_t e = t->e[pt_index(addr, l)];
		if (!pt_entry_is_table(e))
			return NULL;
		t = pt_entry_table(e);
		if (shared)
			sh |= t->share > 1;
	}
	if (shared)
		*shared = sh;
	return t;
}

/*
 * Walks mm's tables down to the one at `level` covering addr, filling in the
 * missing tables on the way: with a sharer's table where v is given and the
 * policy shares that level, else with a new one.  *shared tells whether the
 * path goes through a shared table.  Returns 1 (and no table) when a huge
 * leaf higher up already maps addr.
 */
int mm_pt_walk_alloc(struct mm_world *w, struct mm_space *mm, struct mm_vma *v,
		     uint64_t addr, unsigned level, struct pt_table **out,
		     bool *shared)
{
	if (mm->pgd == w->empty_pgd) { /* its own root, now that it needs one */
		struct pt_table *own = mm_pt_pool_get(&w->pool, PT_PGD);
		if (!own)
			return mm_nomem(w, "a root table");
		own->share = 1;
		mm->pgd = own;
	}
	struct pt_table *t = mm->pgd;
	bool sh = false;
	while (t->level > level) {
		unsigned idx = pt_index(addr, t->level);
		uint64_t e = t->e[idx];
		if (pt_entry_is_leaf(e))
			return 1;
		if (!e) {
			struct pt_table *c = v ? mm_find_sharer(w, v, addr,
								t->level - 1)
					       : NULL;
			if (!c && !(c = mm_pt_alloc(w, t->level - 1)))
				return -ENOMEM;
			mm_pt_link(w, t, idx, c);
			e = t->e[idx];
		}
		t = pt_entry_table(e);
		sh |= t->share > 1;
	}
	if (level == PT_PTE) {
		mm->pte_hint = t;
		mm->pte_hint_span = addr >> 21;
		mm->pte_hint_unlinks = w->unlinks;
	}
	*out = t;
	if (shared)
		*shared = sh;
	return 0;
}
