/* SPDX-License-Identifier: MIT */
/*
 * What the program sees and what its caller sees: `ptshare run` exits with
 * the program's status (128 + the signal, as shells do), passes its output
 * through byte for byte, forwards INT, TERM, HUP and QUIT to it, waits for
 * the processes that outlive it (and forwards to them), and carries on when
 * the daemon dies.  The shim without a daemon changes nothing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "ptshare/wire.h"
#include "run_util.h"

/* ptshare run -- run_subject args..., started. */
static void start(struct cmd *c, const char *const args[])
{
	const char *argv[16] = { PTSHARE_PATH, "run", "--no-record", "--interval",
				 "0", "--", RUN_SUBJECT_PATH };
	for (size_t i = 0; args[i]; i++)
		argv[7 + i] = args[i];
	cmd_start(c, argv, NULL);
}

/* To its end: its status; nothing left behind. */
static int finish(struct cmd *c)
{
	int status = cmd_finish(c);
	assert_no_sanitizer_report(c);
	assert_int_equal(dir_entries(run_tmpdir), 0);
	return status;
}

/* The pid after "@key " on the next line. */
static pid_t pid_line(struct cmd *c, const char *key)
{
	const char *line = cmd_line(c);
	size_t n = strlen(key);
	assert_non_null(line);
	if (strncmp(line, key, n) || line[n] != ' ')
		fail_msg("expected '%s PID', got '%s'", key, line);
	return (pid_t)atol(line + n + 1);
}

static void test_status(void **state)
{
	static const struct {
		const char *args[3];
		int status;
		const char *out;
	} cases[] = {
		{ { "exit", "0" }, 0, "exit 0\n" },
		{ { "exit", "3" }, 3, "exit 3\n" },
		{ { "exit", "255" }, 255, "exit 255\n" },
		{ { "kill", "9" }, 128 + SIGKILL, "kill 9\n" },
		{ { "kill", "15" }, 128 + SIGTERM, "kill 15\n" },
		{ { "kill", "10" }, 128 + SIGUSR1, "kill 10\n" }, /* no core */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cmd c;
		start(&c, cases[i].args);
		assert_int_equal(finish(&c), cases[i].status);
		assert_string_equal(c.text[0], cases[i].out);
		/* The report, on stderr. */
		assert_non_null(strstr(c.text[1], "model vs kernel"));
		cmd_free(&c);
	}
}

/* Every byte the program writes, nothing else, on stdout. */
static void test_stdout(void **state)
{
	const char *args[] = { "chatter", NULL };
	const char *plain[] = { RUN_SUBJECT_PATH, "chatter", NULL };
	struct cmd c, want;
	assert_int_equal(cmd_run(&want, plain, NULL), 0);
	start(&c, args);
	assert_int_equal(finish(&c), 0);
	assert_int_equal(c.len[0], want.len[0]);
	assert_int_equal(c.len[0], 257 * 4096);
	assert_memory_equal(c.text[0], want.text[0], want.len[0]);
	cmd_free(&c);
	cmd_free(&want);

	/* -o: the report goes to the file, stderr stays the program's. */
	char dir[64];
	tmp_make(dir, sizeof(dir));
	const char *argv[] = { PTSHARE_PATH, "run", "--no-record", "-o",
			       tmp_path(dir, "report"),
			       "--", RUN_SUBJECT_PATH, "exit", "4", NULL };
	cmd_start(&c, argv, NULL);
	assert_int_equal(finish(&c), 4);
	assert_string_equal(c.text[0], "exit 4\n");
	assert_string_equal(c.text[1], "");
	cmd_free(&c);
	const char *const made[] = { "report", NULL };
	tmp_remove(dir, made);
}

static void test_forwarded(void **state)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		const char *args[] = { "signals", NULL };
		char said[32];
		struct cmd c;
		start(&c, args);
		pid_line(&c, "@waiting");
		kill(c.pid, sigs[i]);
		assert_int_equal(finish(&c), sigs[i]);
		snprintf(said, sizeof(said), "signal %d", sigs[i]);
		assert_string_equal(cmd_line(&c), said);
		cmd_free(&c);
	}
}

static pid_t parent_of(pid_t pid)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	pid_t ppid = -1;
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "PPid:", 5))
			ppid = (pid_t)atol(line + 5);
	if (f)
		fclose(f);
	return ppid;
}

struct handed_over {
	pid_t program, server, run;
};

/* The program reaped, the server handed to `ptshare run`. */
static bool handed_over(const void *arg)
{
	const struct handed_over *h = arg;
	return !pid_exists(h->program) && parent_of(h->server) == h->run;
}

/* A server that daemonised outlives the program: `ptshare run` waits for
 * it, as its subreaper, and a signal goes to it once the program is gone. */
static void test_daemonised(void **state)
{
	char dir[64];
	struct cmd c;
	tmp_make(dir, sizeof(dir));
	const char *argv[] = { PTSHARE_PATH, "run", "--no-record", "--json",
			       tmp_path(dir, "report.json"), "--", RUN_SUBJECT_PATH,
			       "daemonise", NULL };
	cmd_start(&c, argv, NULL);
	pid_t server = pid_line(&c, "@server"), program = pid_line(&c, "@parent");
	const struct handed_over h = { program, server, c.pid };
	assert_true(eventually(handed_over, &h));
	assert_true(pid_exists(c.pid));
	kill(c.pid, SIGTERM);
	assert_string_equal(cmd_line(&c), "server done");
	assert_int_equal(finish(&c), 0);
	struct jr_value *doc = report_read(tmp_path(dir, "report.json"));
	assert_finals_exact(doc, 3);
	assert_non_null(report_final(doc, server));
	jr_free(doc);
	cmd_free(&c);
	const char *const made[] = { "report.json", NULL };
	tmp_remove(dir, made);
}

static bool has_reading(const void *trace)
{
	return trace_records(trace, PTS_CK_END) > 0;
}

/* The daemon dies: the program runs on, undisturbed, `ptshare run` says
 * so, and the report, rebuilt from the daemon's trace, says it ends
 * there.  It dies once it has read the program (which does not wait for
 * that: docs/shim.md), so that the report has a reading to show. */
static void test_daemon_dies(void **state)
{
	char dir[64];
	struct cmd c;
	tmp_make(dir, sizeof(dir));
	char *trace = strdup(tmp_path(dir, "trace"));
	const char *argv[] = { PTSHARE_PATH, "run", "--record", trace,
			       "--interval", "0", "--", RUN_SUBJECT_PATH,
			       "signals", NULL };
	cmd_start(&c, argv, NULL);
	pid_line(&c, "@waiting");
	assert_true(eventually(has_reading, trace));
	kill(daemon_of(&c), SIGKILL);
	assert_true(cmd_wait_stderr(&c, "ptshared ended early"));
	kill(c.pid, SIGTERM);
	assert_int_equal(finish(&c), SIGTERM);
	assert_non_null(strstr(c.text[0], "signal 15\n"));
	assert_non_null(strstr(c.text[1], "the report ends before the run: "
				"ptshared ended early (killed by signal 9"));
	assert_non_null(strstr(c.text[1], "model vs kernel"));
	cmd_free(&c);
	const char *const made[] = { "trace", NULL };
	tmp_remove(dir, made);
	free(trace);
}

/* The shim with no daemon to talk to: the same output, the same status,
 * nothing on stderr. */
static void test_no_daemon(void **state)
{
	static const char *const scenarios[][3] = {
		{ "exit", "3" }, { "chatter" }, { "remap" }, { "sysv" }, { "threads" },
		{ "closefds" }, { "spawn" }, { "kill", "15" },
	};
	char *preloaded[] = { "PATH=/usr/bin:/bin", "LD_PRELOAD=" SHIM_PATH,
			      "PTSHARE_SOCKET=/nonexistent/ptshare.sock", NULL };
	char *plain[] = { "PATH=/usr/bin:/bin", NULL };
	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++) {
		const char *argv[5] = { RUN_SUBJECT_PATH };
		for (size_t k = 0; k < 3 && scenarios[i][k]; k++)
			argv[k + 1] = scenarios[i][k];
		struct cmd want, got;
		const struct cmd_opts wo = { .env = plain };
		const struct cmd_opts go = { .env = preloaded };
		int status = cmd_run(&want, argv, &wo);
		assert_int_equal(cmd_run(&got, argv, &go), status);
		assert_int_equal(got.len[0], want.len[0]);
		assert_memory_equal(got.text[0], want.text[0], want.len[0]);
		assert_string_equal(got.text[1], "");
		cmd_free(&want);
		cmd_free(&got);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_status, run_tmpdir_setup, run_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_stdout, run_tmpdir_setup, run_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_forwarded, run_tmpdir_setup, run_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_daemonised, run_tmpdir_setup, run_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_daemon_dies, run_tmpdir_setup, run_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_no_daemon, run_tmpdir_setup, run_tmpdir_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
