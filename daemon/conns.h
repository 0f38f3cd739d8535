/* SPDX-License-Identifier: MIT */
/*
 * What the daemon keeps of its open connections, one per traced process
 * image, beside the ingest's table of them (where an ack goes:
 * ingest_conn_owner): the list of them, in the order they opened (to read
 * them all), how many each user has open, and a lookup by the peer's pid
 * (an exec's old image).  Only the open ones are kept, however many a run
 * has had (docs/daemon.md, Hostile clients).
 */
#ifndef PTSHARED_CONNS_H
#define PTSHARED_CONNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rec_ring.h"
#include "uffd.h"

struct conn {
	int fd;
	uint32_t id;        /* the ingest's */
	int32_t pid;        /* the peer's (SO_PEERCRED) */
	uint32_t uid;
	unsigned inflight;  /* ring requests that use it: freed only at 0 */
	bool closing;       /* ended; waiting for its requests to finish */
	bool broken;        /* dropped inside a reading: ended at the turn's
			     * drain (a reading cannot end it under a caller) */
	bool acked;         /* an ack went out: its HELLO's is the first */
	bool exit_acked;    /* its EXIT's went out: ended at the turn's end */
	struct uffd uf;     /* the process's userfaultfd, if it sent one */
	struct rec_ring rr; /* its record ring, if it sent one */
};

struct conns {
	struct conn **open; /* sorted by id: in the order they opened */
	size_t nopen, cap_open;
	struct conns_user {
		uint32_t uid;
		size_t nopen;
	} *users;           /* sorted by uid: those with a connection open */
	size_t nusers, cap_users;
};

/* A connection for fd from pid and uid, registered as id (greater than
 * any before); NULL when out of memory. */
struct conn *conns_add(struct conns *t, int fd, uint32_t id, int32_t pid,
		       uint32_t uid);
/* How many connections uid has open. */
size_t conns_of_uid(const struct conns *t, uint32_t uid);
/* The newest open connection of pid (an exec's new image's), or NULL. */
struct conn *conns_of_pid(const struct conns *t, int32_t pid);
/* No longer open: found no more (it may still wait for its requests).
 * Those after it in t->open move down one. */
void conns_forget(struct conns *t, struct conn *c);
/* Closes its fds and frees it. */
void conn_free(struct conn *c);
/* Frees the table (every connection must have been freed). */
void conns_free(struct conns *t);

#endif
