/* SPDX-License-Identifier: MIT */
/*
 * Call sites end to end: callsite_subject maps memory from known lines
 * under `ptshare run`; the JSON report names, for each mapping, the
 * function, source file and line the program printed, the text report says
 * `created at FUNCTION (callsite_subject.c:LINE)`, and `ptshare replay` of
 * the recorded trace writes the same JSON, byte for byte.  Names mangled
 * as C++ and Rust mangle them are demangled (mangled_subject).  The
 * trace keeps the program's build id: its replay after the program was
 * rebuilt says so, on stderr and in the JSON.
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
#include "run_util.h"

#define SIZE (4u << 20)
#define SOURCE "/callsite_subject.c"

struct site {
	const char *function;
	int line;
};

static bool ends_with(const char *s, const char *end)
{
	size_t a = s ? strlen(s) : 0, b = strlen(end);
	return a >= b && !strcmp(s + a - b, end);
}

/* Runs argv (ptshare), which must succeed, its output kept in c. */
static void run_ok(struct cmd *c, const char *const argv[])
{
	int status = cmd_run(c, argv, NULL);
	if (status)
		fail_msg("%s %s: status %d; stderr:\n%s", argv[0], argv[1],
			 status, c->text[1]);
	assert_no_sanitizer_report(c);
}

/* The lines "site FUNCTION LINE" the subject printed, in order. */
static void read_sites(const char *out, struct site *sites, size_t n)
{
	const char *p = out;
	for (size_t i = 0; i < n; i++) {
		static char names[3][32];
		assert_non_null(p = strstr(p, "site "));
		assert_int_equal(sscanf(p, "site %31s %d", names[i], &sites[i].line), 2);
		sites[i].function = names[i];
		p++;
	}
}

/* Every mapping of the kind and size has the site as its innermost frame;
 * returns how many processes map them. */
static uint64_t assert_site(const struct jr_value *doc, const char *kind,
			    const struct site *want)
{
	const struct jr_value *maps = jr_get(doc, "mappings");
	uint64_t procs = 0;
	for (size_t i = 0; i < jr_len(maps); i++) {
		const struct jr_value *m = jr_at(maps, i);
		if (strcmp(jr_path_str(m, "kind"), kind) ||
		    jr_path_u64(m, "end", 0) - jr_path_u64(m, "start", 0) != SIZE)
			continue;
		const struct jr_value *f = jr_path(m, "call_site[0]");
		if (!f)
			fail_msg("the %s mapping has no call site", kind);
		assert_string_equal(jr_path_str(f, "function"), want->function);
		if (!ends_with(jr_path_str(f, "file"), SOURCE))
			fail_msg("file %s", jr_path_str(f, "file"));
		assert_int_equal(jr_path_u64(f, "line", 0), want->line);
		assert_true(ends_with(jr_path_str(f, "object"), "/callsite_subject"));
		/* the frames above: main calls each of them */
		assert_string_equal(jr_path_str(m, "call_site[1].function"), "main");
		procs += jr_path_u64(m, "processes", 0);
	}
	return procs;
}

static void test_call_sites(void **state)
{
	char dir[64];
	tmp_make(dir, sizeof(dir));
	char *json = strdup(tmp_path(dir, "run.json"));
	char *trace = strdup(tmp_path(dir, "run.trace"));
	char *text = strdup(tmp_path(dir, "run.txt"));
	char *again = strdup(tmp_path(dir, "replay.json"));
	const char *run[] = { PTSHARE_PATH, "run", "--interval", "0", "--json", json,
			      "--record", trace, "-o", text, "--",
			      CALLSITE_SUBJECT_PATH, NULL };
	struct cmd c;
	run_ok(&c, run);

	struct site sites[3];
	read_sites(c.text[0], sites, 3);
	assert_string_equal(sites[0].function, "make_private");
	assert_string_equal(sites[1].function, "attach_segment");
	assert_string_equal(sites[2].function, "make_shared");
	struct jr_value *doc = report_read(json);
	/* The parent's untouched copy and the child's written one: the child
	 * inherited the call site. */
	assert_int_equal(assert_site(doc, "anon", &sites[0]), 2);
	assert_true(assert_site(doc, "sysv", &sites[1]) >= 1);
	/* Moved by mremap in move_shared: still make_shared's. */
	assert_true(assert_site(doc, "shmem", &sites[2]) >= 1);

	char *report = file_read(text, NULL), want[128];
	snprintf(want, sizeof(want), "created at make_private (callsite_subject.c:%d)\n",
		 sites[0].line);
	if (!strstr(report, want))
		fail_msg("no '%s' in the text report:\n%s", want, report);

	assert_replay_same(PTSHARE_PATH, trace, "--json", json, again);

	const char *files[] = { "run.json", "run.trace", "run.txt", "replay.json", NULL };
	tmp_remove(dir, files);
	jr_free(doc);
	cmd_free(&c);
	free(report);
	free(json), free(trace), free(text), free(again);
}

/* The function of the call site of the shared mapping of size bytes. */
static const char *site_of_size(const struct jr_value *doc, uint64_t size)
{
	const struct jr_value *maps = jr_get(doc, "mappings");
	for (size_t i = 0; i < jr_len(maps); i++) {
		const struct jr_value *m = jr_at(maps, i);
		if (jr_path_u64(m, "end", 0) - jr_path_u64(m, "start", 0) == size)
			return jr_path_str(m, "call_site[0].function");
	}
	fail_msg("no mapping of %llu bytes", (unsigned long long)size);
	return NULL;
}

/* Without debug info, from the symbol table: demangled. */
static void test_demangled(void **state)
{
	char dir[64];
	tmp_make(dir, sizeof(dir));
	char *json = strdup(tmp_path(dir, "run.json"));
	const char *run[] = { PTSHARE_PATH, "run", "--no-record", "--json", json,
			      "-o", "/dev/null", "--", MANGLED_SUBJECT_PATH, NULL };
	struct cmd c;
	run_ok(&c, run);
	struct jr_value *doc = report_read(json);
	assert_string_equal(site_of_size(doc, 4u << 20),
			    "ns::Pool::make(unsigned long)");
	assert_string_equal(site_of_size(doc, 6u << 20), "mycrate::pool::make");
	const char *files[] = { "run.json", NULL };
	tmp_remove(dir, files);
	jr_free(doc);
	cmd_free(&c);
	free(json);
}

/* `ptshare replay trace --json json`: its stderr (the caller frees it). */
static char *replay(const char *trace, const char *json)
{
	const char *argv[] = { PTSHARE_PATH, "replay", trace, "--json", json,
			       "-o", "/dev/null", NULL };
	struct cmd c;
	run_ok(&c, argv);
	char *err = strdup(c.text[1]);
	cmd_free(&c);
	return err;
}

static void copy(const char *from, const char *to)
{
	const char *argv[] = { "/bin/cp", from, to, NULL };
	struct cmd c;
	assert_int_equal(cmd_run(&c, argv, NULL), 0);
	cmd_free(&c);
}

/* The trace holds the program's build id; replayed with the program
 * rebuilt in its place, one warning names it, on stderr and in the JSON;
 * with the same build, none. */
static void test_rebuilt(void **state)
{
	char dir[64];
	tmp_make(dir, sizeof(dir));
	char *prog = strdup(tmp_path(dir, "callsite_subject"));
	char *trace = strdup(tmp_path(dir, "run.trace"));
	char *same = strdup(tmp_path(dir, "same.json"));
	char *rebuilt = strdup(tmp_path(dir, "rebuilt.json"));
	copy(CALLSITE_SUBJECT_PATH, prog);
	const char *run[] = { PTSHARE_PATH, "run", "--record", trace, "-o",
			      "/dev/null", "--", prog, NULL };
	struct cmd c;
	run_ok(&c, run);
	cmd_free(&c);
	assert_true(trace_records(trace, PTS_CK_BUILD_ID) >= 2); /* and libc's */

	char *err = replay(trace, same);
	assert_null(strstr(err, "build id"));
	struct jr_value *doc = report_read(same);
	assert_int_equal(jr_len(jr_get(doc, "build_ids_changed")), 0);
	jr_free(doc);
	free(err);

	copy(CALLSITE_SUBJECT_PATH "_rebuilt", prog);
	err = replay(trace, rebuilt);
	char want[160];
	snprintf(want, sizeof(want), "ptshare replay: warning: %s: build id ", prog);
	size_t warnings = 0;
	for (const char *p = err; (p = strstr(p, "warning:")); p++)
		warnings++;
	if (warnings != 1 || !strstr(err, want))
		fail_msg("not one warning, for %s:\n%s", prog, err);
	doc = report_read(rebuilt);
	const struct jr_value *b = jr_path(doc, "build_ids_changed[0]");
	assert_int_equal(jr_len(jr_get(doc, "build_ids_changed")), 1);
	assert_string_equal(jr_path_str(b, "object"), prog);
	assert_non_null(jr_path_str(b, "here"));
	assert_string_not_equal(jr_path_str(b, "here"), jr_path_str(b, "trace"));
	assert_non_null(strstr(err, jr_path_str(b, "trace")));
	jr_free(doc);
	free(err);

	const char *files[] = { "callsite_subject", "run.trace", "same.json",
				"rebuilt.json", NULL };
	tmp_remove(dir, files);
	free(prog), free(trace), free(same), free(rebuilt);
}

static int teardown(void **state)
{
	cleanup_leftovers();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_call_sites, teardown),
		cmocka_unit_test_teardown(test_demangled, teardown),
		cmocka_unit_test_teardown(test_rebuilt, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
