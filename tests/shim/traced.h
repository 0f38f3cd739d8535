/* SPDX-License-Identifier: MIT */
/*
 * A subject run under the shim with a fake daemon, and questions about the
 * records it sent.  For cmocka tests.
 */
#ifndef PTSHARE_TEST_TRACED_H
#define PTSHARE_TEST_TRACED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fake_daemon.h"
#include "run.h"

#define SETTLE_MS 30000

struct traced {
	struct fake_daemon *d;
	struct run run;
	int status;          /* wait status */
};

/* Starts a daemon, runs argv (argv[0] may be NULL for the subject) with
 * the shim and PTSHARE_OPTIONS=options to its end, waits for the daemon to
 * have everything, and asserts the daemon saw no violation. */
void traced_run(struct traced *t, const struct fake_opts *opts,
		const char *options, const char *const argv[]);
/* The same without running to the end: for tests that act in between. */
void traced_start(struct traced *t, const struct fake_opts *opts,
		  const char *options, const char *const argv[],
		  const struct run_limits *lim);
void traced_finish(struct traced *t);
void traced_free(struct traced *t);

/* Fails the test with the daemon's messages if it has any. */
void assert_no_violation(struct fake_daemon *d);

/* The records of pid (all its connections, in the order received): at
 * most max into out; returns how many there are. */
size_t recs_of(struct fake_daemon *d, int32_t pid, const struct fake_rec **out,
	       size_t max);
size_t count_of(struct fake_daemon *d, int32_t pid, uint16_t type);
/* The n-th (from 0) record of that type from pid, or NULL. */
const struct fake_rec *nth_of(struct fake_daemon *d, int32_t pid,
			      uint16_t type, size_t n);
/* Distinct pids that said HELLO with these flags (all of them included). */
size_t hellos(struct fake_daemon *d, uint32_t flags, int32_t *pids, size_t max);

/* "@key" of the run's output as a number (%p and %d alike). */
uint64_t run_number(const struct run *r, const char *key, int field);

#endif
