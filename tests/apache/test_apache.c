/* SPDX-License-Identifier: MIT */
/*
 * Apache (prefork) under `ptshare run`, stopped gracefully: its master
 * ends a graceful stop with kill(0, SIGTERM), to its whole process group,
 * which `ptshare run` is in.  As root (the children become www-data after
 * their fork, connected already), with a configuration of its own in a
 * temporary directory, on 127.0.0.1 and a free port, in the foreground:
 *     ptshare run --json F -o F -- apache2 -f CONF -DFOREGROUND
 * one request served, then SIGWINCH to the master (graceful-stop).
 *
 * The master's signal to its group must neither end the daemon (the
 * report was then written before the master's end, which it missed) nor
 * be passed on by `ptshare run` again: the run ends as apache does (status
 * 0, one graceful stop in its log, nothing from ptshare on stderr), and
 * the report has every process read at its exit, the master included.
 * (That no handler ran twice, `test_torture_daemon` shows: apache's
 * SIGTERM handler does nothing the second time.)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "run_util.h"

#define APACHE "/usr/sbin/apache2"
#define MODULES "/usr/lib/apache2/modules"
#define START_SERVERS 2
#define UP_WAIT_MS 60000 /* for the first request to be served */

/* A port nobody listens on now, on 127.0.0.1. */
static int free_port(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	close(fd);
	return ntohs(sa.sin_port);
}

static void write_conf(const char *dir, int port)
{
	FILE *f = fopen(tmp_path(dir, "apache2.conf"), "w");
	assert_non_null(f);
	fprintf(f, "ServerRoot \"%s\"\n"
		"ServerName 127.0.0.1\n"
		"Listen 127.0.0.1:%d\n"
		"PidFile \"%s/apache2.pid\"\n"
		"ErrorLog \"%s/error.log\"\n"
		"LogLevel info\n"
		"DefaultRuntimeDir \"%s\"\n"
		"Mutex posixsem\n"
		"LoadModule mpm_prefork_module " MODULES "/mod_mpm_prefork.so\n"
		"LoadModule authz_core_module " MODULES "/mod_authz_core.so\n"
		"User www-data\n"
		"Group www-data\n"
		"StartServers %d\n"
		"MinSpareServers 1\n"
		"MaxSpareServers %d\n"
		"DocumentRoot \"%s\"\n",
		dir, port, dir, dir, dir, START_SERVERS, START_SERVERS, dir);
	assert_int_equal(fclose(f), 0);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* One request, once apache listens: the status line of its answer. */
static void request(int port, char *status, size_t cap)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	static const char get[] = "GET / HTTP/1.0\r\n\r\n";
	int fd = -1;
	for (int waited = 0; fd < 0; waited += 50) {
		if (waited >= UP_WAIT_MS)
			fail_msg("apache did not listen on port %d", port);
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
			close(fd);
			fd = -1;
			sleep_ms(50);
		}
	}
	assert_int_equal(write(fd, get, sizeof(get) - 1), (ssize_t)sizeof(get) - 1);
	ssize_t n = read(fd, status, cap - 1);
	close(fd);
	status[n > 0 ? n : 0] = '\0';
	status[strcspn(status, "\r\n")] = '\0';
}

static size_t count(const char *text, const char *what)
{
	size_t n = 0;
	for (const char *at = text; (at = strstr(at, what)); at++)
		n++;
	return n;
}

static void test_graceful_stop(void **state)
{
	char dir[64], status_line[256];
	require_root();
	tmp_make(dir, sizeof(dir));
	int port = free_port();
	write_conf(dir, port);
	const char *argv[] = { PTSHARE_PATH, "run", "--no-record", "--json",
			       tmp_path(dir, "report.json"),
			       "-o", tmp_path(dir, "report.txt"), "--", APACHE,
			       "-f", tmp_path(dir, "apache2.conf"), "-DFOREGROUND",
			       NULL };
	struct cmd c;
	cmd_start(&c, argv, NULL);
	request(port, status_line, sizeof(status_line));
	assert_true(!strncmp(status_line, "HTTP/1.", 7));
	char *pid_text = file_read(tmp_path(dir, "apache2.pid"), NULL);
	long master = atol(pid_text);
	free(pid_text);
	assert_int_equal(kill((pid_t)master, SIGWINCH), 0); /* graceful-stop */
	assert_int_equal(cmd_finish(&c), 0);
	assert_no_sanitizer_report(&c);
	assert_string_equal(c.text[1], "");

	char *log = file_read(tmp_path(dir, "error.log"), NULL);
	assert_int_equal(count(log, "caught SIGWINCH, shutting down gracefully"), 1);
	free(log);
	struct jr_value *doc = report_read(tmp_path(dir, "report.json"));
	const struct jr_value *finals = jr_get(doc, "final_checkpoints");
	assert_true(jr_len(finals) >= 1 + START_SERVERS);
	for (size_t i = 0; i < jr_len(finals); i++) {
		const struct jr_value *f = jr_at(finals, i);
		long pid = (long)jr_path_i64(f, "pid", -1);
		if (strcmp(jr_path_str(f, "checkpoint"), "exit") ||
		    jr_bool(jr_get(f, "alive")))
			fail_msg("apache process %ld was not read at its exit (its "
				 "last checkpoint: %s)", pid,
				 jr_path_str(f, "checkpoint"));
		assert_true(pid == master || jr_path_i64(f, "ppid", -1) == master);
	}
	assert_non_null(report_final(doc, master));
	assert_int_equal(jr_path_u64(doc, "stream.lost", 1), 0);
	assert_true(jr_is(jr_path(doc, "stream.cut_short"), JR_NULL));
	jr_free(doc);
	cmd_free(&c);
	const char *const made[] = { "apache2.conf", "error.log", "report.json",
				     "report.txt", NULL };
	tmp_remove(dir, made);
}

/* ctest's SKIP_RETURN_CODE: the machine cannot run the test. */
#define SKIPPED 77

int main(void)
{
	if (access(APACHE, X_OK)) {
		/* CI installs apache2 (scripts/test.sh): there a missing
		 * server is a failure, not a reason to skip. */
		const char *ci = getenv("CI");
		bool in_ci = ci && !strcmp(ci, "true");
		printf("%s: no %s\n", in_ci ? "failed" : "skipped", APACHE);
		return in_ci ? 1 : SKIPPED;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_graceful_stop, run_tmpdir_setup,
						run_tmpdir_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
