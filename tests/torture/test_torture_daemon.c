/* SPDX-License-Identifier: MIT */
/*
 * The torture suite, the daemon (docs/promises.md): ptshared SIGKILLed at
 * random moments of a program's run (threads mapping, forks, a spawn), 50
 * times, a program started before its daemon, and one that signals its
 * own process group.  The shim is preloaded
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
 * run then says the daemon ended early and that there is no report:
 * test_run_exit.)
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_daemon_killed, run_tmpdir_setup, run_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_daemon_started_later, run_tmpdir_setup, run_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_group_signalled, run_tmpdir_setup, run_tmpdir_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
