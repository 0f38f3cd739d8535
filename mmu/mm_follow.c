/* SPDX-License-Identifier: MIT */
/*
 * Worlds that follow linux's.  Every policy but cow-pte differs from
 * today's kernel only on mappings of some kinds: file mappings of 2 MiB
 * or more, shared or read-only (mccracken-2005, aslr-tolerant), shared
 * hugetlb mappings (hugetlb-pmd, hugetlb-2m), shared shmem and SysV
 * memory (thp-shmem, hugetlb-2m), the shared mappings mshare places.  As
 * long as no process holds one, such a world has the very model linux's
 * world has: it is fed nothing and read from linux's (with its own
 * policy's reasons), until linux's world comes to hold one.  Then it
 * takes a copy of linux's world as it is, and is a world of its own from
 * there on.  bench/ingest's mix (private anonymous memory) is fed to one
 * world, and so is every program that maps none of those (docs/model.md,
 * *World*).  The ingest asks for it (mm_worlds_follow).
 *
 * When the copy is taken depends on where the difference starts.  A
 * policy that would make the mapping itself otherwise (mshare places it,
 * thp-shmem and hugetlb-2m map it by 2 MiB pages, hugetlb-2m elsewhere)
 * takes it before linux's world maps it (mm_map: mm_followers_map).  One
 * whose rules act on the VMAs once they are there (sharing at fault and
 * at fork, the patch's findings) differs from the operation after the one
 * that made or changed them, which a merge, an mprotect or an mremap can
 * do as well as a mapping: it is due its copy then (mm_followers_vmas)
 * and takes it as linux's next operation begins (mm_begin).
 */
#include <stdlib.h>

#include "mm_internal.h"
#include "lib/bsearch.h"

/* cow-pte shares tables at any fork that copies one, whatever the
 * mapping: it never follows. */
static bool may_follow(const struct mm_policy *p)
{
	return !p->cow_pte;
}

bool mm_follow_differs_on(const struct mm_policy *p, const struct mm_mapping *m)
{
	bool shared = m->flags & MM_VMA_SHARED;
	/* mshare places the mappings it wants in regions of a host */
	if (mm_mshare_wants(p, m))
		return true;
	/* thp-shmem and hugetlb-2m map shared shmem and SysV memory by PMD
	 * leaves (mm_vma_as_huge), hugetlb-2m where hugetlb pages would go
	 * (mm_layout_place) */
	return p->huge_shmem && shared &&
	       (m->obj.kind == MM_OBJ_SHMEM || m->obj.kind == MM_OBJ_SYSV);
}

void mm_worlds_follow(struct mm_worlds *ws)
{
	struct mm_world *today = ws->w[0];
	if (today->policy.scope != MM_SCOPE_NONE || today->first)
		return; /* not linux's, or fed already */
	for (size_t k = 1; k < ws->n; k++) {
		struct mm_world *w = ws->w[k];
		if (!w->first && may_follow(&w->policy)) {
			w->follows = today;
			today->followers[today->nfollowers++] = w;
		}
	}
}

struct vma_pair {
	const struct mm_vma *from;
	struct mm_vma *to;
};

static int by_from(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)((const struct vma_pair *)a)->from;
	uintptr_t y = (uintptr_t)((const struct vma_pair *)b)->from;
	return (x > y) - (x < y);
}

/* A copy of t, or NULL: out of memory, or a table linked twice, which
 * linux's world never has (it shares nothing). */
static struct pt_table *copy_table(struct mm_world *w, const struct pt_table *t)
{
	struct pt_table *c = mm_pt_pool_get(&w->pool, t->level);
	if (!c)
		return NULL;
	c->share = 1;
	c->nr_tables = t->nr_tables;
	c->nr_leaves = t->nr_leaves;
	c->nr_deposits = t->nr_deposits;
	if (t->level == PT_PTE) {
		memcpy(c->e, t->e, PT_MAP_WORDS * sizeof(c->e[0]));
		return c;
	}
	memcpy(c->e + PT_ENTRIES, t->e + PT_ENTRIES,
	       PT_MAP_WORDS * sizeof(c->e[0]));
	pt_for_each_used(i, t) {
		uint64_t e = t->e[i];
		if (pt_entry_is_table(e)) {
			const struct pt_table *below = pt_entry_table(e);
			struct pt_table *copy = below->share == 1
				? copy_table(w, below) : NULL;
			if (!copy)
				return NULL;
			e = (uint64_t)(uintptr_t)copy;
		}
		c->e[i] = e;
	}
	return c;
}

/* src's process into w: its tables, counters and VMAs (their objects
 * linked after), each VMA's pair appended to *pairs. */
static int copy_space(struct mm_world *w, const struct mm_space *src,
		      struct vma_pair *pairs, size_t *n)
{
	struct mm_space *mm = mm_space_new(w, src->pid);
	if (!mm)
		return -ENOMEM;
	if (src->pgd != src->w->empty_pgd &&
	    !(mm->pgd = copy_table(w, src->pgd)))
		return -ENOMEM;
	mm->c = src->c;
	mm->exiting = src->exiting;
	for (const struct mm_vma *v = vma_first(src); v; v = vma_next(v)) {
		struct mm_vma *c = mm_vma_new(w, mm, v);
		if (!c) {
			avl_build(&mm->vmas);
			return -ENOMEM;
		}
		c->obj = NULL; /* linked below, in its object's order */
		avl_append(&mm->vmas, &c->node);
		pairs[(*n)++] = (struct vma_pair){ v, c };
	}
	avl_build(&mm->vmas);
	return 0;
}

/* w, which follows, becomes a copy of the world it follows. */
static int take_copy(struct mm_world *w)
{
	const struct mm_world *src = w->follows;
	size_t nvmas = 0, n = 0;
	w->follows = NULL;
	w->copy_due = false;
	for (const struct mm_space *mm = src->first; mm; mm = mm->next)
		nvmas += mm->vmas.n;
	struct vma_pair *pairs = malloc((nvmas + 1) * sizeof(*pairs));
	if (!pairs)
		return mm_nomem(w, "a copy of linux's world");
	int r = 0;
	for (const struct mm_space *mm = src->first; mm && !r; mm = mm->next)
		r = copy_space(w, mm, pairs, &n);
	qsort(pairs, n, sizeof(*pairs), by_from);
	/* Each object's VMAs in its order: its sharers are searched so. */
	for (size_t i = 0; i < src->objects.cap && !r; i++) {
		const struct mm_object *o = src->objects.slot[i].item;
		struct mm_object *c = o ? mm_object_get(w, &o->id) : NULL;
		for (const struct mm_vma *v = o ? o->first : NULL; v && !r;
		     v = v->obj_next) {
			size_t at = bsearch_first(pairs, n, p,
						  (uintptr_t)p->from < (uintptr_t)v);
			if (!c || at == n || pairs[at].from != v)
				r = -ENOMEM;
			else
				mm_object_link(c, pairs[at].to, NULL);
		}
	}
	free(pairs);
	if (r)
		return mm_nomem(w, "a copy of linux's world");
	memcpy(w->tables, src->tables, sizeof(w->tables));
	w->exiting = src->exiting;
	w->next_anon = src->next_anon;
	return 0;
}

void mm_followers_map(struct mm_world *w, const struct mm_mapping *m)
{
	for (unsigned i = 0; i < w->nfollowers; i++) {
		struct mm_world *f = w->followers[i];
		if (mm_follow_differs_on(&f->policy, m))
			f->copy_due = w->copies_due = true;
	}
	if (w->copies_due)
		mm_followers_copy_due(w);
}

void mm_followers_vmas(struct mm_space *mm, uint64_t start, uint64_t end)
{
	struct mm_world *w = mm->w;
	const struct mm_vma *v;
	vma_for_each_in(v, mm, start, end) {
		if (!v->obj)
			continue; /* private anonymous: in no policy's scope */
		for (unsigned i = 0; i < w->nfollowers; i++) {
			struct mm_world *f = w->followers[i];
			if (mm_vma_in_scope(&f->policy, v))
				f->copy_due = w->copies_due = true;
		}
	}
}

void mm_followers_copy_due(struct mm_world *w)
{
	unsigned kept = 0;
	for (unsigned i = 0; i < w->nfollowers; i++) {
		struct mm_world *f = w->followers[i];
		if (f->copy_due)
			take_copy(f); /* failed: poisoned, and says so */
		else
			w->followers[kept++] = f;
	}
	w->nfollowers = kept;
	w->copies_due = false;
}
