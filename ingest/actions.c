/* SPDX-License-Identifier: MIT */
/*
 * What a shim's record asks of the daemon besides the model: its ack, and
 * the registrations on the process's userfaultfd that the call it tells
 * of changed (docs/faults.md).  Decided once the record is known well
 * formed, whether it is applied now or held for its parent's PTS_FORK:
 * the kernel's registrations changed when the call was made.
 */
#include <errno.h>
#include <sys/mman.h>

#include "ingest_internal.h"
#include "lib/clock.h"

void ingest_action_ack(struct ingest_action *act, uint32_t conn,
		       uint32_t seq)
{
	if (!act || act->nack >= INGEST_MAX_ACKS)
		return;
	struct pts_ack *a = &act->ack[act->nack].rec;
	act->ack[act->nack++].conn = conn;
	*a = (struct pts_ack){
		.h = { .type = PTS_ACK, .size = sizeof(*a),
		       .time_ns = now_ns() },
		.acked_seq = seq,
	};
}

static void uffd_op(struct ingest_action *act, enum ingest_uffd_kind kind,
		    uint64_t start, uint64_t end)
{
	if (act->nuffd < INGEST_MAX_UFFD)
		act->uffd[act->nuffd++] = (struct ingest_uffd_op){
			.kind = kind, .start = start, .end = end,
		};
}

/* An mremap: without UFFD_FEATURE_EVENT_REMAP the kernel drops the
 * registration of what moves, to be registered again if it was.  One that
 * failed with EFAULT may have met a VMA our registrations split: ours
 * there is released, and the shim waits for an ACK to try again. */
static void mremap_actions(struct ingest_action *act, uint32_t conn,
			   const struct pts_mremap *m)
{
	if (m->h.flags & PTS_F_FAILED) {
		if (m->result_errno != EFAULT)
			return;
		uffd_op(act, INGEST_UFFD_RELEASE, m->old_addr,
			m->old_addr + m->old_len);
		ingest_action_ack(act, conn, m->h.seq);
		return;
	}
	uffd_op(act, INGEST_UFFD_MOVE, m->old_addr, m->old_addr + m->old_len);
	act->uffd[act->nuffd - 1].to = m->new_addr;
	act->uffd[act->nuffd - 1].to_end = m->new_addr + m->new_len;
}

void ingest_record_actions(struct ingest_action *act, uint32_t conn,
			      const struct pts_hdr *h)
{
	if (!act)
		return;
	if (h->type == PTS_HELLO) {
		const struct pts_hello *r = (const struct pts_hello *)h;
		act->take_uffd = r->flags & PTS_HELLO_UFFD;
		act->take_ring = r->flags & PTS_HELLO_RING;
		act->hello_uffd_errno = act->take_uffd ? 0 : r->uffd_errno;
	} else if (h->type == PTS_OWN_UFFD) {
		/* A registration of the program's own that failed with EBUSY
		 * (an unregistration: EINVAL) met ours: released, whole, and
		 * the shim waits for an ACK to try again. */
		const struct pts_own_uffd *r = (const struct pts_own_uffd *)h;
		int busy = r->request == PTS_OWN_UFFD_REGISTER ? EBUSY : EINVAL;
		if (!(h->flags & PTS_F_FAILED) || r->result_errno != busy)
			return;
		uffd_op(act, INGEST_UFFD_GIVE_UP, r->start, r->start + r->len);
		ingest_action_ack(act, conn, h->seq);
	} else if (h->type == PTS_MREMAP) {
		mremap_actions(act, conn, (const struct pts_mremap *)h);
	} else if (h->flags & PTS_F_FAILED) {
		return;
	} else if (h->type == PTS_MMAP) {
		/* MAP_FIXED over a range; only shared memory is registered:
		 * a private mapping (most: malloc's) costs no walk. */
		const struct pts_mmap *r = (const struct pts_mmap *)h;
		uffd_op(act, INGEST_UFFD_FORGET, r->addr, r->addr + r->len);
		if ((r->flags & MAP_TYPE) != MAP_PRIVATE)
			uffd_op(act, INGEST_UFFD_SYNC, r->addr, r->addr + r->len);
	} else if (h->type == PTS_MUNMAP) {
		const struct pts_range *r = (const struct pts_range *)h;
		uffd_op(act, INGEST_UFFD_FORGET, r->addr, r->addr + r->len);
	}
}
