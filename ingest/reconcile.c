/* SPDX-License-Identifier: MIT */
/*
 * Reconciling the model's mappings of a process with what /proc lists:
 * what the shim could not see (the dynamic loader's and libc's own mmap
 * calls, a stack that grew, a raw syscall) is mapped, what is no longer
 * there is unmapped, and a protection changed behind our back is changed.
 * Mappings that already agree are left alone, so their tables stay.
 */
#include <errno.h>
#include <stdlib.h>

#include "ingest_internal.h"

struct vlist {
	struct mm_vma_info *v;
	size_t n, cap;
};

static int collect(const struct mm_vma_info *v, void *arg)
{
	struct vlist *l = arg;
	if (grow_array((void **)&l->v, &l->cap, l->n + 1, sizeof(*l->v)))
		return -ENOMEM;
	l->v[l->n++] = *v;
	return 0;
}

/* m and k back the page at addr with the same object page. */
static bool same_backing(const struct mm_vma_info *m, const struct pts_ck_vma *k,
			 uint64_t addr)
{
	if (m->obj.kind != k->kind || m->huge_shift != k->huge_shift ||
	    (m->flags & MM_VMA_SHARED) != (k->flags & MM_VMA_SHARED))
		return false;
	if (m->obj.kind == MM_OBJ_ANON)
		return true;
	/* Shared anonymous memory is known to the model by a number of its
	 * own: whatever /proc calls it, fork alone shares it. */
	if (m->obj.dev != SYNTH_DEV &&
	    (m->obj.dev != k->dev || m->obj.ino != k->ino))
		return false;
	return m->offset + (addr - m->start) == k->offset + (addr - k->start);
}

static void map_part(struct ingest *g, struct session *s,
		     const struct pts_ck_vma *k, uint64_t start, uint64_t end)
{
	struct op o = {
		.kind = OP_MAP, .pid = (uint32_t)s->pid,
		.map = {
			.addr = start, .len = end - start,
			.offset = k->kind == MM_OBJ_ANON ? 0 : k->offset + (start - k->start),
			.obj = { k->kind, k->dev, k->ino },
			.prot = k->prot, .flags = k->flags,
			.huge_shift = k->huge_shift, .fixed = true, .listed = true,
		},
	};
	if (ingest_apply_op(g, s, &o))
		g->stream.proc_only_bytes += end - start;
}

/* The parts of model VMAs outside every kernel VMA. */
static void unmap_gone(struct ingest *g, struct session *s,
		       const struct vlist *m, const struct pts_ck_vma *k,
		       size_t nk)
{
	size_t j = 0;
	for (size_t i = 0; i < m->n; i++) {
		uint64_t pos = m->v[i].start, end = m->v[i].end;
		while (j < nk && k[j].end <= pos)
			j++;
		for (size_t x = j; pos < end; x++) {
			uint64_t next = x < nk && k[x].start < end ? k[x].start : end;
			if (pos < next) {
				struct op o = { .kind = OP_UNMAP, .pid = (uint32_t)s->pid,
						.addr = pos, .len = next - pos };
				ingest_apply_op(g, s, &o);
			}
			pos = x < nk && k[x].start < end ? k[x].end : end;
		}
	}
}

void ingest_reconcile(struct ingest *g, struct session *s,
		      const struct pts_ck_vma *k,
		      size_t nk)
{
	struct vlist m = { 0 };
	int err = mm_proc_vmas(g->ws->w[0], (uint32_t)s->pid, collect, &m);
	if (err) {
		if (err == -ENOMEM)
			ingest_out_of_memory(g);
		free(m.v);
		return;
	}
	unmap_gone(g, s, &m, k, nk);
	size_t j = 0;
	for (size_t i = 0; i < nk; i++) {
		uint64_t pos = k[i].start;
		while (j < m.n && m.v[j].end <= pos)
			j++;
		for (size_t x = j; x < m.n && m.v[x].start < k[i].end; x++) {
			const struct mm_vma_info *v = &m.v[x];
			uint64_t a = v->start > pos ? v->start : pos;
			uint64_t b = v->end < k[i].end ? v->end : k[i].end;
			if (pos < a)
				map_part(g, s, &k[i], pos, a); /* a hole */
			if (!same_backing(v, &k[i], a)) {
				map_part(g, s, &k[i], a, b);
			} else if (v->prot != k[i].prot) {
				struct op o = { .kind = OP_PROTECT, .pid = (uint32_t)s->pid,
						.addr = a, .len = b - a, .arg = k[i].prot };
				ingest_apply_op(g, s, &o);
			}
			pos = b;
		}
		if (pos < k[i].end)
			map_part(g, s, &k[i], pos, k[i].end);
	}
	free(m.v);
}
