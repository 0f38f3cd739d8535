/* SPDX-License-Identifier: MIT */
/*
 * Who may use ptshared (docs/daemon.md, Access).  Run as root (CI is): a
 * forked child becomes nobody and tries the daemon's socket, its report
 * socket and its report.  By default the socket is 0600 in a 0700
 * directory, so nobody cannot reach it; one that can (its file-system uid
 * kept root, as root's processes bypass file modes) is refused by the
 * daemon, which knows it from SO_PEERCRED, and counted.  With
 * --allow-users nobody, nobody is served, another user still refused, and
 * neither may have a report; no user may hold more than
 * --max-clients-per-user connections.  Reports are 0600 and the daemon
 * user's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "hostile_wire.h"
#include "run_util.h"

#define OTHER_UID 4242 /* a user no list names */

/* What a child as another user met. */
enum met { ACKED, REFUSED, DENIED, OTHER };

enum try { TRY_SHIM, TRY_REPORT, TRY_READ };

/* The live report protocol's first step (docs/report.md): a user the
 * daemon will not serve is told EACCES at once. */
static enum met ask_report(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct pts_report_done d;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		return errno == EACCES ? DENIED : OTHER;
	if (recv(fd, &d, sizeof(d), MSG_WAITALL) != sizeof(d) ||
	    d.h.type != PTS_REPORT_DONE)
		return OTHER;
	return d.err == EACCES ? REFUSED : OTHER;
}

static enum met try_as_user(enum try what, const char *path)
{
	struct hconn c;
	struct pts_hello h = { .version = PTS_WIRE_VERSION };
	switch (what) {
	case TRY_SHIM: {
		if (hconn_open(&c, path))
			return errno == EACCES ? DENIED : OTHER;
		const char *r = hconn_ask(&c, &h.h, PTS_HELLO, sizeof(h), -1);
		return !strcmp(r, "acked") ? ACKED : !strcmp(r, "hung up") ? REFUSED
									 : OTHER;
	}
	case TRY_REPORT:
		return ask_report(path);
	case TRY_READ:
		return open(path, O_RDONLY | O_CLOEXEC) >= 0 ? ACKED
		       : errno == EACCES ? DENIED : OTHER;
	}
	return OTHER;
}

/* A child as uid tries path.  fs_root: its file-system uid stays root, so
 * that file modes let it by, as they let root's processes by: the daemon
 * alone decides, from the effective uid SO_PEERCRED gives. */
static enum met as_user(uid_t uid, bool fs_root, enum try what, const char *path)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		if (setgroups(0, NULL) || setresgid(uid, uid, uid) ||
		    setresuid(uid, uid, fs_root ? 0 : uid))
			_exit(OTHER);
		if (fs_root) {
			setfsuid(0);
			if (setfsuid((uid_t)-1) != 0)
				_exit(OTHER);
		}
		_exit(try_as_user(what, path));
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return (enum met)WEXITSTATUS(status);
}

static uid_t nobody(void)
{
	struct passwd *pw = getpwnam("nobody");
	assert_non_null(pw);
	return pw->pw_uid;
}

static void assert_mode(const char *path, mode_t mode)
{
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, mode);
	assert_int_equal(st.st_uid, geteuid());
}

static void test_default_private(void **state)
{
	struct daemon_run d;
	char report_sock[128];
	require_root();
	daemon_dir(&d);
	snprintf(report_sock, sizeof(report_sock), "%s", tmp_path(d.dir, "report"));
	const char *opts[] = { "--report-socket", report_sock, NULL };
	daemon_start(&d, opts, false);
	assert_mode(d.dir, 0700);
	assert_mode(sock_of(&d), 0600);
	uid_t nb = nobody();
	assert_int_equal(as_user(nb, false, TRY_SHIM, sock_of(&d)), DENIED);
	assert_int_equal(as_user(nb, true, TRY_SHIM, sock_of(&d)), REFUSED);
	assert_int_equal(as_user(nb, false, TRY_REPORT, report_sock), DENIED);
	assert_int_equal(as_user(nb, true, TRY_REPORT, report_sock), REFUSED);
	assert_int_equal(as_user(0, false, TRY_SHIM, sock_of(&d)), ACKED);
	assert_int_equal(daemon_down(&d, SIGTERM), 0);
	assert_non_null(strstr(d.c.text[1], "refused a process of uid"));
	assert_mode(tmp_path(d.dir, "report.json"), 0600);
	assert_mode(tmp_path(d.dir, "trace"), 0600);
	assert_int_equal(as_user(nb, false, TRY_READ, tmp_path(d.dir, "report.json")),
			 DENIED);
	struct jr_value *doc = report_read(tmp_path(d.dir, "report.json"));
	assert_int_equal(jr_path_u64(doc, "stream.connections_refused_user", 0), 1);
	assert_int_equal(jr_path_u64(doc, "stream.connections", 0), 1);
	jr_free(doc);
	daemon_free(&d);
}

static void test_allow_users(void **state)
{
	struct daemon_run d;
	char report_sock[128];
	require_root();
	daemon_dir(&d);
	snprintf(report_sock, sizeof(report_sock), "%s", tmp_path(d.dir, "report"));
	/* The users served must reach the socket: the directory is theirs to
	 * search, not to list or write. */
	assert_int_equal(chmod(d.dir, 0711), 0);
	const char *opts[] = { "--allow-users", "nobody", "--report-socket",
			       report_sock, NULL };
	daemon_start(&d, opts, false);
	assert_mode(sock_of(&d), 0666);
	uid_t nb = nobody();
	assert_int_equal(as_user(nb, false, TRY_SHIM, sock_of(&d)), ACKED);
	assert_int_equal(as_user(OTHER_UID, false, TRY_SHIM, sock_of(&d)), REFUSED);
	assert_int_equal(as_user(nb, true, TRY_REPORT, report_sock), REFUSED);
	assert_int_equal(daemon_down(&d, SIGTERM), 0);
	assert_mode(tmp_path(d.dir, "report.json"), 0600);
	assert_int_equal(as_user(nb, false, TRY_READ, tmp_path(d.dir, "report.json")),
			 DENIED);
	struct jr_value *doc = report_read(tmp_path(d.dir, "report.json"));
	const struct jr_value *finals = jr_get(doc, "final_checkpoints");
	assert_int_equal(jr_len(finals), 1);
	assert_int_equal(jr_path_u64(jr_at(finals, 0), "uid", 0), nb);
	assert_int_equal(jr_path_u64(doc, "stream.connections_refused_user", 0), 1);
	jr_free(doc);
	daemon_free(&d);
}

/* --max-clients-per-user: a user with that many connections open has its
 * next one refused and counted while another user is served, and is
 * served again once one of its own has closed. */
static void test_per_user_limit(void **state)
{
	struct daemon_run d;
	struct hconn held[2];
	struct pts_hello h = { .version = PTS_WIRE_VERSION };
	require_root();
	daemon_dir(&d);
	assert_int_equal(chmod(d.dir, 0711), 0);
	const char *opts[] = { "--allow-users", "nobody",
			       "--max-clients-per-user", "2", NULL };
	daemon_start(&d, opts, false);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(hconn_open(&held[i], sock_of(&d)), 0);
		assert_string_equal(hconn_ask(&held[i], &h.h, PTS_HELLO, sizeof(h), -1),
				    "acked");
	}
	assert_int_equal(as_user(0, false, TRY_SHIM, sock_of(&d)), REFUSED);
	assert_int_equal(as_user(nobody(), false, TRY_SHIM, sock_of(&d)), ACKED);
	/* The daemon learns of the close when it reads the end of the
	 * stream: until then the user's next connection is refused too. */
	hconn_close(&held[0]);
	size_t refused = 1, tries = 0;
	enum met m;
	while ((m = as_user(0, false, TRY_SHIM, sock_of(&d))) == REFUSED &&
	       ++tries < 1000) {
		refused++;
		usleep(10000);
	}
	assert_int_equal(m, ACKED);
	hconn_close(&held[1]);
	assert_int_equal(daemon_down(&d, SIGTERM), 0);
	assert_non_null(strstr(d.c.text[1], "uid 0 has --max-clients-per-user 2 "
				"connections open"));
	struct jr_value *doc = report_read(tmp_path(d.dir, "report.json"));
	assert_int_equal(jr_path_u64(doc, "stream.connections_refused_user_full", 0),
			 refused);
	assert_int_equal(jr_path_u64(doc, "stream.connections_refused_full", 1), 0);
	jr_free(doc);
	daemon_free(&d);
}

/* ptshared refuses what would not keep its socket or reports private. */
static void test_refusals(void **state)
{
	char dir[64], sock[128], json[128];
	struct cmd c;
	require_root();
	tmp_make(dir, sizeof(dir));
	snprintf(sock, sizeof(sock), "%s", tmp_path(dir, "sock"));
	snprintf(json, sizeof(json), "%s", tmp_path(dir, "report.json"));
	const struct {
		mode_t dir_mode;
		const char *args[4];
		int status;
		const char *says;
	} cases[] = {
		{ 0755, { NULL }, 1, "is not the daemon user's alone" },
		{ 0777, { "--allow-users", "nobody" }, 1, "writable by them alone" },
		{ 0700, { "--allow-users", "nosuchuser" }, 2, "no user 'nosuchuser'" },
		{ 0700, { "--allow-users", "nobody,," }, 2, "an empty or overlong" },
		{ 0700, { "--max-clients", "0" }, 2, "bad --max-clients" },
		{ 0700, { "--max-clients-per-user", "x" }, 2,
		  "bad --max-clients-per-user" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *argv[8] = { PTSHARED_PATH, "--socket", sock };
		for (size_t k = 0; cases[i].args[k]; k++)
			argv[k + 3] = cases[i].args[k];
		assert_int_equal(chmod(dir, cases[i].dir_mode), 0);
		assert_int_equal(cmd_run(&c, argv, NULL), cases[i].status);
		if (!strstr(c.text[1], cases[i].says))
			fail_msg("case %zu: no '%s' in:\n%s", i, cases[i].says, c.text[1]);
		assert_no_sanitizer_report(&c);
		cmd_free(&c);
	}
	/* A report file that is there already: another user's is left alone,
	 * ours is made 0600 before it is written. */
	assert_int_equal(chmod(dir, 0700), 0);
	int fd = open(json, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(fchown(fd, nobody(), 0), 0);
	assert_int_equal(write(fd, "theirs", 6), 6);
	close(fd);
	const char *argv[] = { PTSHARED_PATH, "--socket", sock, "--json", json, NULL };
	assert_int_equal(cmd_run(&c, argv, NULL), 1);
	assert_non_null(strstr(c.text[1], "cannot write"));
	cmd_free(&c);
	struct stat st;
	assert_int_equal(stat(json, &st), 0);
	assert_int_equal(st.st_size, 6);
	assert_int_equal(st.st_mode & 0777, 0644);
	assert_int_equal(chown(json, 0, 0), 0);
	struct daemon_run d = { 0 };
	snprintf(d.dir, sizeof(d.dir), "%s", dir);
	daemon_start(&d, NULL, false);
	assert_int_equal(daemon_down(&d, SIGTERM), 0);
	assert_mode(tmp_path(dir, "report.json"), 0600);
	daemon_free(&d);
}

static int teardown(void **state)
{
	cleanup_leftovers();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_default_private, teardown),
		cmocka_unit_test_teardown(test_allow_users, teardown),
		cmocka_unit_test_teardown(test_per_user_limit, teardown),
		cmocka_unit_test_teardown(test_refusals, teardown),
	};
	return test_group_status(cmocka_run_group_tests(tests, NULL, NULL));
}
