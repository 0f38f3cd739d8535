/* SPDX-License-Identifier: MIT */
/*
 * The torture suite, fds (docs/promises.md): a program that dup2s over
 * every low fd and closes every other one (close_range, closefrom), the
 * shim's included, then forks and execs; one that opens fds until EMFILE;
 * children that exec with no fd free.
 * The same output and status under `ptshare run`; the report says which
 * records it lost.
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

/* No timer: the counts below are then exact. */
static const char *const no_timer[] = { "--interval", "0", NULL };

/*
 * The program closes the shim's socket: the new image after its exec is
 * traced again (HELLO, its map, EXIT after the old image's HELLO, map and
 * unmap).  Between the close and the exec, its map and unmap go into its
 * record ring, which the daemon reads until the socket's end tells it the
 * connection is over: none, one or both of them are seen.  Its child,
 * forked meanwhile, says a plain HELLO and is read from /proc at once: its
 * parent, whose FORK record would kick the daemon, finds the fd taken
 * first and goes quiet (no PTS_FORK, no resync by adoption).
 */
static void test_close_everything(void **state)
{
	const char *argv[] = { NULL, "fds", NULL };
	struct torture t;
	torture_compare(&t, no_timer, argv);
	assert_int_equal(t.status, LEAF_STATUS);
	assert_non_null(strstr(t.plain.text[0], "next fd is the lowest"));
	assert_int_equal(jr_len(jr_get(t.doc, "final_checkpoints")), 2);
	assert_int_equal(finals_untraced(t.doc, true), 0);
	assert_int_equal(finals_with_records(t.doc, 6) + finals_with_records(t.doc, 7) +
			 finals_with_records(t.doc, 8), 1);
	assert_int_equal(finals_with_records(t.doc, 4), 1); /* HELLO, 2, EXIT */
	assert_int_equal(stream_u64(t.doc, "resyncs"), 0);
	assert_int_equal(stream_u64(t.doc, "lost"), 0);
	assert_int_equal(assert_models_at_most_kernel(t.doc, 0), 2);
	torture_free(&t);
}

/* The number after "opened " in text. */
static int opened(const char *text)
{
	const char *at = strstr(text, "opened ");
	assert_non_null(at);
	return atoi(at + strlen("opened "));
}

/*
 * Opens fds until EMFILE under RLIMIT_NOFILE 256 (hard 4096), then forks
 * and maps with none left.  The shim's fd (its socket) sits above the
 * soft limit, where the program cannot open any: it opens as many as
 * without ptshare.  Its child cannot connect (no fd left): the
 * report has it from its parent's PTS_FORK, with no record of its own and
 * no checkpoint.
 */
static void test_fd_limit_with_room(void **state)
{
	const char *argv[] = { NULL, "fdlimit", "256", "4096", NULL };
	struct torture t;
	torture_compare(&t, NULL, argv);
	assert_int_equal(t.status, 0);
	assert_non_null(strstr(t.plain.text[0], "until EMFILE"));
	assert_int_equal(jr_len(jr_get(t.doc, "final_checkpoints")), 2);
	assert_int_equal(finals_with_records(t.doc, 0), 1);
	assert_int_equal(stream_u64(t.doc, "lost"), 0);
	/* Nor could a checkpoint read it: it was gone by the next one. */
	assert_models_at_most_kernel(t.doc, 1);
	torture_free(&t);
}

/*
 * With no room above the soft limit (soft = hard = 256), the shim's fd is
 * under it, 8 below (docs/shim.md): the program opens 1 fewer, and says
 * so; the rest is the same.
 */
static void test_fd_limit_no_room(void **state)
{
	const char *argv[] = { NULL, "fdlimit", "256", "256", NULL };
	struct torture t;
	torture_traced(&t, NULL, argv);
	const char *plain[] = { TORTURE_SUBJECT_PATH, "fdlimit", "256", "256", NULL };
	int status = cmd_run(&t.plain, plain, NULL);
	assert_int_equal(status, t.status);
	assert_int_equal(opened(t.plain.text[0]) - opened(t.traced.text[0]), 1);
	const char *rest[2] = { strchr(t.plain.text[0], '\n'),
				strchr(t.traced.text[0], '\n') };
	assert_non_null(rest[0]);
	assert_non_null(rest[1]);
	assert_string_equal(rest[0], rest[1]);
	assert_string_equal(t.plain.text[1], t.traced.text[1]);
	torture_free(&t);
}

/*
 * Children that exec, or posix_spawn, with every fd below their soft
 * RLIMIT_NOFILE taken (lowered between fork and exec): the dynamic loader
 * could not open the shim, and would say so on their stderr.  The shim
 * leaves itself out of those images' LD_PRELOAD, the program's own part
 * kept: the same output (a program needing no library runs and says what
 * LD_PRELOAD it got, one needing libc fails as the loader says), and the
 * four exec'd children are untraced for want of an fd.  One fd that the
 * exec closes is enough to be traced.
 */
static void test_exec_with_no_fd(void **state)
{
	const char *argv[] = { NULL, "execfull", TORTURE_NOLIBC_PATH, NULL };
	struct torture t;
	torture_compare(&t, NULL, argv);
	assert_int_equal(t.status, 0);
	assert_non_null(strstr(t.plain.text[0], "nolibc: ran, no LD_PRELOAD\n"
				"exec of a program needing no library, no fd free: exit 9\n"));
	assert_non_null(strstr(t.plain.text[0], "nolibc: ran, LD_PRELOAD="
				"/nonexistent/libtheirs.so\nthe same with it first"));
	assert_non_null(strstr(t.plain.text[0], "libc, no fd free: exit 127"));
	assert_non_null(strstr(t.plain.text[0], "one fd close-on-exec: exit 11"));
	assert_non_null(strstr(t.plain.text[1], "cannot open shared object file"));
	/* The program and its six children. */
	assert_int_equal(jr_len(jr_get(t.doc, "final_checkpoints")), 7);
	assert_int_equal(finals_untraced(t.doc, true), 4);
	assert_int_equal(finals_untraced_why(t.doc, "no fd to load the shim"), 4);
	assert_int_equal(stream_u64(t.doc, "lost"), 0);
	/* The reason comes with PTS_EXEC: a replay of the trace says it too. */
	assert_replay_same(PTSHARE_PATH, torture_trace(&t), "--json",
			   tmp_path(t.dir, "report.json"), tmp_path(t.dir, "replay.json"));
	unlink(tmp_path(t.dir, "replay.json"));
	torture_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_close_everything, run_tmpdir_setup, run_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_fd_limit_with_room, run_tmpdir_setup, run_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_fd_limit_no_room, run_tmpdir_setup, run_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_exec_with_no_fd, run_tmpdir_setup, run_tmpdir_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
