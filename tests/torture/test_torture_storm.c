/* SPDX-License-Identifier: MIT */
/*
 * The torture suite, a fork storm (docs/promises.md): 1,000 short-lived
 * children nested three deep, 1,111 processes in all, most of them alive
 * at once.  The program prints and exits as without ptshare; the report
 * has every process once, every record it sent, none lost, malformed or
 * refused (a forked child and its parent's PTS_FORK come by different
 * sockets in either order, and the child may be gone before the second is
 * read); it names the processes the daemon could not read in time (a
 * child gone before its turn came) instead of guessing their tables; and
 * the trace replays to the same report, byte for byte.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "torture_subject.h"
#include "torture_util.h"

static void test_fork_storm(void **state)
{
	const char *argv[] = { NULL, "forkstorm", NULL };
	const size_t leaves = STORM_FANOUT * STORM_FANOUT * STORM_FANOUT;
	const size_t processes = 1 + STORM_FANOUT + STORM_FANOUT * STORM_FANOUT + leaves;
	char said[96];
	struct torture t;
	torture_compare(&t, NULL, argv);
	assert_int_equal(t.status, 0);
	snprintf(said, sizeof(said), "forkstorm: %zu of %zu leaves exited as they should\n",
		 leaves, leaves);
	assert_non_null(strstr(t.plain.text[0], said));

	/* Every process is there, read at a checkpoint or said not to be;
	 * a leaf read (HELLO, its mapping, EXIT) is exact. */
	const struct jr_value *finals = jr_get(t.doc, "final_checkpoints");
	size_t unread = 0, leaves_read = 0, leaf_lines = 0;
	assert_int_equal(jr_len(finals), processes);
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
		unread += jr_path_i64(f, "vmpte_kb", -1) < 0;
		if (records == 3 && jr_path_i64(f, "vmpte_kb", -1) >= 0) {
			assert_int_equal(jr_path_i64(f, "model_kb", -1),
					 jr_path_i64(f, "vmpte_kb", -2));
			leaves_read++;
		}
	}
	assert_int_equal(leaf_lines, leaves);
	assert_int_equal(stream_u64(t.doc, "records"),
			 3 * leaves + (2 + STORM_FANOUT) * (processes - leaves));
	assert_int_equal(stream_u64(t.doc, "lost"), 0);
	assert_int_equal(stream_u64(t.doc, "malformed"), 0);
	assert_int_equal(stream_u64(t.doc, "refused"), 0);
	assert_models_at_most_kernel(t.doc, unread);
	assert_replay_same(PTSHARE_PATH, torture_trace(&t),
			   "--json", tmp_path(t.dir, "report.json"),
			   tmp_path(t.dir, "replay.json"));
	print_message("forkstorm: %zu processes in the report, %zu never read, "
		      "%zu leaves read and exact, %llu records\n", jr_len(finals),
		      unread, leaves_read,
		      (unsigned long long)stream_u64(t.doc, "records"));
	unlink(tmp_path(t.dir, "replay.json"));
	torture_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_fork_storm, run_tmpdir_setup, run_tmpdir_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
