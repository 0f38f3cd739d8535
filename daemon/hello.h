/* SPDX-License-Identifier: MIT */
/*
 * What a HELLO brings the daemon (its userfaultfd, its record ring) and
 * the acks the ingest owes, sent: the loop's dealings with a process
 * beyond reading its records (daemon/loop.c).
 */
#ifndef PTSHARED_HELLO_H
#define PTSHARED_HELLO_H

#include "loop.h"

/* The acks of act, each to its connection (its userfaultfd started first,
 * before the first ack of its process goes out). */
void acks_send(struct loop *l, const struct ingest_action *act);
/* The HELLOs' acks in act of processes with a ring, sent before their
 * readings: taken out of act. */
void acks_send_hellos(struct loop *l, struct ingest_action *act);
/* The acks to c in act (NULL: none) and owed, sent once c's /proc is
 * read (taken out of both). */
void acks_send_read(struct loop *l, struct conn *c, struct ingest_action *act);
/* The acks a reading owes (ingest_owed_acks), all of them. */
void acks_send_owed(struct loop *l);
/* A process that could not make a userfaultfd: said once, with the fix. */
void hello_uffd_missing(struct loop *l, const struct conn *c, int err);
/* The fds a HELLO brought (m: its packet, NULL out of a ring), taken as
 * act says; false when the ring it says it brings cannot be read. */
bool hello_fds_take(struct loop *l, struct conn *c,
		    const struct ingest_action *act, const struct msghdr *m);

#endif
