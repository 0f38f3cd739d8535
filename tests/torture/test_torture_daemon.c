/* SPDX-License-Identifier: MIT */
/*
 * The torture suite, the daemon (docs/promises.md): ptshared SIGKILLed at
 * random moments of a program's run (threads mapping, forks, a spawn), 50
 * times, a program started before its daemon, one that signals its own
 * process group, and ptshared stopped while a program faults and forks.  The shim is preloaded
 * as `ptshare run` does it (LD_PRELOAD, PTSHARE_SOCKET), with ptshared run
 * by the test; the program's output and status must be the same as
 * without ptshare every time.
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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "torture_subject.h"
#include "torture_util.h"

#define KILLS 50
#define ENV_MAX 256
#define DAEMON_TIMEOUT_S 1 /* ptshare run's default --daemon-timeout */
#define STALLED_WAIT_S 60  /* a program still running then is stalled */

extern char **environ;

/* Our environment, with the shim preloaded and the daemon's socket. */
struct preload_env {
	char *v[ENV_MAX];
	char preload[4096], socket[4096];
};

static char *const *preload_env(struct preload_env *e, const char *socket)
{
	size_t n = 0;
	snprintf(e->preload, sizeof(e->preload), "LD_PRELOAD=%s", SHIM_PATH);
	snprintf(e->socket, sizeof(e->socket), "PTSHARE_SOCKET=%s", socket);
	for (char **v = environ; *v && n < ENV_MAX - 3; v++)
		if (strncmp(*v, "LD_PRELOAD=", 11) && strncmp(*v, "PTSHARE_SOCKET=", 15))
			e->v[n++] = *v;
	e->v[n++] = e->preload;
	e->v[n++] = e->socket;
	e->v[n] = NULL;
	return e->v;
}

static int64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void sleep_us(int64_t us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Whether pid has not ended yet (reaped or not). */
static bool running(pid_t pid)
{
	siginfo_t si = { 0 };
	return waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
	       !si.si_pid;
}

/* The daemon, killed: nothing of it is left (the socket it could not
 * remove included). */
static void daemon_killed(struct daemon_run *d)
{
	assert_int_equal(cmd_finish(&d->c), 128 + SIGKILL);
	unlink(sock_of(d));
	daemon_free(d);
}

/*
 * `mix` traced by a ptshared that is SIGKILLed after a random delay within
 * one traced run's length: wherever that lands (connecting, waiting for an
 * ACK, sending, exiting), every process of the program carries on
 * untraced and the output is the plain run's.  (With `ptshare run`, the
 * run then says the daemon ended early, and rebuilds the report from its
 * trace: test_run_exit.)
 */
static void test_daemon_killed(void **state)
{
	const char *argv[] = { TORTURE_SUBJECT_PATH, "mix", NULL };
	struct cmd want, got;
	struct daemon_run d;
	struct preload_env env;
	unsigned seed = (unsigned)getpid();
	size_t mid_run = 0;

	int want_status = cmd_run(&want, argv, NULL);
	assert_int_equal(want_status, 0);
	/* One run to its end, for the length of the next ones. */
	daemon_up(&d, NULL, false);
	int64_t start = now_us();
	const struct cmd_opts traced = { .env = preload_env(&env, sock_of(&d)) };
	int status = cmd_run(&got, argv, &traced);
	int64_t span = now_us() - start;
	assert_same_run(&want, want_status, &got, status);
	assert_int_equal(daemon_down(&d, SIGTERM), 0);
	daemon_free(&d);
	cmd_free(&got);

	print_message("seed %u, delays up to %lld us\n", seed, (long long)span);
	for (int i = 0; i < KILLS; i++) {
		daemon_up(&d, NULL, false);
		const struct cmd_opts o = { .env = preload_env(&env, sock_of(&d)) };
		cmd_start(&got, argv, &o);
		sleep_us(rand_r(&seed) % span);
		mid_run += running(got.pid);
		kill(d.c.pid, SIGKILL);
		status = cmd_finish(&got);
		assert_same_run(&want, want_status, &got, status);
		daemon_killed(&d);
		cmd_free(&got);
	}
	print_message("%zu of %d kills while the program ran\n", mid_run, KILLS);
	assert_true(mid_run > 0);
	cmd_free(&want);
}

/*
 * The program starts with the shim preloaded and no daemon listening yet:
 * it stays untraced for good, and so does the child it forks after the
 * daemon started (docs/shim.md: no daemon at the start means none).  The
 * image its other child execs connects anew, and is the only process of
 * the report, read from its start to its exit.
 */
static void test_daemon_started_later(void **state)
{
	const char *argv[] = { TORTURE_SUBJECT_PATH, "late", NULL };
	struct cmd want, got;
	struct daemon_run d;
	struct preload_env env;

	cmd_start(&want, argv, NULL);
	assert_string_equal(cmd_line(&want), "late: started");
	assert_int_equal(write(want.in, "go\n", 3), 3);
	int want_status = cmd_finish(&want);

	daemon_dir(&d);
	const struct cmd_opts o = { .env = preload_env(&env, sock_of(&d)) };
	cmd_start(&got, argv, &o);
	assert_string_equal(cmd_line(&got), "late: started");
	daemon_start(&d, NULL, false);
	assert_int_equal(write(got.in, "go\n", 3), 3);
	int status = cmd_finish(&got);
	assert_same_run(&want, want_status, &got, status);
	assert_int_equal(daemon_down(&d, SIGTERM), 0);

	struct jr_value *doc = report_read(tmp_path(d.dir, "report.json"));
	assert_int_equal(jr_len(jr_get(doc, "final_checkpoints")), 1);
	assert_int_equal(jr_path_u64(doc, "final_checkpoints[0].records", 0), 3);
	assert_string_equal(jr_path_str(doc, "final_checkpoints[0].checkpoint"), "exit");
	assert_int_equal(stream_u64(doc, "lost"), 0);
	assert_int_equal(assert_models_at_most_kernel(doc, 0), 1);
	jr_free(doc);
	daemon_free(&d);
	cmd_free(&want);
	cmd_free(&got);
}

/*
 * A program that signals its own process group, kill(0, SIGTERM) as a
 * server's master does at its shutdown: each of its processes handles it
 * once, as without ptshare (`ptshare run` does not pass it on again), and
 * the daemon, in a group of its own, goes on: every process is in the
 * report, read at its exit, the one forked after the signal too.
 */
static void test_group_signalled(void **state)
{
	const char *argv[] = { NULL, "killgroup", NULL };
	struct torture t;
	torture_compare(&t, NULL, argv);
	assert_int_equal(t.status, 0);
	const struct jr_value *finals = jr_get(t.doc, "final_checkpoints");
	assert_int_equal(jr_len(finals), 3);
	for (size_t i = 0; i < jr_len(finals); i++) {
		assert_string_equal(jr_path_str(jr_at(finals, i), "checkpoint"), "exit");
		assert_false(jr_bool(jr_get(jr_at(finals, i), "alive")));
	}
	assert_int_equal(stream_u64(t.doc, "lost"), 0);
	torture_free(&t);
}

/* The number after "@key " in c's stdout, or -1. */
static long long at_value(const struct cmd *c, const char *key)
{
	char pattern[32];
	snprintf(pattern, sizeof(pattern), "@%s ", key);
	const char *at = strstr(c->text[0], pattern);
	return at ? atoll(at + strlen(pattern)) : -1;
}

/* c's stdout without its "@" lines (pids, times). */
static void stdout_compared(const struct cmd *c, char *out, size_t cap)
{
	size_t n = 0;
	for (const char *line = c->text[0]; *line;) {
		size_t len = strcspn(line, "\n") + (line[strcspn(line, "\n")] == '\n');
		if (*line != '@' && n + len < cap) {
			memcpy(out + n, line, len);
			n += len;
		}
		line += len;
	}
	out[n] = '\0';
}

/* Whether pid ended within ms. */
static bool ends_within(pid_t pid, int64_t ms)
{
	int64_t deadline = now_us() + ms * 1000;
	while (pid_exists(pid))
		if (now_us() >= deadline)
			return false;
		else
			sleep_us(10000);
	return true;
}

/* `stalled` told to go on at once, or, traced, once its daemon is stopped;
 * its exit status. */
static int stalled_run(struct cmd *c, const char *const argv[], bool traced,
		       pid_t *daemon)
{
	long pid = -1;
	cmd_start(c, argv, NULL);
	const char *line = cmd_line(c);
	if (!line || sscanf(line, "@ready %ld", &pid) != 1)
		fail_msg("no @ready from the subject: %s", line ? line : "(end)");
	if (traced) {
		*daemon = daemon_of(c);
		assert_int_equal(kill(*daemon, SIGSTOP), 0);
	}
	assert_int_equal(write(c->in, "go\n", 3), 3);
	if (traced && !ends_within((pid_t)pid, STALLED_WAIT_S * 1000)) {
		kill(*daemon, SIGKILL); /* lets it go, to end the test */
		cmd_finish(c);
		fail_msg("the program still ran %d s after its daemon was stopped",
			 STALLED_WAIT_S);
	}
	return cmd_finish(c);
}

/*
 * The daemon stopped (SIGSTOP) while the program faults on its shared
 * memory and forks in a loop: `ptshare run` ends it past its bound (the
 * default --daemon-timeout, 1 s), the kernel lets the faults go, and the
 * program, the same output, takes at most the bound and a second longer
 * than plainly.  The report, rebuilt from the daemon's trace, says why it
 * ends early and that the program still ran then.
 */
static void test_daemon_stopped(void **state)
{
	const char *plain_argv[] = { TORTURE_SUBJECT_PATH, "stalled", NULL };
	char dir[64], want[4096], got[4096];
	tmp_make(dir, sizeof(dir));
	/* --faults table: the daemon registers the shared memory, and a
	 * stopped daemon holds its faults (the default, off, holds none). */
	const char *argv[] = { PTSHARE_PATH, "run", "--no-record", "--faults",
			       "table", "--json", tmp_path(dir, "report.json"),
			       "-o", tmp_path(dir, "report.txt"), "--",
			       TORTURE_SUBJECT_PATH, "stalled", NULL };
	struct cmd plain, traced;
	pid_t daemon;
	int want_status = stalled_run(&plain, plain_argv, false, NULL);
	int status = stalled_run(&traced, argv, true, &daemon);
	assert_no_sanitizer_report(&traced);
	assert_int_equal(status, want_status);
	stdout_compared(&plain, want, sizeof(want));
	stdout_compared(&traced, got, sizeof(got));
	assert_string_equal(got, want);
	long long plain_us = at_value(&plain, "wall_us");
	long long stalled_us = at_value(&traced, "wall_us");
	print_message("wall time from the word to the end: %lld us plainly, %lld us "
		      "with the daemon stopped\n", plain_us, stalled_us);
	assert_true(plain_us >= 0 && stalled_us >= 0);
	assert_true(stalled_us <= plain_us + (DAEMON_TIMEOUT_S + 1) * 1000000LL);

	assert_non_null(strstr(traced.text[1], "ended ptshared, which its loop did "
				"not turn, and it got no CPU time, for 1 s (state T"));
	struct jr_value *doc = report_read(tmp_path(dir, "report.json"));
	const char *why = jr_path_str(doc, "stream.cut_short.why");
	assert_non_null(why);
	assert_non_null(strstr(why, "ptshare run ended ptshared"));
	assert_true(jr_path_u64(doc, "stream.cut_short.processes_running", 0) >= 1);
	const struct jr_value *parent = report_final(doc, (long)at_value(&traced, "ready"));
	assert_non_null(parent);
	assert_true(jr_bool(jr_get(parent, "alive")));
	jr_free(doc);
	char *text = file_read(tmp_path(dir, "report.txt"), NULL);
	assert_non_null(strstr(text, "the report ends before the run: ptshare run "
			       "ended ptshared"));
	free(text);
	cmd_free(&plain);
	cmd_free(&traced);
	const char *const made[] = { "report.json", "report.txt", NULL };
	tmp_remove(dir, made);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_daemon_killed, run_tmpdir_setup, run_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_daemon_started_later, run_tmpdir_setup, run_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_group_signalled, run_tmpdir_setup, run_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_daemon_stopped, run_tmpdir_setup, run_tmpdir_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
