/* SPDX-License-Identifier: MIT */
/*
 * Numbering, stamping and sending records, under the lock.  A record the
 * socket has no room for is dropped and counted (its sequence number stays
 * used, so the daemon sees the gap); the count goes out as PTS_LOST before
 * the next record that can be sent.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <time.h>

#include "shim.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

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

static bool send_one(struct pts_hdr *h, size_t size, const struct shim_call *c,
		     int pass_fd)
{
	struct iovec iov[2] = {
		{ h, size },
		{ c ? (void *)c->frames : NULL, h->size - size },
	};
	int err = -conn_send(iov, 2, pass_fd);

	if (!err)
		return true;
	if (err == EAGAIN || err == ENOBUFS) {
		shim_proc.lost++;
		return false;
	}
	shim_quiet("the connection failed", err == EPIPE || err == ECONNRESET ||
					     err == ECONNREFUSED || err == ENOTCONN);
	return false;
}

void rec_send(struct shim_call *c, uint16_t type, struct pts_hdr *h,
	      size_t size, int pass_fd)
{
	if (!atomic_load(&shim_proc.active))
		return;
	if (!conn_is_ours()) {
		shim_quiet("the program took the connection's fd", false);
		return;
	}
	if (shim_proc.lost) {
		/* A failed PTS_LOST counts itself in. */
		struct pts_lost lost = { .records = shim_proc.lost };
		stamp(&lost.h, PTS_LOST, sizeof(lost), NULL);
		if (send_one(&lost.h, sizeof(lost), NULL, -1))
			shim_proc.lost -= lost.records;
		if (!atomic_load(&shim_proc.active))
			return;
	}
	stamp(h, type, size, c);
	send_one(h, size, c, pass_fd);
}

void shim_quiet(const char *why, bool daemon_gone)
{
	if (daemon_gone)
		shim_proc.daemon_gone = true;
	if (atomic_exchange(&shim_proc.active, false))
		shim_say("going quiet:", why, -1);
}
