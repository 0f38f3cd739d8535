/* SPDX-License-Identifier: MIT */
/*
 * Worlds that follow linux's.  A policy that differs from today's kernel
 * only on mappings of one kind (hugetlb-pmd: shared hugetlb ones;
 * thp-shmem: shared shmem and SysV memory; mshare: the shared mappings it
 * places) has, as long as no process mapped any, the very model linux's
 * world has: such a
 * world is fed nothing and read from linux's (with its own policy's
 * reasons), until an operation that could make it differ comes.  Then it
 * takes a copy of linux's world as it is, before that operation, and is a
 * world of its own from there on.  bench/ingest's mix (private anonymous
 * memory) is fed to three worlds fewer, and so is every program that
 * maps no shared memory (docs/model.md, *World*).  The ingest asks for it
 * (mm_worlds_follow); linux's world hands a follower its copy as a mapping
 * its policy treats otherwise comes (mm_map).
 */
#include <stdlib.h>

#include "mm_internal.h"
#include "lib/bsearch.h"

/* A policy whose rules differ from linux's only on the VMAs of mappings
 * mm_follow_differs_on() names, which only a mapping makes: none of its
 * rules acts on other mappings, at fork, or on where mappings go. */
static bool may_follow(const struct mm_policy *p)
{
	return (p->scope == MM_SCOPE_NONE ||
		p->scope == MM_SCOPE_HUGETLB_SHARED ||
		p->scope == MM_SCOPE_MSHARE) &&
	       !p->link_at_fork && !p->patch_findings && !p->huge_aligned &&
	       !p->cow_pte;
}

bool mm_follow_differs_on(const struct mm_policy *p, const struct mm_mapping *m)
{
	bool shared = m->flags & MM_VMA_SHARED;
	/* hugetlb-pmd shares shared hugetlb mappings' PMD tables */
	if (p->scope == MM_SCOPE_HUGETLB_SHARED && m->huge_shift)
		return true;
	/* mshare places the mappings it wants in regions of a host */
	if (mm_mshare_wants(p, m))
		return true;
	/* thp-shmem maps shared shmem and SysV memory by PMD leaves
	 * (mm_vma_as_huge) */
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
	unsigned kept = 0;
	for (unsigned i = 0; i < w->nfollowers; i++) {
		struct mm_world *f = w->followers[i];
		if (mm_follow_differs_on(&f->policy, m))
			take_copy(f); /* failed: poisoned, and says so */
		else
			w->followers[kept++] = f;
	}
	w->nfollowers = kept;
}
