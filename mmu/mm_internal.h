/* SPDX-License-Identifier: MIT */
/* The model's private types, shared by the files of mmu/. */
#ifndef PTSHARE_MM_INTERNAL_H
#define PTSHARE_MM_INTERNAL_H

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "lib/avl.h"
#include "ptshare/mm.h"
#include "lib/ptr_map.h"
#include "pt_table.h"

struct mm_object {
	struct mm_object_id id;
	/* The VMAs mapping this object, world-wide, in mapping order: the
	 * model's i_mmap, searched for sharers. */
	struct mm_vma *first, *last;
	/* mshare: the object's region in the host (mm_mshare.c), slots of
	 * 512 GiB from mshare_base; 0 slots: no region.  mshare_vmas: the
	 * VMAs placed in it, world-wide; the region goes with the last. */
	uint64_t mshare_base;
	uint32_t mshare_slots, mshare_vmas;
};

struct mm_vma {
	/* In its process's set, by start.  First: a node is its VMA, and
	 * vma_of() (a lookup's every step) costs no test and no offset. */
	struct avl_node node;
	uint64_t start, end;
	uint64_t pgoff;           /* in pages; anonymous: start >> 12 at creation */
	struct mm_object *obj;    /* NULL: private anonymous */
	struct mm_space *mm;
	uint32_t prot, flags;
	uint32_t anon;            /* anon_vma identity; 0: no anonymous pages */
	bool anon_forked;         /* anon_vma inherited at fork (chain not singular) */
	uint32_t huge_shift;      /* hugetlb page shift, 0 for small pages */
	/* Decided once, at creation, for every fault to read: the level of
	 * the tables whose entries map its pages, and whether the world's
	 * policy maps its whole aligned 2 MiB spans by PMD leaves
	 * (mm_vma_as_huge), and whether its pages outside those spans
	 * need no PTE table either (hugetlb-2m: mm_vma_no_pte). */
	uint8_t leaf;
	bool as_huge, huge_edges;
	bool mshare;              /* its pages are in its object's mshare region */
	struct mm_vma *obj_prev, *obj_next;
};

struct mm_counters {
	uint64_t faults, faults_observed;
	uint64_t fork_tables_copied, fork_pages_copied, fork_tables_linked;
	uint64_t cow_copies;
};

struct mm_space {
	struct mm_world *w;
	uint32_t pid;
	struct pt_table *pgd;
	struct avl_tree vmas;     /* by start, non-overlapping (mm_vma.c) */
	struct mm_vma *hint;      /* last VMA found (mm_vma_first_after) */
	/* The PTE table of the 2 MiB span pte_hint_span (addr >> 21) last
	 * walked to, good while the world has unlinked or moved no entry
	 * since (pte_hint_unlinks == w->unlinks): faults come in runs. */
	struct pt_table *pte_hint;
	uint64_t pte_hint_span, pte_hint_unlinks;
	struct mm_counters c;
	bool exiting;             /* mm_exiting(): its pages no longer shared */
	/* hugetlb-2m: the ranges this world put elsewhere than the program
	 * got them (mm_layout.c); NULL: none, every address is the program's. */
	struct mm_layout *layout;
	struct mm_space *prev, *next; /* creation order */
	/* Scratch of the accounting walk: its share of mshare regions. */
	uint64_t mark;
	double host_pss;
};

enum mm_finding_kind {
	MM_FINDING_EXTRA_LINKS,
	MM_FINDING_UNSHARE_PAST_END,
	MM_FINDING_UNSHARE_MISSED,
	MM_FINDING_PRIVATE_ANON,
	MM_FINDING_NR
};

struct mm_world {
	struct mm_policy policy;
	struct pt_pool pool;
	/* Its VMAs: bench/ingest's mix makes and drops two a record in
	 * each world, and malloc and free cost more than the rest of a
	 * split or removal. */
	struct pt_pool_class vmas;
	struct ptr_map procs;     /* pid -> mm_space */
	struct ptr_map objects;   /* mm_object_id -> mm_object */
	/* The object last asked for: a library's VMAs come in a row. */
	struct mm_object *object_hint;
	struct mm_space *first, *last;
	struct mm_space *hint;    /* last process operated on */
	/* The root of every process that has no table yet, empty: a
	 * process takes a root of its own when it first needs a table
	 * (pt_walk_alloc).  A root is 4 KiB in each world: a trace naming
	 * 200,000 processes that map nothing held 3.1 GiB of them. */
	struct pt_table *empty_pgd;
	uint64_t tables[PT_NR_LEVELS]; /* live table pages, deposits included */
	uint64_t max_tables;      /* of them, 0: no limit */
	uint64_t unlinks;         /* upper entries cleared or moved, ever */
	/* Tables linked more than once (share > 1): while there are none,
	 * nothing is shared and an unsharing finds nothing to do. */
	uint64_t shared_tables;
	uint32_t exiting;         /* processes mm_exiting() marked, still here */
	uint64_t findings[MM_FINDING_NR];
	uint32_t next_anon;
	/* mshare: the host mm holding every region's tables (no VMAs, not a
	 * process), and which of its 256 slots of 512 GiB regions use. */
	struct mm_space *host;
	uint64_t mshare_slot_used[4];
	uint64_t mshare_gen;      /* marks of mm_mshare_pss() */
	bool no_zero_page;        /* a read of private anonymous memory
				   * allocates its page (mm_world_set_zero_page) */
	/* mm_follow.c: the world (linux's) this one is read from, fed
	 * nothing until it could differ from it; and of linux's world, the
	 * worlds that follow it. */
	struct mm_world *follows;
	struct mm_world *followers[MM_WORLDS_MAX];
	unsigned nfollowers;
	/* A follower due its copy before linux's next operation (it may
	 * differ from there on); of linux's world, whether any is. */
	bool copy_due, copies_due;
	bool poisoned;
	char err[256];
};

/* Span helpers: a table at `level` (PT_PGD for the root) has entries of
 * MM_ENTRY(level) bytes each. */
#define MM_ENTRY(level) (1ULL << (12 + 9 * (level)))
static inline unsigned pt_index(uint64_t addr, unsigned level)
{
	return (addr >> (12 + 9 * level)) & (PT_ENTRIES - 1);
}
/* The entries [*lo, *hi] of t, whose span starts at tbase, meeting
 * [start, end) (which must meet t's span). */
static inline void pt_entries_in(const struct pt_table *t, uint64_t tbase,
				 uint64_t start, uint64_t end, unsigned *lo,
				 unsigned *hi)
{
	uint64_t tend = tbase + MM_ENTRY(t->level) * PT_ENTRIES;
	*lo = pt_index(start > tbase ? start : tbase, t->level);
	*hi = pt_index((end < tend ? end : tend) - 1, t->level);
}
static inline uint64_t align_down(uint64_t x, uint64_t a) { return x & ~(a - 1); }
static inline uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }
static inline uint64_t max_u64(uint64_t a, uint64_t b) { return a > b ? a : b; }

/* The world whose model w's reads answer from: the one it follows, or
 * its own. */
static inline struct mm_world *mm_data_of(const struct mm_world *w)
{
	return w->follows ? w->follows : (struct mm_world *)w;
}

/* mm_follow.c: whether a world of policy p may map m otherwise than
 * linux's; before w maps m, each follower of w whose policy may takes a
 * copy of w, a world of its own from then on. */
bool mm_follow_differs_on(const struct mm_policy *p, const struct mm_mapping *m);
void mm_followers_map(struct mm_world *w, const struct mm_mapping *m);
/* After mm's VMAs meeting [start, end) were made or changed: a follower
 * whose policy would act on one of them otherwise is due its copy,
 * which mm_begin() hands it before linux's next operation. */
void mm_followers_vmas(struct mm_space *mm, uint64_t start, uint64_t end);
void mm_followers_copy_due(struct mm_world *w);

/* mm_world.c */
int mm_fail(struct mm_world *w, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int mm_nomem(struct mm_world *w, const char *what);
int mm_begin(struct mm_world *w);
struct mm_space *mm_find(const struct mm_world *w, uint32_t pid);
/* Every public operation on one process starts here: its space, or NULL
 * with *err set (-ESRCH when the model has no such process). */
struct mm_space *mm_begin_on(struct mm_world *w, uint32_t pid, int *err);
struct mm_space *mm_space_new(struct mm_world *w, uint32_t pid);
int mm_check_range(struct mm_world *w, uint64_t addr, uint64_t len);

/* mm_vma.c: the ordered VMA set of a process, O(log n) to change */
static inline struct mm_vma *vma_of(const struct avl_node *n)
{
	return n ? avl_entry(n, struct mm_vma, node) : NULL;
}
static inline struct mm_vma *vma_first(const struct mm_space *mm)
{
	return vma_of(mm->vmas.first);
}
static inline struct mm_vma *vma_next(const struct mm_vma *v)
{
	return vma_of(v->node.next);
}
static inline struct mm_vma *vma_prev(const struct mm_vma *v)
{
	return vma_of(v->node.prev);
}
/* The VMA before next, or the last one when next is NULL. */
static inline struct mm_vma *vma_before(const struct mm_space *mm,
					const struct mm_vma *next)
{
	return next ? vma_prev(next) : vma_of(mm->vmas.last);
}
/* The first VMA ending above addr, or NULL. */
struct mm_vma *mm_vma_first_after(const struct mm_space *mm, uint64_t addr);
/* Each VMA meeting [start, end), in address order (none may go meanwhile). */
#define vma_for_each_in(v, mm, start, end)                                  \
	for ((v) = mm_vma_first_after((mm), (start));                        \
	     (v) && (v)->start < (end); (v) = vma_next(v))
struct mm_vma *mm_vma_find(struct mm_space *mm, uint64_t addr);
bool mm_vma_any_in(const struct mm_space *mm, uint64_t start, uint64_t end);
bool mm_vma_range_mapped(const struct mm_space *mm, uint64_t start,
			 uint64_t end);
struct mm_vma *mm_vma_new(struct mm_world *w, struct mm_space *mm,
			  const struct mm_vma *tmpl);
void mm_vma_free(struct mm_vma *v); /* out of its set and object */
void mm_vma_insert(struct mm_space *mm, struct mm_vma *v);
void mm_vma_remove(struct mm_space *mm, struct mm_vma *v);
/* The tree and the order agree, and the tree is balanced (mm_check). */
bool mm_vma_set_consistent(const struct mm_space *mm);
int mm_vma_split(struct mm_world *w, struct mm_space *mm, uint64_t addr);
void mm_vma_merge_around(struct mm_space *mm, uint64_t start, uint64_t end);
int mm_vma_check_huge_edges(struct mm_world *w, const struct mm_space *mm,
			    uint64_t start, uint64_t end);
bool mm_vma_is_anonymous(const struct mm_vma *v);
uint64_t mm_vma_offset(const struct mm_vma *v, uint64_t addr);

/* mm_object.c */
struct mm_object *mm_object_get(struct mm_world *w,
				const struct mm_object_id *id);
void mm_object_link(struct mm_object *o, struct mm_vma *v,
		    struct mm_vma *after);
void mm_object_unlink(struct mm_vma *v);

/* mm_walk.c: paths through a process's tables */
struct pt_table *mm_pt_alloc(struct mm_world *w, unsigned level);
struct pt_table *mm_pt_lookup(struct pt_table *pgd, uint64_t addr,
			      unsigned level,
			      bool *shared);
int mm_pt_walk_alloc(struct mm_world *w, struct mm_space *mm, struct mm_vma *v,
		     uint64_t addr, unsigned level, struct pt_table **out,
		     bool *shared);
void mm_pt_link(struct mm_world *w, struct pt_table *parent, unsigned idx,
		 struct pt_table *child);
void mm_pt_set_leaf(struct mm_world *w, struct pt_table *t, unsigned idx,
		    bool deposit);
void mm_pt_clear_entry(struct mm_world *w, struct pt_table *t, unsigned idx);
int mm_pt_split_leaf(struct mm_world *w, struct pt_table *pmd, unsigned idx);
/* cow-pte: the PTE table at pmd->e[idx], shared, replaced in mm by a copy
 * of its own (the break of a copy-on-write table); the copy, or NULL
 * (out of memory).  A table only mm uses is returned as it is. */
struct pt_table *mm_pt_cow_break(struct mm_world *w, struct mm_space *mm,
				 struct pt_table *pmd, unsigned idx);
/* The same for the PTE table mapping addr in mm, if any: 0, or -ENOMEM. */
int mm_cow_break_at(struct mm_world *w, struct mm_space *mm, uint64_t addr);

/* mm_share.c: the policy's sharing rules */
enum mm_reason mm_vma_reason(const struct mm_policy *p, const struct mm_vma *v);
bool mm_vma_in_scope(const struct mm_policy *p, const struct mm_vma *v);
bool mm_shares_level(const struct mm_policy *p, const struct mm_vma *v,
		     uint64_t addr, unsigned level);
bool mm_patch_shares_level(const struct mm_policy *p, const struct mm_vma *v,
			   uint64_t addr, unsigned level);
struct pt_table *mm_find_sharer(struct mm_world *w, struct mm_vma *v,
				uint64_t addr, unsigned level);
/* 0, or -ENOMEM (cow-pte copies tables). */
int mm_unshare(struct mm_world *w, struct mm_space *mm, uint64_t start,
	       uint64_t end);

/*
 * hugetlb-2m and thp-shmem: MAP_SHARED shmem and SysV mappings mapped by
 * 2 MiB PMD leaves over every whole aligned 2 MiB span they cover, as
 * hugetlb with 2 MiB pages (huge_pages=on) or shmem THP (shmem_enabled=
 * always) would map them (docs/model.md, "Huge pages").  Asked once per
 * VMA, when it is made (mm_vma_new: v->as_huge), and by the report.
 */
static inline bool mm_vma_as_huge(const struct mm_policy *p,
				  const struct mm_vma *v)
{
	return p->huge_shmem && v->obj && !v->huge_shift &&
	       (v->flags & MM_VMA_SHARED) &&
	       (v->obj->id.kind == MM_OBJ_SHMEM ||
		v->obj->id.kind == MM_OBJ_SYSV);
}

/* The whole aligned 2 MiB span of addr is in v and mapped by a PMD leaf. */
static inline bool mm_span_huge(const struct mm_vma *v, uint64_t addr)
{
	uint64_t sb = align_down(addr, MM_SPAN(PT_PTE));
	return v->as_huge && v->start <= sb && sb + MM_SPAN(PT_PTE) <= v->end;
}

/*
 * hugetlb-2m: v, a mapping of 2 MiB or more it maps by 2 MiB pages, needs
 * no PTE table for any of its pages: the kernel would have aligned it and
 * rounded it up (docs/model.md, "Huge pages").
 */
static inline bool mm_vma_no_pte(const struct mm_vma *v)
{
	return v->huge_edges && v->end - v->start >= MM_SPAN(PT_PTE);
}

/* addr is in a span v does not cover wholly, where v's pages have no PTE
 * table (mm_vma_no_pte): an edge, held by its PMD page alone. */
static inline bool mm_span_edge(const struct mm_vma *v, uint64_t addr)
{
	return mm_vma_no_pte(v) && !mm_span_huge(v, addr);
}

/* The level of the table whose entry maps addr in v. */
static inline unsigned mm_leaf_level_at(const struct mm_vma *v, uint64_t addr)
{
	return mm_span_huge(v, addr) ? PT_PMD : v->leaf;
}

/* The PTE table mapping addr in mm, when it is the last one a walk found
 * there and nothing has been unlinked since; else NULL (walk). */
static inline struct pt_table *mm_pte_hint(const struct mm_world *w,
					   const struct mm_space *mm,
					   uint64_t addr)
{
	return mm->pte_hint_unlinks == w->unlinks &&
			       mm->pte_hint_span == addr >> 21
		       ? mm->pte_hint : NULL;
}

/* The level of the tables whose entries map pages of 1 << shift bytes
 * (hugetlb), or of small pages (shift 0): a VMA's leaf. */
static inline unsigned mm_leaf_of_shift(uint32_t shift)
{
	return shift ? (shift - 12) / 9 : PT_PTE;
}

/* mm_mshare.c: regions whose tables exist once, in the host */
bool mm_mshare_wants(const struct mm_policy *p, const struct mm_mapping *m);
void mm_mshare_link(struct mm_world *w, struct mm_vma *v);
void mm_mshare_unlink(struct mm_world *w, struct mm_vma *v);
/* The host's address of v's page at addr; false when v is not in a region
 * or addr lies past its end (the object grew: not modelled). */
bool mm_mshare_addr(const struct mm_vma *v, uint64_t addr, uint64_t *out);
struct mm_space *mm_mshare_host(struct mm_world *w);
int mm_mshare_zap(struct mm_world *w, const struct mm_vma *v, uint64_t start,
		  uint64_t end);
void mm_mshare_free(struct mm_world *w);
/* Host tables per level, all regions. */
void mm_mshare_tables(const struct mm_world *w, uint64_t out[PT_NR_LEVELS]);
/* Each process's share of the regions it maps, into mm->host_pss. */
void mm_mshare_pss(struct mm_world *w);

/* mm_layout.c: hugetlb-2m's layout.  Operations come in the program's
 * addresses; a piece is a part of such a range at the world's addresses
 * [start, end), from the program's address `from` on (MM_TASK_SIZE: the
 * tail a mapping was rounded up by, where the program has nothing). */
typedef int mm_piece_fn(struct mm_world *w, struct mm_space *mm,
			uint64_t start, uint64_t end, uint64_t from, void *arg);
/* fn on each piece of the program's [start, end), in the program's order
 * (once, on the range itself, when nothing in mm moved), until it fails.
 * Inline: in every world but one, on every record, it is fn. */
int mm_layout_pieces(struct mm_world *w, struct mm_space *mm, uint64_t start,
		     uint64_t end, mm_piece_fn *fn, void *arg);
static inline int mm_layout_each(struct mm_world *w, struct mm_space *mm,
				 uint64_t start, uint64_t end, mm_piece_fn *fn,
				 void *arg)
{
	return mm->layout ? mm_layout_pieces(w, mm, start, end, fn, arg)
			  : fn(w, mm, start, end, start, arg);
}
/* The world's address of the program's addr; false when the world has
 * another mapping of the program's there, and the program none. */
bool mm_layout_addr(const struct mm_space *mm, uint64_t addr, uint64_t *out);
/* fn on each part of the world's [start, end) that is the program's,
 * with the program's addresses of it and the world's start, in the
 * world's order (not the tail a mapping was rounded up by). */
typedef int mm_program_fn(uint64_t start, uint64_t end, uint64_t wstart,
			  void *arg);
int mm_layout_each_program(const struct mm_space *mm, uint64_t start,
			   uint64_t end, mm_program_fn *fn, void *arg);
/* Where the world maps m ([*wstart, *wstart + *wlen)), the kernel placing
 * it as it would in this world; records the gap an aligned one leaves. */
int mm_layout_place(struct mm_world *w, struct mm_space *mm,
		    const struct mm_mapping *m, uint64_t *wstart,
		    uint64_t *wlen);
/* The program's [start, end) is at [wstart, wend) in the world now. */
int mm_layout_moved(struct mm_world *w, struct mm_space *mm, uint64_t start,
		    uint64_t end, uint64_t wstart, uint64_t wend);
/* munmap() of the program's [start, end), wherever the world has it. */
int mm_layout_unmap(struct mm_world *w, struct mm_space *mm, uint64_t start,
		    uint64_t end);
/* The program's [start, end) is unmapped: nothing there is moved. */
int mm_layout_forget(struct mm_world *w, struct mm_space *mm, uint64_t start,
		     uint64_t end);
int mm_layout_copy(struct mm_world *w, struct mm_space *child,
		   const struct mm_space *parent);
void mm_layout_free(struct mm_space *mm);
int mm_layout_check(struct mm_world *w, const struct mm_space *mm);

/* mm_zap.c */
int mm_zap(struct mm_world *w, struct mm_space *mm, uint64_t start,
	   uint64_t end);
int mm_do_unmap(struct mm_world *w, struct mm_space *mm, uint64_t start,
		uint64_t end);
void mm_teardown(struct mm_world *w, struct mm_space *mm);
int mm_dontneed(struct mm_world *w, struct mm_space *mm, uint64_t start,
		uint64_t end);
int mm_remove(struct mm_world *w, struct mm_space *mm, uint64_t start,
	      uint64_t end);

#endif
