/* SPDX-License-Identifier: MIT */
/* Return addresses turned into places in files, and each distinct call site
 * kept once: a program that maps memory a million times from one line has
 * one site. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "callsite.h"
#include "lib/grow.h"
#include "lib/bsearch.h"

int ingest_code_map_set(struct code_map *m, const struct pts_ck_vma *v,
			size_t n)
{
	m->n = 0;
	for (size_t i = 0; i < n; i++) {
		if (v[i].kind == MM_OBJ_ANON || !(v[i].prot & MM_PROT_EXEC))
			continue;
		if (grow_array((void **)&m->r, &m->cap, m->n + 1, sizeof(*m->r)))
			return -ENOMEM;
		m->r[m->n++] = (struct code_range){
			v[i].start, v[i].end, v[i].offset,
			{ v[i].kind, v[i].dev, v[i].ino },
		};
	}
	return 0;
}

int ingest_code_map_copy(struct code_map *dst, const struct code_map *src)
{
	dst->n = 0;
	if (grow_array((void **)&dst->r, &dst->cap, src->n, sizeof(*dst->r)))
		return -ENOMEM;
	if (src->n)
		memcpy(dst->r, src->r, src->n * sizeof(*src->r));
	dst->n = src->n;
	return 0;
}

void ingest_code_map_free(struct code_map *m)
{
	free(m->r);
	*m = (struct code_map){ 0 };
}

static struct callsite_frame translate(const struct code_map *m, uint64_t addr)
{
	size_t lo = bsearch_first(m->r, m->n, r, r->end <= addr);
	if (lo < m->n && m->r[lo].start <= addr)
		return (struct callsite_frame){
			m->r[lo].obj, m->r[lo].offset + (addr - m->r[lo].start) };
	return (struct callsite_frame){ { MM_OBJ_ANON, 0, 0 }, addr };
}

/* FNV-1a over the frames. */
static uint64_t hash_frames(const struct callsite_frame *f, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (size_t i = 0; i < n; i++) {
		uint64_t w[4] = { f[i].obj.kind, f[i].obj.dev, f[i].obj.ino, f[i].offset };
		for (size_t k = 0; k < 4; k++) {
			h ^= w[k];
			h *= 0x100000001b3ULL;
		}
	}
	return h;
}

static bool same_frames(const struct callsite_frame *a,
			const struct callsite_frame *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i].obj.kind != b[i].obj.kind || a[i].obj.dev != b[i].obj.dev ||
		    a[i].obj.ino != b[i].obj.ino || a[i].offset != b[i].offset)
			return false;
	return true;
}

/* Slot of the site with these frames, or of the empty slot it would take. */
static size_t find_slot(const struct callsites *t, const struct callsite_frame *f,
			size_t n, uint64_t hash)
{
	size_t i = hash & (t->nslots - 1);
	for (;; i = (i + 1) & (t->nslots - 1)) {
		uint32_t s = t->slot[i];
		if (!s)
			return i;
		const struct callsite_entry *e = &t->sites[s - 1];
		if (e->hash == hash && e->n == n &&
		    same_frames(&t->frames[e->first], f, n))
			return i;
	}
}

/* Twice as many slots, at most half full. */
static int rehash(struct callsites *t)
{
	size_t n = t->nslots ? 2 * t->nslots : 64;
	uint32_t *slot = calloc(n, sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	free(t->slot);
	t->slot = slot;
	t->nslots = n;
	for (size_t s = 0; s < t->nsites; s++) {
		const struct callsite_entry *e = &t->sites[s];
		t->slot[find_slot(t, &t->frames[e->first], e->n, e->hash)] =
			(uint32_t)s + 1;
	}
	return 0;
}

static uint32_t intern_frames(struct callsites *t,
			      const struct callsite_frame *f, size_t n)
{
	if ((t->nsites + 1) * 2 > t->nslots && rehash(t))
		return 0;
	uint64_t hash = hash_frames(f, n);
	size_t i = find_slot(t, f, n, hash);
	if (t->slot[i])
		return t->slot[i];
	if (grow_array((void **)&t->frames, &t->cap_frames, t->nframes + n,
		       sizeof(*f)) ||
	    grow_array((void **)&t->sites, &t->cap_sites, t->nsites + 1,
		       sizeof(*t->sites)))
		return 0;
	memcpy(&t->frames[t->nframes], f, n * sizeof(*f));
	t->sites[t->nsites++] = (struct callsite_entry){
		(uint32_t)t->nframes, (uint32_t)n, hash };
	t->nframes += n;
	return t->slot[i] = (uint32_t)t->nsites;
}

uint32_t ingest_callsites_intern(struct callsites *t,
				 const struct code_map *code,
				 const uint64_t *addr, size_t n)
{
	struct callsite_frame f[PTS_MAX_FRAMES];
	n = n < PTS_MAX_FRAMES ? n : PTS_MAX_FRAMES;
	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++)
		f[i] = translate(code, addr[i]);
	return intern_frames(t, f, n);
}

uint32_t ingest_callsites_place(struct callsites *t,
				const struct code_map *code, uint32_t site)
{
	struct callsite_frame f[PTS_MAX_FRAMES];
	size_t n;
	const struct callsite_frame *old = ingest_callsites_get(t, site, &n);
	bool moved = false;
	for (size_t i = 0; i < n; i++) {
		f[i] = old[i].obj.kind == MM_OBJ_ANON ? translate(code, old[i].offset)
						      : old[i];
		moved |= f[i].obj.kind != old[i].obj.kind;
	}
	if (!moved)
		return site;
	uint32_t placed = intern_frames(t, f, n);
	return placed ? placed : site;
}

const struct callsite_frame *ingest_callsites_get(const struct callsites *t,
						  uint32_t site, size_t *n)
{
	if (!site || site > t->nsites) {
		*n = 0;
		return NULL;
	}
	*n = t->sites[site - 1].n;
	return &t->frames[t->sites[site - 1].first];
}

void ingest_callsites_free(struct callsites *t)
{
	free(t->frames);
	free(t->sites);
	free(t->slot);
	*t = (struct callsites){ 0 };
}
