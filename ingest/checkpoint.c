/* SPDX-License-Identifier: MIT */
/*
 * Checkpoints: the records of a reading of a process's /proc (made by the
 * daemon, daemon/readings.c, or read from a trace) applied to the worlds:
 * the mappings reconciled, the pages observed, VmPTE kept beside the model.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ingest_internal.h"

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
	for (size_t i = 0; (e->flags & PTS_CK_STABLE) && i < ck->nrun; i++) {
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

/* The reading's mappings and pages, into the worlds. */
static void apply_reading(struct ingest *g, struct session *s)
{
	struct ck_accum *ck = &s->ck;
	uint32_t pid = (uint32_t)s->pid;
	/* Records may come before the first reading (the process runs on
	 * after its HELLO): their sites, made without a code map, are
	 * placed with this one. */
	bool first = !s->code.n;
	ingest_code_map_set(&s->code, ck->vma, ck->nvma);
	if (first)
		ingest_site_ranges_place(&s->sites, &g->callsites, &s->code);
	s->in_checkpoint = true;
	ingest_reconcile(g, s, ck->vma, ck->nvma);
	for (size_t k = 0; k < g->ws->n; k++)
		if (mm_observe(g->ws->w[k], pid, 0, MM_TASK_SIZE, ck->run,
			       ck->nrun) < 0)
			ingest_session_refused(g, s,
					       mm_world_error(g->ws->w[k]));
	s->in_checkpoint = false;
}

/* The end of a reading: the worlds take it, and the session keeps what
 * the kernel said beside what the model says. */
static void ck_end(struct ingest *g, struct session *s,
		   const struct pts_ck_end *e)
{
	struct ck_accum *ck = &s->ck;
	uint32_t pid = (uint32_t)s->pid;
	bool at_rest = e->flags & PTS_CK_AT_REST;
	ck->open = false;
	s->unread = false;
	ck->rest_last = 0;
	if (!at_rest)
		ck->nvma_last = ck->nvma;
	else
		g->stream.readings_at_rest++;
	if (ck->reason == PTS_CK_RESYNC) {
		s->last.resyncs++;
		g->stream.resyncs++;
	}
	if (e->flags & PTS_CK_RACED)
		g->stream.readings_raced++;
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
	/* At rest since its last reading, it has the mappings and pages
	 * that reading gave the model: only VmPTE is new. */
	uint64_t refused = s->last.refused;
	if (!at_rest)
		apply_reading(g, s);
	/* A refused reading owes another, which must read. */
	if (s->last.refused == refused)
		ck->rest_last = ck->rest;
	/* Its last reading (it said PTS_EXIT, and exits once acked): from
	 * now on the pages it shared turn exclusive in the others without
	 * a write, before its session ends (mm_exiting). */
	for (size_t k = 0; s->exiting && k < g->ws->n; k++)
		mm_exiting(g->ws->w[k], pid);
	struct mm_proc_stats st;
	for (size_t k = 0; k < g->ws->n; k++)
		s->last.policy_kb[k] = mm_proc_stats(g->ws->w[k], pid, &st)
			? -1 : (int64_t)(4 * report_sum3(st.tables));
	if (s->last.policy_kb[0] < 0)
		return;
	s->last.model_kb = s->last.policy_kb[0];
	s->last.proc.vmpte_kb = e->vmpte_kb;
	s->last.proc.stable = e->flags & PTS_CK_STABLE;
	s->last.reason = ck->reason;
	g->reading_ns = e->h.time_ns;
	/* Before processes start to leave, and on the timer: the peak, once
	 * the reading it belongs to is over (ingest.c, apply()). */
	if (ck->reason == PTS_CK_EXIT || ck->reason == PTS_CK_TIMER ||
	    ck->reason == PTS_CK_FINAL)
		g->peak_due = g->series_due = true;
}

/*
 * A forked child whose parent's PTS_FORK never came (lost, or the parent
 * died first): the checkpoint takes it into the model as it is now, and
 * its held records follow.  Its HELLO, which waits, is acked, and so are
 * the held records that wait (an EXIT sent after its wait for the HELLO's
 * ack ran out): the caller does both, given the HELLO's number.
 */
static uint32_t adopt(struct ingest *g, struct session *s)
{
	uint32_t hello_seq = s->hello_seq;
	if (s->in_model || !hello_seq || !ingest_enter_model(g, s, 0))
		return 0;
	s->hello_seq = 0;
	/* so its close, released then, cannot end it, until its PTS_FORK */
	s->adopted = !s->fork_seen;
	s->fork_seen = false;
	return hello_seq;
}

/* The reading's mappings and pages, gathered until its PTS_CK_END. */
static void gather(struct ingest *g, struct ck_accum *ck,
		   const struct pts_hdr *h)
{
	if (h->type == PTS_CK_VMAS) {
		const struct pts_ck_vmas *r = (const struct pts_ck_vmas *)h;
		if (!ck->open || !r->n)
			return;
		if (grow_array((void **)&ck->vma, &ck->cap_vma, ck->nvma + r->n,
			       sizeof(*ck->vma))) {
			ingest_out_of_memory(g);
			return;
		}
		memcpy(ck->vma + ck->nvma, r->vma, r->n * sizeof(*ck->vma));
		ck->nvma += r->n;
		return;
	}
	const struct pts_ck_runs *r = (const struct pts_ck_runs *)h;
	if (!ck->open)
		return;
	if (grow_array((void **)&ck->run, &ck->cap_run, ck->nrun + r->n,
		       sizeof(*ck->run))) {
		ingest_out_of_memory(g);
		return;
	}
	for (uint32_t i = 0; i < r->n; i++)
		ck->run[ck->nrun++] = (struct mm_run){
			r->run[i].start, r->run[i].end,
			r->run[i].flags & PTS_RUN_HUGE,
			r->run[i].flags & PTS_RUN_ANON,
			r->run[i].flags & PTS_RUN_WRITTEN,
		};
}

uint32_t ingest_apply_checkpoint(struct ingest *g, struct session *s,
				 const struct pts_hdr *h)
{
	switch (h->type) {
	case PTS_CK_NAME: {
		const struct pts_ck_name *r = (const struct pts_ck_name *)h;
		struct mm_object_id id = { r->kind, r->dev, r->ino };
		ingest_name_object(g, &id, r->name, r->len);
		return 0;
	}
	case PTS_CK_FS:
		ingest_dev_add(g, (const struct pts_ck_fs *)h);
		return 0;
	case PTS_CK_BUILD_ID:
		ingest_build_id_object(g, (const struct pts_ck_build_id *)h);
		return 0;
	}
	if (!s)
		return 0;
	struct ck_accum *ck = &s->ck;
	switch (h->type) {
	case PTS_CK_USER: {
		const struct pts_ck_user *r = (const struct pts_ck_user *)h;
		s->uid = r->uid;
		s->last.proc.uid = r->uid;
		s->unserved = !r->served;
		return 0;
	}
	case PTS_CK_CGROUP: {
		const struct pts_ck_cgroup *r = (const struct pts_ck_cgroup *)h;
		snprintf(s->last.proc.cgroup, sizeof(s->last.proc.cgroup), "%.*s",
			 (int)r->len, r->path);
		return 0;
	}
	case PTS_CK_BEGIN:
		ingest_reading_done(s);
		/* between readings: those before it are in the worlds, and
		 * its names are yet to come */
		ingest_names_prune(g);
		*ck = (struct ck_accum){ .open = true, .vma = ck->vma,
					 .cap_vma = ck->cap_vma, .run = ck->run,
					 .cap_run = ck->cap_run,
					 .rest_last = ck->rest_last,
					 .nvma_last = ck->nvma_last,
					 .reason = ((const struct pts_ck_begin *)h)->reason,
					 .begun_ns = h->time_ns };
		/* inside the reading: its held EXIT reads nothing */
		return adopt(g, s);
	case PTS_CK_REST:
		if (ck->open)
			ck->rest = ((const struct pts_ck_rest *)h)->mark;
		return 0;
	case PTS_CK_VMAS:
	case PTS_CK_RUNS:
		gather(g, ck, h);
		return 0;
	case PTS_CK_END:
		if (ck->open)
			ck_end(g, s, (const struct pts_ck_end *)h);
		return 0;
	}
	return 0;
}
