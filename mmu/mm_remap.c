/* SPDX-License-Identifier: MIT */
/* mremap(): shrink, grow in place, or move a VMA and its tables. */
#include <stdlib.h>

#include "mm_internal.h"

/* Moves an upper entry, a table (with its links) or a leaf. */
static void move_entry(struct mm_world *w, struct pt_table *from, unsigned fi,
		       struct pt_table *to, unsigned ti)
{
	uint64_t e = from->e[fi];
	from->e[fi] = 0;
	pt_mark_unused(from, fi);
	w->unlinks++; /* a PTE table found by address is elsewhere now */
	to->e[ti] = e;
	pt_mark_used(to, ti);
	if (pt_entry_is_table(e)) {
		from->nr_tables--;
		to->nr_tables++;
		return;
	}
	from->nr_leaves--;
	to->nr_leaves++;
	if (e == PT_LEAF_DEPOSIT) {
		from->nr_deposits--;
		to->nr_deposits++;
	}
}

/* get_extent(): up to the next span boundary of either side. */
static uint64_t extent(uint64_t oa, uint64_t na, uint64_t rem, uint64_t span)
{
	uint64_t e = min_u64(span - (oa & (span - 1)), span - (na & (span - 1)));
	return min_u64(e, rem);
}

/* The new side's table at `level` for na (allocated). */
static struct pt_table *new_table(struct mm_world *w, struct mm_space *mm,
				  uint64_t na, unsigned level)
{
	struct pt_table *t;
	return mm_pt_walk_alloc(w, mm, NULL, na, level, &t, NULL) ? NULL : t;
}

/* move_page_tables(): whole PMD pages and PTE tables move when both sides
 * are aligned over the extent, else the entries move one by one.  v's
 * pages may need no PTE table (mm_vma_no_pte): none is made for them. */
static int move_small(struct mm_world *w, struct mm_space *mm,
		      const struct mm_vma *v, uint64_t old, uint64_t new,
		      uint64_t len)
{
	for (uint64_t pos = 0, ext; pos < len; pos += ext) {
		uint64_t oa = old + pos, na = new + pos, rem = len - pos;
		ext = extent(oa, na, rem, MM_SPAN(PT_PMD));
		struct pt_table *opud = mm_pt_lookup(mm->pgd, oa, PT_PUD, NULL);
		unsigned i = pt_index(oa, PT_PUD);
		if (!opud || !opud->e[i])
			continue; /* get_old_pud(): no PMD page */
		struct pt_table *npud = new_table(w, mm, na, PT_PUD);
		if (!npud)
			return -ENOMEM;
		unsigned j = pt_index(na, PT_PUD);
		if (ext == MM_SPAN(PT_PMD) && !npud->e[j]) {
			move_entry(w, opud, i, npud, j); /* move_normal_pud() */
			continue;
		}
		ext = extent(oa, na, rem, MM_SPAN(PT_PTE));
		struct pt_table *opmd = mm_pt_lookup(mm->pgd, oa, PT_PMD, NULL);
		unsigned k = pt_index(oa, PT_PMD);
		if (!opmd || !opmd->e[k])
			continue; /* get_old_pmd(): no PTE table */
		struct pt_table *npmd = new_table(w, mm, na, PT_PMD);
		if (!npmd)
			return -ENOMEM;
		unsigned l = pt_index(na, PT_PMD);
		if (ext == MM_SPAN(PT_PTE) && !npmd->e[l]) {
			move_entry(w, opmd, k, npmd, l); /* move_normal_pmd() */
			continue;
		}
		if (pt_entry_is_leaf(opmd->e[k]) && mm_pt_split_leaf(w, opmd,
								     k))
			return -ENOMEM;
		if (!opmd->e[k] || mm_vma_no_pte(v))
			continue;
		struct pt_table *ote = pt_entry_table(opmd->e[k]), *nte;
		if (!(nte = new_table(w, mm, na, PT_PTE)))
			return -ENOMEM;
		unsigned oi = pt_index(oa, PT_PTE), ni = pt_index(na, PT_PTE);
		for (unsigned x = 0; x < ext >> MM_PAGE_SHIFT; x++) {
			if (!pt_test(ote, oi + x))
				continue;
			ote->e[(oi + x) / 64] &= ~(1ULL << ((oi + x) % 64));
			nte->e[(ni + x) / 64] |= 1ULL << ((ni + x) % 64);
		}
	}
	return 0;
}

/* move_hugetlb_page_tables(): leaf by leaf, allocating only for those. */
static int move_hugetlb(struct mm_world *w, struct mm_space *mm,
			const struct mm_vma *v, uint64_t old, uint64_t new,
			uint64_t len)
{
	unsigned leaf = v->leaf;
	for (uint64_t pos = 0; pos < len; pos += 1ULL << v->huge_shift) {
		struct pt_table *t = mm_pt_lookup(mm->pgd, old + pos, leaf,
						  NULL), *nt;
		unsigned i = pt_index(old + pos, leaf);
		if (!t || !t->e[i])
			continue;
		if (!(nt = new_table(w, mm, new + pos, leaf)))
			return -ENOMEM;
		move_entry(w, t, i, nt, pt_index(new + pos, leaf));
	}
	return 0;
}

static int check_remap(struct mm_world *w, struct mm_space *mm, uint64_t old,
		       uint64_t old_len, uint64_t new, uint64_t new_len,
		       uint32_t flags)
{
	int r;
	if (flags & ~(MM_REMAP_MAYMOVE | MM_REMAP_FIXED | MM_REMAP_DONTUNMAP))
		return mm_fail(w, -EINVAL, "unknown remap flags %#x", flags);
	if ((old_len && (r = mm_check_range(w, old, old_len))) ||
	    (r = mm_check_range(w, new, new_len)))
		return r;
	struct mm_vma *v = mm_vma_find(mm, old);
	if (!v || old + old_len > v->end)
		return mm_fail(w, -EFAULT, "[%#llx, %#llx) is not inside one "
			       "mapping", (unsigned long long)old,
			       (unsigned long long)(old + old_len));
	uint64_t hp = v->huge_shift ? 1ULL << v->huge_shift : MM_PAGE_SIZE;
	if ((old | old_len | new | new_len) & (hp - 1))
		return mm_fail(w, -EINVAL, "remap not aligned to the page size");
	bool moves = new != old;
	if ((flags & (MM_REMAP_FIXED | MM_REMAP_DONTUNMAP)) &&
	    !(flags & MM_REMAP_MAYMOVE))
		return mm_fail(w, -EINVAL, "MREMAP_FIXED and MREMAP_DONTUNMAP "
			       "need MREMAP_MAYMOVE");
	if ((flags & MM_REMAP_DONTUNMAP) && old_len != new_len)
		return mm_fail(w, -EINVAL, "MREMAP_DONTUNMAP needs equal lengths");
	if (!old_len && (!moves || !(v->flags & MM_VMA_SHARED)))
		return mm_fail(w, -EINVAL, "a zero old length duplicates a "
			       "shared mapping elsewhere");
	if (!moves) {
		if (flags & (MM_REMAP_FIXED | MM_REMAP_DONTUNMAP))
			return mm_fail(w, -EINVAL, "remap onto itself");
		if (new_len > old_len &&
		    (old + old_len != v->end ||
		     mm_vma_any_in(mm, old + old_len, old + new_len)))
			return mm_fail(w, -EINVAL, "[%#llx, %#llx) cannot grow "
				       "in place", (unsigned long long)old,
				       (unsigned long long)(old + old_len));
		return 0;
	}
	if (!(flags & MM_REMAP_MAYMOVE))
		return mm_fail(w, -EINVAL, "moved without MREMAP_MAYMOVE");
	if (new < old + old_len && old < new + new_len)
		return mm_fail(w, -EINVAL, "old and new ranges overlap");
	if (!(flags & MM_REMAP_FIXED) && mm_vma_any_in(mm, new, new + new_len))
		return mm_fail(w, -EEXIST, "[%#llx, %#llx) is in use and not "
			       "MREMAP_FIXED", (unsigned long long)new,
			       (unsigned long long)(new + new_len));
	return mm_vma_check_huge_edges(w, mm, new, new + new_len);
}

static int move_vma(struct mm_world *w, struct mm_space *mm, uint64_t old,
		    uint64_t len, uint64_t new, uint64_t new_len,
		    uint32_t flags)
{
	if (len) {
		if (mm_unshare(w, mm, old, old + len) ||
		    mm_vma_split(w, mm, old) || mm_vma_split(w, mm, old + len))
			return -ENOMEM;
	}
	struct mm_vma *v = mm_vma_find(mm, old), *nv;
	if (!(nv = mm_vma_new(w, mm, v)))
		return -ENOMEM;
	nv->start = new;
	nv->end = new + new_len;
	nv->pgoff = v->pgoff + ((old - v->start) >> MM_PAGE_SHIFT);
	if (v->obj)
		mm_object_link(v->obj, nv, NULL);
	mm_vma_insert(mm, nv);
	int r = v->huge_shift ? move_hugetlb(w, mm, v, old, new, len)
			      : move_small(w, mm, v, old, new, len);
	if (r)
		return r;
	if (flags & MM_REMAP_DONTUNMAP) {
		v->anon = 0; /* the old VMA stays, empty, without its anon_vma */
		v->anon_forked = false;
	} else if (len && mm_do_unmap(w, mm, old, old + len)) {
		return -ENOMEM;
	}
	mm_vma_merge_around(mm, new, new + new_len);
	return 0;
}

static int remap_at(struct mm_world *w, struct mm_space *mm, uint64_t old,
		    uint64_t old_len, uint64_t new, uint64_t new_len,
		    uint32_t flags)
{
	int r = check_remap(w, mm, old, old_len, new, new_len, flags);
	if (r)
		return r;
	if (new == old) {
		if (new_len < old_len)
			return mm_do_unmap(w, mm, old + new_len, old + old_len);
		mm_vma_find(mm, old)->end = old + new_len;
		mm_vma_merge_around(mm, old, old + new_len);
		return 0;
	}
	if ((flags & MM_REMAP_FIXED) && mm_do_unmap(w, mm, new, new + new_len))
		return -ENOMEM;
	uint64_t len = old_len;
	if (old_len > new_len) {
		if (mm_do_unmap(w, mm, old + new_len, old + old_len))
			return -ENOMEM;
		len = new_len;
	}
	return move_vma(w, mm, old, len, new, new_len, flags);
}

int mm_remap(struct mm_world *w, uint32_t pid, uint64_t old, uint64_t old_len,
	     uint64_t new, uint64_t new_len, uint32_t flags)
{
	int r;
	struct mm_space *mm = mm_begin_on(w, pid, &r);
	if (!mm)
		return r;
	if (!mm->layout)
		return remap_at(w, mm, old, old_len, new, new_len, flags);
	/* hugetlb-2m's layout: a move the kernel placed, it places here. */
	uint64_t wold, wnew, wlen = new_len;
	if (!mm_layout_addr(mm, old, &wold))
		return mm_fail(w, -EFAULT, "[%#llx, %#llx) is not inside one "
			       "mapping", (unsigned long long)old,
			       (unsigned long long)(old + old_len));
	wnew = wold;
	const struct mm_mapping m = { .addr = new, .len = new_len,
				      .obj.kind = MM_OBJ_ANON,
				      .fixed = flags & MM_REMAP_FIXED,
				      .kernel_placed = !(flags & MM_REMAP_FIXED) };
	if (new != old && (r = mm_layout_place(w, mm, &m, &wnew, &wlen)))
		return r;
	if ((r = remap_at(w, mm, wold, old_len, wnew, new_len, flags)) ||
	    (!(flags & MM_REMAP_DONTUNMAP) &&
	     (r = mm_layout_forget(w, mm, old, old + old_len))))
		return r;
	return mm_layout_moved(w, mm, new, new + new_len, wnew, wnew + new_len);
}
