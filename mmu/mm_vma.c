/* SPDX-License-Identifier: MIT */
/* A process's VMAs: an ordered set, split and merged as the kernel does. */
#include "mm_internal.h"

bool mm_vma_is_anonymous(const struct mm_vma *v)
{
	return !v->obj;
}

/* Byte offset into the object of the page at addr. */
uint64_t mm_vma_offset(const struct mm_vma *v, uint64_t addr)
{
	return (v->pgoff << MM_PAGE_SHIFT) + (addr - v->start);
}

/*
 * The set is ordered by start (no two VMAs of a process overlap, so ends
 * sort alike): a program mapping until vm.max_map_count holds 65,000 VMAs,
 * and an insert or a removal must not cost a move per VMA.  A VMA's start
 * never changes while it is in the set (a split inserts the tail).
 */
static bool starts_before(const struct avl_node *a, const struct avl_node *b)
{
	return vma_of(a)->start < vma_of(b)->start;
}

static bool ends_above(const struct avl_node *n, const void *addr)
{
	return vma_of(n)->end > *(const uint64_t *)addr;
}

/* The hint is a cache, not part of the set's value: kept through a const
 * mm, as the tree's own lookups are. */
static struct mm_vma *remember(const struct mm_space *mm, struct mm_vma *v)
{
	if (v)
		((struct mm_space *)mm)->hint = v;
	return v;
}

/*
 * The operations on a process come in runs at one place (a map, then its
 * split and merge around it; a fault after another): the last VMA found, or
 * the one on either side of it, answers most lookups with two or three
 * comparisons, where the tree takes one a level (docs/model.md, Process).
 * The one before counts: a split at a range's end leaves the hint on the
 * tail past it, and the range's own VMA is asked for next.
 */
struct mm_vma *mm_vma_first_after(const struct mm_space *mm, uint64_t addr)
{
	struct mm_vma *h = mm->hint;

	if (h && h->end > addr) {
		struct mm_vma *before = vma_prev(h);
		if (!before || before->end <= addr)
			return h;
		struct mm_vma *two_before = vma_prev(before);
		if (!two_before || two_before->end <= addr)
			return remember(mm, before);
	} else if (h) {
		struct mm_vma *after = vma_next(h);
		if (!after || after->end > addr)
			return remember(mm, after);
	}
	return remember(mm, vma_of(avl_first_from(&mm->vmas, ends_above,
						  &addr)));
}

struct mm_vma *mm_vma_find(struct mm_space *mm, uint64_t addr)
{
	struct mm_vma *v = mm_vma_first_after(mm, addr);
	return v && v->start <= addr ? v : NULL;
}

bool mm_vma_any_in(const struct mm_space *mm, uint64_t start, uint64_t end)
{
	const struct mm_vma *v = mm_vma_first_after(mm, start);
	return v && v->start < end;
}

bool mm_vma_range_mapped(const struct mm_space *mm, uint64_t start,
			 uint64_t end)
{
	for (const struct mm_vma *v = mm_vma_first_after(mm,
							 start); start < end;
	     v = vma_next(v)) {
		if (!v || v->start > start)
			return false;
		start = v->end;
	}
	return true;
}

struct mm_vma *mm_vma_new(struct mm_world *w, struct mm_space *mm,
			  const struct mm_vma *tmpl)
{
	struct mm_vma *v = mm_pool_class_get(&w->vmas);
	if (!v) {
		mm_nomem(w, "a mapping");
		return NULL;
	}
	*v = *tmpl;
	v->mm = mm;
	v->leaf = (uint8_t)mm_leaf_of_shift(v->huge_shift);
	v->as_huge = mm_vma_as_huge(&w->policy, v);
	v->huge_edges = v->as_huge && w->policy.huge_aligned;
	v->obj_prev = v->obj_next = NULL;
	return v;
}

void mm_vma_free(struct mm_vma *v)
{
	mm_pool_class_put(&v->mm->w->vmas, v);
}

/* v overlaps no VMA of mm.  It goes in before the first VMA after it, which
 * the hint finds without a descent when v fills the hole just made there
 * (map_at unmaps the range first).  A fork builds its child's set at once
 * (avl_build). */
void mm_vma_insert(struct mm_space *mm, struct mm_vma *v)
{
	struct mm_vma *prev = vma_before(mm, mm_vma_first_after(mm, v->start));
	avl_insert_after(&mm->vmas, prev ? &prev->node : NULL, &v->node);
	remember(mm, v); /* a merge around it looks next */
}

/* Takes the VMA out of the set; the caller unlinks and frees it. */
void mm_vma_remove(struct mm_space *mm, struct mm_vma *v)
{
	/* A neighbour keeps the hint near: a map into the hole comes next. */
	if (mm->hint == v)
		mm->hint = v->node.next ? vma_next(v) : vma_prev(v);
	avl_remove(&mm->vmas, &v->node);
}

bool mm_vma_set_consistent(const struct mm_space *mm)
{
	return avl_consistent(&mm->vmas, starts_before);
}

/*
 * Splits the VMA strictly containing addr in two (nothing to do when addr is
 * a boundary), and a huge leaf straddling addr with it, as
 * vma_adjust_trans_huge() does.
 */
int mm_vma_split(struct mm_world *w, struct mm_space *mm, uint64_t addr)
{
	struct mm_vma *v = mm_vma_first_after(mm, addr);
	if (!v || v->start >= addr)
		return 0;
	/* cow-pte: __split_vma() breaks a shared table it cuts. */
	if (addr % MM_SPAN(PT_PTE) && mm_cow_break_at(w, mm, addr))
		return -ENOMEM;
	struct mm_vma *tail = mm_vma_new(w, mm, v);
	if (!tail)
		return -ENOMEM;
	struct pt_table *pmd = mm_pt_lookup(mm->pgd, addr, PT_PMD, NULL);
	if (pmd && addr % MM_SPAN(PT_PTE) &&
	    pt_entry_is_leaf(pmd->e[pt_index(addr, PT_PMD)]) &&
	    mm_pt_split_leaf(w, pmd, pt_index(addr, PT_PMD))) {
		mm_vma_free(tail);
		return -ENOMEM;
	}
	tail->start = addr;
	tail->pgoff = v->pgoff + ((addr - v->start) >> MM_PAGE_SHIFT);
	v->end = addr;
	if (v->obj)
		mm_object_link(v->obj, tail, v);
	avl_insert_after(&mm->vmas, &v->node, &tail->node);
	return 0;
}

static bool anon_compatible(const struct mm_vma *a, const struct mm_vma *b)
{
	/* vma.c's is_mergeable_anon_vma(): a forked child's anon_vma chain is
	 * not singular, and such a VMA does not take in one without. */
	if (a->anon && b->anon)
		return a->anon == b->anon;
	const struct mm_vma *with = a->anon ? a : b;
	return !with->anon || !with->anon_forked;
}

static bool can_merge(const struct mm_vma *a, const struct mm_vma *b)
{
	if (a->end != b->start || a->obj != b->obj || a->prot != b->prot ||
	    a->flags != b->flags || a->huge_shift != b->huge_shift ||
	    a->mshare != b->mshare || (a->flags & MM_VMA_PFNMAP))
		return false;
	/* SysV and hugetlb VMAs have a close() operation: never merged. */
	if (a->obj && (a->obj->id.kind == MM_OBJ_SYSV ||
		       a->obj->id.kind == MM_OBJ_HUGETLB))
		return false;
	if (b->pgoff != a->pgoff + ((a->end - a->start) >> MM_PAGE_SHIFT))
		return false;
	return anon_compatible(a, b);
}

/* Merges the VMAs meeting at boundaries in [start, end], left to right;
 * the VMAs there are as the operation leaves them (mm_followers_vmas). */
void mm_vma_merge_around(struct mm_space *mm, uint64_t start, uint64_t end)
{
	struct mm_vma *a = mm_vma_first_after(mm, start ? start - 1 : 0);
	while (a && vma_next(a) && a->end <= end) {
		struct mm_vma *b = vma_next(a);
		if (!can_merge(a, b)) {
			a = b;
			continue;
		}
		a->end = b->end;
		if (!a->anon) {
			a->anon = b->anon;
			a->anon_forked = b->anon_forked;
		}
		mm_vma_remove(mm, b);
		mm_object_unlink(b);
		mm_vma_free(b);
	}
	/* Every mapping, attribute change and move ends here. */
	if (mm->w->nfollowers)
		mm_followers_vmas(mm, start, end);
}

/* A hugetlb VMA is only ever cut at its page size.  Its own bounds are
 * (mm_map and mm_remap refuse others, this check guards every cut, and
 * mm_check says so), so only the VMAs that start and end fall inside can
 * be cut: two lookups, not a walk over every VMA between (a reading
 * observes the whole address space, in every world). */
int mm_vma_check_huge_edges(struct mm_world *w, const struct mm_space *mm,
			    uint64_t start, uint64_t end)
{
	const uint64_t edge[] = { start, end };
	for (size_t i = 0; i < 2; i++) {
		const struct mm_vma *v = mm_vma_first_after(mm, edge[i]);
		uint64_t hp = v && v->start < edge[i] && v->huge_shift
				      ? 1ULL << v->huge_shift : 0;
		if (hp && (edge[i] & (hp - 1)))
			return mm_fail(w, -EINVAL, "[%#llx, %#llx) splits a "
				       "hugetlb page of the mapping at %#llx",
				       (unsigned long long)start,
				       (unsigned long long)end,
				       (unsigned long long)v->start);
	}
	return 0;
}
