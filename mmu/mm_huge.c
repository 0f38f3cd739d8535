/* SPDX-License-Identifier: MIT */
/*
 * hugetlb-2m and thp-shmem: MAP_SHARED shmem and SysV mappings mapped by
 * 2 MiB PMD leaves over every whole aligned 2 MiB span they cover, as
 * hugetlb with 2 MiB pages (huge_pages=on) or shmem THP (shmem_enabled=
 * always) would map them (docs/model.md, "Huge pages").
 */
#include "mm_internal.h"

bool mm_vma_as_huge(const struct mm_vma *v)
{
	return v->mm->w->policy.huge_shmem && v->obj && !v->huge_shift &&
	       (v->flags & MM_VMA_SHARED) &&
	       (v->obj->id.kind == MM_OBJ_SHMEM ||
		v->obj->id.kind == MM_OBJ_SYSV);
}

bool mm_span_huge(const struct mm_vma *v, uint64_t addr)
{
	uint64_t sb = align_down(addr, MM_SPAN(PT_PTE));
	return v->start <= sb && sb + MM_SPAN(PT_PTE) <= v->end &&
	       mm_vma_as_huge(v);
}

unsigned mm_leaf_level_at(const struct mm_vma *v, uint64_t addr)
{
	return mm_span_huge(v, addr) ? PT_PMD : mm_vma_leaf_level(v);
}
