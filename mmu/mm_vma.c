/* SPDX-License-Identifier: MIT */
/* A process's VMAs: a sorted array, split and merged as the kernel does. */
#include <stdlib.h>

#include "mm_internal.h"

bool vma_is_anonymous(const struct mm_vma *v)
{
	return !v->obj;
}

/* The level of the table whose entries map this VMA's pages. */
unsigned vma_leaf_level(const struct mm_vma *v)
{
	return v->huge_shift ? (v->huge_shift - 12) / 9 : PT_PTE;
}

/* Byte offset into the object of the page at addr. */
uint64_t vma_offset(const struct mm_vma *v, uint64_t addr)
{
	return (v->pgoff << MM_PAGE_SHIFT) + (addr - v->start);
}

/* Index of the first VMA ending above addr (nr_vma if none). */
size_t vma_first_after(const struct mm_space *mm, uint64_t addr)
{
	size_t lo = 0, hi = mm->nr_vma;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (mm->vma[mid]->end > addr)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

struct mm_vma *vma_find(struct mm_space *mm, uint64_t addr)
{
	struct mm_vma *v = mm->hint;
	if (v && v->start <= addr && addr < v->end)
		return v;
	size_t i = vma_first_after(mm, addr);
	if (i == mm->nr_vma || mm->vma[i]->start > addr)
		return NULL;
	return mm->hint = mm->vma[i];
}

bool vma_any_in(const struct mm_space *mm, uint64_t start, uint64_t end)
{
	size_t i = vma_first_after(mm, start);
	return i < mm->nr_vma && mm->vma[i]->start < end;
}

bool vma_range_mapped(const struct mm_space *mm, uint64_t start, uint64_t end)
{
	for (size_t i = vma_first_after(mm, start); start < end; i++) {
		if (i == mm->nr_vma || mm->vma[i]->start > start)
			return false;
		start = mm->vma[i]->end;
	}
	return true;
}

int vma_reserve(struct mm_world *w, struct mm_space *mm, size_t extra)
{
	if (mm->nr_vma + extra <= mm->cap_vma)
		return 0;
	size_t cap = mm->cap_vma ? mm->cap_vma : 16;
	while (cap < mm->nr_vma + extra)
		cap *= 2;
	struct mm_vma **v = realloc(mm->vma, cap * sizeof(*v));
	if (!v)
		return mm_nomem(w, "mappings");
	mm->vma = v;
	mm->cap_vma = cap;
	return 0;
}

struct mm_vma *vma_new(struct mm_world *w, struct mm_space *mm,
		       const struct mm_vma *tmpl)
{
	struct mm_vma *v = malloc(sizeof(*v));
	if (!v) {
		mm_nomem(w, "a mapping");
		return NULL;
	}
	*v = *tmpl;
	v->mm = mm;
	v->obj_prev = v->obj_next = NULL;
	return v;
}

/* Room must have been reserved with vma_reserve(). */
void vma_insert(struct mm_space *mm, struct mm_vma *v)
{
	size_t i = vma_first_after(mm, v->start);
	memmove(&mm->vma[i + 1], &mm->vma[i], (mm->nr_vma - i) * sizeof(v));
	mm->vma[i] = v;
	mm->nr_vma++;
}

/* Takes the VMA out of the set; the caller unlinks and frees it. */
void vma_remove(struct mm_space *mm, size_t idx)
{
	if (mm->hint == mm->vma[idx])
		mm->hint = NULL;
	memmove(&mm->vma[idx], &mm->vma[idx + 1],
		(mm->nr_vma - idx - 1) * sizeof(mm->vma[0]));
	mm->nr_vma--;
}

/*
 * Splits the VMA strictly containing addr in two (nothing to do when addr is
 * a boundary), and a huge leaf straddling addr with it, as
 * vma_adjust_trans_huge() does.
 */
int vma_split(struct mm_world *w, struct mm_space *mm, uint64_t addr)
{
	size_t i = vma_first_after(mm, addr);
	if (i == mm->nr_vma || mm->vma[i]->start >= addr)
		return 0;
	struct mm_vma *v = mm->vma[i];
	if (vma_reserve(w, mm, 1))
		return -ENOMEM;
	struct mm_vma *tail = vma_new(w, mm, v);
	if (!tail)
		return -ENOMEM;
	struct pt_table *pmd = pt_lookup(mm->pgd, addr, PT_PMD, NULL);
	if (pmd && addr % MM_SPAN(PT_PTE) &&
	    pt_entry_is_leaf(pmd->e[pt_index(addr, PT_PMD)]) &&
	    pt_split_leaf(w, pmd, pt_index(addr, PT_PMD))) {
		free(tail);
		return -ENOMEM;
	}
	tail->start = addr;
	tail->pgoff = v->pgoff + ((addr - v->start) >> MM_PAGE_SHIFT);
	v->end = addr;
	if (v->obj)
		object_link(v->obj, tail, v);
	memmove(&mm->vma[i + 2], &mm->vma[i + 1],
		(mm->nr_vma - i - 1) * sizeof(tail));
	mm->vma[i + 1] = tail;
	mm->nr_vma++;
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
	    (a->flags & MM_VMA_PFNMAP))
		return false;
	/* SysV and hugetlb VMAs have a close() operation: never merged. */
	if (a->obj && (a->obj->id.kind == MM_OBJ_SYSV ||
		       a->obj->id.kind == MM_OBJ_HUGETLB))
		return false;
	if (b->pgoff != a->pgoff + ((a->end - a->start) >> MM_PAGE_SHIFT))
		return false;
	return anon_compatible(a, b);
}

/* Merges the VMAs meeting at boundaries in [start, end], left to right. */
void vma_merge_around(struct mm_space *mm, uint64_t start, uint64_t end)
{
	size_t i = vma_first_after(mm, start ? start - 1 : 0);
	while (i + 1 < mm->nr_vma && mm->vma[i]->end <= end) {
		struct mm_vma *a = mm->vma[i], *b = mm->vma[i + 1];
		if (!can_merge(a, b)) {
			i++;
			continue;
		}
		a->end = b->end;
		if (!a->anon) {
			a->anon = b->anon;
			a->anon_forked = b->anon_forked;
		}
		vma_remove(mm, i + 1);
		object_unlink(b);
		free(b);
	}
}

/* A hugetlb VMA is only ever cut at its page size. */
int vma_check_huge_edges(struct mm_world *w, const struct mm_space *mm,
			 uint64_t start, uint64_t end)
{
	for (size_t j = vma_first_after(mm, start);
	     j < mm->nr_vma && mm->vma[j]->start < end; j++) {
		const struct mm_vma *v = mm->vma[j];
		uint64_t hp = v->huge_shift ? 1ULL << v->huge_shift : 0;
		if (hp && (max_u64(start, v->start) | min_u64(end, v->end)) &
				  (hp - 1))
			return mm_fail(w, -EINVAL, "[%#llx, %#llx) splits a "
				       "hugetlb page of the mapping at %#llx",
				       (unsigned long long)start,
				       (unsigned long long)end,
				       (unsigned long long)v->start);
	}
	return 0;
}
