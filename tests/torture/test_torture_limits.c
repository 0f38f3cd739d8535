/* SPDX-License-Identifier: MIT */
/*
 * The torture suite, limits (docs/promises.md): a program that maps until
 * vm.max_map_count stops it.  Under `ptshare run` it reaches the same
 * limit, with exactly the shim's own mappings fewer of its own; the report
 * counts every record it could not receive, and it has caught up by the
 * program's exit.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ptshare/wire.h"
#include "torture_subject.h"
#include "torture_util.h"

/* The shim's own mappings, at most: its library, libunwind, liblzma and
 * libgcc_s (5 each here), and libunwind's cache. */
#define SHIM_MAPPINGS_MAX 32

struct maxmap {
	long limit, before, mapped, after;
};

static struct maxmap maxmap_said(const char *text)
{
	struct maxmap m = { -1, -1, -1, -1 };
	const char *second = strchr(text, '\n');
	assert_non_null(second);
	assert_int_equal(sscanf(text, "maxmap: limit %ld mappings, reached with ENOMEM",
				&m.limit), 1);
	assert_int_equal(sscanf(second + 1, "maxmap: before %ld, mapped %ld, after %ld",
				&m.before, &m.mapped, &m.after), 3);
	return m;
}

/*
 * One-page mappings until mmap fails with ENOMEM.  Both runs stop at the
 * same number of mappings in the process; the program's own are fewer
 * under ptshare by what it had before it began, the shim's mappings: so
 * its first line is the same, its second differs by exactly that.  The
 * program makes its 131,000 calls faster than any daemon that reads its
 * /proc (65,000 lines) every 4,096 records can take them in: the shim drops
 * what does not fit in the socket, and the report counts as lost exactly
 * the calls the trace does not have; each gap made the daemon read the
 * process again.  The daemon's work per record does not grow with the
 * mappings (mmu/mm_vma.c), so at the program's exit it is not a minute
 * behind but 7 to 406 ms here (ASan), 1.4 s at most with three runs and
 * two busy loops on the 2 cores.  EXIT finds room in the socket within a
 * wait_ms that outlasts a loaded machine (the default, 2 s, is a bound for
 * a daemon that is stuck) and is received, and with it the whole
 * numbering; the exit's reading of /proc is made while the program waits
 * for its ACK.  (It is not always the last: docs/promises.md.)
 */
static void test_max_map_count(void **state)
{
	const char *argv[] = { NULL, "maxmap", NULL };
	const char *plain_argv[] = { TORTURE_SUBJECT_PATH, "maxmap", NULL };
	struct torture t;
	setenv("PTSHARE_OPTIONS", "wait_ms=30000", 1);
	torture_traced(&t, NULL, argv);
	unsetenv("PTSHARE_OPTIONS");
	int plain_status = cmd_run(&t.plain, plain_argv, NULL);
	assert_int_equal(plain_status, 0);
	assert_int_equal(t.status, plain_status);
	assert_string_equal(t.traced.text[1], t.plain.text[1]);
	const struct maxmap p = maxmap_said(t.plain.text[0]);
	const struct maxmap s = maxmap_said(t.traced.text[0]);
	assert_int_equal(s.limit, p.limit);
	assert_int_equal(s.before + s.mapped, p.before + p.mapped);
	assert_true(s.before > p.before && s.before - p.before <= SHIM_MAPPINGS_MAX);
	assert_int_equal(p.after, p.before);
	assert_int_equal(s.after, s.before);

	/* HELLO, the array of addresses, the mappings and the one that
	 * failed, their unmaps, the array's, EXIT.  HELLO finds the socket
	 * empty; EXIT waits (wait_ms) for room, and then the daemon sees the
	 * whole numbering: lost is exactly the calls the trace lacks. */
	const uint64_t calls = 2 * (uint64_t)s.mapped + 5;
	const char *trace = torture_trace(&t);
	const uint64_t received = trace_records(trace, PTS_HELLO) +
				  trace_records(trace, PTS_MMAP) +
				  trace_records(trace, PTS_MUNMAP) +
				  trace_records(trace, PTS_EXIT);
	const uint64_t lost = stream_u64(t.doc, "lost");
	assert_int_equal(trace_records(trace, PTS_HELLO), 1);
	assert_int_equal(trace_records(trace, PTS_EXIT), 1);
	assert_true(received <= calls);
	assert_int_equal(lost, calls - received);
	if (lost)
		assert_true(stream_u64(t.doc, "resyncs") > 0);
	assert_int_equal(jr_len(jr_get(t.doc, "final_checkpoints")), 1);
	/* Read at its exit, and not again while its mappings were torn down. */
	assert_string_equal(jr_path_str(jr_at(jr_get(t.doc, "final_checkpoints"), 0),
					"checkpoint"), "exit");
	assert_models_at_most_kernel(t.doc, 0);
	print_message("maxmap: %ld mappings of the shim's; %llu of %llu records "
		      "lost\n", s.before - p.before, (unsigned long long)lost,
		      (unsigned long long)calls);
	torture_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_max_map_count, run_tmpdir_setup, run_tmpdir_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
