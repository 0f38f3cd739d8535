/* SPDX-License-Identifier: MIT */
/*
 * Call sites: which line of a program created each mapping.  The shim sends
 * the return addresses of every call (wire.h: nframes).  For the calls that
 * create mappings (mmap, shmat, mremap) the ingest turns them into places
 * in files, an object and a file offset, with the process's code mappings
 * as its last checkpoint read them: the process may be gone when the report
 * is made, and a replay has no process at all.  Each process keeps which
 * call site made which of its ranges; the report symbolises the places
 * (symbols.h) from the files still on disk.
 */
#ifndef PTSHARE_CALLSITE_H
#define PTSHARE_CALLSITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/avl.h"
#include "ptshare/mm.h"
#include "ptshare/wire.h"

/* A return address as a place in a file.  obj.kind MM_OBJ_ANON: it was in
 * no file mapping (generated code), and offset is the address itself. */
struct callsite_frame {
	struct mm_object_id obj;
	uint64_t offset;
};

/* A process's mappings of executable files, sorted by address. */
struct code_map {
	struct code_range {
		uint64_t start, end, offset;
		struct mm_object_id obj;
	} *r;
	size_t n, cap;
};

/* Replaces the map with the executable file mappings among v (a
 * checkpoint's, in address order). */
int ingest_code_map_set(struct code_map *m, const struct pts_ck_vma *v,
			size_t n);
int ingest_code_map_copy(struct code_map *dst, const struct code_map *src);
void ingest_code_map_free(struct code_map *m);

/* The call sites of a run, each kept once: a site is a number > 0. */
struct callsites {
	struct callsite_frame *frames;
	size_t nframes, cap_frames;
	struct callsite_entry {
		uint32_t first, n;  /* in frames */
		uint64_t hash;
	} *sites;
	size_t nsites, cap_sites;
	uint32_t *slot;         /* open addressing: site numbers, 0 empty */
	size_t nslots;
};

/* The site of the n return addresses addr, translated with code: its
 * number, or 0 when there are none (or memory ran out). */
uint32_t ingest_callsites_intern(struct callsites *t,
				 const struct code_map *code,
				 const uint64_t *addr, size_t n);
/* The frames of site (> 0); *n set. */
const struct callsite_frame *ingest_callsites_get(const struct callsites *t,
						  uint32_t site, size_t *n);
void ingest_callsites_free(struct callsites *t);
/* site again, its frames in no file then (made before the process's first
 * reading gave its code map) translated with code: its new number, or
 * site when nothing moved. */
uint32_t ingest_callsites_place(struct callsites *t,
				const struct code_map *code, uint32_t site);

/* Which site made which range of one process: disjoint ranges in an
 * ordered set (a process may have 65,000 of them, and each record changes
 * one or two). */
struct site_ranges {
	struct avl_tree t;
};

/* [start, end) was made by site (0: by nothing known: forgotten). */
int ingest_site_ranges_set(struct site_ranges *s, uint64_t start, uint64_t end,
			   uint32_t site);
/* mremap: what [old, old + old_len) held moves to new (its first new_len
 * bytes), the old range is unmapped unless keep_old, and a growth
 * [new + old_len, new + new_len) was made by site. */
int ingest_site_ranges_move(struct site_ranges *s, uint64_t old,
			    uint64_t old_len,
			    uint64_t new, uint64_t new_len, bool keep_old,
			    uint32_t site);
/* The site that made addr, or 0. */
uint32_t ingest_site_ranges_at(const struct site_ranges *s, uint64_t addr);
int ingest_site_ranges_copy(struct site_ranges *dst,
			    const struct site_ranges *src);
void ingest_site_ranges_free(struct site_ranges *s);
/* Every range's site placed again with code (ingest_callsites_place). */
void ingest_site_ranges_place(struct site_ranges *s, struct callsites *t,
			      const struct code_map *code);

#endif
