/* SPDX-License-Identifier: MIT */
/*
 * The daemon's event loop: one io_uring ring, one thread.  Every wait is a
 * ring request: a multishot accept on the listening socket, a poll of each
 * connection until it can be read (which it then is, synchronously), the
 * checkpoint timer, a read of the
 * signalfd that ends the run, a multishot poll of each process's
 * userfaultfd, and the live reports' accept and requests.  A loop that is
 * watched (--heartbeat-fd) beats at every turn and event, and waits at most
 * PTS_HEARTBEAT_IDLE_MS, so that an idle loop still turns.  Acks go out as
 * they are made, with non-blocking sends: a peer that is full or gone
 * never holds the loop up.
 */
#ifndef PTSHARED_LOOP_H
#define PTSHARED_LOOP_H

#include <liburing.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/signalfd.h>

#include "behind.h"
#include "conns.h"
#include "control.h"
#include "readings.h"
#include "ingest/ingest.h"

struct loop_config {
	int listen_fd;
	int report_fd;         /* live reports' listening socket, or -1 */
	unsigned interval_s;   /* timer checkpoints; 0: none */
	const sigset_t *stop;  /* blocked signals that end the run */
	FILE *trace;           /* flushed whenever the loop waits, or NULL */
	struct pts_heartbeat *heartbeat; /* beaten at every turn and event, or NULL */
	uint32_t faults;       /* enum pts_faults */
	size_t max_clients;    /* connections served at once, at most */
	size_t max_per_user;   /* of them, one user's */
	struct readings *readings; /* makes the readings the ingest owes */
};

struct loop {
	struct io_uring ring;
	struct ingest *g;
	struct loop_config cfg;
	int signal_fd;
	struct __kernel_timespec interval, accept_retry, report_wait, idle;
	struct signalfd_siginfo sig;
	struct conns conns;
	int *accepted;         /* connections accepted in this batch */
	size_t naccepted, cap_accepted;
	struct burst *burst;   /* what drain_conn() reads into */
	unsigned char *ring_rec; /* a record out of a ring (PTS_REC_MAX) */
	struct control_client *reports; /* requests to serve after the batch */
	unsigned inflight;     /* requests the ring holds */
	struct ingest_action *settling; /* the acks waiting for the readings */
	bool stopping;
	bool tick_due;         /* the timer fired: checkpoints after the batch */
	bool accept_down;      /* armed again at the retry: the shims' accept */
	bool report_accept_down; /* ...and the report socket's */
	bool faults_due;       /* a userfaultfd was left with faults to read */
	bool rings_due;        /* a ring was left with records to read */
	uint64_t first_read_ns; /* a first reading waits until then; 0: none */
	bool exits_acked;      /* an EXIT's ack went out: end_exited() */
	struct behind behind;  /* what the rings say of our lag */
};

/* The ring and the first requests.  0, or -errno. */
int loop_init(struct loop *l, struct ingest *g, const struct loop_config *cfg);
/* Serves until a stop signal: 0, or -errno when the ring failed. */
int loop_run(struct loop *l);
/* The end of a run: every request ends, the connections still in the
 * backlog are accepted, and what each connection has sent is read, so the
 * final checkpoint and the report miss nothing said before the signal. */
void loop_drain(struct loop *l);
/* Closes the ring and every connection. */
void loop_free(struct loop *l);

#endif
