/* SPDX-License-Identifier: MIT */
/* The invariant checker run after every operation in the tests. */
#include <stdlib.h>

#include "mm_internal.h"

#define BAD(w, ...) mm_fail(w, -EUCLEAN, __VA_ARGS__)

static bool same_ptr(const void *item, const void *key)
{
	return item == key;
}

struct census {
	struct ptr_map seen;
	uint64_t tables[PT_NR_LEVELS];
};

/* Visits each distinct upper table once, checking its counters and
 * counting, in each child's `users`, the entries that link it. */
static int census_table(struct mm_world *w, struct census *cs,
			struct pt_table *t)
{
	uint64_t h = ptr_map_hash((uintptr_t)t);
	if (ptr_map_get(&cs->seen, h, same_ptr, t))
		return 0;
	if (ptr_map_put(&cs->seen, h, t))
		return mm_nomem(w, "checking");
	if (t->level < PT_PGD)
		cs->tables[t->level]++;
	if (t->level == PT_PTE)
		return 0;
	unsigned tables = 0, leaves = 0, deposits = 0;
	for (unsigned i = 0; i < PT_ENTRIES; i++) {
		uint64_t e = t->e[i];
		if (!e != !pt_used(t, i))
			return BAD(w, "level-%u table's entry %u is %#llx, "
				   "its map says %s", t->level, i,
				   (unsigned long long)e,
				   pt_used(t, i) ? "used" : "unused");
		if (pt_entry_is_leaf(e)) {
			leaves++;
			deposits += e == PT_LEAF_DEPOSIT;
			if ((t->level != PT_PMD && t->level != PT_PUD) ||
			    (e == PT_LEAF_DEPOSIT && t->level != PT_PMD) ||
			    (e != PT_LEAF && e != PT_LEAF_DEPOSIT))
				return BAD(w, "bad leaf %#llx in a level-%u table",
					   (unsigned long long)e, t->level);
		} else if (e) {
			struct pt_table *c = pt_entry_table(e);
			tables++;
			if (c->level + 1 != t->level)
				return BAD(w, "level-%u table under a level-%u one",
					   c->level, t->level);
			c->users++;
			int r = census_table(w, cs, c);
			if (r)
				return r;
		}
	}
	cs->tables[PT_PTE] += deposits;
	if (tables != t->nr_tables || leaves != t->nr_leaves ||
	    deposits != t->nr_deposits)
		return BAD(w, "level-%u table counts %u/%u/%u, entries %u/%u/%u",
			   t->level, t->nr_tables, t->nr_leaves, t->nr_deposits,
			   tables, leaves, deposits);
	return 0;
}

/* Each link of each table is accounted for; users is left cleared. */
static int check_shares(struct mm_world *w, struct census *cs)
{
	int r = 0;
	uint64_t shared = 0;
	for (size_t i = 0; i < cs->seen.cap; i++) {
		struct pt_table *t = cs->seen.slot[i].item;
		if (!t)
			continue;
		if (!r && t->level != PT_PGD && t->users != t->share)
			r = BAD(w, "level-%u table shared %u times, linked %u",
				t->level, t->share, t->users);
		shared += t->share > 1;
		t->users = 0;
	}
	if (!r && shared != w->shared_tables)
		r = BAD(w, "%llu tables linked more than once, counted %llu",
			(unsigned long long)shared,
			(unsigned long long)w->shared_tables);
	for (unsigned l = 0; !r && l < PT_NR_LEVELS; l++)
		if (cs->tables[l] != w->tables[l])
			r = BAD(w, "%llu level-%u tables exist, %llu reachable: "
				"leaked or freed twice",
				(unsigned long long)w->tables[l], l,
				(unsigned long long)cs->tables[l]);
	return r;
}

/* Every entry of mm's view lies in a span one of its VMAs meets, and every
 * present page inside one of its VMAs. */
static int check_placement(struct mm_world *w, struct mm_space *mm,
			   struct pt_table *t, uint64_t tbase)
{
	uint64_t esz = MM_ENTRY(t->level);
	for (unsigned i = 0; i < PT_ENTRIES; i++) {
		uint64_t e = t->e[i], eb = tbase + i * esz;
		if (!e)
			continue;
		if (!mm_vma_any_in(mm, eb, eb + esz))
			return BAD(w, "process %u has a table or leaf at %#llx "
				   "with no mapping there", mm->pid,
				   (unsigned long long)eb);
		if (pt_entry_is_leaf(e))
			continue;
		struct pt_table *c = pt_entry_table(e);
		if (c->level != PT_PTE) {
			int r = check_placement(w, mm, c, eb);
			if (r)
				return r;
			continue;
		}
		for (unsigned k = 0; k < PT_ENTRIES; k++) {
			uint64_t a = eb + ((uint64_t)k << MM_PAGE_SHIFT);
			if (pt_test(c, k) && !mm_vma_find(mm, a))
				return BAD(w, "process %u has page %#llx present "
					   "outside its mappings", mm->pid,
					   (unsigned long long)a);
		}
	}
	return 0;
}

static int check_vmas(struct mm_world *w, struct mm_space *mm,
		      uint64_t *linked)
{
	uint64_t prev_end = 0;
	if (!mm_vma_set_consistent(mm))
		return BAD(w, "process %u: its mapping tree and list disagree",
			   mm->pid);
	for (const struct mm_vma *v = vma_first(mm); v; v = vma_next(v)) {
		uint64_t page = v->huge_shift ? 1ULL << v->huge_shift
					      : MM_PAGE_SIZE;
		if (v->mm != mm || v->start < prev_end || v->end <= v->start ||
		    v->end > MM_TASK_SIZE || ((v->start | v->end) & (page - 1)))
			return BAD(w, "process %u: bad or unsorted mapping "
				   "[%#llx, %#llx)", mm->pid,
				   (unsigned long long)v->start,
				   (unsigned long long)v->end);
		if (v->as_huge != mm_vma_as_huge(&w->policy, v) ||
		    v->huge_edges != (v->as_huge && w->policy.huge_aligned) ||
		    v->leaf != mm_leaf_of_shift(v->huge_shift))
			return BAD(w, "process %u: mapping [%#llx, %#llx) has "
				   "a stale leaf decision", mm->pid,
				   (unsigned long long)v->start,
				   (unsigned long long)v->end);
		prev_end = v->end;
		*linked += v->obj != NULL;
	}
	return 0;
}

static int check_objects(struct mm_world *w, uint64_t linked)
{
	uint64_t n = 0;
	for (size_t i = 0; i < w->objects.cap; i++) {
		const struct mm_object *o = w->objects.slot[i].item;
		if (!o)
			continue;
		if (!o->first)
			return BAD(w, "an object with no mapping stays");
		for (const struct mm_vma *v = o->first; v; v = v->obj_next, n++)
			if (v->obj != o || (v->obj_next && v->obj_next->obj_prev != v))
				return BAD(w, "object mapping list broken");
	}
	if (n != linked)
		return BAD(w, "%llu object-backed mappings, %llu on object lists",
			   (unsigned long long)linked, (unsigned long long)n);
	const struct mm_object *o = w->object_hint;
	if (o && ptr_map_get(&w->objects, mm_object_id_hash(&o->id), same_ptr,
			     o) != o)
		return BAD(w, "the object hint is no object of the world's");
	return 0;
}

/* The host holds tables only in its regions' slots, and every object's
 * count of VMAs in its region is right. */
static int check_mshare(struct mm_world *w, struct census *cs)
{
	for (size_t i = 0; i < w->objects.cap; i++) {
		const struct mm_object *o = w->objects.slot[i].item;
		uint32_t n = 0;
		if (!o)
			continue;
		for (const struct mm_vma *v = o->first; v; v = v->obj_next)
			n += v->mshare;
		if (n != o->mshare_vmas || (n && !o->mshare_slots) ||
		    (!n && o->mshare_slots))
			return BAD(w, "an object has %u VMAs in mshare, counts "
				   "%u, %u slots", n, o->mshare_vmas,
				   o->mshare_slots);
		for (uint64_t s = 0; s < o->mshare_slots; s++)
			if (w->host && w->host->pgd->e[o->mshare_base /
							MM_SPAN(PT_PUD) + s])
				w->host->pgd->users++; /* this slot is a region's */
	}
	if (!w->host)
		return 0;
	struct pt_table *pgd = w->host->pgd;
	unsigned used = 0;
	for (unsigned i = 0; i < PT_ENTRIES; i++)
		used += pgd->e[i] != 0;
	bool ok = pgd->users == used;
	pgd->users = 0;
	if (!ok || pgd->level != PT_PGD || pgd->share != 1 || pgd->nr_leaves)
		return BAD(w, "the mshare host holds tables outside its regions");
	return pgd == w->empty_pgd ? 0 : census_table(w, cs, pgd);
}

/* The PTE table the fault path would take without a walk is the walk's. */
static int check_hint(struct mm_world *w, const struct mm_space *mm)
{
	uint64_t addr = mm->pte_hint_span << 21;
	struct pt_table *t = mm_pte_hint(w, mm, addr);
	if (t && t != mm_pt_lookup(mm->pgd, addr, PT_PTE, NULL))
		return BAD(w, "process %u: a stale PTE table hint at %#llx",
			   mm->pid, (unsigned long long)addr);
	return 0;
}

int mm_check(struct mm_world *w)
{
	int r = mm_begin(w);
	if (r)
		return r;
	struct census cs = { 0 };
	uint64_t linked = 0;
	uint32_t exiting = 0;
	for (struct mm_space *mm = w->first; mm && !r; mm = mm->next) {
		exiting += mm->exiting;
		if (mm->pgd->level != PT_PGD || mm->pgd->share != 1)
			r = BAD(w, "process %u has a bad root table", mm->pid);
		else if (!(r = check_vmas(w, mm, &linked)) &&
			 !(r = check_hint(w, mm)) &&
			 !(r = mm_layout_check(w, mm)) &&
			 !(r = check_placement(w, mm, mm->pgd, 0)))
			r = census_table(w, &cs, mm->pgd);
	}
	if (!r && exiting != w->exiting)
		r = BAD(w, "%u processes exiting, counted %u", exiting,
			w->exiting);
	if (!r && w->host)
		r = check_hint(w, w->host);
	if (!r)
		r = check_mshare(w, &cs);
	if (!r && !mm_pt_pool_clean(&w->pool))
		r = BAD(w, "a table page given back to the pool is not empty");
	int r2 = check_shares(w, &cs); /* also clears the users it counted */
	ptr_map_free(&cs.seen);
	if (!r)
		r = r2;
	return r ? r : check_objects(w, linked);
}
