/* SPDX-License-Identifier: MIT */
/*
 * The daemon's word to the shims that it is behind (pts_ring.behind,
 * docs/wire-protocol.md).  A process waits at its EXIT until the daemon
 * has read it, so a program that makes processes faster than the daemon
 * reads them piles them up there: PostgreSQL's backends count as
 * connections until they end, and pgbench -C (sanitized, on a loaded
 * machine) had 243 alive at once and was refused ("too many clients").
 * While the daemon is behind, every ring says so, and a process about to
 * make another waits for it to catch up (ring_wait_caught_up in the shim).
 * It is behind
 * - once a batch of readings (a reading of every process, say) has kept
 *   it BEHIND_NS from everything else, until the batch ends: it answers
 *   no process meanwhile;
 * - once an EXIT waited BEHIND_NS or more for its ack, until one waits
 *   less than half that, or the daemon has caught up with all it knows
 *   of (it is about to wait for more).
 */
#ifndef PTSHARED_BEHIND_H
#define PTSHARED_BEHIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conns.h"

struct behind {
	bool batch;    /* in a long batch of readings */
	bool lagging;  /* the EXITs wait long */
	bool said;     /* what the rings say */
};

/* A batch of readings has run ran_ns so far; it ended. */
void behind_batch_ran(struct behind *b, struct conns *cs, uint64_t ran_ns);
void behind_batch_end(struct behind *b, struct conns *cs);
/* An EXIT's ack went out, waited_ns after the process sent it. */
void behind_exit_waited(struct behind *b, struct conns *cs, uint64_t waited_ns);
/* The daemon has nothing left to do (it is about to wait for more). */
void behind_idle(struct behind *b, struct conns *cs);
/* A ring just mapped says what the others do. */
void behind_ring_new(const struct behind *b, struct conn *c);

#endif
