/* SPDX-License-Identifier: MIT */
/*
 * The loop's requests to its io_uring ring (daemon/loop.c): each one's
 * kind, and the functions that arm them.  A request's kind rides in the
 * low bits of its user data, beside the connection (or report client) it
 * is for: allocations are aligned as max_align_t.
 */
#ifndef PTSHARED_REQUESTS_H
#define PTSHARED_REQUESTS_H

#include <stdalign.h>
#include <stddef.h>

#include "loop.h"

enum req { REQ_ACCEPT = 1, REQ_ACCEPT_RETRY, REQ_READABLE, REQ_TIMER, REQ_SIGNAL,
	   REQ_CANCEL, REQ_UFFD, REQ_REPORT };
#define REQ_MASK 15u
_Static_assert(alignof(max_align_t) > REQ_MASK, "connections carry the kind");

/* A free entry of the submission queue, submitting what it holds when it
 * is full; s owned: counted in flight, for c too (when not NULL). */
struct io_uring_sqe *sqe_get(struct loop *l);
void own(struct loop *l, struct io_uring_sqe *s, enum req kind, struct conn *c);

void arm_accept(struct loop *l);        /* the shims' socket, multishot */
void arm_accept_retry(struct loop *l);  /* a timeout: accepts again after */
void arm_readable(struct loop *l, struct conn *c); /* a single-shot poll */
void arm_uffd(struct loop *l, struct conn *c);     /* a multishot poll */
void arm_report_accept(struct loop *l); /* the report socket, multishot */
void arm_report_recv(struct loop *l, struct control_client *cl);
void arm_timer(struct loop *l);         /* the checkpoints' timer */
void arm_signal(struct loop *l);        /* a read of the signalfd */

#endif
