/* SPDX-License-Identifier: MIT */
#include "behind.h"

/* Work waiting this long without a break: a reading of every process of a
 * server with 32 clients takes less (about 70 processes, 1 ms each in a
 * release build).  A sanitized daemon beside the test suite never got a
 * break while pgbench -C ran. */
#define BEHIND_NS (100 * 1000 * 1000ull)

static void say(struct behind *b, struct conns *cs, bool behind)
{
	if (behind == b->said)
		return;
	b->said = behind;
	for (size_t i = 0; i < cs->nopen; i++)
		if (cs->open[i]->rr.hdr)
			rec_ring_behind(&cs->open[i]->rr, behind);
}

void behind_check(struct behind *b, struct conns *cs, bool idle, uint64_t now)
{
	if (idle || !b->caught_up_ns)
		b->caught_up_ns = now;
	say(b, cs, now - b->caught_up_ns >= BEHIND_NS);
}

void behind_ring_new(const struct behind *b, struct conn *c)
{
	if (b->said)
		rec_ring_behind(&c->rr, true);
}
