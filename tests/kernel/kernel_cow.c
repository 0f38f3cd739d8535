/* SPDX-License-Identifier: MIT */
/*
 * cow-pte against a real fork: a process with 1 GiB of private anonymous
 * memory forks 4 children, each writes 10% of it (kcow_subject), under
 * `ptshare run --policy linux,cow-pte`.  The tables copied at fork and
 * later must be the ones worked by hand (unit_cow, issue_case):
 *   at fork, each child, beyond what a control child forked before the
 *     memory was mapped got: cow-pte links the 512 PTE tables and copies
 *     the PUD and PMD pages (2); linux copies all 514 tables and 262,144
 *     pages' entries;
 *   later, the children's writes copy 52 tables each (26,214 pages: 51
 *     whole spans and part of a 52nd): 208 in all, beyond the copies of a
 *     run whose children write nothing (the processes' own stacks and
 *     data break shared tables too, and which side copies a table both
 *     write depends on which is read first; the sum does not).
 * The writes are seen at ptshared's timer readings, by the pages the
 * children map alone (pagemap's exclusive bit: docs/procfs.md, "Written
 * pages"): without them a write to a page present before the fork shows
 * nothing, and cow-pte would count no copy.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "run_util.h"

#define KIDS 4

struct cow_run {
	struct jr_value *doc;
	long control, kids[KIDS];
};

/* `ptshare run` of kcow_subject PERCENT; the report and the pids. */
static void run(const char *percent, const char *json, struct cow_run *r)
{
	const char *argv[] = { PTSHARE_PATH, "run", "--no-record", "--policy",
			       "linux,cow-pte", "--interval", "1", "--json",
			       json, "--", KCOW_SUBJECT_PATH, percent, NULL };
	struct cmd c;
	cmd_start(&c, argv, NULL);
	size_t n = 0;
	for (const char *line; (line = cmd_line(&c));) {
		if (!strncmp(line, "control ", 8))
			r->control = atol(line + 8);
		else if (!strncmp(line, "child ", 6) && n < KIDS)
			r->kids[n++] = atol(line + 6);
	}
	int status = cmd_finish(&c);
	assert_no_sanitizer_report(&c);
	if (status || n != KIDS || !r->control)
		fail_msg("kcow_subject %s: status %d, %zu children said:\n%s",
			 percent, status, n, c.text[1]);
	cmd_free(&c);
	r->doc = report_read(json);
}

static uint64_t counter(const struct cow_run *r, long pid, const char *label,
			const char *name)
{
	const struct jr_value *p = report_process(r->doc, pid);
	if (!p)
		fail_msg("pid %ld is not in the report's peak", pid);
	return jr_path_u64(jr_get(jr_get(p, "policies"), label), name, 0);
}

/* The cow-pte copies every process at the peak made. */
static uint64_t copies(const struct cow_run *r)
{
	const struct jr_value *procs = jr_get(r->doc, "processes");
	uint64_t n = 0;
	for (size_t i = 0; i < jr_len(procs); i++)
		n += jr_path_u64(jr_get(jr_get(jr_at(procs, i), "policies"),
					"cow-pte"), "cow_copies", 0);
	return n;
}

/* What a child's fork did beyond the control's fork. */
static void check_fork(const struct cow_run *r, long kid)
{
	static const struct {
		const char *label, *name;
		uint64_t more;
	} want[] = {
		{ "cow-pte", "fork_tables_linked", 512 },
		{ "cow-pte", "fork_tables_copied", 2 },
		{ "cow-pte", "fork_pages_copied", 0 },
		{ "linux", "fork_tables_linked", 0 },
		{ "linux", "fork_tables_copied", 514 },
		{ "linux", "fork_pages_copied", 262144 },
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		uint64_t got = counter(r, kid, want[i].label, want[i].name);
		uint64_t base = counter(r, r->control, want[i].label, want[i].name);
		printf("  child %ld, %s %s: %llu (control %llu)\n", kid,
		       want[i].label, want[i].name, (unsigned long long)got,
		       (unsigned long long)base);
		if (got - base != want[i].more)
			fail_msg("child %ld: %s %s %llu, control %llu: not %llu "
				 "more", kid, want[i].label, want[i].name,
				 (unsigned long long)got, (unsigned long long)base,
				 (unsigned long long)want[i].more);
	}
}

static void test_fork_and_writes(void **state)
{
	(void)state;
	struct cow_run ten = { 0 }, none = { 0 };
	char dir[64];
	tmp_make(dir, sizeof(dir));
	run("10", tmp_path(dir, "ten.json"), &ten);
	run("0", tmp_path(dir, "none.json"), &none);
	for (size_t i = 0; i < KIDS; i++)
		check_fork(&ten, ten.kids[i]);
	uint64_t with = copies(&ten), without = copies(&none);
	printf("cow-pte copies after the forks: %llu with the writes, %llu "
	       "without: %lld for the writes (by hand: 4 x 52 = 208)\n",
	       (unsigned long long)with, (unsigned long long)without,
	       (long long)(with - without));
	assert_int_equal(with, without + 4 * 52);
	jr_free(ten.doc);
	jr_free(none.doc);
	const char *const files[] = { "ten.json", "none.json", NULL };
	tmp_remove(dir, files);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_fork_and_writes,
						run_tmpdir_setup,
						run_tmpdir_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
