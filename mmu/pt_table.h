/* SPDX-License-Identifier: MIT */
/*
 * Table pages and the pool they come from.
 *
 * A PTE table is 16 bytes of header and its 512-bit presence map; an upper
 * table (PUD, PMD page, or a process's PGD) is the header and 512 entries.
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
	uint64_t e[];         /* PTE: 8 words of presence; upper: 512 entries */
};

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

/* Bits [lo, hi) of a 512-bit map, as the 64-bit word w of it. */
static inline uint64_t pt_mask_word(unsigned lo, unsigned hi, unsigned w)
{
	unsigned a = w * 64, b = a + 64;
	if (hi <= a || lo >= b)
		return 0;
	unsigned l = lo > a ? lo - a : 0, h = hi < b ? hi - a : 64;
	return (h - l == 64 ? ~0ULL : ((1ULL << (h - l)) - 1)) << l;
}

/* Free lists of fixed-size objects carved from large chunks: table pages are
 * the model's bulk, and malloc's per-object overhead would double them. */
struct pt_pool_class {
	size_t size;
	void *free;        /* objects given back, to be zeroed on reuse */
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
 * class's size, or NULL; destroy frees every object at once. */
void mm_pool_class_init(struct pt_pool_class *c, size_t size);
void mm_pool_class_destroy(struct pt_pool_class *c);
void *mm_pool_class_get(struct pt_pool_class *c);
void mm_pool_class_put(struct pt_pool_class *c, void *obj);

void mm_pt_pool_init(struct pt_pool *p);
void mm_pt_pool_destroy(struct pt_pool *p);
struct pt_table *mm_pt_pool_get(struct pt_pool *p, unsigned level);
void mm_pt_pool_put(struct pt_pool *p, struct pt_table *t);
/* Bytes the pool holds from the system, for the model-size benchmark. */
size_t mm_pt_pool_bytes(const struct pt_pool *p);

#endif
