/* SPDX-License-Identifier: MIT */
/*
 * Checkpoints: a process's /proc read into checkpoint records (live), and
 * checkpoint records applied to the worlds (live and replay alike): the
 * mappings reconciled, the pages observed, VmPTE kept beside the model.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ingest_internal.h"
#include "proc_image.h"
#include "lib/clock.h"

/* A record under construction, applied when full or done. */
union ck_buf {
	struct pts_hdr h;
	struct pts_ck_vmas vmas;
	struct pts_ck_runs runs;
	struct pts_ck_name name;
	uint64_t align;
	uint8_t b[PTS_REC_MAX];
};

#define VMAS_PER_REC \
	((PTS_REC_MAX - sizeof(struct pts_ck_vmas)) / sizeof(struct pts_ck_vma))
#define RUNS_PER_REC \
	((PTS_REC_MAX - sizeof(struct pts_ck_runs)) / sizeof(struct pts_ck_run))

static void emit(struct ingest *g, struct session *s, union ck_buf *r,
		 uint16_t type, size_t size)
{
	r->h = (struct pts_hdr){ .type = type, .size = (uint16_t)size,
				 .time_ns = now_ns() };
	ingest_apply(g, s->pid, 0, r, NULL);
}

/* The mapping as the model and the traces take it: SysV segments by shmid
 * alone (the shim knows no device for them). */
static bool ck_vma_of(const struct procfs_vma *pv, struct pts_ck_vma *out)
{
	struct mm_mapping m;
	if (procfs_vma_mapping(pv, &m))
		return false;
	*out = (struct pts_ck_vma){
		.start = m.addr, .end = m.addr + m.len, .offset = m.offset,
		.dev = m.obj.kind == MM_OBJ_SYSV ? 0 : m.obj.dev,
		.ino = m.obj.ino, .kind = m.obj.kind, .prot = m.prot,
		.flags = m.flags, .huge_shift = m.huge_shift,
	};
	return true;
}

static void emit_names(struct ingest *g, struct session *s,
		       const struct proc_image *img)
{
	union ck_buf r;
	for (size_t i = 0; i < img->maps.n; i++) {
		const struct procfs_vma *pv = &img->maps.vmas[i];
		struct pts_ck_vma v;
		if (!*pv->path || !ck_vma_of(pv, &v) || v.kind == MM_OBJ_ANON ||
		    ingest_object_name(g, &(struct mm_object_id){ v.kind, v.dev,
								   v.ino }))
			continue;
		size_t len = strlen(pv->path);
		size_t max = sizeof(r) - sizeof(r.name) - 10;
		len = len < max ? len : max;
		r.name.dev = v.dev;
		r.name.ino = v.ino;
		r.name.kind = v.kind;
		memcpy(r.name.name, pv->path, len);
		if (pv->deleted) {
			memcpy(r.name.name + len, " (deleted)", 10);
			len += 10;
		}
		r.name.len = (uint32_t)len;
		emit(g, s, &r, PTS_CK_NAME, sizeof(r.name) + len);
	}
}

/* Reads s's /proc and applies it as checkpoint records.  Returns 0, or
 * what the read said (-ESRCH: the process is gone). */
int ingest_checkpoint_read(struct ingest *g, struct session *s, uint32_t reason)
{
	struct proc_image img = { 0 };
	union ck_buf r;
	int err = -ENOMEM;
	ingest_reading_done(s);
	if (g->fs || (g->fs = calloc(1, sizeof(*g->fs))))
		err = ingest_proc_image_read(
			s->pid, ingest_fs_cache_get(g->fs, s->pid), &img);
	struct pts_ck_begin *b = (struct pts_ck_begin *)&r;
	b->pid = s->pid;
	b->reason = reason;
	emit(g, s, &r, PTS_CK_BEGIN, sizeof(*b));
	if (!err && img.status.uid != s->uid) {
		struct pts_ck_user *u = (struct pts_ck_user *)&r;
		*u = (struct pts_ck_user){
			.pid = s->pid, .uid = img.status.uid,
			.served = !g->serves || g->serves(img.status.uid),
		};
		emit(g, s, &r, PTS_CK_USER, sizeof(*u));
	}
	if (!err) {
		emit_names(g, s, &img);
		r.vmas.n = 0;
		for (size_t i = 0; i < img.maps.n; i++) {
			if (!ck_vma_of(&img.maps.vmas[i], &r.vmas.vma[r.vmas.n]))
				continue;
			if (++r.vmas.n == VMAS_PER_REC) {
				emit(g, s, &r, PTS_CK_VMAS, sizeof(r.vmas) +
				     r.vmas.n * sizeof(r.vmas.vma[0]));
				r.vmas.n = 0;
			}
		}
		if (r.vmas.n)
			emit(g, s, &r, PTS_CK_VMAS, sizeof(r.vmas) +
			     r.vmas.n * sizeof(r.vmas.vma[0]));
		r.runs.n = 0;
		for (size_t i = 0; i < img.nruns; i++) {
			const struct mm_run *m = &img.runs[i];
			r.runs.run[r.runs.n] = (struct pts_ck_run){
				m->start, m->end,
				(m->huge ? PTS_RUN_HUGE : 0) | (m->anon ? PTS_RUN_ANON : 0),
				0,
			};
			if (++r.runs.n == RUNS_PER_REC) {
				emit(g, s, &r, PTS_CK_RUNS, sizeof(r.runs) +
				     r.runs.n * sizeof(r.runs.run[0]));
				r.runs.n = 0;
			}
		}
		if (r.runs.n)
			emit(g, s, &r, PTS_CK_RUNS, sizeof(r.runs) +
			     r.runs.n * sizeof(r.runs.run[0]));
	}
	struct pts_ck_end *e = (struct pts_ck_end *)&r;
	e->vmpte_kb = err ? -1 : (int64_t)img.status.vmpte_kb;
	e->stable = !err && img.stable;
	e->err = err;
	emit(g, s, &r, PTS_CK_END, sizeof(*e));
	ingest_proc_image_free(&img);
	return err;
}

static void add_dev(struct ingest *g, const struct pts_ck_fs *r)
{
	if (!grow_array((void **)&g->devs, &g->cap_devs, g->ndevs + 1,
			sizeof(*g->devs)))
		g->devs[g->ndevs++] = (struct dev_kind){ r->dev, r->kind,
							 r->huge_shift };
}

/*
 * Whether the reading's small pages fit in the page tables the kernel said
 * the process had: each 2 MiB span with one needs a PTE table, counted in
 * VmPTE.  Checked when VmPTE held still over the scan (else the process
 * may have grown tables meanwhile).  A reading that does not fit is not
 * one /proc gave, and applying it would cost as many tables as it claims:
 * 616 bytes of trace claiming 16 TiB held a replay past a minute and
 * 2.5 GiB, and on (fuzz_trace: checkpoint-runs-past-vmpte).
 */
static bool runs_fit_vmpte(const struct ck_accum *ck,
			   const struct pts_ck_end *e)
{
	uint64_t tables = e->vmpte_kb > 0 ? (uint64_t)e->vmpte_kb / 4 : 0;
	uint64_t spans = 0, last = UINT64_MAX;
	for (size_t i = 0; e->stable && i < ck->nrun; i++) {
		const struct mm_run *r = &ck->run[i];
		if (r->huge || r->end <= r->start)
			continue;
		uint64_t first = r->start / MM_SPAN(PT_PTE);
		uint64_t end = (r->end - 1) / MM_SPAN(PT_PTE);
		spans += end - first + (first != last);
		last = end;
		if (spans > tables)
			return false;
	}
	return true;
}

/* The end of a reading: the worlds take it, and the session keeps what
 * the kernel said beside what the model says. */
static void ck_end(struct ingest *g, struct session *s,
		   const struct pts_ck_end *e)
{
	struct ck_accum *ck = &s->ck;
	uint32_t pid = (uint32_t)s->pid;
	ck->open = false;
	if (ck->reason == PTS_CK_RESYNC) {
		s->last.resyncs++;
		g->stream.resyncs++;
	}
	if (e->err == -ESRCH && !s->conn) /* a connection says so as it closes */
		s->gone = true;
	if (ingest_session_end_if_over(g, s) || e->err || !s->in_model)
		return;
	if (!runs_fit_vmpte(ck, e)) { /* refused, not read again */
		s->in_checkpoint = true;
		ingest_session_refused(g, s,
				       "more populated spans than page tables");
		s->in_checkpoint = false;
		return;
	}
	ingest_code_map_set(&s->code, ck->vma, ck->nvma);
	s->in_checkpoint = true;
	ingest_reconcile(g, s, ck->vma, ck->nvma);
	for (size_t k = 0; k < g->ws->n; k++)
		if (mm_observe(g->ws->w[k], pid, 0, MM_TASK_SIZE, ck->run,
			       ck->nrun) < 0)
			ingest_session_refused(g, s,
					       mm_world_error(g->ws->w[k]));
	s->in_checkpoint = false;
	struct mm_proc_stats st;
	if (mm_proc_stats(g->ws->w[0], pid, &st))
		return;
	s->last.model_kb = (int64_t)(4 * report_sum3(st.tables));
	s->last.proc.vmpte_kb = e->vmpte_kb;
	s->last.proc.stable = e->stable;
	s->last.reason = ck->reason;
	/* Before processes start to leave, and on the timer: the peak, once
	 * the reading it belongs to is over (ingest_apply()). */
	if (ck->reason == PTS_CK_EXIT || ck->reason == PTS_CK_TIMER ||
	    ck->reason == PTS_CK_FINAL)
		g->peak_due = true;
}

/*
 * A forked child whose parent's PTS_FORK never came (lost, or the parent
 * died first): the checkpoint takes it into the model as it is now, and
 * its held records follow.  Its HELLO, which waits, is acked, and so are
 * the held records that wait (an EXIT sent after its wait for the HELLO's
 * ack ran out).
 */
static void adopt(struct ingest *g, struct session *s)
{
	struct ingest_action act = { 0 };
	if (s->in_model || !s->hello_seq || !ingest_enter_model(g, s, 0))
		return;
	ingest_action_ack(&act, s->conn, s->hello_seq);
	s->hello_seq = 0;
	s->adopted = true; /* so its close, released here, cannot end it */
	ingest_release_held(g, s, &act);
	ingest_owe_acks(g, &act);
}

void ingest_apply_checkpoint(struct ingest *g, struct session *s,
			     const struct pts_hdr *h)
{
	switch (h->type) {
	case PTS_CK_NAME: {
		const struct pts_ck_name *r = (const struct pts_ck_name *)h;
		struct mm_object_id id = { r->kind, r->dev, r->ino };
		ingest_name_object(g, &id, r->name, r->len);
		return;
	}
	case PTS_CK_FS:
		add_dev(g, (const struct pts_ck_fs *)h);
		return;
	}
	if (!s)
		return;
	struct ck_accum *ck = &s->ck;
	switch (h->type) {
	case PTS_CK_USER: {
		const struct pts_ck_user *r = (const struct pts_ck_user *)h;
		s->uid = r->uid;
		s->last.proc.uid = r->uid;
		s->unserved = !r->served;
		return;
	}
	case PTS_CK_BEGIN:
		*ck = (struct ck_accum){ .open = true, .vma = ck->vma,
					 .cap_vma = ck->cap_vma, .run = ck->run,
					 .cap_run = ck->cap_run,
					 .reason = ((const struct pts_ck_begin *)h)->reason,
					 .begun_ns = h->time_ns };
		adopt(g, s); /* inside the reading: its held EXIT reads nothing */
		return;
	case PTS_CK_VMAS: {
		const struct pts_ck_vmas *r = (const struct pts_ck_vmas *)h;
		if (!ck->open || !r->n ||
		    grow_array((void **)&ck->vma, &ck->cap_vma, ck->nvma + r->n,
			       sizeof(*ck->vma)))
			return;
		memcpy(ck->vma + ck->nvma, r->vma, r->n * sizeof(*ck->vma));
		ck->nvma += r->n;
		return;
	}
	case PTS_CK_RUNS: {
		const struct pts_ck_runs *r = (const struct pts_ck_runs *)h;
		if (!ck->open || grow_array((void **)&ck->run, &ck->cap_run,
					    ck->nrun + r->n, sizeof(*ck->run)))
			return;
		for (uint32_t i = 0; i < r->n; i++)
			ck->run[ck->nrun++] = (struct mm_run){
				r->run[i].start, r->run[i].end,
				r->run[i].flags & PTS_RUN_HUGE,
				r->run[i].flags & PTS_RUN_ANON,
			};
		return;
	}
	case PTS_CK_END:
		if (ck->open)
			ck_end(g, s, (const struct pts_ck_end *)h);
		return;
	}
}
