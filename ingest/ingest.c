/* SPDX-License-Identifier: MIT */
/* Ingest: connections and sessions, records applied in order, the trace. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ingest_internal.h"
#include "report/symbols.h"
#include "trace.h"
#include "lib/clock.h"
#include "lib/bsearch.h"

#define HELD_MAX (64u << 10)    /* a pending child's packets, at most */
#define FULL_READ_GAP_NS 100000000u /* exits read everyone at most this often */
#define FULL_READ_SHARE 4       /* and at most 1/this of the time */
#define MALFORMED_MAX 64        /* in a row, then the connection is dropped */

struct ingest *ingest_new(struct mm_worlds *ws, bool live, FILE *trace)
{
	struct ingest *g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	g->ws = ws;
	g->live = live;
	g->trace = trace;
	if (trace) {
		static const char magic[16] = TRACE_MAGIC;
		uint32_t v[2] = { PTS_WIRE_VERSION, 0 };
		fwrite(magic, 1, sizeof(magic), g->trace);
		fwrite(v, sizeof(v), 1, g->trace);
	}
	return g;
}

void ingest_serves(struct ingest *g, bool (*serves)(uid_t uid))
{
	g->serves = serves;
}

static void session_free(struct session *s)
{
	free(s->ck.vma);
	free(s->ck.run);
	free(s->held.buf);
	ingest_code_map_free(&s->code);
	ingest_site_ranges_free(&s->sites);
	free(s);
}

void ingest_free(struct ingest *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->nsess; i++)
		session_free(g->sess[i]);
	for (size_t i = 0; i < g->nnames; i++)
		free(g->names[i].name);
	report_free(&g->peak);
	ingest_callsites_free(&g->callsites);
	report_symbols_free(g->symbols);
	if (g->fs)
		ingest_fs_cache_free(g->fs);
	free(g->fs);
	free(g->sess);
	free(g->conn);
	free(g->finals);
	free(g->names);
	ptr_map_free(&g->name_index);
	free(g->devs);
	free(g->owed);
	free(g->procs);
	free(g->objects);
	free(g);
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

static struct session *session_new(struct ingest *g, int32_t pid, uint32_t uid)
{
	struct session *s = calloc(1, sizeof(*s));
	if (!s || grow_array((void **)&g->sess, &g->cap_sess, g->nsess + 1,
			     sizeof(*g->sess))) {
		free(s);
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
	return s;
}

/* The open connections, sorted by id: they are numbered in the order they
 * open, so a new one goes last.  Only the open ones are kept, however many
 * a run has had. */
static size_t conn_index(const struct ingest *g, uint32_t conn)
{
	return bsearch_first(g->conn, g->nconn, c, c->conn < conn);
}

static struct session *session_of_conn(const struct ingest *g, uint32_t conn)
{
	size_t i = conn_index(g, conn);
	return i < g->nconn && g->conn[i].conn == conn ? g->conn[i].s : NULL;
}

static void conn_unbind(struct ingest *g, uint32_t conn)
{
	size_t i = conn_index(g, conn);
	if (i == g->nconn || g->conn[i].conn != conn)
		return;
	memmove(&g->conn[i], &g->conn[i + 1], (g->nconn - i - 1) * sizeof(*g->conn));
	g->nconn--;
}

/* A process that is gone leaves the worlds: its line keeps what they
 * counted of it. */
static void session_leave_model(struct ingest *g, struct session *s)
{
	if (!s->in_model)
		return;
	s->last = ingest_final_of(g, s, false);
	for (size_t k = 0; k < g->ws->n; k++)
		mm_exit(g->ws->w[k], (uint32_t)s->pid);
	s->in_model = false;
}

/* A process that is gone: its last checkpoint joins the finals. */
static void session_end(struct ingest *g, struct session *s)
{
	session_leave_model(g, s);
	if (!grow_array((void **)&g->finals, &g->cap_finals, g->nfinals + 1,
			sizeof(*g->finals)))
		g->finals[g->nfinals++] = ingest_final_of(g, s, false);
	if (s->conn)
		conn_unbind(g, s->conn);
	size_t i = sess_index(g, s->pid);
	memmove(&g->sess[i], &g->sess[i + 1], (g->nsess - i - 1) * sizeof(*g->sess));
	g->nsess--;
	session_free(s);
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
			session_leave_model(g, s);
		return false;
	}
	session_end(g, s);
	return true;
}

/* A record the model or the protocol refused: counted, and the process
 * will be read again from /proc. */
void ingest_session_refused(struct ingest *g, struct session *s,
			    const char *why)
{
	(void)why;
	s->last.refused++;
	g->stream.refused++;
	ingest_reading_owed(g, s);
}

static void trace_frame(struct ingest *g, int32_t pid, uint32_t conn,
			const struct pts_hdr *h)
{
	uint32_t frame[2] = { (uint32_t)pid, conn };
	if (!g->trace)
		return;
	fwrite(frame, sizeof(frame), 1, g->trace);
	fwrite(h, h->size, 1, g->trace);
}

void ingest_action_ack(struct ingest_action *act, uint32_t conn,
		       uint32_t seq)
{
	if (!act || act->nack >= INGEST_MAX_ACKS)
		return;
	struct pts_ack *a = &act->ack[act->nack].rec;
	act->ack[act->nack++].conn = conn;
	*a = (struct pts_ack){
		.h = { .type = PTS_ACK, .size = sizeof(*a),
		       .time_ns = now_ns() },
		.acked_seq = seq,
	};
}

/* The acks of act, owed to connections that wait for them, until the
 * daemon takes them.  A replay takes none: they are a few an adopted
 * child, whose HELLO and reading the trace holds. */
void ingest_owe_acks(struct ingest *g, const struct ingest_action *act)
{
	if (!act->nack ||
	    grow_array((void **)&g->owed, &g->cap_owed, g->nowed + act->nack,
		       sizeof(*g->owed)))
		return;
	for (unsigned i = 0; i < act->nack; i++)
		g->owed[g->nowed++] = (struct owed_ack){
			act->ack[i].conn, act->ack[i].rec.acked_seq };
}

bool ingest_owed_acks(struct ingest *g, struct ingest_action *act)
{
	size_t n = 0;
	if (!g->nowed)
		return false;
	while (n < g->nowed && act->nack < INGEST_MAX_ACKS) {
		ingest_action_ack(act, g->owed[n].conn, g->owed[n].seq);
		n++;
	}
	g->nowed -= n;
	memmove(g->owed, g->owed + n, g->nowed * sizeof(*g->owed));
	return g->nowed > 0;
}

/* The process now exists in the worlds: its held records go through,
 * then its connection's close. */
void ingest_release_held(struct ingest *g, struct session *s,
			 struct ingest_action *act)
{
	struct held h = s->held;
	s->held = (struct held){ 0 };
	if (h.overflowed)
		ingest_session_refused(g, s,
				       "too many records before its fork");
	for (size_t off = 0; off + 4 <= h.len;) {
		union aligned_rec r;
		uint32_t len;
		memcpy(&len, h.buf + off, 4);
		memcpy(&r, h.buf + off + 4, len);
		ingest_apply(g, s->pid, s->conn, &r, act);
		off += 4 + len;
	}
	free(h.buf);
	if (h.close.h.type)
		ingest_apply(g, s->pid, s->conn, &h.close, act);
}

static void hold(struct session *s, const void *buf, size_t len)
{
	struct held *h = &s->held;
	uint32_t n = (uint32_t)len;
	if (h->overflowed || h->len + 4 + len > HELD_MAX ||
	    grow_array((void **)&h->buf, &h->cap, h->len + 4 + len, 1)) {
		h->overflowed = true;
		return;
	}
	memcpy(h->buf + h->len, &n, 4);
	memcpy(h->buf + h->len + 4, buf, len);
	h->len += 4 + len;
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
	if (p) {
		ingest_site_ranges_copy(&s->sites, &p->sites);
		ingest_code_map_copy(&s->code, &p->code);
	}
	s->in_model = true;
	return true;
}

static void hello(struct ingest *g, struct session *s, uint32_t conn,
		  const struct pts_hello *r, struct ingest_action *act)
{
	const char *base = strrchr(r->exe, '/');
	snprintf(s->name, sizeof(s->name), "%.*s", (int)sizeof(s->name) - 1,
		 base ? base + 1 : r->exe);
	snprintf(s->last.proc.name, sizeof(s->last.proc.name), "%s", s->name);
	s->ppid = r->ppid;
	s->last.proc.ppid = (uint32_t)r->ppid;
	s->untraced = false;
	/* Without a userfaultfd, faults are seen through pagemap only; the
	 * daemon says which mode the others get (PTS_FAULT_MODE). */
	if (!(r->flags & PTS_HELLO_UFFD)) {
		s->last.fault_mode = PTS_FAULTS_OFF;
		s->last.fault_err = r->uffd_errno;
	}
	if (s->gone) { /* its connection came after readings found it gone */
		ingest_action_ack(act, conn, r->h.seq);
		return;
	}
	if ((r->flags & PTS_HELLO_FORKED) && !s->in_model) {
		s->hello_seq = r->h.seq; /* acked when the parent's PTS_FORK comes */
		return;
	}
	uint32_t reason = s->in_model ? PTS_CK_EXEC : PTS_CK_CONNECT;
	if (r->flags & PTS_HELLO_FORKED) {
		reason = PTS_CK_FORK;
	} else if (!ingest_enter_model(g, s, 0)) {
		ingest_session_refused(g, s, "the model refused the process");
		ingest_action_ack(act, conn, r->h.seq);
		return;
	}
	s->exec_pending = false;
	if (g->live)
		ingest_checkpoint_read(g, s, reason);
	ingest_action_ack(act, conn, r->h.seq);
}

static void fork_child(struct ingest *g, struct session *parent,
		       const struct pts_fork *r, struct ingest_action *act)
{
	struct session *c = ingest_session_of(g, r->child);
	if (c && c->adopted) { /* read from /proc already: nothing to copy */
		c->adopted = false;
		ingest_session_end_if_over(g, c);
		return;
	}
	/* Known already: in the worlds, or gone after its fork came. */
	if (c && !c->hello_seq && (c->in_model || c->gone)) {
		ingest_session_refused(g, parent,
				       "fork of a pid already known");
		return;
	}
	if (!c && !(c = session_new(g, r->child, parent->uid)))
		return;
	snprintf(c->name, sizeof(c->name), "%s", parent->name);
	snprintf(c->last.proc.name, sizeof(c->last.proc.name), "%s", c->name);
	c->ppid = parent->pid;
	c->last.proc.ppid = (uint32_t)parent->pid;
	/* A parent out of the worlds (gone before its connection was read)
	 * has nothing to copy: its child enters as it is, as an adopted one
	 * does, and its readings fill it. */
	if (!ingest_enter_model(g, c, parent->in_model ? parent->pid : 0)) {
		ingest_session_refused(g, parent, "the model refused the fork");
		return;
	}
	if (c->hello_seq) { /* its HELLO came first: it waits for us */
		if (g->live)
			ingest_checkpoint_read(g, c, PTS_CK_FORK);
		ingest_action_ack(act, c->conn, c->hello_seq);
		c->hello_seq = 0;
		ingest_release_held(g, c, act); /* last: it may end c */
	}
}

/* A range the program registered with a userfaultfd of its own: its faults
 * are the program's from now on (the daemon released its own there). */
static void own_uffd(struct report_final *f, const struct pts_own_uffd *r)
{
	if (r->request != PTS_OWN_UFFD_REGISTER)
		return;
	if (f->own_uffd_ranges < REPORT_OWN_UFFD_MAX) {
		f->own_uffd[f->own_uffd_ranges].start = r->start;
		f->own_uffd[f->own_uffd_ranges].end = r->start + r->len;
	}
	f->own_uffd_ranges++;
	f->own_uffd_bytes += r->len;
}

/* A record from a shim, on the session its connection belongs to. */
static void apply_shim(struct ingest *g, struct session *s, uint32_t conn,
		       const union aligned_rec *r, struct ingest_action *act)
{
	const struct pts_hdr *h = &r->h;
	g->stream.records++;
	s->last.records++;
	/* A gap in the numbers: records the shim could not send.  Counted
	 * here, where a replay of the trace counts them too. */
	if (h->seq > s->applied_seq + 1) {
		s->last.lost += h->seq - s->applied_seq - 1;
		g->stream.lost += h->seq - s->applied_seq - 1;
	}
	s->applied_seq = h->seq;
	switch (h->type) {
	case PTS_HELLO:
		hello(g, s, conn, (const struct pts_hello *)r, act);
		return;
	case PTS_FORK:
		fork_child(g, s, (const struct pts_fork *)r, act);
		return;
	case PTS_EXEC:
		s->exec_pending = true;
		s->exec_no_fd = ((const struct pts_exec *)r)->flags & PTS_EXEC_NO_FD;
		return;
	case PTS_EXEC_FAILED:
		s->exec_pending = false;
		return;
	case PTS_EXIT:
		s->exiting = true;
		/* The first to leave: read everyone while they are all here, so
		 * the peak sees the pages they touched since the last timer.
		 * Not while a reading of it is open (adopt() released its held
		 * records): that reading is the last. */
		if (g->live && !s->ck.open) {
			if (now_ns() - g->full_read_ns > FULL_READ_GAP_NS)
				ingest_checkpoint_all(g, PTS_CK_TIMER);
			if (s->in_model)
				ingest_checkpoint_read(g, s, PTS_CK_EXIT);
		}
		ingest_action_ack(act, conn, h->seq);
		return;
	case PTS_LOST:
		/* The same records as the gap its own number shows: counted
		 * above, and resynced when the gap was seen. */
		return;
	}
	if (h->flags & PTS_F_FAILED) {
		g->stream.failed_calls++;
		return;
	}
	if (h->type == PTS_OWN_UFFD)
		own_uffd(&s->last, (const struct pts_own_uffd *)r);
	else if (s->in_model)
		ingest_apply_call(g, s, h);
}

static void conn_open(struct ingest *g, uint32_t conn,
		      const struct pts_conn *r)
{
	g->last_conn = conn;
	g->stream.connections++;
	struct session *s = ingest_session_of(g, r->pid);
	/* A process gone does not connect again: after its own connection,
	 * one of its pid is a new process's (the pid was reused while it
	 * waited for its parent's PTS_FORK). */
	if (s && s->gone && s->connected && !s->conn) {
		session_end(g, s);
		s = NULL;
	}
	if ((!s && !(s = session_new(g, r->pid, r->arg))) ||
	    grow_array((void **)&g->conn, &g->cap_conn, g->nconn + 1,
		       sizeof(*g->conn)))
		return;
	/* A new image may connect before the old one's close is seen. */
	if (s->conn)
		conn_unbind(g, s->conn);
	/* Its user is served: the daemon took the connection. */
	s->uid = r->arg;
	s->last.proc.uid = r->arg;
	s->unserved = false;
	s->conn = conn;
	s->connected = true;
	s->next_seq = 1;
	s->applied_seq = 0;
	s->malformed_run = 0;
	g->conn[g->nconn++] = (struct conn_of){ conn, s };
}

/* outlived: the process still runs (it closed our socket, or exec'd).  An
 * exec closes the old image's socket; the new image says HELLO.  A
 * program that closed every fd lives on, followed from /proc. */
static void conn_close(struct ingest *g, uint32_t conn, bool outlived)
{
	struct session *s = session_of_conn(g, conn);
	if (!s)
		return;
	conn_unbind(g, conn);
	s->conn = 0;
	s->gone |= !outlived || s->exiting;
	if (!s->gone && !s->exec_pending)
		s->untraced = true;
	ingest_session_end_if_over(g, s);
}

void ingest_apply(struct ingest *g, int32_t pid, uint32_t conn, const void *rec,
		  struct ingest_action *act)
{
	const union aligned_rec *r = rec;
	const struct pts_hdr *h = &r->h;
	/* The peak after a reading of /proc, taken once it is over: a timer
	 * reads every process, one after the other, and a report per process
	 * read would cost the square of their number. */
	if (g->peak_due && (h->type < PTS_CK_BEGIN || h->type > PTS_CK_USER)) {
		g->peak_due = false;
		ingest_capture_peak(g, false);
	}
	g->since_peak++;
	trace_frame(g, pid, conn, h);
	switch (h->type) {
	case PTS_CONN_OPEN:
		conn_open(g, conn, (const struct pts_conn *)r);
		return;
	case PTS_CONN_CLOSE:
		conn_close(g, conn, ((const struct pts_conn *)r)->arg);
		return;
	}
	struct session *s = h->type >= PTS_CK_BEGIN ? ingest_session_of(g, pid)
		: session_of_conn(g, conn);
	switch (h->type) {
	case PTS_FAULT:
		if (s)
			ingest_apply_fault(g, s, (const struct pts_fault *)r);
		return;
	case PTS_FAULT_MODE: {
		const struct pts_fault_mode *m = (const struct pts_fault_mode *)r;
		if (!m->pid)
			g->stream.fault_mode = m->mode;
		else if (s && m->mode <= PTS_FAULTS_ALL) {
			s->last.fault_mode = m->mode;
			s->last.fault_err = m->err;
		}
		return;
	}
	case PTS_RUN_INFO:
		g->stream.run = *(const struct pts_run_info *)r;
		g->stream.has_run = true;
		return;
	case PTS_ZERO_PAGE:
		for (size_t k = 0; k < g->ws->n; k++)
			mm_world_set_zero_page(g->ws->w[k],
				((const struct pts_zero_page *)r)->zero_page);
		return;
	}
	if (h->type >= PTS_CK_BEGIN)
		ingest_apply_checkpoint(g, s, h);
	else if (s)
		apply_shim(g, s, conn, r, act);
}

/* Connections are numbered from 1, in the order they open. */
static uint32_t next_conn(const struct ingest *g)
{
	return g->last_conn + 1;
}

uint32_t ingest_connect(struct ingest *g, int32_t pid, uint32_t uid)
{
	uint32_t conn = next_conn(g);
	struct pts_conn r = {
		.h = { .type = PTS_CONN_OPEN, .size = sizeof(r), .time_ns = now_ns() },
		.pid = pid, .arg = uid,
	};
	ingest_apply(g, pid, conn, &r, NULL);
	return session_of_conn(g, conn) ? conn : 0;
}

/* Whether pid still runs (a zombie does not: it has no address space). */
static bool still_runs(int32_t pid)
{
	struct procfs_status st;
	return procfs_status_read(pid, &st) == 0 && st.has_mm;
}

void ingest_disconnect(struct ingest *g, uint32_t conn)
{
	struct session *s = session_of_conn(g, conn);
	if (!s)
		return;
	struct pts_conn r = {
		.h = { .type = PTS_CONN_CLOSE, .size = sizeof(r), .time_ns = now_ns() },
		.pid = s->pid,
		.arg = g->live && !s->exiting && still_runs(s->pid),
	};
	if (s->hello_seq) /* a forked child's, after its held records */
		s->held.close = r;
	else
		ingest_apply(g, s->pid, conn, &r, NULL);
}

void ingest_drop(struct ingest *g, uint32_t conn, uint32_t why)
{
	struct session *s = session_of_conn(g, conn);
	if (s && !s->last.dropped) {
		s->last.dropped = why;
		g->stream.dropped++;
	}
}

void ingest_refused(struct ingest *g, enum ingest_refusal why)
{
	if (why == INGEST_REFUSED_USER)
		g->stream.refused_user++;
	else if (why == INGEST_REFUSED_FULL)
		g->stream.refused_full++;
	else
		g->stream.refused_user_full++;
}

void ingest_packet(struct ingest *g, uint32_t conn, const void *buf, size_t len,
		   struct ingest_action *act)
{
	struct session *s = session_of_conn(g, conn);
	union aligned_rec r;
	if (!s) { /* an image its process replaced: what it says is not
		   * applied, and not lost (the numbering misses nothing) */
		g->stream.superseded += conn && conn <= g->last_conn;
		return;
	}
	memcpy(&r, buf, len < sizeof(r) ? len : sizeof(r));
	ingest_readings_tick(s);
	const char *bad = ingest_record_check(&r, len, true);
	if (!bad && r.h.seq < s->next_seq)
		bad = "a sequence number again";
	if (!bad && (s->next_seq == 1) != (r.h.type == PTS_HELLO))
		bad = r.h.type == PTS_HELLO ? "a second HELLO" : "no HELLO first";
	if (!bad && r.h.type == PTS_FORK &&
	    !ingest_fork_of_child(g, s, ((const struct pts_fork *)&r)->child))
		bad = "a fork of a process that is not its child";
	/* A gap: records were lost (apply_shim counts them); what they did
	 * is read from /proc. */
	if (!bad && r.h.seq > s->next_seq) {
		ingest_reading_owed(g, s);
		ingest_reading_if_owed(g, s);
	}
	if (bad) {
		s->last.malformed++;
		g->stream.malformed++;
		if (act && ++s->malformed_run >= MALFORMED_MAX)
			act->drop = true;
		ingest_reading_owed(g, s);
		ingest_reading_if_owed(g, s);
		return;
	}
	s->malformed_run = 0;
	s->next_seq = r.h.seq + 1;
	ingest_classify_mmap_dev(g, s, &r.h);
	ingest_claims_add(g, s, &r.h);
	/* A forked child's records wait for its parent's PTS_FORK. */
	if (!s->in_model && r.h.type != PTS_HELLO && s->hello_seq) {
		hold(s, buf, len);
		return;
	}
	ingest_apply(g, s->pid, conn, &r, act);
	ingest_reading_if_owed(g, s);
}

void ingest_fault(struct ingest *g, int32_t pid, uint64_t addr, uint32_t flags)
{
	struct pts_fault r = {
		.h = { .type = PTS_FAULT, .size = sizeof(r), .time_ns = now_ns() },
		.pid = pid, .flags = flags, .addr = addr,
	};
	ingest_apply(g, pid, 0, &r, NULL);
}

void ingest_fault_mode(struct ingest *g, int32_t pid, uint32_t mode, int err)
{
	struct pts_fault_mode r = {
		.h = { .type = PTS_FAULT_MODE, .size = sizeof(r), .time_ns = now_ns() },
		.pid = pid, .mode = mode, .err = err,
	};
	ingest_apply(g, pid, 0, &r, NULL);
}

void ingest_zero_page(struct ingest *g, bool zero_page)
{
	struct pts_zero_page r = {
		.h = { .type = PTS_ZERO_PAGE, .size = sizeof(r), .time_ns = now_ns() },
		.zero_page = zero_page,
	};
	ingest_apply(g, 0, 0, &r, NULL);
}

void ingest_run_info(struct ingest *g, const struct pts_run_info *info)
{
	struct pts_run_info r = *info;
	r.h = (struct pts_hdr){ .type = PTS_RUN_INFO, .size = sizeof(r),
				.time_ns = now_ns() };
	ingest_apply(g, 0, 0, &r, NULL);
}

int ingest_replay(struct ingest *g, int32_t pid, uint32_t conn,
		  const void *rec, size_t len)
{
	union aligned_rec r;
	if (len > sizeof(r))
		return -EPROTO;
	memcpy(&r, rec, len);
	bool from_shim = len >= sizeof(r.h) && r.h.type <= PTS_SHIM_LAST;
	if (ingest_record_check(&r, len, from_shim))
		return -EPROTO;
	/* Any other number than the next is not one a daemon wrote, and
	 * would size the table of connections (fuzz: conn-open-*). */
	if (r.h.type == PTS_CONN_OPEN && conn != next_conn(g))
		return -EPROTO;
	ingest_apply(g, pid, conn, &r, NULL);
	return 0;
}

size_t ingest_live(const struct ingest *g)
{
	return g->nsess;
}

void ingest_cut_short(struct ingest *g, const char *why, bool torn)
{
	snprintf(g->stream.cut_why, sizeof(g->stream.cut_why), "%s", why);
	g->stream.cut_running = g->nsess;
	g->stream.cut_torn = torn;
}

/*
 * Every process, now: the timer's checkpoint, and the end of a run's.  A
 * process whose image did not say HELLO after an exec (a static or setuid
 * program) is followed from /proc alone; a forked child whose parent's
 * PTS_FORK never came enters the model as it is now; a process gone
 * without a connection to tell us ends, or leaves the worlds while a half
 * of its fork is still to come (see session_end_if_over).
 */
void ingest_checkpoint_all(struct ingest *g, uint32_t reason)
{
	uint64_t start = now_ns();
	/* Reading every process takes at most 1/FULL_READ_SHARE of the
	 * daemon's time: a thousand processes take a second or more to read,
	 * and every connection waits meanwhile. */
	if (reason == PTS_CK_TIMER && g->full_read_ns &&
	    start - g->full_read_ns < FULL_READ_SHARE * g->full_read_cost_ns)
		return;
	g->full_read_ns = start;
	for (size_t i = 0; i < g->nsess && g->live;) {
		/* A reading may end the process's session (ck_end), the only
		 * one that can end meanwhile. */
		struct session *s = g->sess[i];
		size_t n = g->nsess;
		if (s->hello_seq && !s->in_model)
			ingest_checkpoint_read(g, s,
					       PTS_CK_RESYNC); /* see adopt() */
		/* One that said PTS_EXIT was read then, its last: a reading
		 * now would see its address space torn down. */
		if (g->nsess == n && s->in_model && !s->exiting)
			ingest_checkpoint_read(g, s, reason);
		i += g->nsess == n;
	}
	g->full_read_cost_ns = now_ns() - start;
}
