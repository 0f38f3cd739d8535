/* SPDX-License-Identifier: MIT */
/*
 * Table pages and the pool they come from.
 *
 * A PTE table is 16 bytes of header and its 512-bit presence map; an upper
 * table (PUD, PMD page, or a process's PGD) is the header, 512 entries and
 * a 512-bit map of those not zero: a walk over a table's links visits
 * them alone (a process's few tables sit at the far ends of its PGD and of
 * its stack's PUD page, and counting them entry by entry was most of the
 * cost of a checkpoint and of an exit).
 * An upper entry is 0 (none), a pointer to a lower table, or a huge leaf:
 * PT_LEAF, or PT_LEAF_DEPOSIT for an anonymous THP whose PMD keeps a
 * deposited PTE table (counted as a PTE table, as the kernel does).
 */
#ifndef PTSHARE_PT_TABLE_H
#define PTSHARE_PT_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PT_ENTRIES 512u
#define PT_PGD 3u /* the level of a process's root table */
#define PT_LEAF 1u
#define PT_LEAF_DEPOSIT 3u

struct pt_table {
	uint32_t share;       /* entries linking this table, world-wide */
	uint8_t level;        /* enum pt_level, or PT_PGD */
	uint8_t unused;
	uint16_t nr_tables;   /* upper: entries that are tables */
	uint16_t nr_leaves;   /* upper: entries that are huge leaves */
	uint16_t nr_deposits; /* upper: leaves with a deposited PTE table */
	uint32_t users;       /* scratch of the accounting walk */
	uint64_t e[];         /* PTE: 8 words of presence; upper: 512 entries,
			       * then 8 words of the map of those used */
};

#define PT_MAP_WORDS (PT_ENTRIES / 64)

static inline bool pt_entry_is_table(uint64_t e) { return e && !(e & 1); }
static inline bool pt_entry_is_leaf(uint64_t e) { return e & 1; }
static inline struct pt_table *pt_entry_table(uint64_t e)
{
	return (struct pt_table *)(uintptr_t)e;
}

static inline bool pt_test(const struct pt_table *t, unsigned i)
{
	return t->e[i / 64] >> (i % 64) & 1;
}

/* An upper table's entry i changes: from or to zero. */
static inline void pt_mark_used(struct pt_table *t, unsigned i)
{
	t->e[PT_ENTRIES + i / 64] |= 1ULL << (i % 64);
}
static inline void pt_mark_unused(struct pt_table *t, unsigned i)
{
	t->e[PT_ENTRIES + i / 64] &= ~(1ULL << (i % 64));
}
static inline bool pt_used(const struct pt_table *t, unsigned i)
{
	return t->e[PT_ENTRIES + i / 64] >> (i % 64) & 1;
}

/* The first entry of upper table t at or after i that is not zero;
 * PT_ENTRIES when there is none. */
static inline unsigned pt_next_used(const struct pt_table *t, unsigned i)
{
	if (i >= PT_ENTRIES)
		return PT_ENTRIES;
	const uint64_t *map = t->e + PT_ENTRIES;
	unsigned w = i / 64;
	uint64_t bits = map[w] & ~0ULL << (i % 64);
	while (!bits) {
		if (++w == PT_MAP_WORDS)
			return PT_ENTRIES;
		bits = map[w];
	}
	return w * 64 + (unsigned)__builtin_ctzll(bits);
}

/* Each entry i of upper table t that is not zero, in order; the body may
 * clear entry i. */
#define pt_for_each_used(i, t)                                               \
	for (unsigned i = pt_next_used(t, 0); i < PT_ENTRIES;                 \
	     i = pt_next_used(t, i + 1))

/* Bits [lo, hi) of a 512-bit map, as the 64-bit word w of it. */
static inline uint64_t pt_mask_word(unsigned lo, unsigned hi, unsigned w)
{
	unsigned a = w * 64, b = a + 64;
	if (hi <= a || lo >= b)
		return 0;
	unsigned l = lo > a ? lo - a : 0, h = hi < b ? hi - a : 64;
	return (h - l == 64 ? ~0ULL : ((1ULL << (h - l)) - 1)) << l;
}

/* Sets bits in the word *w: how many were not set.  Mostly none are new,
 * and popcount is a call without -mpopcnt. */
static inline unsigned pt_word_add(uint64_t *w, uint64_t bits)
{
	uint64_t add = bits & ~*w;
	if (!add)
		return 0;
	*w |= add;
	return (unsigned)__builtin_popcountll(add);
}

/* Sets bits [lo, hi) of a 512-bit map, lo < hi. */
static inline void pt_map_set(uint64_t *map, unsigned lo, unsigned hi)
{
	unsigned k = lo / 64, last = (hi - 1) / 64;
	uint64_t head = ~0ULL << (lo % 64), tail = ~0ULL >> (63 - (hi - 1) % 64);
	if (k == last) {
		map[k] |= head & tail;
		return;
	}
	map[k] |= head;
	while (++k < last)
		map[k] = ~0ULL;
	map[last] |= tail;
}

/* Free lists of fixed-size objects carved from large chunks: table pages are
 * the model's bulk, and malloc's per-object overhead would double them. */
struct pt_pool_class {
	size_t size;
	size_t dirty;      /* bytes of an object given back that may not be
			    * zero (the rest is): zeroed on reuse */
	void *free;        /* objects given back */
	char *next, *end;  /* never-used objects of the newest chunk: zero */
	void *chunks;
	size_t chunk_bytes;
	uint64_t live;
};

struct pt_pool {
	struct pt_pool_class pte, upper;
};

/* A class by itself, for a world's other objects made and dropped by the
 * record (its VMAs: mm_vma_new).  get hands out a zeroed object of the
 * class's size, or NULL; destroy frees every object at once.  An object
 * is put back with its bytes past the first `dirty` zero: get clears only
 * those (a table page is given back empty, and 4 KiB cleared at every get
 * was the bulk of a short-lived process's cost).  clean checks it. */
void mm_pool_class_init(struct pt_pool_class *c, size_t size, size_t dirty);
void mm_pool_class_destroy(struct pt_pool_class *c);
void *mm_pool_class_get(struct pt_pool_class *c);
void mm_pool_class_put(struct pt_pool_class *c, void *obj);
bool mm_pool_class_clean(const struct pt_pool_class *c);

void mm_pt_pool_init(struct pt_pool *p);
void mm_pt_pool_destroy(struct pt_pool *p);
struct pt_table *mm_pt_pool_get(struct pt_pool *p, unsigned level);
void mm_pt_pool_put(struct pt_pool *p, struct pt_table *t);
/* Every table page given back is empty past its header (mm_check). */
bool mm_pt_pool_clean(const struct pt_pool *p);
/* Bytes the pool holds from the system, for the model-size benchmark. */
size_t mm_pt_pool_bytes(const struct pt_pool *p);

#endif
