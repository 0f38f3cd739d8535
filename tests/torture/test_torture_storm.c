/* SPDX-License-Identifier: MIT */
/*
 * The torture suite, a fork storm (docs/promises.md): 1,000 short-lived
 * children nested three deep, 1,111 processes in all, most of them alive
 * at once.  The program prints and exits as without ptshare; the report
 * has every process once, every record it sent, none lost, malformed or
 * refused (a forked child and its parent's PTS_FORK come by different
 * sockets in either order, and the child may be gone before the second is
 * read); every process read at a checkpoint is exact, and the others are
 * said not to have been read instead of guessed; and the trace replays to
 * the same report, byte for byte.
 *
 * Twice: with the shim's default wait for the daemon (2 s), which a
 * sanitized daemon on a loaded machine cannot keep up with, so that how
 * many processes it reads depends on the machine (most, or none); and with
 * a wait that outlasts any lag (wait_ms=120000) and no timer (--interval
 * 0: a timer's round of a thousand processes kept the daemon from
 * accepting the last connections for over 30 s), where each process waits
 * for its HELLO's and EXIT's readings, and every one must have been read.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "torture_subject.h"
#include "torture_util.h"

#define LEAVES (STORM_FANOUT * STORM_FANOUT * STORM_FANOUT)
#define PROCESSES (1 + STORM_FANOUT + STORM_FANOUT * STORM_FANOUT + LEAVES)

/* The storm under ptshare run with opts; how many of its processes were
 * read (and exact), the leaves among them in *leaves_read. */
static size_t storm(const char *const opts[], size_t *leaves_read)
{
	const char *argv[] = { NULL, "forkstorm", NULL };
	char said[96];
	struct torture t;
	torture_compare(&t, opts, argv);
	assert_int_equal(t.status, 0);
	snprintf(said, sizeof(said), "forkstorm: %d of %d leaves exited as they should\n",
		 LEAVES, LEAVES);
	assert_non_null(strstr(t.plain.text[0], said));

	/* Every process is there, read at a checkpoint or said not to be;
	 * one read is exact. */
	const struct jr_value *finals = jr_get(t.doc, "final_checkpoints");
	size_t unread = 0, read = 0, leaf_lines = 0;
	*leaves_read = 0;
	assert_int_equal(jr_len(finals), PROCESSES);
	for (size_t i = 0; i < jr_len(finals); i++) {
		const struct jr_value *f = jr_at(finals, i);
		int64_t pid = jr_path_i64(f, "pid", -1);
		for (size_t j = 0; j < i; j++)
			if (jr_path_i64(jr_at(finals, j), "pid", -2) == pid)
				fail_msg("process %lld has two lines", (long long)pid);
		/* A leaf: HELLO, its mapping, EXIT; the others: HELLO, a
		 * PTS_FORK per child, EXIT. */
		uint64_t records = jr_path_u64(f, "records", 0);
		if (records != 3 && records != 2 + STORM_FANOUT)
			fail_msg("process %lld: %llu records", (long long)pid,
				 (unsigned long long)records);
		leaf_lines += records == 3;
		if (jr_path_i64(f, "vmpte_kb", -1) < 0) {
			unread++;
			continue;
		}
		assert_int_equal(jr_path_i64(f, "model_kb", -1),
				 jr_path_i64(f, "vmpte_kb", -2));
		read++;
		*leaves_read += records == 3;
	}
	assert_int_equal(leaf_lines, LEAVES);
	assert_int_equal(read + unread, PROCESSES);
	assert_int_equal(stream_u64(t.doc, "records"),
			 3 * LEAVES + (2 + STORM_FANOUT) * (PROCESSES - LEAVES));
	assert_int_equal(stream_u64(t.doc, "lost"), 0);
	assert_int_equal(stream_u64(t.doc, "malformed"), 0);
	assert_int_equal(stream_u64(t.doc, "refused"), 0);
	assert_models_at_most_kernel(t.doc, unread);
	assert_replay_same(PTSHARE_PATH, torture_trace(&t),
			   "--json", tmp_path(t.dir, "report.json"),
			   tmp_path(t.dir, "replay.json"));
	print_message("forkstorm: %zu processes in the report, %zu read and "
		      "exact (%zu leaves), %zu never read, %llu records\n",
		      jr_len(finals), read, *leaves_read, unread,
		      (unsigned long long)stream_u64(t.doc, "records"));
	unlink(tmp_path(t.dir, "replay.json"));
	torture_free(&t);
	return read;
}

/* The daemon may fall behind: what it read is exact, the rest said. */
static void test_fork_storm(void **state)
{
	size_t leaves_read;
	storm(NULL, &leaves_read);
}

/* No process goes on before its reading: every one read, and exact. */
static void test_fork_storm_waited(void **state)
{
	static const char *const no_timer[] = { "--interval", "0", NULL };
	size_t leaves_read;
	setenv("PTSHARE_OPTIONS", "wait_ms=120000", 1);
	size_t read = storm(no_timer, &leaves_read);
	unsetenv("PTSHARE_OPTIONS");
	assert_int_equal(read, PROCESSES);
	assert_int_equal(leaves_read, LEAVES);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_fork_storm, run_tmpdir_setup, run_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_fork_storm_waited, run_tmpdir_setup,
						run_tmpdir_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
