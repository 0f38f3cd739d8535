/* SPDX-License-Identifier: MIT */
/* The policy's sharing rules: which VMAs share, who matches, unsharing. */
#include "mm_internal.h"

static bool covers(const struct mm_vma *v, uint64_t base, unsigned level)
{
	return v->start <= base && base + MM_SPAN(level) <= v->end;
}

/* Whether the VMA is in the policy's scope, whatever its alignment. */
static enum mm_reason scope_reason(const struct mm_policy *p,
				   const struct mm_vma *v)
{
	bool priv = !(v->flags & MM_VMA_SHARED);
	switch (p->scope) {
	case MM_SCOPE_NONE:
		return MM_REASON_POLICY_SHARES_NOTHING;
	case MM_SCOPE_HUGETLB_SHARED:
		return v->huge_shift && !priv ? MM_REASON_SHAREABLE
					      : MM_REASON_NOT_HUGETLB_SHARED;
	case MM_SCOPE_SHMEM_HUGE_SHARED:
		return (v->huge_shift || mm_vma_as_huge(p, v)) && !priv
			       ? MM_REASON_SHAREABLE
			       : MM_REASON_NOT_SHARED_SHMEM;
	case MM_SCOPE_MSHARE:
		return priv ? MM_REASON_PRIVATE
		       : v->mshare ? MM_REASON_SHAREABLE : MM_REASON_NOT_PLACED;
	case MM_SCOPE_FILE:
		break;
	}
	/* The 2005 patch's pt_shareable_vma(), then its missing check. */
	if (!v->obj)
		return MM_REASON_ANON_PRIVATE;
	if (priv && (v->prot & MM_PROT_WRITE))
		return MM_REASON_PRIVATE_WRITABLE;
	if (v->end - v->start < MM_SPAN(PT_PTE))
		return MM_REASON_SMALL;
	if (priv && v->anon)
		return MM_REASON_PRIVATE_ANON_PAGES;
	return MM_REASON_SHAREABLE;
}

/* Whether a table of v may be shared, or counted in the patch's findings,
 * under p once aligned spans are covered: v is in p's scope. */
bool mm_vma_in_scope(const struct mm_policy *p, const struct mm_vma *v)
{
	enum mm_reason r = scope_reason(p, v);
	return r == MM_REASON_SHAREABLE || r == MM_REASON_PRIVATE_ANON_PAGES;
}

enum mm_reason mm_vma_reason(const struct mm_policy *p, const struct mm_vma *v)
{
	enum mm_reason r = scope_reason(p, v);
	if (r == MM_REASON_SHAREABLE && !p->mshare) {
		for (unsigned l = 0; l < PT_NR_LEVELS; l++) {
			uint64_t base = align_down(v->start + MM_SPAN(l) - 1,
						   MM_SPAN(l));
			if ((p->levels & (1u << l)) && covers(v, base, l))
				return r;
		}
		r = MM_REASON_NO_WHOLE_SPAN;
	}
	/* Not shared, but mapped by 2 MiB pages: by PMD leaves where it
	 * covers a span, and under hugetlb-2m with no PTE table anywhere. */
	uint64_t sb = align_down(v->start + MM_SPAN(PT_PTE) - 1, MM_SPAN(PT_PTE));
	if (r != MM_REASON_SHAREABLE && mm_vma_as_huge(p, v) &&
	    (covers(v, sb, PT_PTE) || (p->huge_aligned && mm_vma_no_pte(v))))
		return MM_REASON_HUGE_PAGES;
	return r;
}

/* May the table at `level` covering addr be shared under the policy? */
bool mm_shares_level(const struct mm_policy *p, const struct mm_vma *v,
		     uint64_t addr, unsigned level)
{
	return !p->mshare && (p->levels & (1u << level)) &&
	       covers(v, align_down(addr, MM_SPAN(level)), level) &&
	       scope_reason(p, v) == MM_REASON_SHAREABLE;
}

/* Would the posted patch share it (its test lacks the anon-pages check)? */
bool mm_patch_shares_level(const struct mm_policy *p, const struct mm_vma *v,
			   uint64_t addr, unsigned level)
{
	enum mm_reason r = scope_reason(p, v);
	return p->patch_findings && (p->levels & (1u << level)) &&
	       covers(v, align_down(addr, MM_SPAN(level)), level) &&
	       (r == MM_REASON_SHAREABLE || r == MM_REASON_PRIVATE_ANON_PAGES);
}

static bool flags_match(const struct mm_policy *p, const struct mm_vma *a,
			const struct mm_vma *b)
{
	uint32_t mask = p->ignore_locked ? ~(uint32_t)MM_VMA_LOCKED : ~0u;
	return a->prot == b->prot && a->huge_shift == b->huge_shift &&
	       (a->flags & mask) == (b->flags & mask);
}

/* Where s would hold the table v needs at base, if s matches v at all. */
static bool sharer_base(const struct mm_policy *p, const struct mm_vma *v,
			const struct mm_vma *s, uint64_t base, unsigned level,
			uint64_t *sbase)
{
	if (!flags_match(p, v, s))
		return false;
	if (p->match == MM_MATCH_SAME_RANGE) {
		*sbase = base;
		return s->start == v->start && s->end == v->end &&
		       s->pgoff == v->pgoff;
	}
	uint64_t off = mm_vma_offset(v, base), soff = s->pgoff << MM_PAGE_SHIFT;
	if (off < soff)
		return false;
	*sbase = s->start + (off - soff);
	return *sbase % MM_SPAN(level) == 0 && covers(s, *sbase, level);
}

/*
 * The table v's process should link at `level` for addr: the first sharer's
 * populated one, in the object's list order.  Under patch_findings the
 * search goes on, as pt_share_pte()/pt_share_pmd() do, to count the links
 * the posted patch would have taken.
 */
struct pt_table *mm_find_sharer(struct mm_world *w, struct mm_vma *v,
				uint64_t addr, unsigned level)
{
	const struct mm_policy *p = &w->policy;
	bool ours = mm_shares_level(p, v, addr, level);
	bool patch = mm_patch_shares_level(p, v, addr, level);
	if (!ours && !patch)
		return NULL;
	uint64_t base = align_down(addr, MM_SPAN(level));
	struct pt_table *found = NULL;
	uint64_t patch_links = 0;
	bool anon_pages = !ours;
	for (struct mm_vma *s = v->obj->first; s; s = s->obj_next) {
		uint64_t sbase;
		if (s == v || !sharer_base(p, v, s, base, level, &sbase))
			continue;
		struct pt_table *par = mm_pt_lookup(s->mm->pgd, sbase,
						    level + 1, NULL);
		uint64_t e = par ? par->e[pt_index(sbase, level + 1)] : 0;
		if (!pt_entry_is_table(e))
			continue;
		bool s_ok = scope_reason(p, s) == MM_REASON_SHAREABLE;
		if (ours && s_ok && !found)
			found = pt_entry_table(e);
		if (!patch) {
			if (found)
				break;
			continue;
		}
		patch_links++;
		anon_pages |= !s_ok;
	}
	if (patch_links) {
		w->findings[MM_FINDING_EXTRA_LINKS] += patch_links - 1;
		w->findings[MM_FINDING_PRIVATE_ANON] += anon_pages;
	}
	return found;
}

/* Detaches the shared tables meeting [start, end) below t, top-down. */
static uint64_t unshare_table(struct mm_world *w, struct pt_table *t,
			      uint64_t tbase, uint64_t start, uint64_t end)
{
	uint64_t esz = MM_ENTRY(t->level), n = 0;
	unsigned lo, hi;
	pt_entries_in(t, tbase, start, end, &lo, &hi);
	for (unsigned i = lo; i <= hi; i++) {
		uint64_t e = t->e[i];
		if (!pt_entry_is_table(e))
			continue;
		struct pt_table *c = pt_entry_table(e);
		if (c->share > 1) {
			mm_pt_clear_entry(w, t, i);
			n++;
		} else if (c->level > PT_PTE) {
			n += unshare_table(w, c, tbase + i * esz, start, end);
		}
	}
	return n;
}

/* The posted pt_unshare_pgd/pud/pmd() loops, counting what they would detach
 * inside and outside [start, end): `address <= end` with an exclusive end,
 * stepping an unaligned address. */
struct patch_unshare {
	uint64_t start, end, in, out;
};

static void patch_unshare_walk(struct patch_unshare *s, struct pt_table *t,
			       uint64_t address, uint64_t end)
{
	uint64_t esz = MM_ENTRY(t->level);
	if (t->level != PT_PGD) { /* pgd_addr_end(), pud_addr_end() */
		uint64_t boundary = align_down(address + esz * PT_ENTRIES,
					       esz * PT_ENTRIES);
		end = boundary - 1 < end - 1 ? boundary : end;
	}
	/* Past the last entry the patch reads the next page: stop there. */
	for (unsigned i = pt_index(address, t->level);
	     address <= end && i < PT_ENTRIES; i++, address += esz) {
		uint64_t e = t->e[i];
		if (!pt_entry_is_table(e))
			continue;
		struct pt_table *c = pt_entry_table(e);
		uint64_t base = align_down(address, esz);
		if (c->share > 1)
			*(base < s->end && base + esz > s->start ? &s->in
								  : &s->out) += 1;
		else if (c->level > PT_PTE)
			patch_unshare_walk(s, c, address, end);
	}
}

/* cow-pte: every shared PTE table meeting [start, end) copied for mm. */
static int cow_break_range(struct mm_world *w, struct mm_space *mm,
			   uint64_t start, uint64_t end)
{
	for (uint64_t sb = align_down(start, MM_SPAN(PT_PTE)); sb < end;
	     sb += MM_SPAN(PT_PTE))
		if (mm_cow_break_at(w, mm, sb))
			return -ENOMEM;
	return 0;
}

int mm_unshare(struct mm_world *w, struct mm_space *mm, uint64_t start,
	       uint64_t end)
{
	/* Every walk below acts on (or counts) shared tables only. */
	if (!w->shared_tables)
		return 0;
	if (w->policy.cow_pte)
		return cow_break_range(w, mm, start, end);
	if (w->policy.scope == MM_SCOPE_NONE)
		return 0;
	struct patch_unshare sim = { start, end, 0, 0 };
	if (w->policy.patch_findings)
		patch_unshare_walk(&sim, mm->pgd, start, end);
	uint64_t n = unshare_table(w, mm->pgd, 0, start, end);
	w->findings[MM_FINDING_UNSHARE_PAST_END] += sim.out;
	if (w->policy.patch_findings)
		w->findings[MM_FINDING_UNSHARE_MISSED] += n - sim.in;
	return 0;
}
