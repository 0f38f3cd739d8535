/* SPDX-License-Identifier: MIT */
/*
 * Where root's reports and traces go (docs/promises.md, Outputs).  Run as
 * root (CI is): a child that becomes nobody plants symbolic links, hard
 * links and FIFOs where root's run will write, in a directory of nobody's
 * and in a sticky world-writable one like /tmp; root's `ptshare replay`,
 * `ptshare run` and `ptshared` must refuse them, leaving root's files as
 * they were and nobody's FIFO unread (--openmetrics replaces a file
 * whole: never through another name), while the outputs a user names on
 * purpose (a file of its own, its own FIFO, /dev/stderr, /dev/fd/N, '-')
 * still work.  Nothing here depends on fs.protected_*: nobody's own
 * directory is not sticky, so the kernel's protections never apply there.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli/cli.h"
#include "ptshare/wire.h"
#include "run_util.h"
#include "schema_check.h"
#include "ingest/trace.h"

#define VICTIM_TEXT "root's own, not to be touched\n"

/* The places of one test: base (root's, 0711), nobody's directory in it,
 * a sticky world-writable one, root's file and root's directory that
 * nobody's links point at, and a trace to replay. */
struct place {
	char base[64];
	char theirs[PATH_MAX], sticky[PATH_MAX], victim[PATH_MAX];
	char rootdir[PATH_MAX], trace[PATH_MAX];
	uid_t nobody;
};

static uid_t nobody_uid(void)
{
	struct passwd *pw = getpwnam("nobody");
	assert_non_null(pw);
	return pw->pw_uid;
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

/* An empty run's trace: the header alone replays to a report. */
static void write_trace(const char *path)
{
	static const char magic[16] = TRACE_MAGIC;
	uint32_t v[2] = { PTS_WIRE_VERSION, 0 };
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, magic, sizeof(magic)), (ssize_t)sizeof(magic));
	assert_int_equal(write(fd, v, sizeof(v)), (ssize_t)sizeof(v));
	close(fd);
}

static void place_make(struct place *p)
{
	require_root();
	tmp_make(p->base, sizeof(p->base));
	assert_int_equal(chmod(p->base, 0711), 0);
	p->nobody = nobody_uid();
	snprintf(p->theirs, sizeof(p->theirs), "%s/theirs", p->base);
	snprintf(p->sticky, sizeof(p->sticky), "%s/sticky", p->base);
	snprintf(p->victim, sizeof(p->victim), "%s/victim", p->base);
	snprintf(p->rootdir, sizeof(p->rootdir), "%s/rootdir", p->base);
	snprintf(p->trace, sizeof(p->trace), "%s/empty.trace", p->base);
	assert_int_equal(mkdir(p->theirs, 0755), 0);
	assert_int_equal(chown(p->theirs, p->nobody, 0), 0);
	assert_int_equal(mkdir(p->sticky, 0777), 0);
	assert_int_equal(chmod(p->sticky, 01777), 0);
	assert_int_equal(mkdir(p->rootdir, 0700), 0);
	write_file(p->victim, VICTIM_TEXT, 0644);
	write_trace(p->trace);
}

static const char *in(const char *dir, const char *name)
{
	return tmp_path(dir, name);
}

/* What nobody plants. */
enum plant { SYMLINK, HARDLINK, FIFO };

/* nobody makes at path a thing of kind, of target (links). */
static void plant(const struct place *p, enum plant kind, const char *target,
		  const char *path)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		if (setgroups(0, NULL) || setresgid(p->nobody, p->nobody, p->nobody) ||
		    setresuid(p->nobody, p->nobody, p->nobody))
			_exit(1);
		int r = kind == SYMLINK ? symlink(target, path)
			: kind == HARDLINK ? link(target, path) : mkfifo(path, 0666);
		_exit(r ? 2 : 0);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		fail_msg("nobody could not plant %s (%d)", path, status);
}

/* The victim still holds its text, with its mode, as root's. */
static void assert_untouched(const char *path, mode_t mode)
{
	struct stat st;
	size_t len;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, mode);
	assert_int_equal(st.st_uid, 0);
	char *text = file_read(path, &len);
	assert_string_equal(text, VICTIM_TEXT);
	free(text);
}

/* A command that must refuse its output: exit status want, the reason
 * said, and no sanitizer report. */
static void expect_refused(const char *const argv[], int want, const char *says)
{
	struct cmd c;
	int status = cmd_run(&c, argv, NULL);
	if (status != want || !strstr(c.text[1], says))
		fail_msg("%s %s: exit %d (want %d), no '%s' in:\n%s", argv[1],
			 argv[2], status, want, says, c.text[1]);
	assert_no_sanitizer_report(&c);
	cmd_free(&c);
}

static void replay_refused(const struct place *p, const char *option,
			   const char *path, const char *says)
{
	const char *argv[] = { PTSHARE_PATH, "replay", p->trace, option, path, NULL };
	expect_refused(argv, 1, says);
}

/* A link of nobody's as the output's last component, in nobody's
 * directory and in a sticky one: refused whatever fs.protected_symlinks
 * says, root's file left as it was. */
static void test_symlink_planted(void **state)
{
	struct place p;
	place_make(&p);
	const char *dirs[] = { p.theirs, p.sticky };
	for (size_t i = 0; i < 2; i++) {
		char link[PATH_MAX];
		snprintf(link, sizeof(link), "%s", in(dirs[i], "report.json"));
		plant(&p, SYMLINK, p.victim, link);
		replay_refused(&p, "--json", link, "a symbolic link of uid ");
		replay_refused(&p, "--html", link, "a symbolic link of uid ");
		replay_refused(&p, "--openmetrics", link, "a symbolic link of uid ");
		assert_untouched(p.victim, 0644);
	}
	/* A dangling one would have root create the file it names. */
	char made[PATH_MAX];
	snprintf(made, sizeof(made), "%s", in(p.rootdir, "made.json"));
	plant(&p, SYMLINK, made, in(p.theirs, "dangling.json"));
	replay_refused(&p, "--json", in(p.theirs, "dangling.json"),
		       "a symbolic link of uid ");
	assert_int_equal(access(made, F_OK), -1);
	cleanup_leftovers(); /* the directory and what nobody left there */
}

/* A link of nobody's as a directory on the way: root's directory gets
 * no file. */
static void test_directory_link_planted(void **state)
{
	struct place p;
	place_make(&p);
	plant(&p, SYMLINK, p.rootdir, in(p.theirs, "sub"));
	plant(&p, SYMLINK, p.rootdir, in(p.sticky, "sub"));
	replay_refused(&p, "--json", in(p.theirs, "sub/report.json"),
		       "a symbolic link of uid ");
	replay_refused(&p, "--json", in(p.sticky, "sub/report.json"),
		       "a symbolic link of uid ");
	replay_refused(&p, "--openmetrics", in(p.theirs, "sub/ptshare.prom"),
		       "a symbolic link of uid ");
	assert_int_equal(dir_entries(p.rootdir), 0);
	cleanup_leftovers(); /* the directory and what nobody left there */
}

/* A hard link nobody made to a file of root's (one nobody may write: the
 * only kind fs.protected_hardlinks lets it link) is root's file, and
 * would be truncated and made 0600 through its second name. */
static void test_hardlink_planted(void **state)
{
	struct place p;
	place_make(&p);
	assert_int_equal(chmod(p.victim, 0666), 0);
	plant(&p, HARDLINK, p.victim, in(p.theirs, "report.json"));
	replay_refused(&p, "--json", in(p.theirs, "report.json"), "2 names");
	assert_untouched(p.victim, 0666);
	cleanup_leftovers(); /* the directory and what nobody left there */
}

/* --openmetrics replaces its file whole (docs/fleet.md): what is there,
 * even a second name of root's file, is replaced by a new file of root's,
 * never written through; no temporary file is left. */
static void test_openmetrics_replaced(void **state)
{
	struct place p;
	place_make(&p);
	assert_int_equal(chmod(p.victim, 0666), 0);
	char prom[PATH_MAX];
	snprintf(prom, sizeof(prom), "%s", in(p.theirs, "ptshare.prom"));
	plant(&p, HARDLINK, p.victim, prom);
	const char *argv[] = { PTSHARE_PATH, "replay", p.trace, "--openmetrics",
			       prom, NULL };
	struct cmd c;
	int status = cmd_run(&c, argv, NULL);
	if (status)
		fail_msg("replay --openmetrics: exit %d:\n%s", status, c.text[1]);
	assert_no_sanitizer_report(&c);
	cmd_free(&c);
	assert_untouched(p.victim, 0666);
	struct stat st;
	mode_t mask = umask(0);
	umask(mask);
	assert_int_equal(stat(prom, &st), 0);
	assert_int_equal(st.st_uid, 0);
	assert_int_equal(st.st_nlink, 1);
	assert_int_equal(st.st_mode & 07777, 0644 & ~mask);
	size_t len;
	char *text = file_read(prom, &len);
	assert_true(len > 6 && !strcmp(text + len - 6, "# EOF\n"));
	free(text);
	assert_int_equal(dir_entries(p.theirs), 1);
	cleanup_leftovers(); /* the directory and what nobody left there */
}

/* A reader of the FIFO at path, as uid, counting the bytes it reads
 * until it is told to stop. */
struct reader {
	pid_t pid;
	int stop, result;
};

static void reader_start(struct reader *r, uid_t uid, const char *path)
{
	int stop[2], result[2];
	assert_int_equal(pipe2(stop, O_CLOEXEC), 0);
	assert_int_equal(pipe2(result, O_CLOEXEC), 0);
	r->pid = fork();
	assert_true(r->pid >= 0);
	if (!r->pid) {
		close(stop[1]);
		close(result[0]);
		if (uid && (setgroups(0, NULL) || setresgid(uid, uid, uid) ||
			    setresuid(uid, uid, uid)))
			_exit(1);
		int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		size_t got = 0;
		char buf[4096], ready = 'r';
		if (fd < 0 || write(result[1], &ready, 1) != 1)
			_exit(1);
		fcntl(stop[0], F_SETFL, O_NONBLOCK);
		for (;;) {
			ssize_t n = read(fd, buf, sizeof(buf));
			if (n > 0) {
				got += (size_t)n;
				continue;
			}
			/* Told to stop (the pipe's end), once all is read. */
			if (read(stop[0], buf, 1) == 0)
				break;
			usleep(2000);
		}
		_exit(write(result[1], &got, sizeof(got)) == sizeof(got) ? 0 : 1);
	}
	close(stop[0]);
	close(result[1]);
	char ready;
	assert_int_equal(read(result[0], &ready, 1), 1);
	r->stop = stop[1];
	r->result = result[0];
}

/* The bytes it read. */
static size_t reader_stop(struct reader *r)
{
	size_t got = 0;
	int status;
	close(r->stop);
	assert_int_equal(read(r->result, &got, sizeof(got)), (ssize_t)sizeof(got));
	close(r->result);
	assert_int_equal(waitpid(r->pid, &status, 0), r->pid);
	assert_true(WIFEXITED(status) && !WEXITSTATUS(status));
	return got;
}

/* Runs argv, killing it after ms: its exit status, or -1 when it had to
 * be killed (it hung). */
static int run_within(struct cmd *c, const char *const argv[], long ms)
{
	cmd_start(c, argv, NULL);
	for (long waited = 0; waited < ms; waited += 10) {
		siginfo_t si = { 0 };
		if (!waitid(P_PID, (id_t)c->pid, &si, WEXITED | WNOHANG | WNOWAIT) &&
		    si.si_pid)
			return cmd_finish(c);
		usleep(10000);
	}
	kill(-c->pid, SIGKILL);
	cmd_finish(c);
	return -1;
}

/* A FIFO of nobody's where root writes its report: with nobody reading,
 * the report would be theirs; with nobody reading yet, root's run would
 * wait for them at the open. */
static void test_fifo_planted(void **state)
{
	struct place p;
	place_make(&p);
	const char *dirs[] = { p.theirs, p.sticky };
	for (size_t i = 0; i < 2; i++) {
		char fifo[PATH_MAX];
		struct reader r;
		struct cmd c;
		snprintf(fifo, sizeof(fifo), "%s", in(dirs[i], "report.json"));
		plant(&p, FIFO, NULL, fifo);
		reader_start(&r, p.nobody, fifo);
		replay_refused(&p, "--json", fifo, "a FIFO of uid ");
		assert_int_equal(reader_stop(&r), 0);
		const char *argv[] = { PTSHARE_PATH, "replay", p.trace, "--json",
				       fifo, NULL };
		int status = run_within(&c, argv, 5000);
		if (status != 1 || !strstr(c.text[1], "a FIFO of uid "))
			fail_msg("no reader: exit %d:\n%s", status, c.text[1]);
		cmd_free(&c);
	}
	cleanup_leftovers(); /* the directory and what nobody left there */
}

/* A file replaced between the check and the open: nobody swaps, as fast
 * as it can, a file of root's with a link of its own to root's victim
 * (renameat2 RENAME_EXCHANGE: the name always exists).  The file opened
 * is the one checked: the victim is never written, and a name that
 * changes between two looks is refused. */
static void test_swapped_while_opening(void **state)
{
	struct place p;
	place_make(&p);
	char name[PATH_MAX], other[PATH_MAX];
	snprintf(name, sizeof(name), "%s", in(p.theirs, "report"));
	snprintf(other, sizeof(other), "%s", in(p.theirs, "other"));
	write_file(name, "", 0600);
	plant(&p, SYMLINK, p.victim, other);
	pid_t swapper = fork();
	assert_true(swapper >= 0);
	if (!swapper) {
		if (setgroups(0, NULL) || setresgid(p.nobody, p.nobody, p.nobody) ||
		    setresuid(p.nobody, p.nobody, p.nobody))
			_exit(1);
		for (;;)
			if (renameat2(AT_FDCWD, name, AT_FDCWD, other, RENAME_EXCHANGE))
				_exit(2);
	}
	size_t opened = 0, refused = 0;
	for (int i = 0; i < 20000; i++) {
		char why[256];
		FILE *f = cli_output_open(name, why, sizeof(why));
		if (!f) {
			/* The link, or the name seen as a link and as a file
			 * in two looks (nobody swapped meanwhile). */
			if (!strstr(why, "a symbolic link of uid ") &&
			    !strstr(why, "changed while it was opened"))
				fail_msg("refused for another reason: %s", why);
			refused++;
			continue;
		}
		fputs("report\n", f);
		assert_int_equal(cli_output_close(f), 0);
		opened++;
	}
	kill(swapper, SIGKILL);
	waitpid(swapper, NULL, 0);
	print_message("swapped: %zu opened root's file, %zu refused\n",
		      opened, refused);
	assert_true(opened > 0 && refused > 0);
	assert_untouched(p.victim, 0644);
	cleanup_leftovers(); /* the directory and what nobody left there */
}

/* What a user names on purpose: its own FIFO (with a reader; without
 * one it is told to start it), an fd of its own, stderr, stdout, its
 * own file (made 0600 and truncated). */
static void test_own_outputs(void **state)
{
	struct place p;
	struct cmd c;
	struct reader r;
	place_make(&p);
	char fifo[PATH_MAX], file[PATH_MAX];
	snprintf(fifo, sizeof(fifo), "%s", in(p.base, "fifo"));
	assert_int_equal(mkfifo(fifo, 0600), 0);
	reader_start(&r, 0, fifo);
	const char *to_fifo[] = { PTSHARE_PATH, "replay", p.trace, "--json", fifo, NULL };
	assert_int_equal(cmd_run(&c, to_fifo, NULL), 0);
	cmd_free(&c);
	assert_true(reader_stop(&r) > 100);
	assert_int_equal(run_within(&c, to_fifo, 5000), 1);
	assert_non_null(strstr(c.text[1], "no reader"));
	cmd_free(&c);

	int fds[2];
	assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
	const struct cmd_opts fd3 = { .ready_fd = fds[1] };
	const char *to_fd[] = { PTSHARE_PATH, "replay", p.trace, "--json", "/dev/fd/3",
				NULL };
	assert_int_equal(cmd_run(&c, to_fd, &fd3), 0);
	cmd_free(&c);
	close(fds[1]);
	char buf[64] = "";
	assert_true(read(fds[0], buf, sizeof(buf) - 1) > 0);
	assert_non_null(strstr(buf, "\"schema\": \"ptshare.report\""));
	close(fds[0]);

	const char *to_stderr[] = { PTSHARE_PATH, "replay", p.trace, "--json",
				    "/dev/stderr", NULL };
	assert_int_equal(cmd_run(&c, to_stderr, NULL), 0);
	assert_non_null(strstr(c.text[1], "\"schema\": \"ptshare.report\""));
	assert_true(schema_valid(c.text[1], c.len[1], "--json /dev/stderr"));
	cmd_free(&c);
	const char *to_stdout[] = { PTSHARE_PATH, "replay", p.trace, "--json", "-", NULL };
	assert_int_equal(cmd_run(&c, to_stdout, NULL), 0);
	assert_non_null(strstr(c.text[0], "\"schema\": \"ptshare.report\""));
	assert_true(schema_valid(c.text[0], c.len[0], "--json -"));
	cmd_free(&c);

	snprintf(file, sizeof(file), "%s", in(p.base, "own.json"));
	write_file(file, "an older report, longer than the new one will be "
		   "at its start, and readable by all", 0644);
	const char *to_file[] = { PTSHARE_PATH, "replay", p.trace, "--json", file, NULL };
	assert_int_equal(cmd_run(&c, to_file, NULL), 0);
	cmd_free(&c);
	struct stat st;
	assert_int_equal(stat(file, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	char *text = file_read(file, NULL);
	assert_int_equal(strncmp(text, "{", 1), 0);
	assert_null(strstr(text, "an older report"));
	free(text);
	cleanup_leftovers(); /* the directory and what nobody left there */
}

/* `ptshare run OPTION path -- touch marker` for each output option, run
 * by the command wrap (NULL: none; runuser, as another user): each is
 * refused saying says, and the program never runs. */
static void run_refused(const char *const wrap[], const char *path,
			const char *marker, const char *says)
{
	static const char *const options[] = { "-o", "--json", "--html", "--record" };
	for (size_t i = 0; i < 4; i++) {
		const char *argv[16];
		size_t n = 0;
		for (; wrap && wrap[n]; n++)
			argv[n] = wrap[n];
		/* The default trace, in a directory the user may not write,
		 * would be refused first. */
		const char *no_record = strcmp(options[i], "--record")
					? "--no-record" : NULL;
		const char *run[] = { PTSHARE_PATH, "run", options[i], path, "--",
				      "/bin/touch", marker, NULL };
		argv[n++] = run[0];
		argv[n++] = run[1];
		if (no_record)
			argv[n++] = no_record;
		memcpy(argv + n, run + 2, sizeof(run) - 2 * sizeof(*run));
		expect_refused(argv, 1, says);
		assert_int_equal(access(marker, F_OK), -1);
	}
}

/* Every output of `ptshare run` and ptshared goes through the same
 * opener: each refuses nobody's link, before the program runs. */
static void test_every_output(void **state)
{
	struct place p;
	place_make(&p);
	char link[PATH_MAX], marker[PATH_MAX], sock[PATH_MAX + 8], sockdir[PATH_MAX];
	snprintf(link, sizeof(link), "%s", in(p.theirs, "out"));
	snprintf(marker, sizeof(marker), "%s", in(p.base, "ran"));
	plant(&p, SYMLINK, p.victim, link);
	run_refused(NULL, link, marker, "a symbolic link of uid ");
	snprintf(sockdir, sizeof(sockdir), "%s", in(p.base, "sockdir"));
	assert_int_equal(mkdir(sockdir, 0700), 0);
	snprintf(sock, sizeof(sock), "%s/sock", sockdir);
	const char *daemon_options[] = { "--text", "--json", "--html", "--record" };
	for (size_t i = 0; i < 4; i++) {
		const char *argv[] = { PTSHARED_PATH, "--socket", sock,
				       daemon_options[i], link, NULL };
		expect_refused(argv, 1, "a symbolic link of uid ");
	}
	assert_untouched(p.victim, 0644);
	cleanup_leftovers(); /* the directory and what nobody left there */
}

/* ptshared writes the outputs as the user who runs `ptshare run`: one it
 * may not write (a directory of root's, as nobody) fails before the
 * program starts, with the reason. */
static void test_unwritable_before_program(void **state)
{
	struct place p;
	place_make(&p);
	char out[PATH_MAX], marker[PATH_MAX];
	snprintf(out, sizeof(out), "%s", in(p.rootdir, "out"));
	snprintf(marker, sizeof(marker), "%s", in(p.theirs, "ran"));
	static const char *const as_nobody[] = { "/usr/sbin/runuser", "-u", "nobody",
						 "--", NULL };
	run_refused(as_nobody, out, marker, "Permission denied");
	cleanup_leftovers(); /* the directory and what nobody left there */
}

static int teardown(void **state)
{
	cleanup_leftovers();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_symlink_planted, teardown),
		cmocka_unit_test_teardown(test_directory_link_planted, teardown),
		cmocka_unit_test_teardown(test_hardlink_planted, teardown),
		cmocka_unit_test_teardown(test_openmetrics_replaced, teardown),
		cmocka_unit_test_teardown(test_fifo_planted, teardown),
		cmocka_unit_test_teardown(test_swapped_while_opening, teardown),
		cmocka_unit_test_teardown(test_own_outputs, teardown),
		cmocka_unit_test_teardown(test_every_output, teardown),
		cmocka_unit_test_teardown(test_unwritable_before_program, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
