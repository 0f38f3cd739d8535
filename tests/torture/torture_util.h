/* SPDX-License-Identifier: MIT */
/*
 * The torture suite's comparison (docs/promises.md): a program run plainly
 * and under `ptshare run` must print the same bytes on stdout and stderr
 * and exit with the same status; then the report says what ptshare saw and
 * what it lost.
 */
#ifndef PTSHARE_TESTS_TORTURE_UTIL_H
#define PTSHARE_TESTS_TORTURE_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "run_util.h"

struct torture {
	char dir[64];          /* the report's */
	struct cmd plain, traced;
	int status;            /* the program's, either way */
	uint64_t traced_end_ns; /* now_ns() once `ptshare run` had exited */
	struct jr_value *doc;  /* the JSON report */
};

/* cmocka setup and teardown: run_tmpdir_setup/teardown (run_util.h). */

/* Runs argv (argv[0] NULL: torture_subject) plainly, then as `ptshare run
 * --json F -o F' --record F'' OPTS -- argv`, asserts the same stdout,
 * stderr and exit status, and reads the report.  torture_trace() names the
 * trace. */
void torture_compare(struct torture *t, const char *const opts[],
		     const char *const argv[]);
/* Only the traced run, for scenarios whose output is compared otherwise. */
void torture_traced(struct torture *t, const char *const opts[],
		    const char *const argv[]);
void torture_free(struct torture *t);
const char *torture_trace(const struct torture *t);

/* Asserts that stdout, stderr and status of a and b are the same. */
void assert_same_run(const struct cmd *a, int a_status, const struct cmd *b,
		     int b_status);

/* Every process of the report but `unread` ones was read at a checkpoint
 * (the report says which were not), and there its model of today's
 * kernel has at most the tables VmPTE counts: the model can miss a table
 * the program filled and emptied between two checkpoints (docs/run.md,
 * Limits), never invent one.  Returns how many are exact. */
size_t assert_models_at_most_kernel(const struct jr_value *doc, size_t unread);
/* Final checkpoints whose `untraced` is as said. */
size_t finals_untraced(const struct jr_value *doc, bool untraced);
/* Final checkpoints untraced for that reason (`untraced_why`). */
size_t finals_untraced_why(const struct jr_value *doc, const char *why);
/* Final checkpoints with exactly `records` records. */
size_t finals_with_records(const struct jr_value *doc, uint64_t records);
/* stream.<name> of the report. */
uint64_t stream_u64(const struct jr_value *doc, const char *name);

#endif
