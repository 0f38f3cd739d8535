/* SPDX-License-Identifier: MIT */
/* mmap() and munmap(). */
#include <stdlib.h>

#include "mm_internal.h"

static int check_mapping(struct mm_world *w, const struct mm_mapping *m)
{
	int r = mm_check_range(w, m->addr, m->len);
	if (r)
		return r;
	if (m->obj.kind >= MM_OBJ_NR_KINDS)
		return mm_fail(w, -EINVAL, "unknown object kind %u", m->obj.kind);
	if ((m->prot & ~(MM_PROT_READ | MM_PROT_WRITE | MM_PROT_EXEC)) ||
	    (m->flags & ~(MM_VMA_SHARED | MM_VMA_LOCKED | MM_VMA_DONTFORK |
			  MM_VMA_WIPEONFORK | MM_VMA_PFNMAP)))
		return mm_fail(w, -EINVAL, "unknown protection or flag bits");
	if (m->obj.kind == MM_OBJ_ANON && (m->flags & MM_VMA_SHARED))
		return mm_fail(w, -EINVAL, "shared anonymous memory is a shmem "
			       "object, not MM_OBJ_ANON");
	if ((m->flags & MM_VMA_WIPEONFORK) &&
	    (m->obj.kind != MM_OBJ_ANON))
		return mm_fail(w, -EINVAL, "only private anonymous memory can "
			       "be wiped on fork");
	/* hugetlbfs files have huge pages; so may SysV segments (SHM_HUGETLB). */
	if ((m->obj.kind == MM_OBJ_HUGETLB && !m->huge_shift) ||
	    (m->huge_shift && ((m->obj.kind != MM_OBJ_HUGETLB &&
				m->obj.kind != MM_OBJ_SYSV) ||
			       (m->huge_shift != 21 && m->huge_shift != 30))))
		return mm_fail(w, -EINVAL, "a huge page shift of 21 or 30 goes "
			       "with hugetlb files and SysV segments only");
	uint64_t align = m->huge_shift ? 1ULL << m->huge_shift : MM_PAGE_SIZE;
	if ((m->addr | m->len | m->offset) & (align - 1))
		return mm_fail(w, -EINVAL, "mapping at %#llx is not aligned to "
			       "its page size", (unsigned long long)m->addr);
	if (m->offset + m->len < m->offset)
		return mm_fail(w, -EINVAL, "object offset wraps");
	return 0;
}

/* m, checked, at the world's address. */
static int map_at(struct mm_world *w, struct mm_space *mm,
		  const struct mm_mapping *m)
{
	uint64_t end = m->addr + m->len;
	bool overlaps = mm_vma_any_in(mm, m->addr, end);
	if (overlaps) {
		if (!m->fixed)
			return mm_fail(w, -EEXIST, "[%#llx, %#llx) overlaps a "
				       "mapping and is not MAP_FIXED",
				       (unsigned long long)m->addr,
				       (unsigned long long)end);
		int r = mm_vma_check_huge_edges(w, mm, m->addr, end);
		if (r)
			return r;
	}
	struct mm_vma tmpl = {
		.start = m->addr,
		.end = end,
		.pgoff = (m->obj.kind == MM_OBJ_ANON ? m->addr : m->offset) >>
			 MM_PAGE_SHIFT,
		.prot = m->prot,
		.flags = m->flags,
		.huge_shift = m->huge_shift,
		.mshare = mm_mshare_wants(&w->policy, m),
	};
	/* Unmap first: it may free the object this mapping is of. */
	struct mm_object *o = NULL;
	struct mm_vma *v;
	if ((overlaps && mm_do_unmap(w, mm, m->addr, end)) ||
	    (m->obj.kind != MM_OBJ_ANON && !(o = mm_object_get(w, &m->obj))))
		return -ENOMEM;
	tmpl.obj = o; /* what mm_vma_new decides by */
	if (!(v = mm_vma_new(w, mm, &tmpl)))
		return -ENOMEM;
	if (o)
		mm_object_link(o, v, NULL);
	mm_vma_insert(mm, v);
	if (!m->listed)
		mm_vma_merge_around(mm, m->addr, end);
	else if (w->nfollowers)
		mm_followers_vmas(mm, m->addr, end);
	return 0;
}

int mm_map(struct mm_world *w, uint32_t pid, const struct mm_mapping *m)
{
	int r;
	struct mm_space *mm = mm_begin_on(w, pid, &r);
	if (!mm)
		return r;
	if ((r = check_mapping(w, m)))
		return r;
	if (w->nfollowers)
		mm_followers_map(w, m);
	if (!w->policy.huge_aligned)
		return map_at(w, mm, m);
	struct mm_mapping at = *m;
	if ((r = mm_layout_place(w, mm, m, &at.addr, &at.len)) ||
	    (r = map_at(w, mm, &at)))
		return r;
	return mm_layout_moved(w, mm, m->addr, m->addr + m->len, at.addr,
			       at.addr + at.len);
}

int mm_unmap(struct mm_world *w, uint32_t pid, uint64_t addr, uint64_t len)
{
	int r;
	struct mm_space *mm = mm_begin_on(w, pid, &r);
	if (!mm)
		return r;
	if ((r = mm_check_range(w, addr, len)))
		return r;
	return mm_layout_unmap(w, mm, addr, addr + len);
}
