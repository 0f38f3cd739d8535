/* SPDX-License-Identifier: MIT */
/*
 * The HTML report (docs/html.md) in a real browser.  `ptshare run --html`
 * on the demo workload writes a 0600 page that embeds the run's JSON
 * report, byte for byte; headless Chromium loads it and its script draws
 * one bar per policy (with the policy's bytes), one strip per process and
 * one row per mapping (with its call site), the timeline of the run's
 * series with its peak circled, the savings, the processes' table, the
 * strips' scale, the record health and faults; clicking a heading (the
 * page's test hook) sorts its table; a screenshot is kept in the test's
 * artefacts.  `ptshare replay --html` of the run's trace writes the
 * same page, `ptshare snapshot --html --group-by command` one for a
 * process read from /proc, with its group's row (a run without --group-by
 * has none).
 * Without Chromium the test is skipped, except under CI=true, where it
 * fails.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "html_drawn.h"
#include "run_util.h"
#include "schema_check.h"

#define CHROMIUM "/usr/bin/chromium"
#define WIDTH 1280
#define HEIGHT 2400
/* A blank page of that size is about 6 kB of PNG; the report's, 100 kB. */
#define PNG_MIN 40000

static size_t count(const char *text, const char *what)
{
	size_t n = 0;
	for (const char *p = text; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

static void assert_contains(const char *text, const char *what)
{
	if (!strstr(text, what))
		fail_msg("the page has no '%s'", what);
}

static int setup(void **state)
{
	if (access(CHROMIUM, X_OK))
		test_skip(CHROMIUM " is missing (Debian package chromium)");
	return 0;
}

static int teardown(void **state)
{
	cleanup_leftovers();
	return 0;
}

/* Chromium, headless, with a profile of its own removed afterwards;
 * action is --dump-dom or --screenshot=PATH.  Returns its stdout. */
static char *chromium_at(const char *page, const char *fragment,
			 const char *action)
{
	char profile[] = "/tmp/ptshare-chromium-XXXXXX", dir[80], url[4200];
	if (!mkdtemp(profile))
		fail_msg("mkdtemp: %s", strerror(errno));
	snprintf(dir, sizeof(dir), "--user-data-dir=%s", profile);
	snprintf(url, sizeof(url), "file://%s%s", page, fragment);
	char size[64];
	snprintf(size, sizeof(size), "--window-size=%d,%d", WIDTH, HEIGHT);
	const char *argv[] = { CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
			       "--hide-scrollbars", dir, size, action, url, NULL };
	const char *rm[] = { "/bin/rm", "-rf", profile, NULL };
	struct cmd c, r;
	int status = cmd_run(&c, argv, NULL);
	assert_int_equal(cmd_run(&r, rm, NULL), 0);
	cmd_free(&r);
	if (status)
		fail_msg("chromium: status %d:\n%s", status, c.text[1]);
	char *out = strdup(c.text[0]);
	cmd_free(&c);
	return out;
}

static char *chromium(const char *page, const char *action)
{
	return chromium_at(page, "", action);
}

/* The JSON the page embeds, with the '<' it escapes restored. */
static char *embedded_json(const char *page)
{
	static const char open[] = "<script type=\"application/json\" id=\"ptshare-report\">\n";
	const char *start = strstr(page, open);
	assert_non_null(start);
	start += strlen(open);
	const char *end = strstr(start, "\n</script>");
	assert_non_null(end);
	char *json = strndup(start, (size_t)(end - start));
	for (char *p; (p = strstr(json, "\\u003c"));) {
		*p = '<';
		memmove(p + 1, p + 6, strlen(p + 6) + 1);
	}
	return json;
}

/* What the page's script drew: one bar per policy with its bytes, one
 * strip per process, one row per mapping and its call site. */
static void assert_drawn(const char *dom, const struct jr_value *doc)
{
	char want[512];
	assert_contains(dom, "data-rendered=\"yes\"");
	const struct jr_value *pols = jr_get(doc, "policies");
	assert_true(jr_len(pols) > 0);
	assert_int_equal(count(dom, "class=\"policy-bar\""), jr_len(pols));
	for (size_t i = 0; i < jr_len(pols); i++) {
		const char *label = jr_path_str(jr_at(pols, i), "label");
		const struct jr_value *t = jr_get(jr_path(doc, "totals.policies"), label);
		snprintf(want, sizeof(want), "data-policy=\"%s\" data-bytes=\"%llu\"",
			 label, (unsigned long long)jr_path_u64(t, "bytes", ~0ULL));
		assert_contains(dom, want);
	}
	const struct jr_value *procs = jr_get(doc, "processes");
	assert_true(jr_len(procs) > 0);
	assert_int_equal(count(dom, "class=\"strip\""), jr_len(procs));
	size_t segments = 0;
	for (size_t i = 0; i < jr_len(procs); i++) {
		snprintf(want, sizeof(want), "class=\"strip\" data-pid=\"%llu\"",
			 (unsigned long long)jr_path_u64(jr_at(procs, i), "pid", 0));
		assert_contains(dom, want);
		segments += jr_len(jr_path(jr_at(procs, i), "regions"));
	}
	assert_true(segments > 0 && count(dom, "class=\"seg ") >= jr_len(procs));
	/* --group-by: a row per group, with its model's kB; else none. */
	const struct jr_value *groups = jr_get(doc, "groups");
	assert_int_equal(count(dom, "class=\"group-row\""), jr_len(groups));
	for (size_t i = 0; i < jr_len(groups); i++) {
		const struct jr_value *g = jr_at(groups, i);
		snprintf(want, sizeof(want), "data-group=\"%s\" data-model=\"%llu\"",
			 jr_path_str(g, "group"),
			 (unsigned long long)jr_path_u64(g, "model_kb", ~0ULL));
		assert_contains(dom, want);
	}
	const struct jr_value *maps = jr_get(doc, "mappings");
	assert_int_equal(count(dom, "class=\"mapping-row\""), jr_len(maps));
	for (size_t i = 0; i < jr_len(maps); i++) {
		const struct jr_value *f = jr_path(jr_at(maps, i), "call_site[0]");
		const char *file = jr_path_str(f, "file");
		if (!file)
			continue;
		snprintf(want, sizeof(want), ">%s (%s:%llu)<", jr_path_str(f, "function"),
			 strrchr(file, '/') ? strrchr(file, '/') + 1 : file,
			 (unsigned long long)jr_path_u64(f, "line", 0));
		assert_contains(dom, want);
	}
}

/* Headings clicked (the page's test hook, docs/html.md): the processes
 * by pid, then by VmPTE, from the most; the mappings by size. */
static void assert_sorting(const char *html, const struct jr_value *doc)
{
	size_t procs = jr_len(jr_get(doc, "processes"));
	size_t maps = jr_len(jr_get(doc, "mappings"));
	char *dom = chromium_at(html, "#sort=processes:0,mappings:1", "--dump-dom");
	assert_rows_sorted(dom, "process-row", "data-pid", true, procs);
	assert_rows_sorted(dom, "mapping-row", "data-size", true, maps);
	assert_non_null(strstr(dom, "aria-sort=\"descending\""));
	free(dom);
	dom = chromium_at(html, "#sort=processes:3", "--dump-dom");
	assert_rows_sorted(dom, "process-row", "data-vmpte", true, procs);
	free(dom);
	dom = chromium_at(html, "#sort=processes:0,processes:0", "--dump-dom");
	assert_rows_sorted(dom, "process-row", "data-pid", false, procs);
	free(dom);
}

static void assert_private(const char *path)
{
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
}

/* A PNG of the window's size, with more in it than a blank page. */
static void assert_screenshot(const char *path)
{
	size_t len;
	unsigned char *png = (unsigned char *)file_read(path, &len);
	assert_true(len > PNG_MIN);
	assert_memory_equal(png, "\x89PNG\r\n\x1a\n", 8);
	assert_memory_equal(png + 12, "IHDR", 4);
	unsigned w = (unsigned)png[16] << 24 | png[17] << 16 | png[18] << 8 | png[19];
	unsigned h = (unsigned)png[20] << 24 | png[21] << 16 | png[22] << 8 | png[23];
	assert_int_equal(w, WIDTH);
	assert_int_equal(h, HEIGHT);
	free(png);
}

static void test_run_and_replay(void **state)
{
	char dir[64];
	tmp_make(dir, sizeof(dir));
	char *json = strdup(tmp_path(dir, "run.json"));
	char *html = strdup(tmp_path(dir, "run.html"));
	char *trace = strdup(tmp_path(dir, "run.trace"));
	char *again = strdup(tmp_path(dir, "replay.html"));
	/* --hold 1: every worker is still there when the first leaves, and
	 * the peak holds all four processes however late the forks come. */
	const char *run[] = { PTSHARE_PATH, "run", "--interval", "0", "--json", json,
			      "--html", html, "--record", trace, "--",
			      PREFORK_POOL_PATH, "--hold", "1", "--pool-mib", "64",
			      "--workers", "3", NULL };
	cmd_run_ok(run);
	assert_private(html);

	char *page = file_read(html, NULL), *report = file_read(json, NULL);
	char *embedded = embedded_json(page);
	assert_string_equal(embedded, report);
	struct jr_value *doc = report_read(json);
	assert_int_equal(jr_path_u64(doc, "totals.processes", 0), 4);

	char *dom = chromium(html, "--dump-dom");
	assert_drawn(dom, doc);
	assert_timeline(dom, doc);
	assert_sections(dom, doc);
	assert_sorting(html, doc);
	if (mkdir(ARTEFACTS_DIR, 0755) && errno != EEXIST)
		fail_msg(ARTEFACTS_DIR ": %s", strerror(errno));
	const char *png = ARTEFACTS_DIR "/report.png";
	unlink(png);
	free(chromium(html, "--screenshot=" ARTEFACTS_DIR "/report.png"));
	assert_screenshot(png);
	printf("screenshot of the run's HTML report: %s\n", png);

	assert_replay_same(PTSHARE_PATH, trace, "--html", html, again);

	const char *files[] = { "run.json", "run.html", "run.trace", "replay.html", NULL };
	tmp_remove(dir, files);
	jr_free(doc);
	free(dom), free(page), free(report), free(embedded);
	free(json), free(html), free(trace), free(again);
}

static void test_snapshot(void **state)
{
	char dir[64], pid[16];
	tmp_make(dir, sizeof(dir));
	char *html = strdup(tmp_path(dir, "snap.html"));
	snprintf(pid, sizeof(pid), "%d", getpid());
	const char *snap[] = { PTSHARE_PATH, "snapshot", "--pid", pid, "--html", html,
			       "--group-by", "command", NULL };
	struct cmd c;
	assert_int_equal(cmd_run(&c, snap, NULL), 0);
	cmd_free(&c);
	assert_private(html);
	char *page = file_read(html, NULL), *json = embedded_json(page);
	struct jr_value *doc = jr_parse(json, strlen(json), NULL);
	assert_non_null(doc);
	assert_true(schema_valid(json, strlen(json), "the page's JSON"));
	assert_string_equal(jr_path_str(doc, "command"), "snapshot");
	assert_int_equal(jr_len(jr_get(doc, "processes")), 1);
	assert_int_equal(jr_len(jr_get(doc, "groups")), 1);
	char *dom = chromium(html, "--dump-dom");
	assert_drawn(dom, doc);
	assert_timeline(dom, doc);
	assert_sections(dom, doc);

	/* A page that cannot be written: said, and exit status 1. */
	const char *bad[] = { PTSHARE_PATH, "snapshot", "--pid", pid, "--html",
			      "/nonexistent/dir/page.html", NULL };
	assert_int_equal(cmd_run(&c, bad, NULL), 1);
	assert_non_null(strstr(c.text[1], "cannot write /nonexistent/dir/page.html"));
	cmd_free(&c);
	const char *missing[] = { PTSHARE_PATH, "run", "--html", NULL };
	assert_int_equal(cmd_run(&c, missing, NULL), 2);
	cmd_free(&c);

	const char *files[] = { "snap.html", NULL };
	tmp_remove(dir, files);
	jr_free(doc);
	free(dom), free(page), free(json), free(html);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_run_and_replay, setup, teardown),
		cmocka_unit_test_setup_teardown(test_snapshot, setup, teardown),
	};
	return test_group_status(cmocka_run_group_tests(tests, NULL, NULL));
}
