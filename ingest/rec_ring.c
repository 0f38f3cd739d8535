/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include <limits.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rec_ring.h"

/* n bytes at offset pos of the data, wrapping around its end. */
static void take_bytes(const struct rec_ring_view *v, uint64_t pos, void *dst,
		       size_t n)
{
	size_t at = pos & (v->size - 1), first = v->size - at;

	if (first > n)
		first = n;
	memcpy(dst, v->data + at, first);
	memcpy((unsigned char *)dst + first, v->data, n - first);
}

enum rec_ring_next rec_ring_next(struct rec_ring_view *v, uint64_t head,
				 unsigned char *out, size_t *len)
{
	uint64_t avail = head - v->tail;
	struct pts_hdr h;

	if (head == v->tail)
		return REC_RING_EMPTY;
	/* Behind tail, or more than the ring holds, or not on a record's
	 * alignment: no producer that keeps the rules says so. */
	if (head < v->tail || avail > v->size || avail % PTS_RING_ALIGN ||
	    avail < sizeof(h))
		return REC_RING_BAD;
	take_bytes(v, v->tail, &h, sizeof(h));
	uint64_t need = rec_ring_span(h.size);
	if (h.size < sizeof(h) || h.size > PTS_REC_MAX || need > avail)
		return REC_RING_BAD;
	/* The header as checked, not read again: its size is the copy's. */
	memcpy(out, &h, sizeof(h));
	take_bytes(v, v->tail + sizeof(h), out + sizeof(h), h.size - sizeof(h));
	*len = h.size;
	v->tail += need;
	return REC_RING_RECORD;
}

void rec_ring_give_back(struct pts_ring *r, uint64_t tail)
{
	__atomic_store_n(&r->tail, tail, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!__atomic_exchange_n(&r->room_wanted, 0, __ATOMIC_ACQ_REL))
		return;
	__atomic_fetch_add(&r->tail_wake, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &r->tail_wake, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}
