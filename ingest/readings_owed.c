/* SPDX-License-Identifier: MIT */
/*
 * The readings of /proc the ingest owes, handed to its caller in order
 * (ingest_reading_next), which makes each and feeds its records back in
 * (ingest_reading_record).  The ingest never reads /proc itself: a
 * reading is an input, made by the daemon (daemon/readings.c) as a
 * replay takes it from the trace.  A replay asks for none: what it was
 * owed is forgotten at its next record.
 */
#include <stdlib.h>

#include "ingest_internal.h"
#include "lib/clock.h"

/* Reading every process takes at most 1/FULL_READ_SHARE of the daemon's
 * time: a thousand processes take a second or more to read, and every
 * connection waits meanwhile. */
#define FULL_READ_SHARE 4

static void owe(struct ingest *g, int32_t pid, uint32_t reason, int kind)
{
	if (g->next_owed && g->next_owed == g->nowed)
		g->nowed = g->next_owed = 0;
	if (grow_array((void **)&g->owed, &g->cap_owed, g->nowed + 1,
		       sizeof(*g->owed))) {
		ingest_out_of_memory(g);
		return;
	}
	g->owed[g->nowed++] = (struct owed){ pid, reason, kind };
}

void ingest_owe(struct ingest *g, const struct session *s, uint32_t reason)
{
	owe(g, s->pid, reason, OWED_ONE);
}

void ingest_owe_if_due(struct ingest *g, struct session *s)
{
	if (ingest_reading_may(s))
		owe(g, s->pid, PTS_CK_RESYNC, OWED_ONE);
}

void ingest_owed_forget(struct ingest *g)
{
	g->nowed = g->next_owed = 0;
	g->nwaiting = 0;
	g->full_read_open = false;
}

/*
 * A new image (connected, or exec'd) that runs on without waiting for its
 * HELLO's ack is read at its first record, its EXIT (that reading is then
 * its only one: a /bin/true in a shell loop is read once, not twice), its
 * kick (a fork waits for its reading), a reading of every process, or
 * FIRST_READ_WAIT_NS after its HELLO, whichever comes first: the daemon
 * answers the next process's HELLO meanwhile rather than after this one's
 * reading.  Until then the worlds hold it with no mapping (docs/daemon.md,
 * *The loop*).
 */
#define FIRST_READ_WAIT_NS (2 * 1000 * 1000)

void ingest_owe_later(struct ingest *g, struct session *s, uint32_t reason)
{
	if (grow_array((void **)&g->waiting, &g->cap_waiting, g->nwaiting + 1,
		       sizeof(*g->waiting))) {
		ingest_owe(g, s, reason);
		return;
	}
	g->waiting[g->nwaiting++] = s->pid;
	s->first_read_ns = now_ns();
	s->first_read_reason = reason;
}

/*
 * A forked child copied from its parent's model, whole already, is read
 * first when it is asked to be (a kick: its exec waits for that reading; a
 * full ring kicks too), at its EXIT, or in a reading of every process, with
 * no time limit and not at its first record: a PostgreSQL backend forked
 * per connection is read once, at its end, not at both.  One that handed a
 * userfaultfd over is read now, its registrations following that reading
 * (docs/faults.md), and so is one the worlds hold nothing of (its parent
 * was not in them: its first reading waits for nothing).
 */
void ingest_owe_copy_later(struct session *c)
{
	c->first_read_ns = FIRST_READ_ASKED;
	c->first_read_reason = PTS_CK_FORK;
}

void ingest_owe_forked(struct ingest *g, struct session *s)
{
	if (s->first_read_ns && !s->uffd)
		return;
	s->first_read_ns = 0;
	ingest_owe(g, s, PTS_CK_FORK);
}

void ingest_owe_now(struct ingest *g, struct session *s)
{
	if (!s->first_read_ns)
		return;
	s->first_read_ns = 0;
	ingest_owe(g, s, s->first_read_reason);
}

void ingest_reading_asked(struct ingest *g, int32_t pid)
{
	struct session *s = ingest_session_of(g, pid);
	if (s)
		ingest_owe_now(g, s);
}

bool ingest_readings_waiting(struct ingest *g, uint64_t now, uint64_t *next_ns)
{
	bool owed = false;
	size_t kept = 0;
	*next_ns = 0;
	for (size_t i = 0; i < g->nwaiting; i++) {
		struct session *s = ingest_session_of(g, g->waiting[i]);
		if (!s || !s->first_read_ns || s->first_read_ns == FIRST_READ_ASKED)
			continue; /* read, or gone (its pid a copy's now), since */
		uint64_t due = s->first_read_ns + FIRST_READ_WAIT_NS;
		if (due <= now) {
			ingest_owe_now(g, s);
			owed = true;
			continue;
		}
		if (!*next_ns || due < *next_ns)
			*next_ns = due;
		g->waiting[kept++] = g->waiting[i];
	}
	g->nwaiting = kept;
	return owed;
}

/*
 * Every process, now: the timer's checkpoint, and the end of a run's.  A
 * process whose image did not say HELLO after an exec (a static or setuid
 * program) is followed from /proc alone; a forked child whose parent's
 * PTS_FORK never came enters the model as it is now; a process gone
 * without a connection to tell us ends, or leaves the worlds while a half
 * of its fork is still to come (see ingest_session_end_if_over).
 */
void ingest_checkpoint_all(struct ingest *g, uint32_t reason)
{
	uint64_t start = now_ns();
	if (reason == PTS_CK_TIMER && g->full_read_ns &&
	    start - g->full_read_ns < FULL_READ_SHARE * g->full_read_cost_ns)
		return;
	g->full_read_ns = start;
	g->full_read_open = true;
	for (size_t i = 0; i < g->nsess; i++)
		owe(g, g->sess[i]->pid, reason, OWED_ALL_ADOPT);
}

/* An entry of a full read is looked at only when the readings before it
 * are made (a reading may end a process, or adopt one): a forked child
 * whose parent's PTS_FORK never came is adopted first (see adopt()), then
 * read; one that said PTS_EXIT was read then, its last (a reading now
 * would see its address space torn down). */
/* Whether a world copies shared tables on writes (cow-pte): only then is
 * reading the written pages worth its cost (docs/procfs.md). */
static bool wants_written(const struct ingest *g)
{
	for (size_t k = 0; k < g->ws->n; k++)
		if (g->ws->policy[k].cow_pte)
			return true;
	return false;
}

/* The mappings s had at its last reading, or its parent's. */
static size_t vmas_of(struct ingest *g, const struct session *s)
{
	const struct session *p;
	if (!s->ck.nvma_last && s->ppid && (p = ingest_session_of(g, s->ppid)))
		return p->ck.nvma_last;
	return s->ck.nvma_last;
}

bool ingest_reading_next(struct ingest *g, struct ingest_reading *out)
{
	while (g->next_owed < g->nowed) {
		struct owed *o = &g->owed[g->next_owed];
		struct session *s = ingest_session_of(g, o->pid);
		if (!s || o->kind == OWED_TAKEN) {
			g->next_owed++;
			continue;
		}
		*out = (struct ingest_reading){ s->pid, o->reason, s->uid,
						s->last.proc.cgroup,
						wants_written(g), vmas_of(g, s),
						s->ck.rest_last };
		if (o->kind == OWED_ALL_ADOPT) {
			o->kind = OWED_ALL; /* the same entry again, after */
			if (s->hello_seq && !s->in_model) {
				out->reason = PTS_CK_RESYNC;
				return true;
			}
		}
		g->next_owed++;
		if (o->kind == OWED_ONE || (s->in_model && !s->exiting))
			return true;
	}
	if (g->full_read_open) {
		g->full_read_open = false;
		g->full_read_cost_ns = now_ns() - g->full_read_ns;
	}
	g->nowed = g->next_owed = 0;
	return false;
}

bool ingest_reading_all(const struct ingest *g)
{
	return g->full_read_open;
}

/* Checked once the process's ring is drained, just before the reading.
 * The readings owed for the same process since (its EXIT came meanwhile,
 * its records asked for a resync) are this one: it sees what they would,
 * every record before it applied.  Made later, each would drain records
 * that owe the next, and a process writing at the daemon's pace would
 * hold the daemon in a chain of readings none of which is made.  The
 * reading takes the last one's reason, but a resync's: any reading is
 * one.  (A child that exec'd is still read: its new image may never say
 * HELLO, a static one.) */
bool ingest_reading_wanted(struct ingest *g, struct ingest_reading *r)
{
	const struct session *s = ingest_session_of(g, r->pid);
	if (!s)
		return false;
	r->rest = s->ck.rest_last; /* none if the ring held records */
	for (size_t i = g->next_owed; i < g->nowed; i++) {
		struct owed *o = &g->owed[i];
		if (o->pid != r->pid || o->kind != OWED_ONE)
			continue;
		if (o->reason != PTS_CK_RESYNC)
			r->reason = o->reason;
		o->kind = OWED_TAKEN;
	}
	return true;
}
