/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include <poll.h>
#include <sys/socket.h>

#include "requests.h"

/* The queue fills when a turn re-arms or opens many connections: what it
 * holds is submitted then, which is safe since no request reads a packet
 * (see arm_readable). */
struct io_uring_sqe *sqe_get(struct loop *l)
{
	struct io_uring_sqe *s;
	while (!(s = io_uring_get_sqe(&l->ring)))
		io_uring_submit(&l->ring);
	return s;
}

void own(struct loop *l, struct io_uring_sqe *s, enum req kind, struct conn *c)
{
	io_uring_sqe_set_data64(s, (uint64_t)(uintptr_t)c | kind);
	l->inflight++;
	if (c)
		c->inflight++;
}

void arm_accept(struct loop *l)
{
	struct io_uring_sqe *s = sqe_get(l);
	io_uring_prep_multishot_accept(s, l->cfg.listen_fd, NULL, NULL, SOCK_CLOEXEC);
	own(l, s, REQ_ACCEPT, NULL);
}

void arm_accept_retry(struct loop *l)
{
	struct io_uring_sqe *s = sqe_get(l);
	io_uring_prep_timeout(s, &l->accept_retry, 0, 0);
	own(l, s, REQ_ACCEPT_RETRY, NULL);
}

/* A wait until c has something to read, never a read: every packet is
 * read synchronously (drain_conn), so packets reach the ingest in the
 * order they were sent.  A ring read of one packet could complete, and
 * hold that packet in a completion not yet handled, while the connection
 * is read on directly (at a checkpoint, before a fault, when the ring is
 * submitted early for want of room): its later packets, a HELLO's first
 * records, would then come before it.  Single-shot, and armed only after
 * a drain: what is still queued then fires it at once. */
void arm_readable(struct loop *l, struct conn *c)
{
	struct io_uring_sqe *s = sqe_get(l);
	io_uring_prep_poll_add(s, c->fd, POLLIN);
	own(l, s, REQ_READABLE, c);
}

/* Multishot: one completion per wake-up of the userfaultfd, which must be
 * non-blocking for it (uffd_start saw to it). */
void arm_uffd(struct loop *l, struct conn *c)
{
	struct io_uring_sqe *s = sqe_get(l);
	io_uring_prep_poll_multishot(s, c->uf.fd, POLLIN);
	own(l, s, REQ_UFFD, c);
}

/* The report socket's accept (its completions carry no client), and a
 * client's request, which has REPORT_WAIT_S to come: a client that says
 * nothing holds a socket that long, never the loop. */
void arm_report_accept(struct loop *l)
{
	struct io_uring_sqe *s = sqe_get(l);
	io_uring_prep_multishot_accept(s, l->cfg.report_fd, NULL, NULL, SOCK_CLOEXEC);
	own(l, s, REQ_REPORT, NULL);
}

void arm_report_recv(struct loop *l, struct control_client *cl)
{
	if (io_uring_sq_space_left(&l->ring) < 2) /* the link in one submit */
		io_uring_submit(&l->ring);
	struct io_uring_sqe *s = sqe_get(l);
	io_uring_prep_recvmsg(s, cl->fd, &cl->msg, MSG_CMSG_CLOEXEC);
	io_uring_sqe_set_flags(s, IOSQE_IO_LINK);
	io_uring_sqe_set_data64(s, (uint64_t)(uintptr_t)cl | REQ_REPORT);
	l->inflight++;
	s = sqe_get(l);
	io_uring_prep_link_timeout(s, &l->report_wait, 0);
	own(l, s, REQ_CANCEL, NULL);
}

void arm_timer(struct loop *l)
{
	struct io_uring_sqe *s = sqe_get(l);
	io_uring_prep_timeout(s, &l->interval, 0, 0);
	own(l, s, REQ_TIMER, NULL);
}

void arm_signal(struct loop *l)
{
	struct io_uring_sqe *s = sqe_get(l);
	io_uring_prep_read(s, l->signal_fd, &l->sig, sizeof(l->sig), 0);
	own(l, s, REQ_SIGNAL, NULL);
}

