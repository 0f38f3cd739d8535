/* SPDX-License-Identifier: MIT */
/*
 * The series every report carries (docs/report-json.md, "series"): a point
 * per round of readings of `ptshare run`, whose highest is the peak the
 * report shows, the same from a replay of the trace; the same series from
 * `ptshare snapshot --interval S --count N`; and at most
 * REPORT_SERIES_MAX points however long the run, the highest kept.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "report/report.h"
#include "run_util.h"

static uint64_t policy_tables(const struct jr_value *point, const char *label)
{
	const struct jr_value *p = jr_get(jr_get(point, "policies"), label);
	uint64_t t = UINT64_MAX, bytes = 0;
	assert_true(jr_u64(jr_get(p, "tables"), &t));
	assert_true(jr_u64(jr_get(p, "bytes"), &bytes));
	assert_int_equal(bytes, t * 4096);
	return t;
}

/* Every point: time never going back, each policy's tables and saving
 * against linux; returns the index of the one with most linux tables. */
static size_t check_points(const struct jr_value *series)
{
	const struct jr_value *pts = jr_get(series, "points");
	size_t peak = 0;
	double last = 0;
	assert_true(jr_len(pts) > 0);
	for (size_t i = 0; i < jr_len(pts); i++) {
		const struct jr_value *pt = jr_at(pts, i);
		const struct jr_value *pol = jr_get(pt, "policies");
		double t = -1;
		assert_true(jr_double(jr_get(pt, "t_s"), &t));
		assert_true(t >= last);
		last = t;
		uint64_t today = policy_tables(pt, "linux");
		for (size_t k = 0; k < jr_len(pol); k++) {
			int64_t saved = -1;
			uint64_t tables = policy_tables(pt, jr_key_at(pol, k));
			assert_true(jr_i64(jr_get(jr_get(pol, jr_key_at(pol, k)),
					    "saved_bytes"), &saved));
			assert_int_equal(saved, ((int64_t)today - (int64_t)tables) * 4096);
		}
		if (today > policy_tables(jr_at(pts, peak), "linux"))
			peak = i;
	}
	assert_int_equal(jr_path_u64(series, "peak", 999), peak);
	return peak;
}

/* The text's "over time" table: as many rows as the JSON has points unlike
 * the one before them (up to 12), none repeating the figures of the row
 * above it (everything but its time). */
static void check_text_rows(const char *text, const struct jr_value *pts)
{
	size_t unlike = 0;
	for (size_t i = 0; i < jr_len(pts); i++) {
		const struct jr_value *a = jr_at(pts, i), *b = jr_at(pts, i - !!i);
		const struct jr_value *pa = jr_get(a, "policies");
		bool same = i && jr_path_u64(a, "processes", 0) ==
					 jr_path_u64(b, "processes", 1) &&
			    jr_path_u64(a, "vmpte_bytes", 0) ==
				    jr_path_u64(b, "vmpte_bytes", 1);
		for (size_t k = 0; same && k < jr_len(pa); k++)
			same = policy_tables(a, jr_key_at(pa, k)) ==
			       policy_tables(b, jr_key_at(pa, k));
		unlike += !same;
	}
	const char *at = strstr(text, "over time: ");
	assert_non_null(at);
	at = strchr(strchr(at, '\n') + 1, '\n') + 1; /* past the header */
	char last[512] = "";
	size_t rows = 0;
	for (const char *end; (end = strchr(at, '\n')) && end > at; at = end + 1) {
		/* the figures: what follows the time ("*   1.0s") */
		const char *fig = at + 11;
		char row[512];
		snprintf(row, sizeof(row), "%.*s", (int)(end - fig), fig);
		if (!strcmp(row, last))
			fail_msg("a row repeats the one above it:\n%s", text);
		snprintf(last, sizeof(last), "%s", row);
		rows++;
	}
	assert_int_equal(rows, unlike < 12 ? unlike : 12);
}

/* The run's series: a point per round of readings (the timer's, each
 * exit's), the highest the peak of the report, processes leaving at the
 * end; the text's table; the replay's series the same. */
static void test_run_series(void **state)
{
	(void)state;
	char dir[64];
	tmp_make(dir, sizeof(dir));
	char json[256], text[256], trace[256];
	snprintf(json, sizeof(json), "%s", tmp_path(dir, "run.json"));
	snprintf(text, sizeof(text), "%s", tmp_path(dir, "run.txt"));
	snprintf(trace, sizeof(trace), "%s", tmp_path(dir, "run.trace"));
	const char *argv[] = { PTSHARE_PATH, "run", "--interval", "1",
			       "--json", json, "-o", text, "--record", trace,
			       "--", PREFORK_POOL_PATH, "--workers", "4",
			       "--hold", "3", NULL };
	cmd_run_ok(argv);
	struct jr_value *doc = report_read(json);
	const struct jr_value *series = jr_get(doc, "series");
	const struct jr_value *pts = jr_get(series, "points");
	size_t peak = check_points(series);
	/* held 3 s, read every second: timer rounds, then each exit's */
	assert_true(jr_len(pts) >= 4);
	assert_int_equal(jr_path_u64(series, "readings", 0), jr_len(pts));
	assert_int_equal(jr_path_u64(series, "readings_per_point", 0), 1);
	const struct jr_value *top = jr_at(pts, peak);
	assert_int_equal(policy_tables(top, "linux") * 4096,
			 jr_path_u64(doc, "totals.policies.linux.bytes", 0));
	assert_int_equal(jr_path_u64(top, "processes", 0),
			 jr_len(jr_get(doc, "processes")));
	assert_int_equal(jr_path_u64(top, "processes", 0), 5);
	assert_true(jr_path_u64(top, "vmpte_bytes", 0) > 0);
	assert_true(jr_path_u64(jr_at(pts, jr_len(pts) - 1), "processes", 9) < 5);
	char *t = file_read(text, NULL);
	if (!strstr(t, "over time: ") || !strstr(t, "\n*"))
		fail_msg("no series in the text report:\n%s", t);
	check_text_rows(t, pts);
	free(t);
	jr_free(doc);
	assert_replay_same(PTSHARE_PATH, trace, "--json", json,
			   tmp_path(dir, "replay.json"));
	tmp_remove(dir, (const char *const[]){ "run.json", "run.txt", "run.trace",
					       "replay.json", NULL });
}

/* Three readings of a running process, a second apart, from /proc. */
static void test_snapshot_series(void **state)
{
	(void)state;
	char dir[64], pid[16];
	tmp_make(dir, sizeof(dir));
	const char *pool[] = { PREFORK_POOL_PATH, "--workers", "0", "--hold", "60", NULL };
	struct cmd subject;
	cmd_start(&subject, pool, NULL);
	assert_non_null(cmd_line(&subject)); /* "ready PID" */
	snprintf(pid, sizeof(pid), "%d", (int)subject.pid);
	const char *json = tmp_path(dir, "snap.json");
	const char *argv[] = { PTSHARE_PATH, "snapshot", "--pid", pid,
			       "--interval", "1", "--count", "3", "--json", json,
			       NULL };
	cmd_run_ok(argv);
	kill(subject.pid, SIGTERM);
	cmd_finish(&subject);
	cmd_free(&subject);
	struct jr_value *doc = report_read(json);
	const struct jr_value *series = jr_get(doc, "series");
	const struct jr_value *pts = jr_get(series, "points");
	size_t peak = check_points(series);
	assert_int_equal(jr_len(pts), 3);
	for (size_t i = 0; i < 3; i++) {
		const struct jr_value *pt = jr_at(pts, i);
		assert_true(jr_path_double(pt, "t_s", -1) >= (double)i);
		assert_int_equal(jr_path_u64(pt, "processes", 0), 1);
		assert_int_equal(jr_path_u64(pt, "vmpte_bytes", 0),
				 policy_tables(pt, "linux") * 4096);
	}
	assert_int_equal(jr_path_u64(jr_at(pts, peak), "vmpte_bytes", 0),
			 jr_path_u64(doc, "processes[0].vmpte_kb", 0) * 1024);
	jr_free(doc);
	tmp_remove(dir, (const char *const[]){ "snap.json", NULL });
}

static void expect_usage_error(const char *const argv[], const char *says)
{
	struct cmd c;
	assert_int_equal(cmd_run(&c, argv, NULL), 2);
	if (!strstr(c.text[1], says))
		fail_msg("no '%s' in:\n%s", says, c.text[1]);
	cmd_free(&c);
}

static void test_snapshot_usage(void **state)
{
	(void)state;
	expect_usage_error((const char *const[]){ PTSHARE_PATH, "snapshot",
			   "--interval", "1", NULL }, "--interval needs --count");
	expect_usage_error((const char *const[]){ PTSHARE_PATH, "snapshot",
			   "--count", "0", NULL }, "bad count");
	expect_usage_error((const char *const[]){ PTSHARE_PATH, "snapshot",
			   "--count", "2", "--interval", "x", NULL }, "bad number");
}

/* A long run: at most REPORT_SERIES_MAX points, each a real reading, the
 * highest kept, in time order. */
static void test_series_bounded(void **state)
{
	(void)state;
	struct report_series s = { 0 };
	for (uint64_t i = 0; i < 1000; i++) {
		struct report_point pt = { .t_ns = i, .processes = 1 };
		pt.tables[0] = i % 97 + (i == 613 ? 1000 : 0);
		assert_int_equal(report_series_add(&s, &pt), 0);
		assert_true(s.n <= REPORT_SERIES_MAX);
	}
	assert_int_equal(s.readings, 1000);
	assert_true(s.n * s.per_point >= 1000 && s.per_point > 1);
	assert_int_equal(s.p[report_series_peak(&s)].t_ns, 613);
	for (size_t i = 0; i < s.n; i++) {
		assert_int_equal(s.p[i].tables[0], s.p[i].t_ns % 97 +
				 (s.p[i].t_ns == 613 ? 1000 : 0));
		assert_true(!i || s.p[i].t_ns > s.p[i - 1].t_ns);
	}
	report_series_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_series_bounded),
		cmocka_unit_test(test_snapshot_usage),
		cmocka_unit_test_setup_teardown(test_run_series, run_tmpdir_setup,
						run_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_snapshot_series,
						run_tmpdir_setup, run_tmpdir_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
