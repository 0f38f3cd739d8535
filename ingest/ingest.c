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
#define FULL_READ_GAP_NS 100000000u /* exits owe everyone a reading this seldom */
#define MALFORMED_MAX 64        /* in a row, then the connection is dropped */

/* A replay's host: no process runs, every fork is of a child, and the
 * trace's records say what each device is. */
static bool replay_runs(void *arg, int32_t pid)
{
	(void)arg, (void)pid;
	return false;
}

static bool replay_child_of(void *arg, int32_t child, int32_t parent)
{
	(void)arg, (void)child, (void)parent;
	return true;
}

static int replay_fs_of(void *arg, int32_t pid, uint64_t dev, uint32_t *kind,
			uint32_t *huge_shift)
{
	(void)arg, (void)pid, (void)dev, (void)kind, (void)huge_shift;
	return -ENOENT;
}

struct ingest *ingest_new(struct mm_worlds *ws, const struct ingest_host *host,
			  FILE *trace)
{
	struct ingest *g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	g->ws = ws;
	/* Every operation goes to linux's world first, then to every world
	 * fed: one whose policy can differ from linux's only on mappings of
	 * some kinds follows it until a process holds one. */
	mm_worlds_follow(ws);
	g->keep_finals = REPORT_FINALS_KEPT;
	g->host = host ? *host : (struct ingest_host){
		.runs = replay_runs, .child_of = replay_child_of,
		.fs_of = replay_fs_of,
	};
	g->trace = trace;
	if (trace) {
		static const char magic[16] = TRACE_MAGIC;
		uint32_t v[2] = { PTS_WIRE_VERSION, 0 };
		fwrite(magic, 1, sizeof(magic), g->trace);
		fwrite(v, sizeof(v), 1, g->trace);
	}
	return g;
}

void ingest_keep_finals(struct ingest *g, size_t n)
{
	g->keep_finals = n;
}

void ingest_free(struct ingest *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->nsess; i++)
		ingest_session_free(g->sess[i]);
	for (size_t i = 0; i < g->nnames; i++)
		free(g->names[i].name);
	report_free(&g->peak);
	report_series_free(&g->series);
	ingest_callsites_free(&g->callsites);
	report_symbols_free(g->symbols);
	free(g->sess);
	free(g->conn);
	free(g->finals);
	free(g->names);
	ptr_map_free(&g->name_index);
	free(g->devs);
	free(g->procs);
	free(g->objects);
	free(g->owed);
	free(g->waiting);
	free(g->owed_acks);
	free(g);
}

/* The acks of act, owed to connections that wait for them, until the
 * daemon takes them.  A replay takes none: they are a few an adopted
 * child, whose HELLO and reading the trace holds. */
void ingest_owe_acks(struct ingest *g, const struct ingest_action *act)
{
	if (!act->nack ||
	    grow_array((void **)&g->owed_acks, &g->cap_owed_acks, g->nowed_acks + act->nack,
		       sizeof(*g->owed_acks)))
		return;
	for (unsigned i = 0; i < act->nack; i++)
		g->owed_acks[g->nowed_acks++] = (struct owed_ack){
			act->ack[i].conn, act->ack[i].rec.acked_seq };
}

bool ingest_owed_acks(struct ingest *g, struct ingest_action *act)
{
	size_t n = 0;
	if (!g->nowed_acks)
		return false;
	while (n < g->nowed_acks && act->nack < INGEST_MAX_ACKS) {
		ingest_action_ack(act, g->owed_acks[n].conn, g->owed_acks[n].seq);
		n++;
	}
	g->nowed_acks -= n;
	memmove(g->owed_acks, g->owed_acks + n, g->nowed_acks * sizeof(*g->owed_acks));
	return g->nowed_acks > 0;
}

void ingest_owed_acks_of(struct ingest *g, uint32_t conn,
			 struct ingest_action *act)
{
	size_t kept = 0;
	for (size_t i = 0; i < g->nowed_acks; i++) {
		struct owed_ack a = g->owed_acks[i];
		if (a.conn == conn && act->nack < INGEST_MAX_ACKS)
			ingest_action_ack(act, a.conn, a.seq);
		else
			g->owed_acks[kept++] = a;
	}
	g->nowed_acks = kept;
}

/* Records of every type and size reach it: not inlined into the callers
 * that make one of them (ingest_connect...), where GCC would take the
 * casts to the other types for reads past the record (-Warray-bounds). */
static __attribute__((noinline)) void apply(struct ingest *g, int32_t pid,
					    uint32_t conn, const void *rec,
					    struct ingest_action *act);

/* The process now exists in the worlds: its held records go through,
 * then its connection's close. */
static void release_held(struct ingest *g, struct session *s,
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
		apply(g, s->pid, s->conn, &r, act);
		off += 4 + len;
	}
	free(h.buf);
	if (h.close.h.type)
		apply(g, s->pid, s->conn, &h.close, act);
}

/* A forked child a reading adopted before its parent's PTS_FORK came
 * (checkpoint.c): its HELLO, which waits, is acked then, and its held
 * records go through, the acks they owe with it (an EXIT sent after its
 * wait for the HELLO's ack ran out): acks owed outside a packet, which
 * the daemon takes with ingest_owed_acks. */
static void adopted(struct ingest *g, struct session *s, uint32_t hello_seq)
{
	struct ingest_action act = { 0 };
	ingest_action_ack(&act, s->conn, hello_seq);
	release_held(g, s, &act);
	ingest_owe_acks(g, &act);
}

static void hold(struct ingest *g, struct session *s, const void *buf,
		 size_t len)
{
	struct held *h = &s->held;
	uint32_t n = (uint32_t)len;
	if (h->overflowed || h->len + 4 + len > HELD_MAX) {
		h->overflowed = true;
		return;
	}
	if (grow_array((void **)&h->buf, &h->cap, h->len + 4 + len, 1)) {
		ingest_out_of_memory(g);
		h->overflowed = true;
		return;
	}
	memcpy(h->buf + h->len, &n, 4);
	memcpy(h->buf + h->len + 4, buf, len);
	h->len += 4 + len;
}

/* c, a forked child, enters the worlds as a copy of parent (or as it is,
 * when parent is out of them: gone before its connection was read; its
 * readings fill it), and its HELLO, if it came, is acked. */
static void fork_enter(struct ingest *g, struct session *parent,
		       struct session *c, struct ingest_action *act)
{
	if (!ingest_enter_model(g, c, parent->in_model ? parent->pid : 0)) {
		ingest_session_refused(g, parent, "the model refused the fork");
		return;
	}
	if (parent->in_model)
		ingest_owe_copy_later(c);
	if (c->hello_seq) { /* its HELLO came first: it may wait for us */
		ingest_owe_forked(g, c);
		ingest_action_ack(act, c->conn, c->hello_seq);
		c->hello_seq = 0;
		release_held(g, c, act); /* last: it may end c */
	}
}

/*
 * Forked children run on without waiting for the daemon: a child copies
 * p's model as it was at its fork, once p's records up to the number its
 * HELLO gave (fork_seq) are applied, or at p's PTS_FORK (fork_seen) for a
 * HELLO without one.  (p's model is whole by then: the shim forks only
 * once the daemon has read the image, docs/shim.md.)  A child forked
 * before its PTS_FORK came waits for it as an adopted one does.
 */
static bool fork_ready(const struct session *p, const struct session *c)
{
	if (!p->in_model) /* gone before it was read: the child as it is */
		return c->fork_seen;
	return !p->exec_pending &&
	       (c->fork_seen || (c->fork_seq && c->fork_seq <= p->applied_seq));
}

#define FORKS_AT_ONCE 16
void ingest_forks_due(struct ingest *g, struct session *p,
		      struct ingest_action *act)
{
	int32_t due[FORKS_AT_ONCE];
	size_t n = 0;
	bool more = false;
	for (size_t i = 0; i < g->nsess; i++) {
		struct session *c = g->sess[i];
		if (c->in_model || c->ppid != p->pid ||
		    !(c->hello_seq || c->fork_seen))
			continue;
		if (fork_ready(p, c) && n < FORKS_AT_ONCE)
			due[n++] = c->pid;
		else /* p's records will reach it (the rest: p's reading,
		      * its PTS_FORK, call us) */
			more |= c->fork_seq > p->applied_seq || n == FORKS_AT_ONCE;
	}
	p->forks_waiting = more;
	for (size_t i = 0; i < n; i++) {
		struct session *c = ingest_session_of(g, due[i]);
		if (!c || c->in_model)
			continue;
		c->adopted = !c->fork_seen; /* its PTS_FORK is still to come */
		c->fork_seen = false;
		fork_enter(g, p, c, act);
	}
	if (n == FORKS_AT_ONCE)
		ingest_forks_due(g, p, act);
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
	s->uffd = r->flags & PTS_HELLO_UFFD;
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
		s->hello_seq = r->h.seq; /* acked once it is forked */
		s->fork_seq = r->parent_seq;
		struct session *p = ingest_session_of(g, r->ppid);
		if (p)
			ingest_forks_due(g, p, act);
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
	/* A new image that does not wait for the ack is read a little later
	 * (readings_owed.c): the worlds hold no mapping of it yet (an exec'd
	 * one's went with the old image, mm_exec), so its records fit
	 * whenever they come. */
	if (reason == PTS_CK_FORK)
		ingest_owe_forked(g, s);
	else if ((r->flags & PTS_HELLO_RING) && !(r->flags & PTS_HELLO_UFFD))
		ingest_owe_later(g, s, reason);
	else
		ingest_owe(g, s, reason);
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
	if (c && !c->hello_seq && (c->in_model || c->gone || c->fork_seen)) {
		ingest_session_refused(g, parent,
				       "fork of a pid already known");
		return;
	}
	if (!c && !(c = ingest_session_new(g, r->child, parent->uid)))
		return;
	snprintf(c->name, sizeof(c->name), "%s", parent->name);
	snprintf(c->last.proc.name, sizeof(c->last.proc.name), "%s", c->name);
	c->ppid = parent->pid;
	c->last.proc.ppid = (uint32_t)parent->pid;
	c->fork_seen = true;
	ingest_forks_due(g, parent, act);
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
static void apply_shim_record(struct ingest *g, struct session *s,
			      uint32_t conn, const union aligned_rec *r,
			      struct ingest_action *act)
{
	const struct pts_hdr *h = &r->h;
	g->stream.records++;
	s->last.records++;
	/* The model moves past the last reading (the record may be older
	 * than that reading, come later on another connection): the next
	 * reading reads, at rest or not. */
	s->ck.rest_last = 0;
	/* A gap in the numbers: records the shim could not send.  Counted
	 * here, where a replay of the trace counts them too. */
	if (h->seq > s->applied_seq + 1) {
		s->last.lost += h->seq - s->applied_seq - 1;
		g->stream.lost += h->seq - s->applied_seq - 1;
	}
	s->applied_seq = h->seq;
	/* A new image's first reading waited for something to read (or its
	 * EXIT's); a forked copy's waits to be asked for. */
	if (s->first_read_ns && s->first_read_ns != FIRST_READ_ASKED &&
	    h->type != PTS_HELLO && h->type != PTS_EXIT)
		ingest_owe_now(g, s);
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
		s->exit_seq = h->seq;
		s->first_read_ns = 0; /* its EXIT's reading is its first */
		/* The first to leave: everyone's reading is owed while they
		 * are all here, so the peak sees the pages they touched since
		 * the last timer, then its own, its last (the shim waits for
		 * the ack, sent after the readings).  Not while a reading of
		 * it is open (adopt() released its held records): that
		 * reading is the last. */
		if (!s->ck.open) {
			if (now_ns() - g->full_read_ns > FULL_READ_GAP_NS)
				ingest_checkpoint_all(g, PTS_CK_TIMER);
			if (s->in_model)
				ingest_owe(g, s, PTS_CK_EXIT);
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

static void apply_shim(struct ingest *g, struct session *s, uint32_t conn,
		       const union aligned_rec *r, struct ingest_action *act)
{
	apply_shim_record(g, s, conn, r, act);
	if (s->forks_waiting)
		ingest_forks_due(g, s, act);
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
		ingest_session_end(g, s);
		s = NULL;
	}
	if (!s && !(s = ingest_session_new(g, r->pid, r->arg)))
		return;
	/* A new image may connect before the old one's close is seen. */
	if (s->conn)
		ingest_conn_unbind(g, s->conn);
	if (!ingest_conn_bind(g, s, conn))
		return;
	/* Its user is served: the daemon took the connection. */
	s->uid = r->arg;
	s->last.proc.uid = r->arg;
	s->unserved = false;
	s->conn = conn;
	s->connected = true;
	s->next_seq = 1;
	s->applied_seq = 0;
	s->malformed_run = 0;
}

/* outlived: the process still runs (it closed our socket, or exec'd).  An
 * exec closes the old image's socket; the new image says HELLO.  A
 * program that closed every fd lives on, followed from /proc. */
static void conn_close(struct ingest *g, uint32_t conn, bool outlived)
{
	struct session *s = ingest_session_of_conn(g, conn);
	if (!s)
		return;
	ingest_conn_unbind(g, conn);
	s->conn = 0;
	s->gone |= !outlived || s->exiting;
	if (!s->gone && !s->exec_pending)
		s->untraced = true;
	ingest_session_end_if_over(g, s);
}

static void apply(struct ingest *g, int32_t pid, uint32_t conn, const void *rec,
		  struct ingest_action *act)
{
	const union aligned_rec *r = rec;
	const struct pts_hdr *h = &r->h;
	/* The peak after a reading of /proc, taken once it is over: a timer
	 * reads every process, one after the other, and a report per process
	 * read would cost the square of their number. */
	if ((g->peak_due || g->series_due) &&
	    (h->type < PTS_CK_BEGIN || h->type > PTS_CK_LAST))
		ingest_readings_over(g, false);
	if (!g->started) {
		g->started = true;
		g->first_ns = h->time_ns;
	}
	g->since_peak++;
	ingest_trace_write(g, pid, conn, h);
	switch (h->type) {
	case PTS_CONN_OPEN:
		conn_open(g, conn, (const struct pts_conn *)r);
		return;
	case PTS_CONN_CLOSE:
		conn_close(g, conn, ((const struct pts_conn *)r)->arg);
		return;
	}
	struct session *s = h->type >= PTS_CK_BEGIN ? ingest_session_of(g, pid)
		: ingest_session_of_conn(g, conn);
	switch (h->type) {
	case PTS_FAULT:
		if (s) {
			s->ck.rest_last = 0; /* as a shim's record */
			ingest_apply_fault(g, s, (const struct pts_fault *)r);
		}
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
	if (h->type >= PTS_CK_BEGIN) {
		uint32_t hello_seq = ingest_apply_checkpoint(g, s, h);
		if (hello_seq)
			adopted(g, s, hello_seq);
	}
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
	apply(g, pid, conn, &r, NULL);
	return ingest_session_of_conn(g, conn) ? conn : 0;
}

void ingest_disconnect(struct ingest *g, uint32_t conn)
{
	struct session *s = ingest_session_of_conn(g, conn);
	ingest_conn_own(g, conn, NULL); /* the caller's is gone with it */
	if (!s)
		return;
	struct pts_conn r = {
		.h = { .type = PTS_CONN_CLOSE, .size = sizeof(r), .time_ns = now_ns() },
		.pid = s->pid,
		.arg = !s->exiting && g->host.runs(g->host.arg, s->pid),
	};
	if (s->hello_seq) /* a forked child's, after its held records */
		s->held.close = r;
	else
		apply(g, s->pid, conn, &r, NULL);
}

void ingest_drop(struct ingest *g, uint32_t conn, uint32_t why)
{
	struct session *s = ingest_session_of_conn(g, conn);
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
	struct session *s = ingest_session_of_conn(g, conn);
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
	    !g->host.child_of(g->host.arg, ((const struct pts_fork *)&r)->child,
			      s->pid))
		bad = "a fork of a process that is not its child";
	/* A gap: records were lost (apply_shim counts them); what they did
	 * is read from /proc. */
	if (bad || r.h.seq > s->next_seq) {
		ingest_reading_owed(s);
		ingest_owe_if_due(g, s);
	}
	if (bad) {
		s->last.malformed++;
		g->stream.malformed++;
		if (act && ++s->malformed_run >= MALFORMED_MAX)
			act->drop = true;
		return;
	}
	s->malformed_run = 0;
	s->next_seq = r.h.seq + 1;
	ingest_record_actions(act, conn, &r.h);
	ingest_classify_mmap_dev(g, s, &r.h);
	ingest_claims_add(s, &r.h);
	/* A forked child's records wait for its parent's PTS_FORK. */
	if (!s->in_model && r.h.type != PTS_HELLO && s->hello_seq) {
		hold(g, s, buf, len);
		return;
	}
	apply(g, s->pid, conn, &r, act);
	ingest_owe_if_due(g, s);
}

void ingest_fault(struct ingest *g, int32_t pid, uint64_t addr, uint32_t flags)
{
	struct pts_fault r = {
		.h = { .type = PTS_FAULT, .size = sizeof(r), .time_ns = now_ns() },
		.pid = pid, .flags = flags, .addr = addr,
	};
	apply(g, pid, 0, &r, NULL);
}

void ingest_fault_mode(struct ingest *g, int32_t pid, uint32_t mode, int err)
{
	struct pts_fault_mode r = {
		.h = { .type = PTS_FAULT_MODE, .size = sizeof(r), .time_ns = now_ns() },
		.pid = pid, .mode = mode, .err = err,
	};
	apply(g, pid, 0, &r, NULL);
}

void ingest_zero_page(struct ingest *g, bool zero_page)
{
	struct pts_zero_page r = {
		.h = { .type = PTS_ZERO_PAGE, .size = sizeof(r), .time_ns = now_ns() },
		.zero_page = zero_page,
	};
	apply(g, 0, 0, &r, NULL);
}

void ingest_run_info(struct ingest *g, const struct pts_run_info *info)
{
	struct pts_run_info r = *info;
	r.h = (struct pts_hdr){ .type = PTS_RUN_INFO, .size = sizeof(r),
				.time_ns = now_ns() };
	apply(g, 0, 0, &r, NULL);
}

int ingest_replay(struct ingest *g, int32_t pid, uint32_t conn,
		  const void *rec, size_t len)
{
	union aligned_rec r;
	ingest_owed_forget(g);
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
	apply(g, pid, conn, &r, NULL);
	return 0;
}

void ingest_cut_short(struct ingest *g, const char *why, bool torn)
{
	snprintf(g->stream.cut_why, sizeof(g->stream.cut_why), "%s", why);
	g->stream.cut_running = g->nsess;
	g->stream.cut_torn = torn;
}

void ingest_reading_record(struct ingest *g, int32_t pid, const void *rec)
{
	apply(g, pid, 0, rec, NULL);
}

bool ingest_object_named(const struct ingest *g,
			 const struct mm_object_id *id)
{
	return ingest_object_name(g, id);
}

struct ranges_walk {
	int (*fn)(const struct ingest_range *r, void *arg);
	void *arg;
};

static int range_of_vma(const struct mm_vma_info *v, void *arg)
{
	const struct ranges_walk *w = arg;
	bool hugetlb = v->obj.kind == MM_OBJ_HUGETLB;
	struct ingest_range r = {
		.start = v->start, .end = v->end,
		.dev = v->obj.dev, .ino = v->obj.ino,
		.huge_shift = hugetlb ? v->huge_shift : 0,
		.shared_memory = (v->flags & MM_VMA_SHARED) &&
				 (v->obj.kind == MM_OBJ_SHMEM || hugetlb),
	};
	return w->fn(&r, w->arg);
}

int ingest_ranges_of(const struct ingest *g, int32_t pid, uint64_t start,
		     uint64_t end,
		     int (*fn)(const struct ingest_range *r, void *arg),
		     void *arg)
{
	struct ranges_walk w = { fn, arg };
	return mm_proc_vmas_in(g->ws->w[0], (uint32_t)pid, start, end,
			       range_of_vma, &w);
}
