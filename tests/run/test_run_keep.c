/* SPDX-License-Identifier: MIT */
/*
 * The trace `ptshare run` keeps (docs/run.md, The trace): by default one
 * ptshare.CMD.PID.trace.zst in the current directory, which `ptshare
 * replay` turns into the run's report, with the run's details (host,
 * kernel, exit status...) in it; none with --no-record; plain with
 * --record FILE, which replays as its compressed form and from stdin do;
 * and a link planted at the default path refused before the program runs;
 * an older trace, without the run's details, replays with "run": null.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include <cmocka.h>

#include "run_util.h"

static const unsigned char zstd_magic[4] = { 0x28, 0xb5, 0x2f, 0xfd };

/* `ptshare run` with argv, from the directory cwd: its status. */
static int run_in(const char *cwd, struct cmd *c, const char *const argv[])
{
	int here = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(here >= 0);
	assert_int_equal(chdir(cwd), 0);
	cmd_start(c, argv, NULL);
	assert_int_equal(fchdir(here), 0);
	close(here);
	int status = cmd_finish(c);
	assert_no_sanitizer_report(c);
	return status;
}

/* The run's details are true of this machine and of the program. */
static void assert_run_details(const char *json, const char *command, int status)
{
	struct jr_value *doc = report_read(json);
	char host[256] = "";
	struct utsname u;
	assert_int_equal(gethostname(host, sizeof(host) - 1), 0);
	assert_int_equal(uname(&u), 0);
	assert_string_equal(jr_path_str(doc, "run.host"), host);
	assert_string_equal(jr_path_str(doc, "run.kernel"), u.release);
	assert_string_equal(jr_path_str(doc, "run.command_line"), command);
	assert_string_equal(jr_path_str(doc, "run.ptshare_version"), PTSHARE_VERSION);
	assert_int_equal(jr_path_i64(doc, "run.exit_status", -1), status);
	char *va = file_read("/proc/sys/kernel/randomize_va_space", NULL);
	assert_int_equal(jr_path_i64(doc, "run.randomize_va_space", -1), atoi(va));
	free(va);
	double d = -1;
	assert_true(jr_double(jr_get(jr_get(doc, "run"), "duration_s"), &d));
	assert_true(d >= 0 && d < 600);
	int64_t start = jr_path_i64(doc, "run.start_ns", 0) / 1000000000;
	assert_true(start <= time(NULL) && start > time(NULL) - 600);
	jr_free(doc);
}

/* A default run: exactly one ptshare.run_subject.PID.trace.zst (PID:
 * ptshare's), compressed and private, named at the end of the report;
 * its replay writes the run's JSON. */
static void test_default_kept(void **state)
{
	char cwd[64], out[64], name[128], trace[192], said[400];
	struct cmd c;
	tmp_make(cwd, sizeof(cwd));
	tmp_make(out, sizeof(out));
	const char *json = tmp_path(out, "run.json");
	const char *argv[] = { PTSHARE_PATH, "run", "--json", json, "--",
			       RUN_SUBJECT_PATH, "exit", "5", NULL };
	assert_int_equal(run_in(cwd, &c, argv), 5);
	snprintf(name, sizeof(name), "ptshare.run_subject.%d.trace.zst", (int)c.pid);
	snprintf(trace, sizeof(trace), "%s", tmp_path(cwd, name));
	snprintf(said, sizeof(said), "ptshare run: trace kept in %s: ptshare "
		 "replay %s\n", name, name);
	size_t sl = strlen(said), el = strlen(c.text[1]);
	if (el < sl || strcmp(c.text[1] + el - sl, said))
		fail_msg("the report does not end with [%s]:\n%s", said, c.text[1]);
	cmd_free(&c);
	assert_int_equal(dir_entries(cwd), 1);
	struct stat st;
	assert_int_equal(lstat(trace, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0600);
	char *bytes = file_read(trace, NULL);
	assert_memory_equal(bytes, zstd_magic, sizeof(zstd_magic));
	free(bytes);
	assert_replay_same(PTSHARE_PATH, trace, "--json", json,
			   tmp_path(out, "replay.json"));
	assert_run_details(json, RUN_SUBJECT_PATH " exit 5", 5);
	const char *const kept[] = { name, NULL };
	tmp_remove(cwd, kept);
	const char *const made[] = { "run.json", "replay.json", NULL };
	tmp_remove(out, made);
}

/* --record FILE.zst: compressed there, and nothing in the current
 * directory; the text report (-o) ends with its name; its replay writes
 * the run's JSON. */
static void test_record_zst(void **state)
{
	char cwd[64], dir[64];
	struct cmd c;
	tmp_make(cwd, sizeof(cwd));
	tmp_make(dir, sizeof(dir));
	const char *json = tmp_path(dir, "run.json");
	char trace[128];
	snprintf(trace, sizeof(trace), "%s", tmp_path(dir, "run.trace.zst"));
	const char *text = tmp_path(dir, "report.txt");
	const char *argv[] = { PTSHARE_PATH, "run", "--record", trace, "--json", json,
			       "-o", text, "--", RUN_SUBJECT_PATH, "exit", "0", NULL };
	assert_int_equal(run_in(cwd, &c, argv), 0);
	assert_string_equal(c.text[1], ""); /* stderr is the program's */
	cmd_free(&c);
	assert_int_equal(dir_entries(cwd), 0);
	char said[400], *report = file_read(text, NULL);
	snprintf(said, sizeof(said), "\nptshare run: trace kept in %s: ptshare "
		 "replay %s\n", trace, trace);
	size_t sl = strlen(said), rl = strlen(report);
	if (rl < sl || strcmp(report + rl - sl, said))
		fail_msg("the report does not end with [%s]:\n%s", said, report);
	free(report);
	char *bytes = file_read(trace, NULL);
	assert_memory_equal(bytes, zstd_magic, sizeof(zstd_magic));
	free(bytes);
	assert_replay_same(PTSHARE_PATH, trace, "--json", json,
			   tmp_path(dir, "replay.json"));
	tmp_remove(cwd, NULL);
	const char *const made[] = { "run.json", "run.trace.zst", "replay.json",
				     "report.txt", NULL };
	tmp_remove(dir, made);
}

/* --no-record: nothing in the current directory. */
static void test_no_record(void **state)
{
	char cwd[64];
	struct cmd c;
	tmp_make(cwd, sizeof(cwd));
	const char *argv[] = { PTSHARE_PATH, "run", "--no-record", "-o", "/dev/null",
			       "--", RUN_SUBJECT_PATH, "exit", "0", NULL };
	assert_int_equal(run_in(cwd, &c, argv), 0);
	assert_null(strstr(c.text[1], "trace kept"));
	cmd_free(&c);
	assert_int_equal(dir_entries(cwd), 0);
	tmp_remove(cwd, NULL);
}

/* The file at from compressed into to. */
static void compress_file(const char *from, const char *to)
{
	size_t n;
	char *plain = file_read(from, &n);
	size_t cap = ZSTD_compressBound(n);
	char *z = malloc(cap);
	size_t zn = ZSTD_compress(z, cap, plain, n, 3);
	assert_false(ZSTD_isError(zn));
	FILE *f = fopen(to, "we");
	assert_non_null(f);
	assert_int_equal(fwrite(z, 1, zn, f), zn);
	assert_int_equal(fclose(f), 0);
	free(plain);
	free(z);
}

/* `ptshare replay - --json out` with the file at path on its stdin. */
static void replay_stdin(const char *path, const char *out)
{
	size_t n;
	char *bytes = file_read(path, &n);
	const char *argv[] = { PTSHARE_PATH, "replay", "-", "--json", out, NULL };
	struct cmd c;
	cmd_start(&c, argv, NULL);
	assert_int_equal(write(c.in, bytes, n), (ssize_t)n);
	cmd_close_stdin(&c);
	int status = cmd_finish(&c);
	if (status)
		fail_msg("replay -: status %d:\n%s", status, c.text[1]);
	assert_no_sanitizer_report(&c);
	cmd_free(&c);
	free(bytes);
}

/* --record FILE (no .zst) is plain; it, its compressed form, and both
 * from stdin replay to the run's JSON. */
static void test_forms_agree(void **state)
{
	char dir[64];
	struct cmd c;
	tmp_make(dir, sizeof(dir));
	const char *json = tmp_path(dir, "run.json");
	char plain[128], zst[128];
	snprintf(plain, sizeof(plain), "%s", tmp_path(dir, "trace"));
	snprintf(zst, sizeof(zst), "%s", tmp_path(dir, "trace.zst"));
	const char *argv[] = { PTSHARE_PATH, "run", "--record", plain, "--json",
			       json, "-o", "/dev/null", "--", RUN_SUBJECT_PATH,
			       "exit", "0", NULL };
	assert_int_equal(run_in(dir, &c, argv), 0);
	cmd_free(&c);
	char *bytes = file_read(plain, NULL);
	assert_memory_equal(bytes, "PTSHARE-TRACE\n", 14);
	free(bytes);
	compress_file(plain, zst);
	assert_replay_same(PTSHARE_PATH, plain, "--json", json,
			   tmp_path(dir, "plain.json"));
	assert_replay_same(PTSHARE_PATH, zst, "--json", json,
			   tmp_path(dir, "zst.json"));
	const char *ins[][2] = { { plain, "stdin-plain.json" },
				 { zst, "stdin-zst.json" } };
	for (size_t i = 0; i < 2; i++) {
		char out[128];
		snprintf(out, sizeof(out), "%s", tmp_path(dir, ins[i][1]));
		replay_stdin(ins[i][0], out);
		char *a = file_read(json, NULL), *b = file_read(out, NULL);
		assert_string_equal(a, b);
		free(a);
		free(b);
	}
	const char *const made[] = { "run.json", "trace", "trace.zst", "plain.json",
				     "zst.json", "stdin-plain.json",
				     "stdin-zst.json", NULL };
	tmp_remove(dir, made);
}

/* A trace from before the run's details (the fuzz corpus's) still
 * replays, with "run": null. */
static void test_old_trace(void **state)
{
	char dir[64];
	struct cmd c;
	tmp_make(dir, sizeof(dir));
	const char *json = tmp_path(dir, "old.json");
	const char *argv[] = { PTSHARE_PATH, "replay", OLD_TRACE, "--json", json, NULL };
	assert_int_equal(cmd_run(&c, argv, NULL), 0);
	cmd_free(&c);
	struct jr_value *doc = report_read(json);
	assert_true(jr_is(jr_get(doc, "run"), JR_NULL));
	assert_true(jr_path_u64(doc, "stream.records", 0) > 0);
	jr_free(doc);
	const char *const made[] = { "old.json", NULL };
	tmp_remove(dir, made);
}

/* A link at the default path, planted by the shell that becomes ptshare
 * (its pid is ptshare's): refused before the program runs, and where it
 * points nothing is made. */
static void test_link_refused(void **state)
{
	char cwd[64], other[64], script[512];
	struct cmd c;
	tmp_make(cwd, sizeof(cwd));
	tmp_make(other, sizeof(other));
	const char *victim = tmp_path(other, "victim");
	snprintf(script, sizeof(script), "ln -s %s ptshare.run_subject.$$.trace.zst "
		 "&& exec %s run -- %s exit 0", victim, PTSHARE_PATH,
		 RUN_SUBJECT_PATH);
	const char *argv[] = { "/bin/sh", "-c", script, NULL };
	assert_int_equal(run_in(cwd, &c, argv), 1);
	char name[96], said[200];
	snprintf(name, sizeof(name), "ptshare.run_subject.%d.trace.zst", (int)c.pid);
	snprintf(said, sizeof(said), "ptshare run: cannot keep the trace in %s: "
		 "File exists", name);
	if (!strstr(c.text[1], said))
		fail_msg("no [%s] in:\n%s", said, c.text[1]);
	assert_string_equal(c.text[0], ""); /* the program did not run */
	cmd_free(&c);
	assert_int_equal(access(victim, F_OK), -1);
	assert_int_equal(dir_entries(cwd), 1); /* the link, left as it was */
	struct stat st;
	assert_int_equal(lstat(tmp_path(cwd, name), &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	const char *const made[] = { name, NULL };
	tmp_remove(cwd, made);
	tmp_remove(other, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_default_kept, run_tmpdir_setup,
						run_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_no_record, run_tmpdir_setup,
						run_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_record_zst, run_tmpdir_setup,
						run_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_forms_agree, run_tmpdir_setup,
						run_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_link_refused, run_tmpdir_setup,
						run_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_old_trace, run_tmpdir_setup,
						run_tmpdir_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
