/* SPDX-License-Identifier: MIT */
#include "behind.h"

/* A wait this long at an EXIT: the daemon reads the processes slower
 * than the program ends them.  One that keeps up answers a PostgreSQL
 * backend's in 1 to 3 ms. */
#define BEHIND_NS (20 * 1000 * 1000ull)

static void say(struct behind *b, struct conns *cs)
{
	bool now = b->batch || b->lagging;
	if (now == b->said)
		return;
	b->said = now;
	for (size_t i = 0; i < cs->nopen; i++)
		if (cs->open[i]->rr.hdr)
			rec_ring_behind(&cs->open[i]->rr, now);
}

void behind_batch_ran(struct behind *b, struct conns *cs, uint64_t ran_ns)
{
	if (b->batch || ran_ns < BEHIND_NS)
		return;
	b->batch = true;
	say(b, cs);
}

void behind_batch_end(struct behind *b, struct conns *cs)
{
	b->batch = false;
	say(b, cs);
}

void behind_exit_waited(struct behind *b, struct conns *cs, uint64_t waited_ns)
{
	b->lagging = waited_ns >= (b->lagging ? BEHIND_NS / 2 : BEHIND_NS);
	say(b, cs);
}

void behind_idle(struct behind *b, struct conns *cs)
{
	b->lagging = false;
	say(b, cs);
}

void behind_ring_new(const struct behind *b, struct conn *c)
{
	if (b->said && c->rr.hdr)
		rec_ring_behind(&c->rr, true);
}
