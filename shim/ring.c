/* SPDX-License-Identifier: MIT */
/*
 * The record ring (docs/wire-protocol.md, The record ring): shared memory
 * the records after HELLO go into with no system call, which the daemon
 * drains at every turn of its loop.  It is kicked (PTS_RING_KICK on the
 * socket) only when the shim waits for it (an ACK, room) or wants it soon
 * (past half full, a fork with a userfaultfd).  Written under the lock, by
 * one thread at a time: the shim is its only producer.
 *
 * A traced call is marked in the ring (calls odd) from before its real
 * call to its record published, and does not start while the daemon holds
 * the process for a reading of its /proc (hold): the reading then shows
 * what the records the daemon has applied say, no more and no less.
 *
 * The mapping is MADV_DONTFORK: a forked child has none of its parent's
 * ring, and makes its own.  Without a ring (memfd_create refused, address
 * space short, ring=0) records go by the socket, as before it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "shim.h"
#include "ingest/rec_ring.h"
#include "lib/clock.h"

/* A wait for room sleeps this long at most between kicks: a kick may
 * have found the socket full. */
#define ROOM_NAP_MS 10

static uint64_t tail_now(const struct pts_ring *r)
{
	return __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
}

/* The data size: the option's KiB, rounded down to a power of two. */
static uint32_t data_size(void)
{
	uint64_t want = (uint64_t)shim_cfg.ring_kib << 10, size = PTS_REC_MAX;

	if (want < PTS_REC_MAX)
		return 0;
	while (size * 2 <= want && size < (1u << 30))
		size *= 2;
	return (uint32_t)size;
}

int ring_make(void)
{
	uint32_t size = data_size();
	size_t len = PTS_RING_DATA + (size_t)size;

	if (!size)
		return -1;
	long fd = syscall(SYS_memfd_create, "ptshare-ring",
			  MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -1;
	void *p = MAP_FAILED;
	if (!syscall(SYS_ftruncate, fd, (long)len) &&
	    !syscall(SYS_fcntl, fd, F_ADD_SEALS,
		     F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL))
		p = (void *)syscall(SYS_mmap, NULL, len, PROT_READ | PROT_WRITE,
				    MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		syscall(SYS_close, fd);
		return -1;
	}
	syscall(SYS_madvise, p, len, MADV_DONTFORK);
	struct pts_ring *r = p;
	r->magic = PTS_RING_MAGIC;
	r->data_size = size;
	shim_proc.ring = r;
	shim_proc.ring_head = 0;
	return (int)fd;
}

void ring_drop(void)
{
	struct pts_ring *r = shim_proc.ring;

	shim_proc.ring = NULL;
	if (r)
		syscall(SYS_munmap, r, PTS_RING_DATA + (size_t)r->data_size);
}

void ring_kick(void)
{
	struct pts_hdr k = { .type = PTS_RING_KICK, .size = sizeof(k) };
	struct iovec iov = { &k, sizeof(k) };

	conn_send(&iov, 1, NULL, false);
}

void ring_kick_if_ours(void)
{
	if (conn_is_ours())
		ring_kick();
	else
		shim_quiet("the program took the connection's fd", false);
}

bool ring_unread(void)
{
	return tail_now(shim_proc.ring) != shim_proc.ring_head;
}

static uint64_t room(const struct pts_ring *r)
{
	return rec_ring_room(r, shim_proc.ring_head);
}

/*
 * Room for need bytes, kicking the daemon and sleeping on tail_wake until
 * the deadline.  A daemon that took nothing in the whole wait is late
 * (conn.c); one that drains, but slower than we write, is not.
 */
static bool wait_room(struct pts_ring *r, uint64_t need)
{
	int64_t deadline = conn_deadline();
	uint64_t tail0 = tail_now(r);

	for (;;) {
		uint32_t seen;
		if (rec_ring_ask_room(r, shim_proc.ring_head, need, &seen))
			return true;
		ring_kick_if_ours();
		int64_t left = deadline - now_ms();
		if (left <= 0 || !atomic_load(&shim_proc.active)) {
			if (tail_now(r) == tail0)
				conn_late();
			return false;
		}
		if (left > ROOM_NAP_MS)
			left = ROOM_NAP_MS;
		struct timespec ts = { 0, left * 1000000L };
		syscall(SYS_futex, &r->tail_wake, FUTEX_WAIT, seen, &ts, NULL, 0);
	}
}

int ring_put(const struct iovec *iov, int n)
{
	struct pts_ring *r = shim_proc.ring;
	uint64_t len = 0;

	for (int i = 0; i < n; i++)
		len += iov[i].iov_len;
	uint64_t need = rec_ring_span(len), free = room(r);
	uint64_t before = r->data_size - free;
	if (free < need && !wait_room(r, need)) {
		return -EAGAIN;
	}
	shim_proc.ring_head = rec_ring_write(r, shim_proc.ring_head, iov, n);
	/* Past half full: the daemon takes them now, not at its next turn. */
	if (before < r->data_size / 2 && before + need >= r->data_size / 2)
		ring_kick_if_ours();
	return 0;
}

/* Sleeps on the shared futex word while it holds val, ROOM_NAP_MS at a
 * time, until the deadline or the daemon is gone (checked after each nap:
 * a daemon killed while it held the word never changes it): whether it
 * changed. */
static bool wait_while(uint32_t *word, uint32_t val, int64_t deadline)
{
	for (bool napped = false;
	     __atomic_load_n(word, __ATOMIC_ACQUIRE) == val; napped = true) {
		int64_t left = deadline - now_ms();
		if (left <= 0 || !atomic_load(&shim_proc.active) ||
		    (napped && conn_gone()))
			return false;
		if (left > ROOM_NAP_MS)
			left = ROOM_NAP_MS;
		struct timespec ts = { 0, left * 1000000L };
		syscall(SYS_futex, word, FUTEX_WAIT, val, &ts, NULL, 0);
	}
	return true;
}

/* The daemon's reading ends within its own bound; a daemon stopped or
 * killed while holding us is waited for once, within wait_ms, then no
 * more (late): the call goes on, and the daemon sees calls move. */
static void wait_hold(struct pts_ring *r)
{
	if (!wait_while(&r->hold, 1, conn_deadline()))
		conn_late();
}

/* calls made odd, then hold read; the daemon stores hold, then reads
 * calls (both sequentially consistent): one of us sees the other. */
void ring_call_begin(void)
{
	struct pts_ring *r = shim_proc.ring;

	if (!r || (r->calls & 1))
		return;
	for (;;) {
		uint32_t even = r->calls;
		__atomic_store_n(&r->calls, even + 1, __ATOMIC_SEQ_CST);
		if (!__atomic_load_n(&r->hold, __ATOMIC_SEQ_CST) ||
		    shim_proc.daemon_late)
			return;
		__atomic_store_n(&r->calls, even, __ATOMIC_RELEASE);
		wait_hold(r);
	}
}

void ring_call_end(void)
{
	struct pts_ring *r = shim_proc.ring;

	if (r && (r->calls & 1))
		__atomic_store_n(&r->calls, r->calls + 1, __ATOMIC_RELEASE);
}

/* A child copies its parent's model: before the first reading of this
 * image has made that whole, a fork waits for it (kicked, within
 * wait_ms, as for an ACK: a late daemon is not waited for), inside the
 * critical section; so does a forked child's exec (exec.c).  Once it is
 * read, which is almost always, this costs a load. */
void ring_wait_read(void)
{
	struct pts_ring *r = shim_proc.ring;
	struct shim_call c;
	int err = errno;

	if (!r || __atomic_load_n(&r->read, __ATOMIC_ACQUIRE))
		return;
	section_begin(&c);
	ring_kick_if_ours();
	if (!wait_while(&r->read, 0, conn_deadline()))
		conn_unread_late();
	section_end(&c);
	errno = err;
}

/* A new process waits this long at most for a daemon that is behind: one
 * that never catches up (saturated by a program's records) costs each
 * fork no more, and makes it wait for nothing else (not late). */
#define CAUGHT_UP_WAIT_MS 100

/*
 * A process made while the daemon is behind (work waiting without a break,
 * processes waiting for it at their exits: the ring's behind) waits for it
 * to catch up, CAUGHT_UP_WAIT_MS at most (wait_ms if less), and no longer
 * once the daemon is gone.  Else a program that makes processes faster
 * than the daemon reads them piles them up at their exits: PostgreSQL,
 * whose backends still count as connections there, refused new ones
 * (pgbench -C, sanitized, on a loaded machine).  A load when it is not.
 * The caller is the process the state is of: a child of a raw clone has
 * no ring mapped (MADV_DONTFORK), and a vfork child's exec does not wait,
 * a vfork child not being told from one.
 */
void ring_wait_caught_up(void)
{
	struct pts_ring *r = shim_proc.ring;
	uint32_t seen = 1;

	if (!r || shim_proc.daemon_late ||
	    !__atomic_load_n(&r->behind, __ATOMIC_ACQUIRE))
		return;
	/* 2: the daemon wakes the word as it clears it. */
	if (!__atomic_compare_exchange_n(&r->behind, &seen, 2, false,
					 __ATOMIC_SEQ_CST, __ATOMIC_ACQUIRE) &&
	    seen != 2)
		return;
	int err = errno;
	int64_t deadline = conn_deadline(), cap = now_ms() + CAUGHT_UP_WAIT_MS;
	wait_while(&r->behind, 2, deadline < cap ? deadline : cap);
	errno = err;
}
