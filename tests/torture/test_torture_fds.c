/* SPDX-License-Identifier: MIT */
/*
 * The torture suite, fds (docs/promises.md): a program that dup2s over
 * every low fd and closes every other one (close_range, closefrom), the
 * shim's included, then forks and execs.  The same output and status under
 * `ptshare run`; the report says which records it lost.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "torture_subject.h"
#include "torture_util.h"

/* No timer: the counts below are then exact. */
static const char *const no_timer[] = { "--interval", "0", NULL };

/*
 * The program closes the shim's socket: its calls go unseen until it
 * execs, and the new image is traced again (HELLO, its map, EXIT after the
 * old image's HELLO, map and unmap).  Its child, forked while it was
 * quiet, says a plain HELLO and is read from /proc at once: its parent
 * sends no PTS_FORK the daemon could wait for (no resync by adoption).
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
	assert_int_equal(finals_with_records(t.doc, 6), 1);
	assert_int_equal(finals_with_records(t.doc, 4), 1); /* HELLO, 2, EXIT */
	assert_int_equal(stream_u64(t.doc, "resyncs"), 0);
	assert_int_equal(stream_u64(t.doc, "lost"), 0);
	assert_int_equal(assert_models_at_most_kernel(t.doc), 2);
	torture_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_close_everything, torture_setup, torture_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
