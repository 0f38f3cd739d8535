/* SPDX-License-Identifier: MIT */
/* Taking pages and tables away: zap, free_pgtables, munmap, teardown. */
#include "mm_internal.h"

/* Detaches the shared tables below t meeting [start, end) and clears the
 * pages of the private ones; a huge leaf partly inside is split first.
 * cow-pte detaches a shared PTE table only when the range covers its whole
 * span; else mm copies it first (zap_pte_range's break_cow_pte). */
static int zap_table(struct mm_world *w, struct mm_space *mm,
		     struct pt_table *t, uint64_t tbase, uint64_t start,
		     uint64_t end)
{
	uint64_t esz = MM_ENTRY(t->level);
	unsigned lo, hi;
	pt_entries_in(t, tbase, start, end, &lo, &hi);
	for (unsigned i = lo; i <= hi; i++) {
		uint64_t e = t->e[i], eb = tbase + i * esz;
		if (pt_entry_is_leaf(e)) {
			if (start <= eb && eb + esz <= end) {
				mm_pt_clear_entry(w, t, i);
				continue;
			}
			if (mm_pt_split_leaf(w, t, i))
				return -ENOMEM;
			e = t->e[i];
		}
		if (!pt_entry_is_table(e))
			continue;
		struct pt_table *c = pt_entry_table(e);
		if (c->share > 1 && c->level == PT_PTE && w->policy.cow_pte &&
		    (eb < start || eb + esz > end) &&
		    !(c = mm_pt_cow_break(w, mm, t, i)))
			return -ENOMEM;
		if (c->share > 1) {
			mm_pt_clear_entry(w, t, i);
		} else if (c->level == PT_PTE) {
			unsigned a = (max_u64(start, eb) - eb) >> MM_PAGE_SHIFT;
			unsigned b = (min_u64(end, eb + esz) - eb) >> MM_PAGE_SHIFT;
			for (unsigned k = a / 64; k <= (b - 1) / 64; k++)
				c->e[k] &= ~pt_mask_word(a, b, k);
		} else if (zap_table(w, mm, c, eb, start, end)) {
			return -ENOMEM;
		}
	}
	return 0;
}

int mm_zap(struct mm_world *w, struct mm_space *mm, uint64_t start,
	   uint64_t end)
{
	return zap_table(w, mm, mm->pgd, 0, start, end);
}

/*
 * free_pgtables(): the tables meeting [start, end), which holds no VMA any
 * more, whose whole span holds none either go, top-down; shared ones are
 * only detached.  A span meeting the range holds a VMA when the one before
 * the range ends in it (floor) or the one after starts in it (ceiling), as
 * the kernel's floor and ceiling say: no lookup a table.
 */
static void free_table(struct mm_world *w, struct pt_table *t, uint64_t tbase,
		       uint64_t start, uint64_t end, uint64_t floor,
		       uint64_t ceiling)
{
	uint64_t esz = MM_ENTRY(t->level);
	unsigned lo, hi;
	pt_entries_in(t, tbase, start, end, &lo, &hi);
	for (unsigned i = lo; i <= hi; i++) {
		uint64_t e = t->e[i], eb = tbase + i * esz;
		if (!pt_entry_is_table(e))
			continue;
		struct pt_table *c = pt_entry_table(e);
		if (floor <= eb && ceiling >= eb + esz)
			mm_pt_clear_entry(w, t, i);
		else if (c->share == 1 && c->level > PT_PTE)
			free_table(w, c, eb, start, end, floor, ceiling);
	}
}

/*
 * A table spanning more holds the 2 MiB spans inside it: when no 2 MiB span
 * meeting the range lies between floor and ceiling, no table goes, and the
 * walk is not made (free_pgd_range()'s rounding of addr and end does the
 * same).  The first such span is the one from which on both floor and start
 * allow; those after it lie inside the range until the last.
 */
static void free_pgtables(struct mm_world *w, struct mm_space *mm,
			  uint64_t start, uint64_t end)
{
	const struct mm_vma *next = mm_vma_first_after(mm, start);
	const struct mm_vma *prev = vma_before(mm, next);
	uint64_t floor = prev ? prev->end : 0;
	uint64_t ceiling = next ? next->start : UINT64_MAX;
	uint64_t span = MM_SPAN(PT_PTE);
	uint64_t first = max_u64(align_down(floor + span - 1, span),
				 align_down(start, span));
	if (first < end && ceiling - first >= span)
		free_table(w, mm->pgd, 0, start, end, floor, ceiling);
}

/* munmap() of [start, end), validated by the caller. */
int mm_do_unmap(struct mm_world *w, struct mm_space *mm, uint64_t start,
		uint64_t end)
{
	if (!mm_vma_any_in(mm, start, end))
		return 0;
	if (mm_vma_split(w, mm, start) || mm_vma_split(w, mm, end) ||
	    mm_zap(w, mm, start, end))
		return -ENOMEM;
	struct mm_vma *v = mm_vma_first_after(mm, start);
	while (v && v->start < end) {
		struct mm_vma *next = vma_next(v);
		mm_vma_remove(mm, v);
		mm_object_unlink(v);
		mm_vma_free(v);
		v = next;
	}
	free_pgtables(w, mm, start, end);
	return 0;
}

void mm_teardown(struct mm_world *w, struct mm_space *mm)
{
	pt_for_each_used(i, mm->pgd)
		mm_pt_clear_entry(w, mm->pgd, i);
	for (struct mm_vma *v = vma_first(mm), *next; v; v = next) {
		next = vma_next(v);
		mm_object_unlink(v);
		mm_vma_free(v);
	}
	mm->vmas = (struct avl_tree){ 0 };
	mm->hint = NULL;
}

/* MADV_DONTNEED: zap each VMA's part, then free the PTE tables whose whole
 * span the zap emptied within one VMA (CONFIG_PT_RECLAIM). */
int mm_dontneed(struct mm_world *w, struct mm_space *mm, uint64_t start,
		uint64_t end)
{
	const struct mm_vma *v;
	vma_for_each_in(v, mm, start, end) {
		uint64_t lo = max_u64(start, v->start);
		uint64_t hi = min_u64(end, v->end);
		if (mm_zap(w, mm, lo, hi))
			return -ENOMEM;
		uint64_t span = MM_SPAN(PT_PTE);
		for (uint64_t sb = align_down(lo + span - 1, span); sb + span <= hi;
		     sb += span) {
			struct pt_table *pmd = mm_pt_lookup(mm->pgd, sb, PT_PMD,
							    NULL);
			unsigned i = pt_index(sb, PT_PMD);
			if (pmd && pt_entry_is_table(pmd->e[i]))
				mm_pt_clear_entry(w, pmd, i);
		}
	}
	return 0;
}

/* MADV_REMOVE: a hole punched in the object is zapped in every VMA of every
 * process mapping it (unmap_mapping_range()); no table is freed. */
int mm_remove(struct mm_world *w, struct mm_space *mm, uint64_t start,
	      uint64_t end)
{
	const struct mm_vma *v;
	vma_for_each_in(v, mm, start, end) {
		uint64_t lo = mm_vma_offset(v, max_u64(start, v->start));
		uint64_t hi = lo + (min_u64(end, v->end) - max_u64(start, v->start));
		if (v->mshare && mm_mshare_zap(w, v, max_u64(start, v->start),
					       min_u64(end, v->end)))
			return -ENOMEM;
		for (struct mm_vma *s = v->obj->first; s; s = s->obj_next) {
			uint64_t soff = s->pgoff << MM_PAGE_SHIFT;
			uint64_t a = max_u64(lo, soff);
			uint64_t b = min_u64(hi, soff + (s->end - s->start));
			if (a < b && mm_zap(w, s->mm, s->start + (a - soff),
					    s->start + (b - soff)))
				return -ENOMEM;
		}
	}
	return 0;
}
