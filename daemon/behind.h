/* SPDX-License-Identifier: MIT */
/*
 * The daemon's word to the shims that it is behind (pts_ring.behind,
 * docs/wire-protocol.md).  A process waits at its EXIT until the daemon
 * has read it, so a program that makes processes faster than the daemon
 * reads them piles them up there: PostgreSQL's backends count as
 * connections until they end, and pgbench -C (sanitized, beside the test
 * suite) had 243 alive at once and was refused ("too many clients").
 * While the daemon is behind, every ring says so, and a process about to
 * make another waits for it to catch up (ring_wait_caught_up in the shim).
 *
 * It is behind once it has had work waiting for BEHIND_NS without a
 * break, until it has done all it knows of (it is about to wait for
 * more).  Not by how long an EXIT waited: the first process to exit waits
 * for a reading of every process (the peak's), and a daemon that keeps up
 * with a PostgreSQL server of 32 clients made forks wait 16% of the time
 * by that rule (0.747 of plain's TPS against 0.787).
 */
#ifndef PTSHARED_BEHIND_H
#define PTSHARED_BEHIND_H

#include <stdbool.h>
#include <stdint.h>

#include "conns.h"

struct behind {
	uint64_t caught_up_ns; /* when it last had nothing to do; 0: never */
	bool said;             /* what the rings say */
};

/* At now, the daemon works on, or has nothing left to do (idle: it is
 * about to wait for more). */
void behind_check(struct behind *b, struct conns *cs, bool idle, uint64_t now);
/* c's ring, just mapped, says what the others do. */
void behind_ring_new(const struct behind *b, struct conn *c);

#endif
