/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include "torture_util.h"
#include "lib/clock.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#define ARGS_MAX 32

/* Each test's TMPDIR. */
/* argv with argv[0] filled in. */
static size_t program_args(const char **out, const char *const argv[])
{
	size_t n = 0;
	out[n++] = argv[0] ? argv[0] : TORTURE_SUBJECT_PATH;
	for (size_t i = 1; argv[i]; i++)
		out[n++] = argv[i];
	out[n] = NULL;
	return n;
}

void assert_same_run(const struct cmd *a, int a_status, const struct cmd *b,
		     int b_status)
{
	for (int i = 0; i < 2; i++)
		if (a->len[i] != b->len[i] ||
		    memcmp(a->text[i], b->text[i], a->len[i]))
			fail_msg("%s differs:\n--- plain\n%s--- under ptshare\n%s",
				 i ? "stderr" : "stdout", a->text[i], b->text[i]);
	assert_int_equal(a_status, b_status);
}

void torture_traced(struct torture *t, const char *const opts[],
		    const char *const argv[])
{
	const char *args[ARGS_MAX] = { PTSHARE_PATH, "run", "--json", NULL, "-o",
				       NULL, "--record", NULL };
	size_t n = 8;
	tmp_make(t->dir, sizeof(t->dir));
	args[3] = tmp_path(t->dir, "report.json");
	args[5] = tmp_path(t->dir, "report.txt");
	args[7] = tmp_path(t->dir, "trace");
	for (size_t i = 0; opts && opts[i]; i++)
		args[n++] = opts[i];
	args[n++] = "--";
	program_args(args + n, argv);
	t->status = cmd_run(&t->traced, args, NULL);
	t->traced_end_ns = now_ns();
	assert_no_sanitizer_report(&t->traced);
	assert_true(t->status >= 0);
	assert_int_equal(dir_entries(run_tmpdir), 0);
	t->doc = report_read(tmp_path(t->dir, "report.json"));
}

void torture_compare(struct torture *t, const char *const opts[],
		     const char *const argv[])
{
	const char *args[ARGS_MAX];
	program_args(args, argv);
	int plain = cmd_run(&t->plain, args, NULL);
	torture_traced(t, opts, argv);
	assert_same_run(&t->plain, plain, &t->traced, t->status);
}

void torture_free(struct torture *t)
{
	static const char *const files[] = { "report.json", "report.txt", "trace",
					     NULL };
	jr_free(t->doc);
	cmd_free(&t->plain);
	cmd_free(&t->traced);
	tmp_remove(t->dir, files);
	memset(t, 0, sizeof(*t));
}

const char *torture_trace(const struct torture *t)
{
	return tmp_path(t->dir, "trace");
}

size_t assert_models_at_most_kernel(const struct jr_value *doc, size_t unread)
{
	const struct jr_value *finals = jr_get(doc, "final_checkpoints");
	size_t exact = 0, never = 0;
	for (size_t i = 0; i < jr_len(finals); i++) {
		const struct jr_value *f = jr_at(finals, i);
		int64_t model = jr_path_i64(f, "model_kb", -2);
		int64_t kernel = jr_path_i64(f, "vmpte_kb", -3);
		if (kernel == -1 && model == -1) {
			never++;
			continue;
		}
		if (kernel < 0 || model < 0 || model > kernel)
			fail_msg("process %lld (%s, at its %s checkpoint): model %lld kB, "
				 "VmPTE %lld kB", (long long)jr_path_i64(f, "pid", 0),
				 jr_path_str(f, "command"), jr_path_str(f, "checkpoint"),
				 (long long)model, (long long)kernel);
		exact += model == kernel;
	}
	assert_int_equal(never, unread);
	return exact;
}

size_t finals_untraced(const struct jr_value *doc, bool untraced)
{
	const struct jr_value *finals = jr_get(doc, "final_checkpoints");
	size_t n = 0;
	for (size_t i = 0; i < jr_len(finals); i++)
		n += jr_bool(jr_get(jr_at(finals, i), "untraced")) == untraced;
	return n;
}

size_t finals_untraced_why(const struct jr_value *doc, const char *why)
{
	const struct jr_value *finals = jr_get(doc, "final_checkpoints");
	size_t n = 0;
	for (size_t i = 0; i < jr_len(finals); i++) {
		const char *said = jr_path_str(jr_at(finals, i), "untraced_why");
		n += said && !strcmp(said, why);
	}
	return n;
}

size_t finals_with_records(const struct jr_value *doc, uint64_t records)
{
	const struct jr_value *finals = jr_get(doc, "final_checkpoints");
	size_t n = 0;
	for (size_t i = 0; i < jr_len(finals); i++)
		n += jr_path_u64(jr_at(finals, i), "records", UINT64_MAX) == records;
	return n;
}

uint64_t stream_u64(const struct jr_value *doc, const char *name)
{
	char path[64];
	snprintf(path, sizeof(path), "stream.%s", name);
	uint64_t v;
	if (!jr_u64(jr_path(doc, path), &v))
		fail_msg("the report has no %s", path);
	return v;
}
