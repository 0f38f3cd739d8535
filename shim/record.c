/* SPDX-License-Identifier: MIT */
/*
 * Numbering, stamping and sending records, under the lock.  A record the
 * socket has no room for is dropped and counted (its sequence number stays
 * used, so the daemon sees the gap); the count goes out as PTS_LOST before
 * the next record that can be sent.  A PTS_LOST that cannot be sent gives
 * its number back and is tried again with the next record.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/mman.h>
#include <time.h>

#include "shim.h"
#include "lib/clock.h"

static void stamp(struct pts_hdr *h, uint16_t type, size_t size,
		  const struct shim_call *c)
{
	uint16_t nframes = c ? c->nframes : 0;

	h->type = type;
	h->size = (uint16_t)(size + sizeof(c->frames[0]) * nframes);
	h->seq = ++shim_proc.seq;
	h->time_ns = now_ns();
	h->tid = (uint32_t)shim_tid();
	h->nframes = nframes;
	h->flags = c && c->failed ? PTS_F_FAILED : 0;
}

/* 0, or the errno of a send that failed.  Into the ring once HELLO has
 * brought it (a full one is waited for, bounded, whatever the record). */
static int send_one(struct pts_hdr *h, size_t size, const struct shim_call *c,
		    const struct fd_pass *pass, bool wait)
{
	struct iovec iov[2] = {
		{ h, size },
		{ c ? (void *)c->frames : NULL, h->size - size },
	};

	if (shim_proc.ring && h->type != PTS_HELLO)
		return -ring_put(iov, 2);
	return -conn_send(iov, 2, pass, wait);
}

/* No room: the record is lost, and the daemon will see the gap.  Anything
 * else: the daemon is gone. */
static bool send_dropped(int err)
{
	if (err == EAGAIN || err == ENOBUFS)
		return true;
	shim_quiet("the connection failed", err == EPIPE || err == ECONNRESET ||
					     err == ECONNREFUSED || err == ENOTCONN);
	return false;
}

/* A record the daemon acts on at once, not at its next turn (a kick):
 * with a userfaultfd, a fork (the child, which has one too, waits for its
 * ACK until the daemon has the fork) and shared memory mapped while the
 * daemon may register it before its pages fault (docs/faults.md).  A
 * child without one runs on: the daemon comes to the fork in its turn,
 * which the child's HELLO starts anyway. */
static bool urgent(const struct pts_hdr *h, uint16_t type)
{
	if (!shim_proc.uffd_sent)
		return false;
	if (type == PTS_MMAP)
		return (((const struct pts_mmap *)h)->flags & MAP_TYPE) != MAP_PRIVATE;
	return type == PTS_FORK || type == PTS_SHMAT;
}

static bool send_numbered(struct shim_call *c, uint16_t type,
			  struct pts_hdr *h, size_t size,
			  const struct fd_pass *pass)
{
	/* HELLO and EXIT wait (within wait_ms) for room in the socket: the
	 * daemon acks them, the process waits for that ACK anyway, and EXIT's
	 * checkpoint is the process's last. */
	bool wait = type == PTS_HELLO || type == PTS_EXIT;

	if (!atomic_load(&shim_proc.active))
		return false;
	/* With a ring, the fd is checked where it is used (a kick), before
	 * a record that kicks, and before a FORK: one the daemon read after
	 * the program took the fd would name a child that says a plain
	 * HELLO. */
	if ((!shim_proc.ring || type == PTS_FORK || urgent(h, type)) &&
	    !conn_is_ours()) {
		shim_quiet("the program took the connection's fd", false);
		return false;
	}
	if (shim_proc.lost) {
		struct pts_lost lost = { .records = shim_proc.lost };
		stamp(&lost.h, PTS_LOST, sizeof(lost), NULL);
		int err = send_one(&lost.h, sizeof(lost), NULL, NULL, wait);
		if (!err) {
			shim_proc.lost = 0;
		} else {
			/* Its number goes to the next record: a gap in the
			 * numbers is records of calls, and nothing else. */
			shim_proc.seq--;
			if (!send_dropped(err))
				return false;
		}
	}
	stamp(h, type, size, c);
	int err = send_one(h, size, c, pass, wait);
	if (!err) {
		if (shim_proc.ring && urgent(h, type))
			ring_kick();
		return true;
	}
	if (send_dropped(err))
		shim_proc.lost++;
	return false;
}

/* The call is over once its record is published (or lost): a wait for
 * its ACK is no call the daemon's readings must wait for. */
bool rec_send(struct shim_call *c, uint16_t type, struct pts_hdr *h,
	      size_t size, const struct fd_pass *pass)
{
	bool sent = send_numbered(c, type, h, size, pass);

	ring_call_end();
	return sent;
}

/* Not from a vfork child: what it finds of its fds is not its parent's,
 * whose state it would end (owner.c); its call is just not sent. */
void shim_quiet(const char *why, bool daemon_gone)
{
	if (!shim_is_state_process())
		return;
	if (daemon_gone)
		shim_proc.daemon_gone = true;
	if (atomic_exchange(&shim_proc.active, false))
		shim_say("going quiet:", why, -1);
}
