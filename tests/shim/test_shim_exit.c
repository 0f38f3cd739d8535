/* SPDX-License-Identifier: MIT */
/*
 * The end of a process: exit(), a return from main, _exit() and _Exit()
 * each send one EXIT with the status, last, and wait for its ACK while the
 * process still exists; a daemon that never ACKs delays each by the
 * bound, and one that reads nothing delays the program by it once.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "traced.h"

#define MAX_RECS 16

static void test_every_way_out(void **state)
{
	static const char *const ways[] = { "exit", "return", "_exit", "_Exit" };

	for (size_t i = 0; i < sizeof(ways) / sizeof(ways[0]); i++) {
		const char *argv[] = { NULL, "exit", ways[i], "5", NULL };
		const struct fake_rec *r[MAX_RECS];
		struct traced t;

		traced_run(&t, NULL, NULL, argv);
		assert_true(WIFEXITED(t.status));
		assert_int_equal(WEXITSTATUS(t.status), 5);
		size_t n = recs_of(t.d, t.run.pid, r, MAX_RECS);
		assert_int_equal(n, 4); /* HELLO MMAP MUNMAP EXIT */
		assert_int_equal(r[3]->r.h.type, PTS_EXIT);
		assert_int_equal(r[3]->r.exit.status, 5);
		/* ACKed, and the process waited for it: still alive (about
		 * to wait, or waiting), not a zombie */
		assert_int_not_equal(r[3]->ack_ns, 0);
		assert_true(r[3]->state == 'S' || r[3]->state == 'R');
		traced_free(&t);
	}
}

/* Its n-th record of that type was sent this long (ns) before the m-th of
 * type2 of pid2. */
static uint64_t sent_between(struct fake_daemon *d, int32_t pid, uint16_t type,
			     size_t n, int32_t pid2, uint16_t type2, size_t m)
{
	const struct fake_rec *a = nth_of(d, pid, type, n), *b = nth_of(d, pid2, type2, m);
	assert_non_null(a);
	assert_non_null(b);
	return b->r.h.time_ns - a->r.h.time_ns;
}

/*
 * No ACK ever, from a daemon that reads: HELLO and EXIT each wait wait_ms
 * (a daemon that lags is waited for), then the program goes on, forks
 * included, and ends as it would.
 */
static void test_daemon_never_acks(void **state)
{
	const struct fake_opts opts = { .no_ack = true };
	const char *exit_argv[] = { NULL, "exit", "exit", "3", NULL };
	const char *fork_argv[] = { NULL, "fork", NULL };
	const uint64_t wait_ns = 300 * 1000000ull;
	struct traced t;

	traced_run(&t, &opts, "wait_ms=200", exit_argv);
	assert_int_equal(WEXITSTATUS(t.status), 3);
	assert_int_equal(count_of(t.d, t.run.pid, PTS_EXIT), 1);
	assert_int_equal(nth_of(t.d, t.run.pid, PTS_EXIT, 0)->ack_ns, 0);
	traced_free(&t);

	traced_run(&t, &opts, "wait_ms=300", fork_argv);
	assert_int_equal(WEXITSTATUS(t.status), 0);
	assert_non_null(strstr(t.run.text, "child exit 7"));
	int32_t child = (int32_t)run_number(&t.run, "forked", 0);
	assert_int_equal(count_of(t.d, child, PTS_EXIT), 1);
	assert_true(sent_between(t.d, child, PTS_HELLO, 0, child, PTS_MMAP, 0) >=
		    wait_ns);
	traced_free(&t);
}

/*
 * A daemon that reads nothing (stopped, hung): the first wait, the
 * HELLO's, runs its wait_ms out with the HELLO unread; then the program,
 * and the child it forks after, wait no more (a stopped daemon would stall
 * every fork and exit): the child goes on at once after its HELLO, and at
 * its EXIT.
 */
static void test_daemon_reads_nothing(void **state)
{
	const struct fake_opts opts = { .no_ack = true, .paused = true };
	const char *fork_argv[] = { NULL, "fork", NULL };
	const uint64_t wait_ns = 3000 * 1000000ull;
	struct traced t;

	traced_start(&t, &opts, "wait_ms=3000", fork_argv, NULL);
	t.status = run_finish(&t.run);
	fake_pause(t.d, false);
	assert_true(fake_settle(t.d, SETTLE_MS));
	assert_no_violation(t.d);
	assert_int_equal(WEXITSTATUS(t.status), 0);
	assert_non_null(strstr(t.run.text, "child exit 7"));
	int32_t parent = t.run.pid, child = (int32_t)run_number(&t.run, "forked", 0);
	assert_int_equal(count_of(t.d, child, PTS_EXIT), 1);
	assert_true(sent_between(t.d, parent, PTS_HELLO, 0, parent, PTS_FORK, 0) >=
		    wait_ns);
	assert_true(sent_between(t.d, child, PTS_HELLO, 0, child, PTS_MMAP, 0) <
		    wait_ns);
	assert_true(sent_between(t.d, child, PTS_EXIT, 0, parent, PTS_MMAP, 0) <
		    wait_ns);
	traced_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_way_out),
		cmocka_unit_test(test_daemon_never_acks),
		cmocka_unit_test(test_daemon_reads_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
