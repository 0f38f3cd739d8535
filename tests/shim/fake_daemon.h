/* SPDX-License-Identifier: MIT */
/*
 * A fake daemon for the shim's tests: listens on a SOCK_SEQPACKET socket in
 * a fresh temporary directory, in a thread of the test, checks SO_PEERCRED,
 * validates every record strictly against wire.h, ACKs HELLO and EXIT, and
 * logs what it got.  Every violation is kept as an error message; a test
 * asserts there are none.
 */
#ifndef PTSHARE_TEST_FAKE_DAEMON_H
#define PTSHARE_TEST_FAKE_DAEMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ptshare/wire.h"

struct fake_opts {
	bool no_ack;     /* never answer HELLO or EXIT */
	bool allow_gaps; /* the socket may fill up: gaps must be told by LOST */
	bool paused;     /* read nothing until fake_pause(d, false) */
	bool hold_forked; /* never answer a forked child's HELLO */
	int behind_ms;   /* say it is behind (the ring's behind) for this long
			  * from a HELLO that is not a forked child's */
	bool hold_calls; /* hold that process's calls (the ring's hold) from
			  * its HELLO on, as a daemon killed mid-reading */
};

struct fake_rec {
	int32_t pid;     /* the connection's peer, from SO_PEERCRED */
	uint32_t conn;   /* connections are numbered from 1, in accept order */
	bool uffd;       /* a userfaultfd came with it (checked, then closed) */
	char state;      /* HELLO, EXIT: the peer's /proc state on arrival */
	uint64_t ack_ns; /* CLOCK_MONOTONIC when it was ACKed, 0 if it was not */
	union {
		struct pts_hdr h;
		struct pts_hello hello;
		struct pts_mmap mmap;
		struct pts_range range;
		struct pts_mremap mremap;
		struct pts_shmat shmat;
		struct pts_fork fork;
		struct pts_exec exec;
		struct pts_exit exit;
		struct pts_lost lost;
		uint8_t raw[sizeof(struct pts_hello) + 8 * PTS_MAX_FRAMES];
	} r;
};

struct fake_daemon;

struct fake_daemon *fake_start(const struct fake_opts *opts);
/* Stops the thread, removes the directory, frees the log. */
void fake_stop(struct fake_daemon *d);
const char *fake_socket(const struct fake_daemon *d);

/* The daemon dies: every connection and the listener close at once, and
 * the socket's path goes away. */
void fake_kill(struct fake_daemon *d);
/* Stop reading (senders fill their sockets up), or read again. */
void fake_pause(struct fake_daemon *d, bool paused);

/* Waits until every connection has ended and nothing is left to accept
 * (the traced processes have exited); false after timeout_ms. */
bool fake_settle(struct fake_daemon *d, int timeout_ms);

/* The log, in the order records were received.  Valid until fake_stop. */
size_t fake_count(struct fake_daemon *d);
const struct fake_rec *fake_rec(struct fake_daemon *d, size_t i);
const uint64_t *fake_frames(const struct fake_rec *r);
/* Violations of the protocol, as messages. */
size_t fake_errors(struct fake_daemon *d);
const char *fake_error(struct fake_daemon *d, size_t i);
/* Sequence numbers skipped, and the records PTS_LOST said were dropped. */
uint64_t fake_gaps(struct fake_daemon *d);
uint64_t fake_lost(struct fake_daemon *d);

#endif
