/* SPDX-License-Identifier: MIT */
/* An open-addressing map from a 64-bit hash to items: the world's process
 * and object registries, the invariant checker's table census, the
 * ingest's names of objects, and the call sites' demangled names. */
#ifndef PTSHARE_LIB_PTR_MAP_H
#define PTSHARE_LIB_PTR_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ptr_map_slot {
	uint64_t hash;
	void *item; /* NULL: empty */
};

struct ptr_map {
	struct ptr_map_slot *slot;
	size_t cap; /* a power of two, or 0 */
	size_t n;
};

/* eq(item, key) tells whether item is the one key names. */
typedef bool (*ptr_map_eq)(const void *item, const void *key);

void *ptr_map_get(const struct ptr_map *m, uint64_t hash, ptr_map_eq eq,
		  const void *key);
/* Adds an item not in the map. Returns 0 or -1 when out of memory. */
int ptr_map_put(struct ptr_map *m, uint64_t hash, void *item);
void ptr_map_del(struct ptr_map *m, uint64_t hash, const void *item);
void ptr_map_free(struct ptr_map *m);

static inline uint64_t ptr_map_hash(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

#endif
