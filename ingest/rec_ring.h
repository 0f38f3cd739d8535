/* SPDX-License-Identifier: MIT */
/*
 * A record ring (include/ptshare/wire.h, docs/wire-protocol.md, The record
 * ring), both ends.  Writing: inline, for the shim (which links nothing of
 * ours) and the benchmarks' clients.  Reading: the records a shim
 * published, one at a time, each copied out of the shared memory before
 * anything looks at it (the process may write there meanwhile).  Only the
 * reader's own tail is trusted; head and every size come from the process.
 */
#ifndef PTSHARE_REC_RING_H
#define PTSHARE_REC_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>

#include "ptshare/wire.h"

enum rec_ring_next {
	REC_RING_EMPTY,  /* tail has reached head */
	REC_RING_RECORD, /* one record copied, tail past it */
	REC_RING_BAD,    /* head, or the record's size, cannot be */
};

/* A ring of data_size bytes (a power of two, at least PTS_REC_MAX) made
 * as the shim makes one (shim/ring.c: a sealed memfd, mapped shared), for
 * the clients of the benchmarks and tests, which use libc: its memfd, to
 * hand over with PTS_HELLO, and its mapping in *ring; or -1 (errno). */
int rec_ring_memfd(uint32_t data_size, struct pts_ring **ring);

/* A ring's data as the reader sees it: size bytes (a power of two, at
 * least PTS_REC_MAX), and how far it took them. */
struct rec_ring_view {
	const unsigned char *data;
	uint32_t size;
	uint64_t tail;
};

/* The record at v->tail, given that the producer published up to head:
 * copied into out (PTS_REC_MAX bytes), its length in *len. */
enum rec_ring_next rec_ring_next(struct rec_ring_view *v, uint64_t head,
				 unsigned char *out, size_t *len);

/* The reader's side of the room: tail stored (release), then the
 * producer woken if it waits for room.  It stores room_wanted, then reads
 * tail (rec_ring_ask_room); we store tail, then read room_wanted: one of
 * us sees the other. */
void rec_ring_give_back(struct pts_ring *r, uint64_t tail);

/* The bytes a record of len bytes takes in a ring. */
static inline uint64_t rec_ring_span(uint64_t len)
{
	return (len + PTS_RING_ALIGN - 1) & ~(uint64_t)(PTS_RING_ALIGN - 1);
}

/* The bytes free for a producer whose head is head. */
static inline uint64_t rec_ring_room(const struct pts_ring *r, uint64_t head)
{
	return r->data_size - (head - __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE));
}

/* A producer about to sleep for need bytes of room: asks the reader to
 * wake tail_wake when it moves tail.  Whether the room is there after all
 * (no sleep then); else *seen is the value to sleep on (FUTEX_WAIT,
 * shared: the reader is another process). */
static inline bool rec_ring_ask_room(struct pts_ring *r, uint64_t head,
				     uint64_t need, uint32_t *seen)
{
	*seen = __atomic_load_n(&r->tail_wake, __ATOMIC_ACQUIRE);
	__atomic_store_n(&r->room_wanted, 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return rec_ring_room(r, head) >= need;
}

/* The record in iov[0..n) written at head, wrapping around the data's
 * end, and published (release): the new head.  Room checked first. */
static inline uint64_t rec_ring_write(struct pts_ring *r, uint64_t head,
				      const struct iovec *iov, int n)
{
	unsigned char *data = (unsigned char *)r + PTS_RING_DATA;
	uint64_t pos = head;
	for (int i = 0; i < n; i++) {
		size_t len = iov[i].iov_len;
		size_t at = pos & (r->data_size - 1), first = r->data_size - at;
		if (first > len)
			first = len;
		memcpy(data + at, iov[i].iov_base, first);
		memcpy(data, (const unsigned char *)iov[i].iov_base + first,
		       len - first);
		pos += len;
	}
	head += rec_ring_span(pos - head);
	__atomic_store_n(&r->head, head, __ATOMIC_RELEASE);
	return head;
}

#endif
