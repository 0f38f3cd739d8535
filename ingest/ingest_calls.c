/* SPDX-License-Identifier: MIT */
/* The shim's records of mmap, munmap, mprotect, mremap, madvise, shmat and
 * shmdt, applied to every world. */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/shm.h>

#include "ingest_internal.h"
#include "lib/clock.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif
#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT 26
#endif
#ifndef MADV_DONTNEED_LOCKED
#define MADV_DONTNEED_LOCKED 24
#endif
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#define MADV_POPULATE_WRITE 23
#endif
#define SITES_MAX 1024 /* call sites one process may add */

#ifndef SHM_EXEC
#define SHM_EXEC 0100000
#endif

static uint64_t page_up(uint64_t len)
{
	return (len + MM_PAGE_SIZE - 1) & ~(MM_PAGE_SIZE - 1);
}

static int do_op(struct mm_world *w, const struct op *o)
{
	switch (o->kind) {
	case OP_MAP:
		return mm_map(w, o->pid, &o->map);
	case OP_UNMAP:
		return mm_unmap(w, o->pid, o->addr, o->len);
	case OP_PROTECT:
		return mm_protect(w, o->pid, o->addr, o->len, o->arg);
	case OP_REMAP:
		return mm_remap(w, o->pid, o->addr, o->len, o->new_addr,
				o->new_len, o->arg);
	case OP_ADVISE:
		return mm_advise(w, o->pid, o->addr, o->len, o->arg);
	case OP_POPULATE: /* the kernel faults every page in */
		return mm_fault_range(w, o->pid, o->addr, o->len, o->arg);
	}
	return -EINVAL;
}

/* The call sites follow the model's mappings: a mapping over a range
 * replaces its site, an unmapping forgets it, mremap moves it. */
static void track_site(struct session *s, const struct op *o)
{
	switch (o->kind) {
	case OP_MAP:
		ingest_site_ranges_set(&s->sites, o->map.addr,
				       o->map.addr + o->map.len, o->site);
		return;
	case OP_UNMAP:
		ingest_site_ranges_set(&s->sites, o->addr, o->addr + o->len, 0);
		return;
	case OP_REMAP:
		ingest_site_ranges_move(&s->sites, o->addr, o->len, o->new_addr,
					o->new_len, o->arg & MM_REMAP_DONTUNMAP,
					o->site);
		return;
	default:
		return;
	}
}

/* On every world fed (mm_world_fed: linux's first, and a follower once
 * it took its copy, which may be in linux's turn), stopping at the first
 * refusal (the worlds keep the same mappings, so the others would refuse
 * too). */
bool ingest_apply_op(struct ingest *g, struct session *s, const struct op *o)
{
	for (size_t k = 0; k < g->ws->n; k++)
		if (mm_world_fed(g->ws->w[k]) && do_op(g->ws->w[k], o) < 0) {
			ingest_session_refused(g, s,
					       mm_world_error(g->ws->w[k]));
			return false;
		}
	track_site(s, o);
	return true;
}

/* The call site of a shim's record: its return addresses as places in the
 * process's code as it is now.  A process adds at most SITES_MAX sites
 * (docs/daemon.md, Hostile clients): its later mappings' are unknown. */
static uint32_t call_site(struct ingest *g, struct session *s,
			  const struct pts_hdr *h)
{
	uint64_t addr[PTS_MAX_FRAMES];
	size_t n = h->nframes;
	memcpy(addr, (const uint8_t *)h + h->size - sizeof(addr[0]) * n,
	       sizeof(addr[0]) * n);
	if (s->new_sites >= SITES_MAX)
		return 0;
	size_t before = g->callsites.nsites;
	uint32_t site = ingest_callsites_intern(&g->callsites, &s->code, addr,
						n);
	s->new_sites += g->callsites.nsites > before;
	return site;
}

void ingest_dev_add(struct ingest *g, const struct pts_ck_fs *r)
{
	if (grow_array((void **)&g->devs, &g->cap_devs, g->ndevs + 1,
		       sizeof(*g->devs))) {
		ingest_out_of_memory(g);
		return;
	}
	g->devs[g->ndevs++] = (struct dev_kind){ r->dev, r->kind, r->huge_shift };
}

/*
 * What the files of dev are.  The host asks the process's mounts once per
 * device (a replay's host knows none), and the answer is kept, and traced
 * as a PTS_CK_FS record, so that a replay, which has no mounts to ask,
 * classifies the same way: the trace's record reaches ingest_dev_add.
 */
static struct dev_kind classify_dev(struct ingest *g, struct session *s,
				    uint64_t dev)
{
	for (size_t i = 0; i < g->ndevs; i++)
		if (g->devs[i].dev == dev)
			return g->devs[i];
	struct pts_ck_fs r = {
		.h = { .type = PTS_CK_FS, .size = sizeof(r), .time_ns = now_ns() },
		.dev = dev, .kind = MM_OBJ_FILE,
	};
	if (g->host.fs_of(g->host.arg, s->pid, dev, &r.kind, &r.huge_shift))
		return (struct dev_kind){ dev, MM_OBJ_FILE, 0 };
	ingest_trace_write(g, s->pid, 0, &r.h);
	ingest_dev_add(g, &r);
	return (struct dev_kind){ dev, r.kind, r.huge_shift };
}

void ingest_classify_mmap_dev(struct ingest *g, struct session *s,
			      const struct pts_hdr *h)
{
	const struct pts_mmap *r = (const struct pts_mmap *)h;
	if (r->h.type == PTS_MMAP && !(r->h.flags & PTS_F_FAILED) &&
	    !(r->flags & MAP_ANONYMOUS))
		classify_dev(g, s, r->dev);
}

static bool mmap_op(struct ingest *g, struct session *s,
		    const struct pts_mmap *r, struct op *o)
{
	bool shared = (r->flags & MAP_TYPE) != MAP_PRIVATE;
	bool fixed = (r->flags & MAP_FIXED) && !(r->flags & MAP_FIXED_NOREPLACE);
	struct mm_mapping *m = &o->map;
	*m = (struct mm_mapping){
		.addr = r->addr, .len = page_up(r->len), .offset = r->offset,
		.prot = (uint32_t)r->prot & (MM_PROT_READ | MM_PROT_WRITE | MM_PROT_EXEC),
		.flags = (shared ? MM_VMA_SHARED : 0) |
			 (r->flags & MAP_LOCKED ? MM_VMA_LOCKED : 0),
		.fixed = fixed,
		/* With no hint address, which the record does not keep:
		 * a hint is rare, and hugetlb would move it too. */
		.kernel_placed = !(r->flags & (MAP_FIXED | MAP_FIXED_NOREPLACE)),
	};
	if (r->flags & MAP_ANONYMOUS) {
		m->offset = 0;
		bool huge = r->flags & MAP_HUGETLB;
		if (huge) {
			unsigned shift = (r->flags >> MAP_HUGE_SHIFT) & 0x3f;
			m->huge_shift = shift ? shift : 21;
		}
		if (huge || shared)
			m->obj = (struct mm_object_id){
				huge ? MM_OBJ_HUGETLB : MM_OBJ_SHMEM, SYNTH_DEV,
				++g->next_synth };
	} else {
		struct dev_kind dk = classify_dev(g, s, r->dev);
		m->obj = (struct mm_object_id){ dk.kind, r->dev, r->ino };
		m->huge_shift = dk.kind == MM_OBJ_HUGETLB ? dk.huge_shift : 0;
	}
	if (m->huge_shift)
		m->len = (m->len + (1ULL << m->huge_shift) - 1) &
			 ~((1ULL << m->huge_shift) - 1);
	o->kind = OP_MAP;
	return true;
}

/* MAP_POPULATE and MAP_LOCKED fault every page in; a private writable
 * mapping with write faults (FOLL_WRITE), so it gets anonymous pages.  A
 * larger populate than a record may ask is read from /proc instead. */
static void populate(struct ingest *g, struct session *s, uint64_t addr,
		     uint64_t len, uint32_t prot, bool shared, uint32_t huge_shift,
		     bool write)
{
	struct op o = {
		.kind = OP_POPULATE, .pid = (uint32_t)s->pid, .addr = addr,
		.len = len, .arg = write || ((prot & MM_PROT_WRITE) && !shared),
		.step = huge_shift ? 1ULL << huge_shift : MM_PAGE_SIZE,
	};
	if (ingest_populate_allowed(s, len / o.step))
		ingest_apply_op(g, s, &o);
}

/* shmdt(): the segment's VMAs from addr on (mremap and mprotect may have
 * split it). */
struct sysv_span {
	uint64_t addr, end;
	uint64_t ino;
};

static int find_sysv(const struct mm_vma_info *v, void *arg)
{
	struct sysv_span *sp = arg;
	if (v->obj.kind != MM_OBJ_SYSV || v->start != (sp->end ? sp->end : sp->addr) ||
	    (sp->end && v->obj.ino != sp->ino))
		return 1;
	sp->ino = v->obj.ino;
	sp->end = v->end;
	return 0;
}

/* Whether a checkpoint that read /proc after the call, before its record
 * arrived, already took the mapping from there: same range, protection,
 * sharing and object (of the same kind, for the model's own numbers for
 * shared anonymous memory). */
struct reflected {
	const struct mm_mapping *m;
	uint64_t covered;
	bool same;
};

static int check_reflected(const struct mm_vma_info *v, void *arg)
{
	struct reflected *x = arg;
	const struct mm_mapping *m = x->m;
	bool obj = m->obj.dev == SYNTH_DEV
			   ? v->obj.kind == m->obj.kind
			   : v->obj.kind == m->obj.kind && v->obj.dev == m->obj.dev &&
				     v->obj.ino == m->obj.ino &&
				     (m->obj.kind == MM_OBJ_ANON ||
				      v->offset + (m->addr - v->start) == m->offset);
	x->same &= obj && v->prot == m->prot &&
		   (v->flags & MM_VMA_SHARED) == (m->flags & MM_VMA_SHARED) &&
		   v->start <= m->addr + x->covered;
	x->covered = v->end - m->addr;
	return 0;
}

static bool already_mapped(struct ingest *g, struct session *s,
			   const struct mm_mapping *m)
{
	struct reflected x = { .m = m, .same = true };
	if (m->fixed)
		return false;
	mm_proc_vmas_in(g->ws->w[0], (uint32_t)s->pid, m->addr, m->addr + m->len,
			check_reflected, &x);
	return x.same && x.covered >= m->len;
}

static const uint32_t advice_of[] = {
	[MADV_DONTNEED] = MM_ADV_DONTNEED + 1,
	[MADV_DONTNEED_LOCKED] = MM_ADV_DONTNEED + 1,
	[MADV_REMOVE] = MM_ADV_REMOVE + 1,
	[MADV_FREE] = MM_ADV_FREE + 1,
	[MADV_DONTFORK] = MM_ADV_DONTFORK + 1,
	[MADV_DOFORK] = MM_ADV_DOFORK + 1,
	[MADV_WIPEONFORK] = MM_ADV_WIPEONFORK + 1,
	[MADV_KEEPONFORK] = MM_ADV_KEEPONFORK + 1,
};

static void apply_mmap(struct ingest *g, struct session *s,
		       const struct pts_mmap *r, struct op *o)
{
	mmap_op(g, s, r, o);
	o->site = call_site(g, s, &r->h);
	if (already_mapped(g, s, &o->map)) {
		ingest_site_ranges_set(&s->sites, o->map.addr,
				       o->map.addr + o->map.len, o->site);
		return;
	}
	/* The kernel puts a mapping only where nothing is: what the model
	 * has there, it took from a reading of /proc older than the call,
	 * and a call no interposer saw (glibc's own munmap) removed it. */
	if (s->ck.begun_ns < r->h.time_ns)
		o->map.fixed = true;
	if (!ingest_apply_op(g, s, o))
		return;
	g->stream.intercepted_bytes += o->map.len;
	if ((r->flags & (MAP_POPULATE | MAP_LOCKED)) &&
	    !(r->flags & MAP_NONBLOCK))
		populate(g, s, o->map.addr, o->map.len, o->map.prot,
			 o->map.flags & MM_VMA_SHARED, o->map.huge_shift,
			 false);
}

void ingest_apply_call(struct ingest *g, struct session *s,
		       const struct pts_hdr *h)
{
	struct op o = { .pid = (uint32_t)s->pid };
	const struct pts_range *rg = (const struct pts_range *)h;
	switch (h->type) {
	case PTS_MMAP:
		apply_mmap(g, s, (const struct pts_mmap *)h, &o);
		return;
	case PTS_SHMAT: {
		const struct pts_shmat *r = (const struct pts_shmat *)h;
		o.kind = OP_MAP;
		o.map = (struct mm_mapping){
			.addr = r->addr, .len = page_up(r->len),
			.obj = { MM_OBJ_SYSV, 0, (uint64_t)(uint32_t)r->shmid },
			.prot = MM_PROT_READ |
				(r->shmflg & SHM_RDONLY ? 0 : MM_PROT_WRITE) |
				(r->shmflg & SHM_EXEC ? MM_PROT_EXEC : 0),
			.flags = MM_VMA_SHARED,
			.fixed = r->shmflg & SHM_REMAP,
		};
		o.site = call_site(g, s, h);
		if (ingest_apply_op(g, s, &o))
			g->stream.intercepted_bytes += o.map.len;
		return;
	}
	case PTS_SHMDT: {
		struct sysv_span sp = { .addr = rg->addr };
		mm_proc_vmas_in(g->ws->w[0], (uint32_t)s->pid, rg->addr, UINT64_MAX,
				find_sysv, &sp);
		if (!sp.end) {
			ingest_session_refused(g, s, "shmdt of no segment");
			return;
		}
		o.kind = OP_UNMAP;
		o.addr = sp.addr;
		o.len = sp.end - sp.addr;
		break;
	}
	case PTS_MUNMAP:
		o.kind = OP_UNMAP;
		o.addr = rg->addr;
		o.len = page_up(rg->len);
		break;
	case PTS_MPROTECT:
		o.kind = OP_PROTECT;
		o.addr = rg->addr;
		o.len = page_up(rg->len);
		o.arg = (uint32_t)rg->arg & (MM_PROT_READ | MM_PROT_WRITE | MM_PROT_EXEC);
		break;
	case PTS_MADVISE: {
		uint32_t a = (uint32_t)rg->arg;
		if (a == MADV_POPULATE_READ || a == MADV_POPULATE_WRITE) {
			populate(g, s, rg->addr, page_up(rg->len), 0, true, 0,
				 a == MADV_POPULATE_WRITE);
			return;
		}
		/* Others (THP hints, WILLNEED...) change no table the model
		 * keeps; the next checkpoint sees their effect. */
		if (a >= sizeof(advice_of) / sizeof(advice_of[0]) || !advice_of[a])
			return;
		o.kind = OP_ADVISE;
		o.addr = rg->addr;
		o.len = page_up(rg->len);
		o.arg = advice_of[a] - 1;
		break;
	}
	case PTS_MREMAP: {
		const struct pts_mremap *r = (const struct pts_mremap *)h;
		o.kind = OP_REMAP;
		o.addr = r->old_addr;
		o.len = page_up(r->old_len);
		o.new_addr = r->new_addr;
		o.new_len = page_up(r->new_len);
		o.arg = (uint32_t)r->flags &
			(MM_REMAP_MAYMOVE | MM_REMAP_FIXED | MM_REMAP_DONTUNMAP);
		o.site = call_site(g, s, h);
		if (ingest_apply_op(g, s, &o) && o.new_len > o.len)
			g->stream.intercepted_bytes += o.new_len - o.len;
		return;
	}
	default:
		return;
	}
	ingest_apply_op(g, s, &o);
}

/* A page fault: the page was not present in the process under today's
 * kernel; each policy counts it only if its tables lack the page too. */
void ingest_apply_fault(struct ingest *g, struct session *s,
			const struct pts_fault *r)
{
	if (!s->in_model)
		return;
	for (size_t k = 0; k < g->ws->n; k++)
		if (mm_world_fed(g->ws->w[k]) &&
		    mm_fault(g->ws->w[k], (uint32_t)s->pid, r->addr,
			     r->flags & PTS_FAULT_WRITE) < 0) {
			/* a mapping the model does not know yet */
			g->stream.faults_outside++;
			return;
		}
}
