/* SPDX-License-Identifier: MIT */
/* mprotect() and madvise(): changing VMAs' attributes, and zapping. */
#include "mm_internal.h"

/* An attribute change: a new protection and/or flags to set and clear. */
struct vma_change {
	bool set_prot;
	uint32_t prot;
	uint32_t set, clear;
};

static bool alters(const struct mm_vma *v, const struct vma_change *ch)
{
	return (ch->set_prot && v->prot != ch->prot) ||
	       ((v->flags | ch->set) & ~ch->clear) != v->flags;
}

/*
 * Applies ch to the VMAs of [start, end) it alters, as mprotect_fixup() and
 * madvise_update_vma() do: VMAs left alone are not split; the changed ones
 * merge again with their neighbours.  unshare: the patch's
 * pt_unshare_range() runs first on each changed part.
 */
static int modify_range(struct mm_world *w, struct mm_space *mm,
			uint64_t start, uint64_t end,
			const struct vma_change *ch, bool unshare)
{
	struct mm_vma *v;
	if (unshare)
		vma_for_each_in(v, mm, start, end)
			if (alters(v, ch) &&
			    mm_unshare(w, mm, max_u64(start, v->start),
				       min_u64(end, v->end)))
				return -ENOMEM;
	struct mm_vma *first = mm_vma_find(mm, start);
	struct mm_vma *last = mm_vma_find(mm, end - 1);
	if ((first && alters(first, ch) && mm_vma_split(w, mm, start)) ||
	    (last && alters(last, ch) && mm_vma_split(w, mm, end)))
		return -ENOMEM;
	vma_for_each_in(v, mm, start, end) {
		if (ch->set_prot)
			v->prot = ch->prot;
		v->flags = (v->flags | ch->set) & ~ch->clear;
	}
	mm_vma_merge_around(mm, start, end);
	return 0;
}

static int check_protect(struct mm_world *w, struct mm_space *mm,
			 uint64_t start, uint64_t end, uint64_t from, void *arg)
{
	(void)from;
	(void)arg;
	if (!mm_vma_range_mapped(mm, start, end))
		return mm_fail(w, -ENOMEM, "[%#llx, %#llx) is not fully mapped",
			       (unsigned long long)start,
			       (unsigned long long)end);
	return mm_vma_check_huge_edges(w, mm, start, end);
}

static int protect_piece(struct mm_world *w, struct mm_space *mm,
			 uint64_t start, uint64_t end, uint64_t from, void *arg)
{
	(void)from;
	return modify_range(w, mm, start, end, arg, true);
}

int mm_protect(struct mm_world *w, uint32_t pid, uint64_t addr, uint64_t len,
	       uint32_t prot)
{
	int r;
	struct mm_space *mm = mm_begin_on(w, pid, &r);
	if (!mm)
		return r;
	if ((r = mm_check_range(w, addr, len)))
		return r;
	if (prot & ~(MM_PROT_READ | MM_PROT_WRITE | MM_PROT_EXEC))
		return mm_fail(w, -EINVAL, "unknown protection bits %#x", prot);
	struct vma_change ch = { .set_prot = true, .prot = prot };
	if ((r = mm_layout_each(w, mm, addr, addr + len, check_protect, NULL)))
		return r;
	return mm_layout_each(w, mm, addr, addr + len, protect_piece, &ch);
}

static const struct vma_change fork_advice[MM_ADV_NR] = {
	[MM_ADV_DONTFORK] = { .set = MM_VMA_DONTFORK },
	[MM_ADV_DOFORK] = { .clear = MM_VMA_DONTFORK },
	[MM_ADV_WIPEONFORK] = { .set = MM_VMA_WIPEONFORK },
	[MM_ADV_KEEPONFORK] = { .clear = MM_VMA_WIPEONFORK },
};

/* The kernel's checks of an advice against each VMA it meets. */
static int check_advice(struct mm_world *w, struct mm_space *mm,
			uint64_t start, uint64_t end, uint64_t from, void *arg)
{
	enum mm_advice advice = *(const enum mm_advice *)arg;
	(void)from;
	const struct mm_vma *v;
	vma_for_each_in(v, mm, start, end) {
		if (advice == MM_ADV_REMOVE && !v->obj)
			return mm_fail(w, -EINVAL, "MADV_REMOVE of anonymous "
				       "memory at %#llx", (unsigned long long)v->start);
		if (advice == MM_ADV_REMOVE &&
		    (!(v->flags & MM_VMA_SHARED) || !(v->prot & MM_PROT_WRITE)))
			return mm_fail(w, -EACCES, "MADV_REMOVE needs a shared "
				       "writable mapping at %#llx",
				       (unsigned long long)v->start);
		if (advice == MM_ADV_WIPEONFORK && v->obj)
			return mm_fail(w, -EINVAL, "MADV_WIPEONFORK of a mapping "
				       "that is not private anonymous");
	}
	return mm_vma_check_huge_edges(w, mm, start, end);
}

static int advise_piece(struct mm_world *w, struct mm_space *mm,
			uint64_t start, uint64_t end, uint64_t from, void *arg)
{
	enum mm_advice advice = *(const enum mm_advice *)arg;
	(void)from;
	switch (advice) {
	case MM_ADV_DONTNEED:
		return mm_dontneed(w, mm, start, end);
	case MM_ADV_REMOVE:
		return mm_remove(w, mm, start, end);
	case MM_ADV_FREE: /* pages stay mapped until reclaim */
		return 0;
	default:
		return modify_range(w, mm, start, end, &fork_advice[advice],
				    false);
	}
}

int mm_advise(struct mm_world *w, uint32_t pid, uint64_t addr, uint64_t len,
	      enum mm_advice advice)
{
	int r;
	struct mm_space *mm = mm_begin_on(w, pid, &r);
	if (!mm)
		return r;
	if ((r = mm_check_range(w, addr, len)))
		return r;
	if ((unsigned)advice >= MM_ADV_NR)
		return mm_fail(w, -EINVAL, "unknown advice %d", advice);
	if ((r = mm_layout_each(w, mm, addr, addr + len, check_advice, &advice)))
		return r;
	return mm_layout_each(w, mm, addr, addr + len, advise_piece, &advice);
}
