/* SPDX-License-Identifier: MIT */
/*
 * The torture suite, limits (docs/promises.md): a program that maps until
 * vm.max_map_count stops it.  Under `ptshare run` it reaches the same
 * limit, with exactly the shim's own mappings fewer of its own; the report
 * loses no record, and its report is written within a second of the
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

/* The shim's own mappings, at most: its library (5 here), its zeroed
 * data, the owner mark and the record ring (docs/promises.md). */
#define SHIM_MAPPINGS_MAX 8

/* The report, once the program has exited, is written within this. */
#define REPORT_DELAY_MAX_NS 1000000000ull

struct maxmap {
	long limit, before, mapped, after;
	unsigned long long exit_ns;
};

static struct maxmap maxmap_said(const char *text)
{
	struct maxmap m = { -1, -1, -1, -1, 0 };
	const char *second = strchr(text, '\n');
	assert_non_null(second);
	const char *third = strchr(second + 1, '\n');
	assert_non_null(third);
	assert_int_equal(sscanf(text, "maxmap: limit %ld mappings, reached with ENOMEM",
				&m.limit), 1);
	assert_int_equal(sscanf(second + 1, "maxmap: before %ld, mapped %ld, after %ld",
				&m.before, &m.mapped, &m.after), 3);
	assert_int_equal(sscanf(third + 1, "maxmap: exits at %llu ns", &m.exit_ns), 1);
	return m;
}

/*
 * One-page mappings until mmap fails with ENOMEM.  Both runs stop at the
 * same number of mappings in the process; the program's own are fewer
 * under ptshare by what it had before it began, the shim's mappings: so
 * its first line is the same, its second differs by exactly that.  The
 * program makes its 131,000 calls as fast as it can; the shim writes them
 * into its record ring, and waits for room there when the daemon is behind
 * (wait_ms, here long enough for a loaded machine): no record is lost, and
 * each of the daemon's readings of its /proc (65,000 lines, one per 4,096
 * records) sees what the records applied say.  The daemon's work per
 * record does not grow with the mappings (mmu/mm_vma.c), so it has caught
 * up by the program's exit: the exit's reading of /proc is made while the
 * program waits for its ACK, and the report is written within
 * REPORT_DELAY_MAX_NS of the program's last line.
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
	 * failed, their unmaps, the array's, EXIT: all of them. */
	const uint64_t calls = 2 * (uint64_t)s.mapped + 5;
	const char *trace = torture_trace(&t);
	const uint64_t received = trace_records(trace, PTS_HELLO) +
				  trace_records(trace, PTS_MMAP) +
				  trace_records(trace, PTS_MUNMAP) +
				  trace_records(trace, PTS_EXIT);
	assert_int_equal(trace_records(trace, PTS_HELLO), 1);
	assert_int_equal(trace_records(trace, PTS_EXIT), 1);
	assert_int_equal(received, calls);
	assert_int_equal(stream_u64(t.doc, "lost"), 0);
	assert_int_equal(jr_len(jr_get(t.doc, "final_checkpoints")), 1);
	/* Read at its exit, and not again while its mappings were torn down. */
	assert_string_equal(jr_path_str(jr_at(jr_get(t.doc, "final_checkpoints"), 0),
					"checkpoint"), "exit");
	assert_models_at_most_kernel(t.doc, 0);
	assert_true(t.traced_end_ns > s.exit_ns);
	const uint64_t delay = t.traced_end_ns - s.exit_ns;
	print_message("maxmap: %ld mappings of the shim's; %llu records, none "
		      "lost; the report written %.3f s after the program's "
		      "last line\n", s.before - p.before,
		      (unsigned long long)calls, delay / 1e9);
	assert_true(delay <= REPORT_DELAY_MAX_NS);
	torture_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_max_map_count, run_tmpdir_setup, run_tmpdir_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
