/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "rec_ring.h"

/* Yields to the process first (it runs on the other core, or needs ours
 * to end its call), then naps. */
#define HOLD_YIELDS 64
#define HOLD_NAP_NS 50000

/* The largest ring taken: the shim makes at most 1 GiB (its ring= option). */
#define DATA_MAX (1ull << 30)

int rec_ring_map(struct rec_ring *r, int fd)
{
	struct stat st;
	int seals = fcntl(fd, F_GET_SEALS);

	if (fstat(fd, &st))
		return -errno;
	uint64_t data = (uint64_t)st.st_size - PTS_RING_DATA;
	if (seals < 0 || !(seals & F_SEAL_SHRINK) || !S_ISREG(st.st_mode) ||
	    st.st_size < PTS_RING_DATA + PTS_REC_MAX || data > DATA_MAX ||
	    (data & (data - 1)))
		return -EINVAL;
	void *p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE,
		       MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	struct pts_ring *h = p;
	if (h->magic != PTS_RING_MAGIC || h->data_size != data) {
		munmap(p, (size_t)st.st_size);
		return -EINVAL;
	}
	*r = (struct rec_ring){
		.hdr = h,
		.view = { .data = (unsigned char *)p + PTS_RING_DATA,
			  .size = (uint32_t)data },
		.dev = st.st_dev, .ino = st.st_ino,
	};
	return 0;
}

void rec_ring_unmap(struct rec_ring *r)
{
	if (r->hdr)
		munmap(r->hdr, PTS_RING_DATA + (size_t)r->view.size);
	r->hdr = NULL;
}

uint64_t rec_ring_head(const struct rec_ring *r)
{
	return __atomic_load_n(&r->hdr->head, __ATOMIC_ACQUIRE);
}

bool rec_ring_pending(const struct rec_ring *r)
{
	return r->hdr && rec_ring_head(r) != r->view.tail;
}

void rec_ring_release(struct rec_ring *r)
{
	rec_ring_give_back(r->hdr, r->view.tail);
}

/* We store hold, then read calls; the shim makes calls odd, then reads
 * hold (both sequentially consistent): one of us sees the other. */
void rec_ring_hold(struct rec_ring *r, uint32_t *mark)
{
	uint64_t until = now_ns() + REC_RING_HOLD_MS * 1000000ull;

	__atomic_store_n(&r->hdr->hold, 1, __ATOMIC_SEQ_CST);
	for (unsigned i = 0;; i++) {
		*mark = __atomic_load_n(&r->hdr->calls, __ATOMIC_SEQ_CST);
		if (!(*mark & 1) || now_ns() >= until)
			return;
		if (i < HOLD_YIELDS) {
			sched_yield();
		} else {
			struct timespec nap = { 0, HOLD_NAP_NS };
			nanosleep(&nap, NULL);
		}
	}
}

bool rec_ring_let_go(struct rec_ring *r, uint32_t mark)
{
	uint32_t now = __atomic_load_n(&r->hdr->calls, __ATOMIC_SEQ_CST);

	__atomic_store_n(&r->hdr->hold, 0, __ATOMIC_SEQ_CST);
	syscall(SYS_futex, &r->hdr->hold, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
	if (!__atomic_exchange_n(&r->hdr->read, 1, __ATOMIC_SEQ_CST))
		syscall(SYS_futex, &r->hdr->read, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
	return now == mark && !(mark & 1);
}

void rec_ring_behind(struct rec_ring *r, bool behind)
{
	if (behind)
		__atomic_store_n(&r->hdr->behind, 1, __ATOMIC_SEQ_CST);
	else if (__atomic_exchange_n(&r->hdr->behind, 0, __ATOMIC_SEQ_CST) == 2)
		syscall(SYS_futex, &r->hdr->behind, FUTEX_WAKE, INT_MAX, NULL,
			NULL, 0);
}
