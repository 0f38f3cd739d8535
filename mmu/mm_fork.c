/* SPDX-License-Identifier: MIT */
/* fork(): the child's VMAs, and its tables copied, linked or left to fault. */
#include <stdlib.h>

#include "mm_internal.h"

struct fork_ctx {
	struct mm_world *w;
	struct mm_space *child;
	struct mm_vma *v;  /* the parent's VMA being duplicated */
	bool copy;         /* vma_needs_copy(): the kernel copies its tables */
};

/* The child's table at `level` for addr, allocated along the way. */
static struct pt_table *child_table(struct fork_ctx *f, uint64_t addr,
				    unsigned level)
{
	struct pt_table *t;
	return mm_pt_walk_alloc(f->w, f->child, NULL, addr, level, &t,
				NULL) ? NULL
									  : t;
}

/* cow-pte shares the PTE table at base unless a VMA there is not the
 * child's as it is the parent's (VM_DONTCOPY; WIPEONFORK, which the child
 * gets empty): then copy_pte_range() copies it. */
static bool cow_shares(const struct mm_space *parent, uint64_t base)
{
	const struct mm_vma *x;
	uint64_t start = base, end = base + MM_SPAN(PT_PTE); /* the macro's */
	vma_for_each_in(x, parent, start, end)
		if (x->flags & (MM_VMA_DONTFORK | MM_VMA_WIPEONFORK))
			return false;
	return true;
}

/*
 * Duplicates, within the VMA, the parent's entries of table t (level >= PMD)
 * whose span starts at tbase.  patch_linked: the posted patch would have
 * linked a table above (so it would not look below), for the findings.
 */
static int fork_table(struct fork_ctx *f, struct pt_table *t, uint64_t tbase,
		      bool patch_linked)
{
	const struct mm_policy *p = &f->w->policy;
	struct mm_vma *v = f->v;
	uint64_t esz = MM_ENTRY(t->level);
	unsigned lo, hi, cl = t->level - 1;
	pt_entries_in(t, tbase, v->start, v->end, &lo, &hi);
	for (unsigned i = lo; i <= hi; i++) {
		uint64_t e = t->e[i], eb = tbase + i * esz;
		struct pt_table *ct;
		if (!e)
			continue;
		if (pt_entry_is_leaf(e)) {
			/* copy_huge_pmd() leaves file THPs to refault. */
			if (!f->copy || (e == PT_LEAF && !v->huge_shift))
				continue;
			if (!(ct = child_table(f, eb, t->level)))
				return -ENOMEM;
			mm_pt_set_leaf(f->w, ct, i, e == PT_LEAF_DEPOSIT);
			f->child->c.fork_pages_copied += esz >> MM_PAGE_SHIFT;
			continue;
		}
		struct pt_table *c = pt_entry_table(e);
		if (p->link_at_fork && mm_shares_level(p, v, eb, cl)) {
			if (!(ct = child_table(f, eb, t->level)))
				return -ENOMEM;
			mm_pt_link(f->w, ct, i, c);
			f->child->c.fork_tables_linked++;
			continue;
		}
		bool patch_links = !patch_linked && p->link_at_fork &&
				   mm_patch_shares_level(p, v, eb, cl);
		f->w->findings[MM_FINDING_PRIVATE_ANON] += patch_links;
		if (cl > PT_PTE) {
			if (f->copy && !child_table(f, eb, cl))
				return -ENOMEM;
			if (fork_table(f, c, eb, patch_linked || patch_links))
				return -ENOMEM;
			continue;
		}
		if (!f->copy)
			continue;
		if (p->cow_pte && cow_shares(v->mm, eb)) {
			/* copy_cow_pte_range(): the whole table, whichever VMAs
			 * meet its span, linked once; the PMD page is the
			 * child's own. */
			if (!(ct = child_table(f, eb, t->level)))
				return -ENOMEM;
			if (!ct->e[i]) {
				mm_pt_link(f->w, ct, i, c);
				f->child->c.fork_tables_linked++;
			}
			continue;
		}
		if (!(ct = child_table(f, eb, PT_PTE)))
			return -ENOMEM;
		unsigned a = (max_u64(v->start, eb) - eb) >> MM_PAGE_SHIFT;
		unsigned b = (min_u64(v->end, eb + esz) - eb) >> MM_PAGE_SHIFT;
		/* VMAs do not overlap: every page copied is new in ct. */
		for (unsigned k = a / 64; k <= (b - 1) / 64; k++)
			f->child->c.fork_pages_copied +=
				pt_word_add(&ct->e[k], c->e[k] & pt_mask_word(a, b, k));
	}
	return 0;
}

static int fork_vma(struct fork_ctx *f, struct mm_space *parent)
{
	struct mm_vma *v = f->v;
	const struct mm_policy *p = &f->w->policy;
	/* vma_needs_copy(); a WIPEONFORK VMA comes empty. */
	f->copy = !(v->flags & MM_VMA_WIPEONFORK) &&
		  (v->anon || (v->flags & MM_VMA_PFNMAP));
	if (!f->copy && !(p->link_at_fork &&
			  mm_vma_reason(p, v) == MM_REASON_SHAREABLE))
		return 0;
	return fork_table(f, parent->pgd, 0, false);
}

int mm_fork(struct mm_world *w, uint32_t ppid, uint32_t cpid)
{
	int r;
	struct mm_space *parent = mm_begin_on(w, ppid, &r);
	if (!parent)
		return r;
	if (mm_find(w, cpid))
		return mm_fail(w, -EEXIST, "process %u already exists", cpid);
	struct mm_space *child = mm_space_new(w, cpid);
	if (!child || mm_layout_copy(w, child, parent))
		return -ENOMEM;
	uint64_t before = 0, after = 0;
	for (unsigned l = 0; l < PT_NR_LEVELS; l++)
		before += w->tables[l];
	struct fork_ctx f = { .w = w, .child = child };
	for (struct mm_vma *pv = vma_first(parent), *cv; pv; pv = vma_next(pv)) {
		if (pv->flags & MM_VMA_DONTFORK)
			continue;
		if (!(cv = mm_vma_new(w, child, pv)))
			return -ENOMEM;
		/* anon_vma_fork(): a fresh anon_vma chained to the parent's. */
		cv->anon = pv->anon && !(pv->flags & MM_VMA_WIPEONFORK)
				   ? ++w->next_anon : 0;
		cv->anon_forked = cv->anon != 0;
		if (pv->obj)
			mm_object_link(pv->obj, cv, pv);
		/* in order: the child's set is built once, below */
		avl_append(&child->vmas, &cv->node);
		f.v = pv;
		if (fork_vma(&f, parent)) {
			avl_build(&child->vmas);
			return -ENOMEM;
		}
	}
	avl_build(&child->vmas);
	for (unsigned l = 0; l < PT_NR_LEVELS; l++)
		after += w->tables[l];
	child->c.fork_tables_copied = after - before;
	return 0;
}
