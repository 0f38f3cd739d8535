/* SPDX-License-Identifier: MIT */
/*
 * `--flamegraph FILE` (docs/flamegraph.md) on the demo workload: FILE holds
 * collapsed stacks ("frame;...;frame N", what flamegraph.pl and speedscope
 * read) whose weights sum to today's PTE tables in the report's totals, the
 * pool's call stack (main, prefork_pool.c) the heaviest; FILE.POLICY, for
 * each other policy, the tables it saves, summing to the report's saving
 * (mshare and hugetlb-2m: at least, see the doc); a replay of the run's
 * trace writes the same files; a FILE of "-" is a usage error.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "run_util.h"

#define POLICIES "linux,mccracken-2005,hugetlb-2m,mshare"
static const char *const labels[] = { "mccracken-2005", "hugetlb-2m", "mshare" };

/* The weights of a collapsed-stacks file summed, every line checked; the
 * heaviest line's stack into top. */
static uint64_t weights(const char *path, char *top, size_t len)
{
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	char *text = file_read(path, NULL), *save = NULL;
	uint64_t sum = 0, most = 0;
	for (char *line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *space = strrchr(line, ' '), *end;
		if (!space || space == line || !strchr(line, ';'))
			fail_msg("%s: not a collapsed stack: '%s'", path, line);
		uint64_t w = strtoull(space + 1, &end, 10);
		if (*end || !w || strstr(line, ";;"))
			fail_msg("%s: bad line '%s'", path, line);
		sum += w;
		if (w > most) {
			most = w;
			snprintf(top, len, "%.*s", (int)(space - line), line);
		}
	}
	free(text);
	return sum;
}

static uint64_t pte_tables(const struct jr_value *doc, const char *label)
{
	const struct jr_value *p = jr_get(jr_path(doc, "totals.policies"), label);
	uint64_t n = ~0ULL;
	assert_true(jr_u64(jr_path(p, "distinct.pte"), &n));
	return n;
}

static void check_files(const char *file, const struct jr_value *doc)
{
	char top[4096], path[512];
	uint64_t today = pte_tables(doc, "linux");
	assert_true(today > 0);
	assert_int_equal(weights(file, top, sizeof(top)), today);
	if (!strstr(top, "main (prefork_pool.c:") ||
	    !strstr(top, ";[shared anonymous]"))
		fail_msg("the heaviest stack is not the pool's: %s", top);
	for (size_t i = 0; i < sizeof(labels) / sizeof(*labels); i++) {
		snprintf(path, sizeof(path), "%s.%s", file, labels[i]);
		uint64_t saved = weights(path, top, sizeof(top));
		uint64_t report = today - pte_tables(doc, labels[i]);
		assert_true(report > 0);
		/* mshare and hugetlb-2m: a table a mapping placed in the
		 * host, or moved by the kernel, met with a neighbour is the
		 * neighbour's then, a stack it costs */
		if (!strcmp(labels[i], "mccracken-2005"))
			assert_int_equal(saved, report);
		else
			assert_true(saved >= report && saved < report + 64);
	}
}

static void test_run_and_replay(void **state)
{
	(void)state;
	char dir[64], file[256], again[256], json[256], trace[256];
	tmp_make(dir, sizeof(dir));
	snprintf(file, sizeof(file), "%s", tmp_path(dir, "run.folded"));
	snprintf(again, sizeof(again), "%s", tmp_path(dir, "replay.folded"));
	snprintf(json, sizeof(json), "%s", tmp_path(dir, "run.json"));
	snprintf(trace, sizeof(trace), "%s", tmp_path(dir, "run.trace"));
	const char *run[] = { PTSHARE_PATH, "run", "--policy", POLICIES,
			      "--flamegraph", file, "--json", json, "--record",
			      trace, "-o", "/dev/null", "--", PREFORK_POOL_PATH,
			      "--hold", "1", "--pool-mib", "64", "--workers", "3",
			      NULL };
	cmd_run_ok(run);
	struct jr_value *doc = report_read(json);
	check_files(file, doc);
	const char *replay[] = { PTSHARE_PATH, "replay", trace, "--policy",
				 POLICIES, "--flamegraph", again, "-o", "/dev/null",
				 NULL };
	cmd_run_ok(replay);
	char *a = file_read(file, NULL), *b = file_read(again, NULL);
	assert_string_equal(a, b);
	free(a), free(b);
	for (size_t i = 0; i < sizeof(labels) / sizeof(*labels); i++) {
		char pa[512], pb[512];
		snprintf(pa, sizeof(pa), "%s.%s", file, labels[i]);
		snprintf(pb, sizeof(pb), "%s.%s", again, labels[i]);
		a = file_read(pa, NULL), b = file_read(pb, NULL);
		assert_string_equal(a, b);
		free(a), free(b);
	}
	jr_free(doc);
	tmp_remove(dir, (const char *const[]){ "run.folded", "run.folded.mccracken-2005",
		   "run.folded.hugetlb-2m", "run.folded.mshare", "replay.folded",
		   "replay.folded.mccracken-2005", "replay.folded.hugetlb-2m",
		   "replay.folded.mshare", "run.json", "run.trace", NULL });
}

static void test_usage(void **state)
{
	(void)state;
	const char *argv[] = { PTSHARE_PATH, "replay", "t", "--flamegraph", "-", NULL };
	struct cmd c;
	assert_int_equal(cmd_run(&c, argv, NULL), 2);
	assert_non_null(strstr(c.text[1], "--flamegraph needs a file name"));
	cmd_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_usage),
		cmocka_unit_test_setup_teardown(test_run_and_replay, run_tmpdir_setup,
						run_tmpdir_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
