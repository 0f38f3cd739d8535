/* SPDX-License-Identifier: MIT */
/*
 * mshare (Anthony Yznaga's series, v3, August 2025): MAP_SHARED objects
 * placed in regions whose tables below the PGD live once, in a host mm
 * that is no process; every process attaching a region links the host's
 * PUD page from its own PGD and is charged nothing for it in VmPTE
 * (docs/model.md, "mshare").  Here each object placed gets a region of its
 * own: slots of 512 GiB (mshare_align = P4D_SIZE) from 512 GiB up in the
 * host, the object's offset 0 at the region's start.
 */
#include <stdlib.h>

#include "mm_internal.h"

#define REGION MM_SPAN(PT_PUD)
#define SLOTS (MM_TASK_SIZE / REGION + 1) /* 256: the user half of a PGD */

bool mm_mshare_wants(const struct mm_policy *p, const struct mm_mapping *m)
{
	if (!p->mshare || !(m->flags & MM_VMA_SHARED) ||
	    m->obj.kind == MM_OBJ_ANON)
		return false;
	if (!p->mshare_nobj)
		return m->len >= p->mshare_min;
	for (unsigned i = 0; i < p->mshare_nobj; i++)
		if (p->mshare_ino[i] == m->obj.ino)
			return true;
	return false;
}

static bool slot_used(const struct mm_world *w, uint64_t s)
{
	return w->mshare_slot_used[s / 64] >> (s % 64) & 1;
}

/* A region for v's object, n slots of it free from slot 1 on (the host's
 * mshare_base is 512 GiB); false when the host has no room. */
static bool region_alloc(struct mm_world *w, struct mm_object *o,
			 const struct mm_vma *v)
{
	uint64_t extent = mm_vma_offset(v, v->end);
	uint64_t n = (extent + REGION - 1) / REGION;
	for (uint64_t s = 1; n && s + n <= SLOTS; s++) {
		uint64_t k = 0;
		while (k < n && !slot_used(w, s + k))
			k++;
		if (k < n) {
			s += k;
			continue;
		}
		for (k = 0; k < n; k++)
			w->mshare_slot_used[(s + k) / 64] |= 1ULL << ((s + k) % 64);
		o->mshare_base = s * REGION;
		o->mshare_slots = (uint32_t)n;
		return true;
	}
	return false;
}

/* v, just put on its object's list, into the object's region. */
void mm_mshare_link(struct mm_world *w, struct mm_vma *v)
{
	struct mm_object *o = v->obj;
	if (!v->mshare)
		return;
	if (!o->mshare_slots && !region_alloc(w, o, v)) {
		v->mshare = false; /* no room: it keeps tables of its own */
		return;
	}
	o->mshare_vmas++;
}

/* v, leaving its object's list; the region goes with its last VMA, as
 * the host's mappings go when the owner exits (exit_mshare()). */
void mm_mshare_unlink(struct mm_world *w, struct mm_vma *v)
{
	struct mm_object *o = v->obj;
	if (!v->mshare || --o->mshare_vmas)
		return;
	uint64_t s0 = o->mshare_base / REGION;
	for (uint64_t s = s0; s < s0 + o->mshare_slots; s++) {
		if (w->host && w->host->pgd->e[s])
			mm_pt_clear_entry(w, w->host->pgd, (unsigned)s);
		w->mshare_slot_used[s / 64] &= ~(1ULL << (s % 64));
	}
	o->mshare_base = 0;
	o->mshare_slots = 0;
}

bool mm_mshare_addr(const struct mm_vma *v, uint64_t addr, uint64_t *out)
{
	if (!v->mshare)
		return false;
	uint64_t off = mm_vma_offset(v, addr);
	if (off >= (uint64_t)v->obj->mshare_slots * REGION)
		return false;
	*out = v->obj->mshare_base + off;
	return true;
}

struct mm_space *mm_mshare_host(struct mm_world *w)
{
	if (w->host)
		return w->host;
	struct mm_space *h = calloc(1, sizeof(*h));
	if (!h) {
		mm_nomem(w, "the mshare host");
		return NULL;
	}
	h->w = w;
	h->pgd = w->empty_pgd;
	return w->host = h;
}

/* [start, end) of v zapped in the host: a hole punched in the object. */
int mm_mshare_zap(struct mm_world *w, const struct mm_vma *v, uint64_t start,
		  uint64_t end)
{
	uint64_t hs, lim = v->obj->mshare_base +
			   (uint64_t)v->obj->mshare_slots * REGION;
	if (!w->host || !mm_mshare_addr(v, start, &hs))
		return 0;
	return mm_zap(w, w->host, hs, min_u64(hs + (end - start), lim));
}

void mm_mshare_free(struct mm_world *w)
{
	free(w->host); /* its tables go with the pool */
	w->host = NULL;
}
