/* SPDX-License-Identifier: MIT */
/* Sessions (one per process, by pid) and the open connections (by id):
 * the one table of connections, the daemon's included.  A session enters
 * and leaves the worlds here, and ends here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest_internal.h"
#include "lib/bsearch.h"

void ingest_out_of_memory(struct ingest *g)
{
	g->stream.out_of_memory++;
}

void ingest_session_free(struct session *s)
{
	free(s->ck.vma);
	free(s->ck.run);
	free(s->held.buf);
	ingest_code_map_free(&s->code);
	ingest_site_ranges_free(&s->sites);
	free(s);
}

static size_t sess_index(const struct ingest *g, int32_t pid)
{
	return bsearch_first(g->sess, g->nsess, s, (*s)->pid < pid);
}

struct session *ingest_session_of(struct ingest *g, int32_t pid)
{
	size_t i = sess_index(g, pid);
	return i < g->nsess && g->sess[i]->pid == pid ? g->sess[i] : NULL;
}

struct session *ingest_session_new(struct ingest *g, int32_t pid,
				   uint32_t uid)
{
	struct session *s = calloc(1, sizeof(*s));
	if (!s || grow_array((void **)&g->sess, &g->cap_sess, g->nsess + 1,
			     sizeof(*g->sess))) {
		free(s);
		ingest_out_of_memory(g);
		return NULL;
	}
	size_t i = sess_index(g, pid);
	memmove(&g->sess[i + 1], &g->sess[i], (g->nsess - i) * sizeof(*g->sess));
	g->sess[i] = s;
	g->nsess++;
	s->pid = pid;
	s->uid = uid;
	s->last = (struct report_final){
		.proc = { .pid = (uint32_t)pid, .uid = uid, .vmpte_kb = -1 },
		.model_kb = -1,
	};
	for (size_t k = 0; k < MM_WORLDS_MAX; k++)
		s->last.policy_kb[k] = -1;
	return s;
}

/* The open connections, sorted by id: they are numbered in the order they
 * open, so a new one goes last.  Only the open ones are kept, however many
 * a run has had. */
static size_t conn_index(const struct ingest *g, uint32_t conn)
{
	return bsearch_first(g->conn, g->nconn, c, c->conn < conn);
}

static struct conn_of *conn_of(const struct ingest *g, uint32_t conn)
{
	size_t i = conn_index(g, conn);
	return i < g->nconn && g->conn[i].conn == conn ? &g->conn[i] : NULL;
}

struct session *ingest_session_of_conn(const struct ingest *g, uint32_t conn)
{
	const struct conn_of *c = conn_of(g, conn);
	return c ? c->s : NULL;
}

void ingest_conn_own(struct ingest *g, uint32_t conn, void *owner)
{
	struct conn_of *c = conn_of(g, conn);
	if (c)
		c->owner = owner;
}

void *ingest_conn_owner(const struct ingest *g, uint32_t conn)
{
	const struct conn_of *c = conn_of(g, conn);
	return c ? c->owner : NULL;
}

bool ingest_conn_exit_acked(const struct ingest *g, uint32_t conn,
			    uint32_t seq)
{
	const struct session *s = ingest_session_of_conn(g, conn);
	return s && s->exiting && s->exit_seq == seq;
}

bool ingest_conn_bind(struct ingest *g, struct session *s, uint32_t conn)
{
	if (grow_array((void **)&g->conn, &g->cap_conn, g->nconn + 1,
		       sizeof(*g->conn))) {
		ingest_out_of_memory(g);
		return false;
	}
	g->conn[g->nconn++] = (struct conn_of){ conn, s, NULL };
	return true;
}

void ingest_conn_unbind(struct ingest *g, uint32_t conn)
{
	struct conn_of *c = conn_of(g, conn);
	if (!c)
		return;
	size_t i = (size_t)(c - g->conn);
	memmove(c, c + 1, (g->nconn - i - 1) * sizeof(*g->conn));
	g->nconn--;
}

struct report_final ingest_final_of(const struct ingest *g,
				    const struct session *s, bool alive)
{
	struct report_final f = s->last;
	f.alive = alive;
	f.untraced = s->untraced || (s->exec_pending && !s->conn);
	f.untraced_why = !f.untraced ? REPORT_TRACED
			 : s->unserved ? REPORT_UNTRACED_USER
			 : !s->exec_pending ? REPORT_UNTRACED_CLOSED
			 : s->exec_no_fd ? REPORT_UNTRACED_NO_FD
			 : REPORT_UNTRACED_EXEC;
	for (size_t k = 0; k < g->ws->n; k++) {
		struct mm_proc_stats st;
		if (s->in_model &&
		    !mm_proc_counters(g->ws->w[k], (uint32_t)s->pid, &st)) {
			f.faults[k] = st.faults;
			f.observed[k] = st.faults_observed;
		}
	}
	return f;
}

/* A process that is gone leaves the worlds: its line keeps what they
 * counted of it. */
void ingest_session_leave_model(struct ingest *g, struct session *s)
{
	if (!s->in_model)
		return;
	s->last = ingest_final_of(g, s, false);
	for (size_t k = 0; k < g->ws->n; k++)
		mm_exit(g->ws->w[k], (uint32_t)s->pid);
	s->in_model = false;
}

void ingest_session_end(struct ingest *g, struct session *s)
{
	ingest_session_leave_model(g, s);
	struct report_final f = ingest_final_of(g, s, false);
	if (g->nfinals >= g->keep_finals && report_final_plain(&f, g->ws->n))
		report_fold_final(&g->folded, &f, g->ws->n);
	else if (!grow_array((void **)&g->finals, &g->cap_finals,
			     g->nfinals + 1, sizeof(*g->finals)))
		g->finals[g->nfinals++] = f;
	else
		ingest_out_of_memory(g);
	if (s->conn)
		ingest_conn_unbind(g, s->conn);
	size_t i = sess_index(g, s->pid);
	memmove(&g->sess[i], &g->sess[i + 1], (g->nsess - i - 1) * sizeof(*g->sess));
	g->nsess--;
	ingest_session_free(s);
}

/*
 * Whether a half of s's fork may still come.  A forked child's two halves,
 * its parent's PTS_FORK and its own connection, come by different sockets
 * in either order, and the daemon may read either any time later (it
 * accepted connections 20 s late in a fork storm under load): its
 * parent's, when a reading adopted it first; its own, when the fork made
 * it and it never connected.
 */
static bool fork_half_owed(const struct session *s)
{
	return s->adopted || !s->connected;
}

/* Whether nothing more can come for s: its connection is closed, it runs
 * no more, and no half of its fork is owed. */
static bool session_over(const struct session *s)
{
	return !s->conn && !s->hello_seq && s->gone && !fork_half_owed(s);
}

/* Whichever half comes last ends it, so that its records and its line in
 * the report stay one.  Until then, a child gone is out of the worlds; a
 * half that never comes (a child forked with no fd left, a parent's
 * PTS_FORK lost) leaves its line to the end of the run. */
bool ingest_session_end_if_over(struct ingest *g, struct session *s)
{
	if (!session_over(s)) {
		if (s->gone && !s->conn)
			ingest_session_leave_model(g, s);
		return false;
	}
	ingest_session_end(g, s);
	return true;
}

void ingest_session_refused(struct ingest *g, struct session *s,
			    const char *why)
{
	s->last.refused++;
	snprintf(s->last.refused_why, sizeof(s->last.refused_why), "%s", why);
	g->stream.refused++;
	ingest_reading_owed(s);
}

/* The process enters the worlds: created, forked from its parent, or
 * replaced by an exec. */
bool ingest_enter_model(struct ingest *g, struct session *s, int32_t parent)
{
	for (size_t k = 0; k < g->ws->n; k++) {
		struct mm_world *w = g->ws->w[k];
		uint32_t pid = (uint32_t)s->pid;
		int r = parent > 0 ? mm_fork(w, (uint32_t)parent, pid)
			: s->in_model ? mm_exec(w, pid) : mm_create(w, pid);
		if (r) {
			for (size_t j = 0; j < k; j++)
				mm_exit(g->ws->w[j], pid);
			s->in_model = false;
			return false;
		}
	}
	/* A child maps what its parent mapped, made by the same calls. */
	struct session *p = parent > 0 ? ingest_session_of(g, parent) : NULL;
	ingest_site_ranges_free(&s->sites);
	s->code.n = 0; /* a new image's: from its first reading */
	if (p) {
		ingest_site_ranges_copy(&s->sites, &p->sites);
		ingest_code_map_copy(&s->code, &p->code);
	}
	s->in_model = true;
	s->unread = true;
	return true;
}

void ingest_trace_write(struct ingest *g, int32_t pid, uint32_t conn,
			const struct pts_hdr *h)
{
	uint32_t frame[2] = { (uint32_t)pid, conn };
	if (!g->trace)
		return;
	fwrite(frame, sizeof(frame), 1, g->trace);
	fwrite(h, h->size, 1, g->trace);
}
