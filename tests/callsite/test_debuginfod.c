/* SPDX-License-Identifier: MIT */
/*
 * Call sites named through debuginfod: callsite_subject stripped of its
 * symbols and DWARF (callsite_stripped) runs under `ptshare run`, its debug
 * file in a directory a debuginfod server on 127.0.0.1 serves (the test's
 * own network namespace: lo is all there is, so the server, which listens
 * on every address, is reachable from here only).  Without DEBUGINFOD_URLS
 * its call sites have no name; with it, make_private's mapping is named
 * by function, file and the line the subject printed.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "run_util.h"

#define DEBUGINFOD "/usr/bin/debuginfod"
#define DEBUGINFOD_FIND "/usr/bin/debuginfod-find"
#define SIZE (4u << 20)

extern char **environ;

/* A network namespace of our own with lo up (root: CI runs as root). */
static void own_network(void)
{
	require_root();
	if (unshare(CLONE_NEWNET))
		fail_msg("unshare(CLONE_NEWNET): %s", strerror(errno));
	struct ifreq ifr = { 0 };
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	bool up = s >= 0 && !ioctl(s, SIOCGIFFLAGS, &ifr);
	ifr.ifr_flags |= IFF_UP;
	up = up && !ioctl(s, SIOCSIFFLAGS, &ifr);
	if (!up)
		fail_msg("bringing lo up: %s", strerror(errno));
	close(s);
}

/* A TCP port of 127.0.0.1 nobody listens on. */
static int free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(s, (struct sockaddr *)&a, &len))
		fail_msg("a free port: %s", strerror(errno));
	close(s);
	return ntohs(a.sin_port);
}

/* Our environment without DEBUGINFOD_*, with the entries of add. */
static char **env_with(const char *const add[])
{
	size_t n = 0, k = 0;
	while (environ[n])
		n++;
	char **env = calloc(n + 4, sizeof(*env));
	assert_non_null(env);
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "DEBUGINFOD_", 11))
			env[k++] = environ[i];
	for (size_t i = 0; add[i]; i++)
		env[k++] = (char *)add[i];
	return env;
}

struct server {
	char **env;  /* the client's: DEBUGINFOD_URLS, a cache to probe */
};

/* Whether the server serves the stripped program's debug file yet (it
 * scans its directory after it starts). */
static bool serves(const void *arg)
{
	const struct server *s = arg;
	const char *argv[] = { DEBUGINFOD_FIND, "debuginfo", STRIPPED_PATH, NULL };
	struct cmd c;
	struct cmd_opts o = { .env = s->env };
	int status = cmd_run(&c, argv, &o);
	cmd_free(&c);
	if (status)
		usleep(100000);
	return !status;
}

/* make_private's 4 MiB anonymous mapping's innermost frame. */
static const struct jr_value *private_site(const struct jr_value *doc)
{
	const struct jr_value *maps = jr_get(doc, "mappings");
	for (size_t i = 0; i < jr_len(maps); i++) {
		const struct jr_value *m = jr_at(maps, i);
		if (!strcmp(jr_path_str(m, "kind"), "anon") &&
		    jr_path_u64(m, "end", 0) - jr_path_u64(m, "start", 0) == SIZE)
			return jr_path(m, "call_site[0]");
	}
	fail_msg("no private mapping of 4 MiB");
	return NULL;
}

/* `ptshare run` of the stripped subject (at path) in env: its report,
 * and the line the subject said make_private's mmap is on. */
static struct jr_value *run_stripped_at(const char *path, const char *json,
					char **env, int *line)
{
	const char *argv[] = { PTSHARE_PATH, "run", "--no-record", "--json", json,
			       "-o", "/dev/null", "--", path, NULL };
	struct cmd c;
	struct cmd_opts o = { .env = env };
	int status = cmd_run(&c, argv, &o);
	if (status)
		fail_msg("ptshare run: status %d; stderr:\n%s", status, c.text[1]);
	assert_no_sanitizer_report(&c);
	const char *said = strstr(c.text[0], "site make_private ");
	assert_non_null(said);
	*line = atoi(said + strlen("site make_private "));
	cmd_free(&c);
	return report_read(json);
}

static struct jr_value *run_stripped(const char *json, char **env, int *line)
{
	return run_stripped_at(STRIPPED_PATH, json, env, line);
}

/* make_private's call site named from the debug file, at line. */
static void assert_named(const struct jr_value *site, int line, const char *how)
{
	const char *function = jr_path_str(site, "function"),
		   *file = jr_path_str(site, "file");
	if (!function || strcmp(function, "make_private") || !file ||
	    !strstr(file, "/callsite_subject.c"))
		fail_msg("not named %s: %s (%s)", how,
			 function ? function : "null", file ? file : "null");
	assert_int_equal(jr_path_u64(site, "line", 0), line);
}

static void test_debuginfod(void **state)
{
	(void)state;
	own_network();
	char dir[64], port[16], urls[64], cache[128], probe[128];
	tmp_make(dir, sizeof(dir));
	const char *srv = tmp_path(dir, "srv");
	assert_int_equal(mkdir(srv, 0700), 0);
	const char *cp[] = { "/bin/cp", DEBUG_FILE_PATH, srv, NULL };
	struct cmd c;
	assert_int_equal(cmd_run(&c, cp, NULL), 0);
	cmd_free(&c);
	snprintf(port, sizeof(port), "%d", free_port());
	snprintf(urls, sizeof(urls), "DEBUGINFOD_URLS=http://127.0.0.1:%s", port);
	snprintf(cache, sizeof(cache), "DEBUGINFOD_CACHE_PATH=%s",
		 tmp_path(dir, "cache"));
	snprintf(probe, sizeof(probe), "DEBUGINFOD_CACHE_PATH=%s",
		 tmp_path(dir, "probe"));
	const char *server_argv[] = { DEBUGINFOD, "-F", "-p", port, "-d",
				      tmp_path(dir, "db.sqlite"), "-c", "1",
				      tmp_path(dir, "srv"), NULL };
	struct cmd server;
	cmd_start(&server, server_argv, NULL);
	/* The probe's client must not remember a miss (a 404 before the scan). */
	assert_int_equal(mkdir(tmp_path(dir, "probe"), 0700), 0);
	FILE *miss = fopen(tmp_path(dir, "probe/cache_miss_s"), "w");
	assert_non_null(miss);
	fputs("0\n", miss);
	fclose(miss);
	struct server s = { env_with((const char *[]){ urls, probe, NULL }) };
	if (!eventually(serves, &s))
		fail_msg("debuginfod does not serve %s", DEBUG_FILE_PATH);

	/* Without DEBUGINFOD_URLS: nothing names the stripped program's
	 * call site. */
	char **without = env_with((const char *[]){ cache, NULL });
	int line;
	struct jr_value *doc = run_stripped(tmp_path(dir, "without.json"),
					    without, &line);
	const struct jr_value *f = private_site(doc);
	assert_true(jr_is(jr_get(f, "function"), JR_NULL));
	assert_true(jr_is(jr_get(f, "file"), JR_NULL));
	assert_true(jr_is(jr_get(f, "line"), JR_NULL));
	jr_free(doc);

	/* With it: named from the debug file the server sent. */
	char **with = env_with((const char *[]){ urls, cache, NULL });
	doc = run_stripped(tmp_path(dir, "with.json"), with, &line);
	assert_named(private_site(doc), line, "through debuginfod");
	jr_free(doc);

	kill(server.pid, SIGTERM);
	cmd_finish(&server);
	cmd_free(&server);
	const char *rm[] = { "/bin/rm", "-rf", tmp_path(dir, "srv"),
			     tmp_path(dir, "cache"), tmp_path(dir, "probe"), NULL };
	assert_int_equal(cmd_run(&c, rm, NULL), 0);
	cmd_free(&c);
	const char *files[] = { "db.sqlite", "db.sqlite-wal", "db.sqlite-shm",
				"without.json", "with.json", NULL };
	tmp_remove(dir, files);
	free(s.env), free(without), free(with);
}

/* Without DEBUGINFOD_URLS (the daemon then asks no debuginfod, nor loads
 * its client: report/symbols.c), a debug file on disk is still found: the
 * stripped program's own name with .debug, beside it. */
static void test_debug_file_beside(void **state)
{
	(void)state;
	char dir[64], prog[128], debug[128];
	tmp_make(dir, sizeof(dir));
	snprintf(prog, sizeof(prog), "%s", tmp_path(dir, "callsite_stripped"));
	snprintf(debug, sizeof(debug), "%s",
		 tmp_path(dir, "callsite_stripped.debug"));
	const char *cp[] = { "/bin/cp", STRIPPED_PATH, prog, NULL };
	const char *cp_debug[] = { "/bin/cp", DEBUG_FILE_PATH, debug, NULL };
	struct cmd c;
	assert_int_equal(cmd_run(&c, cp, NULL), 0);
	cmd_free(&c);
	assert_int_equal(cmd_run(&c, cp_debug, NULL), 0);
	cmd_free(&c);
	char **env = env_with((const char *[]){ NULL });
	int line;
	struct jr_value *doc = run_stripped_at(prog, tmp_path(dir, "beside.json"),
					       env, &line);
	assert_named(private_site(doc), line, "from the debug file beside it");
	jr_free(doc);
	free(env);
	const char *files[] = { "callsite_stripped", "callsite_stripped.debug",
				"beside.json", NULL };
	tmp_remove(dir, files);
}

static int teardown(void **state)
{
	(void)state;
	cleanup_leftovers();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_debuginfod, teardown),
		cmocka_unit_test_teardown(test_debug_file_beside, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
