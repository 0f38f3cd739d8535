/* SPDX-License-Identifier: MIT */
#include "lib/ptr_map.h"

#include <stdlib.h>

void *ptr_map_get(const struct ptr_map *m, uint64_t hash, ptr_map_eq eq,
		  const void *key)
{
	if (!m->cap)
		return NULL;
	for (size_t i = hash & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		const struct ptr_map_slot *s = &m->slot[i];
		if (!s->item)
			return NULL;
		if (s->hash == hash && eq(s->item, key))
			return s->item;
	}
}

static void insert(struct ptr_map_slot *slot, size_t cap, uint64_t hash,
		   void *item)
{
	size_t i = hash & (cap - 1);
	while (slot[i].item)
		i = (i + 1) & (cap - 1);
	slot[i] = (struct ptr_map_slot){ hash, item };
}

int ptr_map_put(struct ptr_map *m, uint64_t hash, void *item)
{
	if ((m->n + 1) * 4 > m->cap * 3) {
		size_t cap = m->cap ? m->cap * 2 : 16;
		struct ptr_map_slot *slot = calloc(cap, sizeof(*slot));
		if (!slot)
			return -1;
		for (size_t i = 0; i < m->cap; i++)
			if (m->slot[i].item)
				insert(slot, cap, m->slot[i].hash, m->slot[i].item);
		free(m->slot);
		m->slot = slot;
		m->cap = cap;
	}
	insert(m->slot, m->cap, hash, item);
	m->n++;
	return 0;
}

/* Linear probing deletes by shifting back the entries that probed past. */
void ptr_map_del(struct ptr_map *m, uint64_t hash, const void *item)
{
	if (!m->cap)
		return;
	size_t mask = m->cap - 1, i = hash & mask;
	while (m->slot[i].item != item) {
		if (!m->slot[i].item)
			return;
		i = (i + 1) & mask;
	}
	for (size_t j = (i + 1) & mask; m->slot[j].item; j = (j + 1) & mask) {
		size_t home = m->slot[j].hash & mask;
		/* j may move to i when its home is not in (i, j]. */
		if ((j > i && (home <= i || home > j)) ||
		    (j < i && home <= i && home > j)) {
			m->slot[i] = m->slot[j];
			i = j;
		}
	}
	m->slot[i] = (struct ptr_map_slot){ 0 };
	m->n--;
}

void ptr_map_free(struct ptr_map *m)
{
	free(m->slot);
	*m = (struct ptr_map){ 0 };
}
