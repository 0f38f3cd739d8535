/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/mman.h>
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

int rec_ring_memfd(uint32_t data_size, struct pts_ring **ring)
{
	size_t len = PTS_RING_DATA + (size_t)data_size;
	int fd = memfd_create("ptshare-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -1;
	void *p = MAP_FAILED;
	if (!ftruncate(fd, (off_t)len) &&
	    !fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL))
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		close(fd);
		return -1;
	}
	*ring = p;
	(*ring)->magic = PTS_RING_MAGIC;
	(*ring)->data_size = data_size;
	return fd;
}
