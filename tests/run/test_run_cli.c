/* SPDX-License-Identifier: MIT */
/*
 * `ptshare run` before anything runs: usage errors (2), programs LD_PRELOAD
 * cannot follow refused up front (2), commands that cannot be found (127)
 * or run (126), a daemon that cannot start (1).  None leaves anything in
 * TMPDIR, where `ptshare run` makes its directory.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "run_util.h"

/* ptshare with args; its status is want and its stderr holds every
 * string of says (NULL-terminated). */
static void expect(const char *const args[], int want, const char *const says[])
{
	const char *argv[16] = { PTSHARE_PATH };
	struct cmd c;
	for (size_t i = 0; args[i]; i++)
		argv[i + 1] = args[i];
	int status = cmd_run(&c, argv, NULL);
	if (status != want)
		fail_msg("%s: status %d, not %d; stderr:\n%s", args[1], status, want,
			 c.text[1]);
	for (size_t i = 0; says && says[i]; i++)
		if (!strstr(c.text[1], says[i]))
			fail_msg("no '%s' in:\n%s", says[i], c.text[1]);
	assert_no_sanitizer_report(&c);
	/* A usage error says what was wrong, not the whole help. */
	if (want == 2)
		assert_null(strstr(c.text[1], "usage:"));
	/* The program did not run: it would have said so on stdout. */
	assert_string_equal(c.text[0], "");
	assert_int_equal(dir_entries(run_tmpdir), 0);
	cmd_free(&c);
}

static void test_usage(void **state)
{
	expect((const char *[]){ "run", NULL }, 2,
	       (const char *[]){ "ptshare run: no command to run\n"
				 "Try 'ptshare run --help' for more information.\n",
				 NULL });
	expect((const char *[]){ "run", "--bogus", "--", RUN_SUBJECT_PATH, NULL }, 2,
	       (const char *[]){ "ptshare run: unknown option '--bogus'\nTry ",
				 NULL });
	expect((const char *[]){ "run", "--interval", NULL }, 2,
	       (const char *[]){ "ptshare run: option needs an argument: "
				 "'--interval'\n", NULL });
	expect((const char *[]){ "run", "--interval", "soon", "--", RUN_SUBJECT_PATH,
				 NULL }, 2, (const char *[]){ "bad number 'soon'", NULL });
	expect((const char *[]){ "run", "--top", "-3", "--", RUN_SUBJECT_PATH, NULL },
	       2, (const char *[]){ "bad number '-3'", NULL });
	expect((const char *[]){ "run", "--policy", "no-such-policy", "--",
				 RUN_SUBJECT_PATH, NULL }, 2,
	       (const char *[]){ "no-such-policy", NULL });
	/* Refused by the daemon it is passed on to: still a usage error. */
	expect((const char *[]){ "run", "--interval", "100000", "--", RUN_SUBJECT_PATH,
				 "exit", "0", NULL }, 2,
	       (const char *[]){ "bad interval", "failed to start", NULL });

	struct cmd c;
	const char *help[] = { PTSHARE_PATH, "run", "--help", NULL };
	assert_int_equal(cmd_run(&c, help, NULL), 0);
	assert_non_null(strstr(c.text[0], "usage: ptshare run"));
	cmd_free(&c);
	const char *list[] = { PTSHARE_PATH, "--help", NULL };
	assert_int_equal(cmd_run(&c, list, NULL), 0);
	assert_non_null(strstr(c.text[0], "  run "));
	cmd_free(&c);
}

static void test_not_runnable(void **state)
{
	char dir[64];
	tmp_make(dir, sizeof(dir));
	const char *plain = tmp_path(dir, "plain");
	close(open(plain, O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
	expect((const char *[]){ "run", "--", "no-such-command-ptshare", NULL }, 127,
	       (const char *[]){ "no-such-command-ptshare: command not found", NULL });
	expect((const char *[]){ "run", "--", plain, NULL }, 126,
	       (const char *[]){ "Permission denied", NULL });
	const char *const made[] = { "plain", NULL };
	tmp_remove(dir, made);
}

/* Copies src to dir/name with mode. */
static const char *copy_program(const char *dir, const char *name,
				const char *src, mode_t mode)
{
	static char path[256];
	char buf[65536];
	snprintf(path, sizeof(path), "%s", tmp_path(dir, name));
	int in = open(src, O_RDONLY | O_CLOEXEC);
	int out = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0700);
	assert_true(in >= 0 && out >= 0);
	for (ssize_t n; (n = read(in, buf, sizeof(buf))) > 0;)
		assert_int_equal(write(out, buf, (size_t)n), n);
	close(in);
	close(out);
	assert_int_equal(chmod(path, mode), 0);
	return path;
}

static void test_refused(void **state)
{
	static const char *const unreachable[] = {
		"LD_PRELOAD cannot follow it", "ptshare snapshot", NULL };
	char dir[64], script[256];
	tmp_make(dir, sizeof(dir));

	expect((const char *[]){ "run", "--", RUN_SUBJECT_STATIC_PATH, "exit", "0",
				 NULL }, 2, unreachable);
	expect((const char *[]){ "run", RUN_SUBJECT_STATIC_PATH, "exit", "0", NULL },
	       2, (const char *[]){ "is statically linked", NULL });

	/* A script whose interpreter is static. */
	snprintf(script, sizeof(script), "%s", tmp_path(dir, "script"));
	FILE *f = fopen(script, "w");
	assert_non_null(f);
	fprintf(f, "#!%s exit\n", RUN_SUBJECT_STATIC_PATH);
	fclose(f);
	assert_int_equal(chmod(script, 0755), 0);
	expect((const char *[]){ "run", "--", script, NULL }, 2,
	       (const char *[]){ "runs through", "which is statically linked", NULL });

	const char *const made[] = { "script", NULL };
	tmp_remove(dir, made);
}

/* Root runs a set-user-ID or set-group-ID program: to another user (or
 * group) the exec is secure (AT_SECURE), the loader ignores LD_PRELOAD,
 * and it is refused; to root's own, nothing changes at the exec, the
 * loader preloads the shim, and it is traced. */
static void test_set_id(void **state)
{
	static const struct {
		const char *name;
		mode_t mode;
		uid_t uid;
		gid_t gid;
		const char *says; /* refused saying this; NULL: traced */
	} cases[] = {
		{ "setuid-nobody", 04755, 65534, 0, "set-user-ID to uid 65534" },
		{ "setgid-nogroup", 02755, 0, 65534, "set-group-ID to gid 65534" },
		{ "setuid-root", 04755, 0, 0, NULL },
		{ "setgid-root", 02755, 0, 0, NULL },
	};
	char dir[64], json[128];
	require_root();
	tmp_make(dir, sizeof(dir));
	snprintf(json, sizeof(json), "%s", tmp_path(dir, "report.json"));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *path = copy_program(dir, cases[i].name, RUN_SUBJECT_PATH,
						cases[i].mode);
		assert_int_equal(chown(path, cases[i].uid, cases[i].gid), 0);
		assert_int_equal(chmod(path, cases[i].mode), 0);
		if (cases[i].says) {
			expect((const char *[]){ "run", "--", path, "exit", "0", NULL }, 2,
			       (const char *[]){ cases[i].says,
						 "LD_PRELOAD cannot follow it", NULL });
			continue;
		}
		struct cmd c;
		const char *argv[] = { PTSHARE_PATH, "run", "--no-record", "--json",
				       json, "--", path, "exit", "0", NULL };
		if (cmd_run(&c, argv, NULL))
			fail_msg("%s: %s", cases[i].name, c.text[1]);
		cmd_free(&c);
		struct jr_value *doc = report_read(json);
		const struct jr_value *finals = jr_get(doc, "final_checkpoints");
		assert_int_equal(jr_len(finals), 1);
		const struct jr_value *untraced = jr_path(jr_at(finals, 0), "untraced");
		assert_true(jr_is(untraced, JR_FALSE));
		assert_true(jr_path_u64(jr_at(finals, 0), "records", 0) > 0);
		jr_free(doc);
	}
	const char *const made[] = { "setuid-nobody", "setgid-nogroup", "setuid-root",
				      "setgid-root", "report.json", NULL };
	tmp_remove(dir, made);
}

/* TMPDIR, where `ptshare run` makes its private directory, must be a
 * directory no other user can change, on a path without another user's
 * link: there, nobody could rename root's directory away and put its own,
 * and its socket, where the program connects.  Refused before anything
 * runs; /tmp (root's, sticky) will do. */
static void test_tmpdir_others(void **state)
{
	char dir[64], theirs[128], link[128];
	require_root();
	tmp_make(dir, sizeof(dir));
	assert_int_equal(chmod(dir, 0711), 0);
	snprintf(theirs, sizeof(theirs), "%s", tmp_path(dir, "theirs"));
	snprintf(link, sizeof(link), "%s", tmp_path(dir, "link"));
	assert_int_equal(mkdir(theirs, 0755), 0);
	assert_int_equal(chown(theirs, 65534, 65534), 0);
	assert_int_equal(symlink(run_tmpdir, link), 0);
	assert_int_equal(lchown(link, 65534, 65534), 0);
	const char *cases[][2] = {
		{ theirs, "is a directory another user can change" },
		{ link, "is a symbolic link of uid 65534's" },
	};
	for (size_t i = 0; i < 2; i++) {
		setenv("TMPDIR", cases[i][0], 1);
		expect((const char *[]){ "run", "--", RUN_SUBJECT_PATH, "exit", "0",
					 NULL }, 1, (const char *[]){ cases[i][1], NULL });
		assert_int_equal(dir_entries(theirs), 0);
	}
	setenv("TMPDIR", run_tmpdir, 1);
	assert_int_equal(rmdir(theirs), 0);
	const char *const made[] = { "link", NULL };
	tmp_remove(dir, made);
}

/* The daemon cannot write the report where asked: it says why, and
 * `ptshare run` fails before the program runs. */
static void test_daemon_fails(void **state)
{
	expect((const char *[]){ "run", "-o", "/nonexistent/dir/report", "--",
				 RUN_SUBJECT_PATH, "exit", "0", NULL }, 1,
	       (const char *[]){ "cannot write /nonexistent/dir/report",
				 "ptshared failed to start", NULL });
	expect((const char *[]){ "run", "--json", "/nonexistent/dir/report.json",
				 "--", RUN_SUBJECT_PATH, "exit", "0", NULL }, 1,
	       (const char *[]){ "cannot write", NULL });
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_usage, run_tmpdir_setup, run_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_not_runnable, run_tmpdir_setup, run_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_refused, run_tmpdir_setup, run_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_set_id, run_tmpdir_setup, run_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_tmpdir_others, run_tmpdir_setup, run_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_daemon_fails, run_tmpdir_setup, run_tmpdir_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
