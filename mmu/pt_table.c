/* SPDX-License-Identifier: MIT */
#include "pt_table.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#define CHUNK_BYTES (256u << 10)

void mm_pool_class_init(struct pt_pool_class *c, size_t size, size_t dirty)
{
	size = (size + 15) & ~(size_t)15;
	if (dirty > size)
		dirty = size;
	if (dirty < sizeof(void *)) /* the free list's link */
		dirty = sizeof(void *);
	/* whole words, which clean reads */
	*c = (struct pt_pool_class){ .size = size,
				     .dirty = (dirty + 7) & ~(size_t)7 };
}

void mm_pool_class_destroy(struct pt_pool_class *c)
{
	void *chunk = c->chunks;
	while (chunk) {
		UNPOISON(chunk, CHUNK_BYTES);
		void *next = *(void **)chunk;
		free(chunk);
		chunk = next;
	}
	c->chunks = c->free = NULL;
	c->next = c->end = NULL;
}

/* A chunk starts with the link to the next chunk; objects follow.  It
 * comes zeroed and untouched from calloc (fresh pages of the kernel):
 * objects are handed out in order, so pages are touched only when used. */
static int class_grow(struct pt_pool_class *c)
{
	char *chunk = calloc(1, CHUNK_BYTES);
	if (!chunk)
		return -1;
	*(void **)chunk = c->chunks;
	c->chunks = chunk;
	c->chunk_bytes += CHUNK_BYTES;
	c->next = chunk + 16;
	c->end = chunk + 16 + (CHUNK_BYTES - 16) / c->size * c->size;
	POISON(c->next, c->end - c->next);
	return 0;
}

void *mm_pool_class_get(struct pt_pool_class *c)
{
	void *obj = c->free;
	if (obj) {
		UNPOISON(obj, c->size);
		c->free = *(void **)obj;
		/* The next get's load, a miss otherwise: a fork takes a
		 * process's VMAs one after the other. */
		__builtin_prefetch(c->free, 1);
		memset(obj, 0, c->dirty);
	} else {
		if (c->next == c->end && class_grow(c))
			return NULL;
		obj = c->next;
		c->next += c->size;
		UNPOISON(obj, c->size);
	}
	c->live++;
	return obj;
}

void mm_pool_class_put(struct pt_pool_class *c, void *obj)
{
	*(void **)obj = c->free;
	c->free = obj;
	c->live--;
	POISON(obj, c->size);
}

bool mm_pool_class_clean(const struct pt_pool_class *c)
{
	const char *obj = c->free;
	while (obj) {
		UNPOISON(obj, c->size);
		uint64_t any = 0;
		for (size_t i = c->dirty; i < c->size; i += 8)
			any |= *(const uint64_t *)(obj + i);
		const char *next = *(void *const *)obj;
		POISON(obj, c->size);
		if (any)
			return false;
		obj = next;
	}
	return true;
}

/* A PTE table's presence map is left as it was when the table goes; an
 * upper table goes only once each of its entries was cleared (pt_put,
 * mm_teardown), its header aside. */
void mm_pt_pool_init(struct pt_pool *p)
{
	mm_pool_class_init(&p->pte, sizeof(struct pt_table) + PT_ENTRIES / 8,
			   SIZE_MAX);
	mm_pool_class_init(&p->upper, sizeof(struct pt_table) +
					      (PT_ENTRIES + PT_MAP_WORDS) * 8,
			   offsetof(struct pt_table, e));
}

void mm_pt_pool_destroy(struct pt_pool *p)
{
	mm_pool_class_destroy(&p->pte);
	mm_pool_class_destroy(&p->upper);
}

struct pt_table *mm_pt_pool_get(struct pt_pool *p, unsigned level)
{
	struct pt_table *t = mm_pool_class_get(level ? &p->upper : &p->pte);
	if (t)
		t->level = level;
	return t;
}

void mm_pt_pool_put(struct pt_pool *p, struct pt_table *t)
{
	mm_pool_class_put(t->level ? &p->upper : &p->pte, t);
}

bool mm_pt_pool_clean(const struct pt_pool *p)
{
	return mm_pool_class_clean(&p->pte) && mm_pool_class_clean(&p->upper);
}

size_t mm_pt_pool_bytes(const struct pt_pool *p)
{
	return p->pte.chunk_bytes + p->upper.chunk_bytes;
}
