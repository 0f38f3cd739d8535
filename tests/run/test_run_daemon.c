/* SPDX-License-Identifier: MIT */
/*
 * ptshared on its own, with hand-written clients (run_client): it acks
 * HELLO and EXIT, survives and counts whatever a client sends, keeps
 * serving the others, checkpoints on its timer, and ends with a report on
 * SIGTERM (and SIGINT, unless that was ignored when it started).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "run_util.h"

/* Runs a client scenario to its end: its pid; its output in out. */
static pid_t client(const struct daemon_run *d, const char *scenario,
		    struct cmd *out)
{
	const char *argv[] = { RUN_CLIENT_PATH, sock_of(d), scenario, NULL };
	assert_int_equal(cmd_run(out, argv, NULL), 0);
	return out->pid;
}

static void test_polite(void **state)
{
	struct daemon_run d;
	struct cmd c;
	struct stat st;
	daemon_up(&d, NULL, false);
	assert_int_equal(stat(sock_of(&d), &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0600);
	pid_t pid = client(&d, "polite", &c);
	/* The daemon ends the connection once it has acked the EXIT. */
	assert_string_equal(c.text[0],
			    "hello acked\nexit acked\nconnection ended\n");
	cmd_free(&c);
	assert_int_equal(daemon_down(&d, SIGTERM), 0);

	assert_int_equal(stat(tmp_path(d.dir, "report.json"), &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(stat(tmp_path(d.dir, "report.txt"), &st), 0);
	assert_true(st.st_size > 0);
	struct jr_value *doc = report_read(tmp_path(d.dir, "report.json"));
	const struct jr_value *f = report_final(doc, pid);
	assert_non_null(f);
	assert_string_equal(jr_path_str(f, "checkpoint"), "exit");
	assert_int_equal(jr_path_u64(f, "records", 0), 4);
	assert_int_equal(jr_path_u64(f, "malformed", 1), 0);
	assert_false(jr_bool(jr_get(f, "alive")));
	assert_finals_exact(doc, 1);
	assert_int_equal(jr_path_u64(doc, "stream.malformed", 1), 0);
	jr_free(doc);
	daemon_free(&d);
}

/* Malformed packets of every kind, fds passed along, a client that floods
 * until it is dropped, clients gone before their ACK: the daemon counts
 * them, closes the fds, and serves a polite client after all of them. */
static void test_hostile(void **state)
{
	struct daemon_run d;
	struct cmd c;
	daemon_up(&d, NULL, false);
	pid_t hostile = client(&d, "hostile", &c);
	assert_string_equal(c.text[0], "hello acked\nmalformed 11\nfds closed\n"
				       "exit acked\n");
	cmd_free(&c);
	pid_t flood = client(&d, "flood", &c);
	assert_string_equal(c.text[0], "hello acked\nflood hung up\n");
	cmd_free(&c);
	for (int i = 0; i < 20; i++) {
		client(&d, "ghost", &c);
		cmd_free(&c);
	}
	pid_t polite = client(&d, "polite", &c);
	assert_string_equal(c.text[0],
			    "hello acked\nexit acked\nconnection ended\n");
	cmd_free(&c);
	assert_int_equal(daemon_down(&d, SIGTERM), 0);

	struct jr_value *doc = report_read(tmp_path(d.dir, "report.json"));
	uint64_t flooded = jr_path_u64(report_final(doc, flood), "malformed", 0);
	assert_int_equal(jr_path_u64(report_final(doc, hostile), "malformed", 0), 11);
	assert_true(flooded > 0);
	assert_int_equal(jr_path_u64(doc, "stream.malformed", 0), 11 + flooded);
	assert_int_equal(jr_path_u64(doc, "stream.lost", 1), 0);
	assert_string_equal(jr_path_str(report_final(doc, polite), "checkpoint"),
			    "exit");
	assert_int_equal(jr_len(jr_get(doc, "final_checkpoints")), 23);
	jr_free(doc);
	daemon_free(&d);
}

/* A record the model refuses (an mprotect of memory the client never
 * mapped): the JSON keeps its reason on the process's line, and the text
 * says it under --verbose, which `ptshare run --verbose` passes on. */
static void test_refusal_said(void **state)
{
	static const char *const verbose[] = { "--verbose", NULL };
	struct daemon_run d;
	struct cmd c;
	daemon_up(&d, verbose, false);
	pid_t liar = client(&d, "liar", &c);
	assert_string_equal(c.text[0], "hello acked\nexit acked\n");
	cmd_free(&c);
	assert_int_equal(daemon_down(&d, SIGTERM), 0);

	struct jr_value *doc = report_read(tmp_path(d.dir, "report.json"));
	const struct jr_value *f = report_final(doc, liar);
	assert_int_equal(jr_path_u64(f, "refused", 0), 1);
	const char *why = jr_path_str(f, "refused_why");
	assert_non_null(why);
	assert_non_null(strstr(why, "is not fully mapped"));
	char said[256];
	snprintf(said, sizeof(said), "  %d run_client: 1 refused by the model, "
		 "the last: %s\n", (int)liar, why);
	char *text = file_read(tmp_path(d.dir, "report.txt"), NULL);
	assert_non_null(text);
	if (!strstr(text, said))
		fail_msg("the text does not say\n%s\n%s", said, text);
	free(text);
	jr_free(doc);
	daemon_free(&d);
}

struct traced_pid {
	const char *trace;
	pid_t pid;
};

static bool timer_checkpointed(const void *arg)
{
	const struct traced_pid *t = arg;
	return trace_timer_checkpoints(t->trace, t->pid) > 0;
}

/* The timer checkpoints a process that says nothing, and the trace shows
 * it while the daemon runs. */
static void test_timer(void **state)
{
	static const char *const every_second[] = { "--interval", "1", NULL };
	struct daemon_run d;
	struct cmd c;
	daemon_up(&d, every_second, false);
	const char *argv[] = { RUN_CLIENT_PATH, sock_of(&d), "linger", NULL };
	cmd_start(&c, argv, NULL);
	assert_string_equal(cmd_line(&c), "hello acked");
	const struct traced_pid t = { tmp_path(d.dir, "trace"), c.pid };
	assert_true(eventually(timer_checkpointed, &t));
	assert_int_equal(write(c.in, "\n", 1), 1);
	assert_int_equal(cmd_finish(&c), 0);
	assert_string_equal(cmd_line(&c), "exit acked");
	cmd_free(&c);
	assert_int_equal(daemon_down(&d, SIGTERM), 0);
	daemon_free(&d);
}

/* An exec's new image connects while the old image's last records are
 * still queued on its connection (the daemon stopped meanwhile): every one
 * of them is applied, and before the new image's HELLO. */
static void test_exec_order(void **state)
{
	struct daemon_run d;
	struct cmd c;
	daemon_up(&d, NULL, false);
	const char *argv[] = { RUN_CLIENT_PATH, sock_of(&d), "exec", NULL };
	cmd_start(&c, argv, NULL);
	assert_string_equal(cmd_line(&c), "hello acked");
	kill(d.c.pid, SIGSTOP);
	assert_int_equal(write(c.in, "\n", 1), 1);
	assert_string_equal(cmd_line(&c), "queued");
	kill(d.c.pid, SIGCONT);
	assert_int_equal(cmd_finish(&c), 0);
	assert_string_equal(cmd_line(&c), "new image acked");
	assert_string_equal(cmd_line(&c), "exit acked");
	pid_t pid = c.pid;
	cmd_free(&c);
	assert_int_equal(daemon_down(&d, SIGTERM), 0);
	struct jr_value *doc = report_read(tmp_path(d.dir, "report.json"));
	/* HELLO, 50 maps and unmaps, EXEC; HELLO, EXIT. */
	assert_int_equal(jr_path_u64(report_final(doc, pid), "records", 0), 104);
	assert_int_equal(jr_path_u64(doc, "stream.malformed", 1), 0);
	assert_int_equal(jr_path_u64(doc, "stream.lost", 1), 0);
	jr_free(doc);
	daemon_free(&d);
}

static void test_signals(void **state)
{
	struct daemon_run d;
	struct cmd c;
	daemon_up(&d, NULL, false);
	assert_int_equal(daemon_down(&d, SIGINT), 0);
	daemon_free(&d);

	/* Ignored when it started (as `ptshare run` does): SIGINT is not an
	 * end, SIGTERM is. */
	daemon_up(&d, NULL, true);
	kill(d.c.pid, SIGINT);
	client(&d, "polite", &c);
	assert_string_equal(c.text[0],
			    "hello acked\nexit acked\nconnection ended\n");
	cmd_free(&c);
	assert_int_equal(daemon_down(&d, SIGTERM), 0);
	daemon_free(&d);
}

/* Usage errors say so (2); what it cannot do is a failure (1). */
static void test_usage(void **state)
{
	char dir[64], sock[128], missing[128];
	struct cmd c;
	tmp_make(dir, sizeof(dir));
	snprintf(sock, sizeof(sock), "%s", tmp_path(dir, "sock"));
	snprintf(missing, sizeof(missing), "%s", tmp_path(dir, "no/such/file"));
	const struct {
		const char *args[6];
		int status;
		const char *says;
	} cases[] = {
		{ { NULL }, 2, "--socket PATH is required" },
		{ { "--socket", sock, "--interval", "x" }, 2, "bad interval" },
		{ { "--socket", sock, "--interval", "100000" }, 2, "bad interval" },
		{ { "--socket", sock, "--top", "-1" }, 2, "bad number" },
		{ { "--socket", sock, "--policy", "nonsense" }, 2, "nonsense" },
		{ { "--socket", sock, "--ready-fd", "99" }, 2, "not an open file" },
		{ { "--socket", sock, "extra" }, 2, "unexpected argument" },
		{ { "--socket", sock, "--bogus" }, 2, "ptshared: unknown option "
		  "'--bogus'\nTry 'ptshared --help' for more information.\n" },
		{ { "--socket", missing }, 1, "cannot listen on" },
		{ { "--socket", sock, "--json", missing }, 1, "cannot write" },
		{ { "--socket", sock, "--record", missing }, 1, "cannot write" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *argv[8] = { PTSHARED_PATH };
		for (size_t k = 0; cases[i].args[k]; k++)
			argv[k + 1] = cases[i].args[k];
		assert_int_equal(cmd_run(&c, argv, NULL), cases[i].status);
		if (!strstr(c.text[1], cases[i].says))
			fail_msg("case %zu: no '%s' in:\n%s", i, cases[i].says, c.text[1]);
		assert_no_sanitizer_report(&c);
		/* A usage error says what was wrong, not the whole help. */
		if (cases[i].status == 2)
			assert_null(strstr(c.text[1], "usage:"));
		cmd_free(&c);
	}
	const char *version[] = { PTSHARED_PATH, "--version", NULL };
	assert_int_equal(cmd_run(&c, version, NULL), 0);
	assert_string_equal(c.text[0], "ptshared " PTSHARE_VERSION "\n");
	cmd_free(&c);
	const char *help[] = { PTSHARED_PATH, "--help", NULL };
	assert_int_equal(cmd_run(&c, help, NULL), 0);
	assert_non_null(strstr(c.text[0], "usage: ptshared"));
	cmd_free(&c);
	/* Something is at the socket's path already. */
	close(open(sock, O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
	const char *taken[] = { PTSHARED_PATH, "--socket", sock, NULL };
	assert_int_equal(cmd_run(&c, taken, NULL), 1);
	assert_non_null(strstr(c.text[1], "Address already in use"));
	cmd_free(&c);
	const char *const made[] = { "sock", NULL };
	tmp_remove(dir, made);
}

static int teardown(void **state)
{
	cleanup_leftovers();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_polite, teardown),
		cmocka_unit_test_teardown(test_hostile, teardown),
		cmocka_unit_test_teardown(test_refusal_said, teardown),
		cmocka_unit_test_teardown(test_timer, teardown),
		cmocka_unit_test_teardown(test_exec_order, teardown),
		cmocka_unit_test_teardown(test_signals, teardown),
		cmocka_unit_test_teardown(test_usage, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
