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
 *   later, each child's writes copy the 52 tables they meet (26,214
 *     pages: 51 whole spans and part of a 52nd), 208 in all: at the peak
 *     208 of the 5 x 512 PTE tables over the 1 GiB are no longer shared,
 *     and none in a run whose children write nothing; the children's
 *     exits, which make the parent's pages exclusive, copy none.  (Counted
 *     over the 1 GiB only: the processes' own stacks and data break shared
 *     tables too, a table or so more or less from run to run.)
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
#define REGION 0x300000000000ULL /* kcow_subject's 1 GiB */

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

/*
 * The tables the children's writes copied, over the 1 GiB alone: at the
 * peak the report's mapping of it (one row for the parent and the 4
 * children) has 5 x 512 PTE tables under cow-pte, of which all are
 * shared but those copied.
 */
static void check_writes(const struct cow_run *r, uint64_t each)
{
	const struct jr_value *maps = jr_get(r->doc, "mappings");
	for (size_t i = 0; i < jr_len(maps); i++) {
		const struct jr_value *m = jr_at(maps, i);
		if (jr_path_u64(m, "start", 0) != REGION ||
		    jr_path_u64(m, "end", 0) != REGION + (1ULL << 30))
			continue;
		const struct jr_value *c = jr_get(jr_path(m, "policies"), "cow-pte");
		uint64_t tables = jr_path_u64(c, "pte_tables", 0);
		uint64_t shared = jr_path_u64(c, "shared_tables", 0);
		printf("  the 1 GiB in %llu processes: %llu PTE tables, %llu of "
		       "them shared, %llu copied (by hand %llu)\n",
		       (unsigned long long)jr_path_u64(m, "processes", 0),
		       (unsigned long long)tables, (unsigned long long)shared,
		       (unsigned long long)(tables - shared),
		       (unsigned long long)(KIDS * each));
		assert_int_equal(jr_path_u64(m, "processes", 0), 1 + KIDS);
		assert_int_equal(tables, (1 + KIDS) * 512);
		/* The children's copies, no more: the parent's pages of the
		 * 1 GiB turn exclusive as the children exit, which is no
		 * write (mm_exiting; before it, a reading of the parent then,
		 * at a moment the peak was taken again, broke up to its 512
		 * tables: 431 = 208 + 223 seen on a loaded machine). */
		assert_int_equal(tables - shared, KIDS * each);
		return;
	}
	fail_msg("no mapping of the 1 GiB in the report");
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
	printf("writing 10%% each:\n");
	check_writes(&ten, 52);
	printf("writing nothing:\n");
	check_writes(&none, 0);
	printf("cow-pte copies after the forks, every process and mapping: "
	       "%llu with the writes, %llu without\n",
	       (unsigned long long)copies(&ten),
	       (unsigned long long)copies(&none));
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
