/* SPDX-License-Identifier: MIT */
/*
 * A process's record ring, as the daemon holds it (docs/wire-protocol.md,
 * The record ring): the memfd its HELLO brought, mapped here, read with
 * ingest/rec_ring.c.  The memory is the process's to write: only our tail
 * is trusted, and the memfd must be sealed against shrinking (else the
 * process could truncate it under our reads: SIGBUS).
 */
#ifndef PTSHARED_REC_RING_H
#define PTSHARED_REC_RING_H

#include <stdbool.h>
#include <stddef.h>

#include "ingest/rec_ring.h"

struct rec_ring {
	struct pts_ring *hdr;    /* NULL: the process has none */
	struct rec_ring_view view;
	uint64_t dev, ino;       /* the memfd's */
};

/* Maps the ring of memfd fd (not closed).  0, or -errno: EINVAL when it
 * is no ring (size, seals, magic). */
int rec_ring_map(struct rec_ring *r, int fd);
void rec_ring_unmap(struct rec_ring *r);
/* Where the process says it has written to. */
uint64_t rec_ring_head(const struct rec_ring *r);
/* Records published and not yet taken. */
bool rec_ring_pending(const struct rec_ring *r);
/* Gives the process back the room of what was taken, and wakes it if it
 * waits for room. */
void rec_ring_release(struct rec_ring *r);

/* Holds the process's traced calls for a reading of its /proc: hold
 * stored, then calls read until no call runs, for REC_RING_HOLD_MS at
 * most (a call may wait on us: a fault in a range our userfaultfd has).
 * *mark is what calls said last. */
#define REC_RING_HOLD_MS 20
void rec_ring_hold(struct rec_ring *r, uint32_t *mark);
/* Lets the calls go on, and a fork that waits for the process's first
 * reading; whether no call ran since mark (else the reading raced one). */
bool rec_ring_let_go(struct rec_ring *r, uint32_t mark);

/* Says the daemon is behind (behind.h), or no longer, then wakes a shim
 * that sleeps on it (docs/wire-protocol.md). */
void rec_ring_behind(struct rec_ring *r, bool behind);

#endif
