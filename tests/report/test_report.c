/* SPDX-License-Identifier: MIT */
/*
 * `ptshare report` against a running daemon (docs/report.md), end to end.
 * A workload under `ptshare run` is reported on while it runs: the reports
 * see every process exact and see it grow, and the run's final report is
 * what a replay of its trace gives, with no trace of the clients.  Then the
 * clients that must be refused, with the daemon serving on: no daemon, the
 * shims' socket, outputs that are not memory, malformed requests, a client
 * that says nothing, and another user.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/magic.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "ptshare/wire.h"
#include "run_util.h"
#include "schema_check.h"

#define WORKERS 3 /* report_subject's children */
#define GROW_KB 128 /* its "grow": 64 MiB touched, 32 PTE tables at least */
#define NOBODY 65534

/* What `ptshare run` said on stderr: the report socket. */
static char *socket_said(struct cmd *c)
{
	const char *intro = "ptshare run: live report: ptshare report --socket ";
	if (!cmd_wait_stderr(c, "/report\n"))
		fail_msg("no report socket said:\n%s", c->text[1]);
	const char *at = strstr(c->text[1], intro);
	assert_non_null(at);
	at += strlen(intro);
	return strndup(at, strcspn(at, "\n"));
}

/* report_subject's "@pids" line: the parent first. */
static void pids_said(struct cmd *c, long pids[WORKERS + 1])
{
	const char *line = cmd_line(c);
	assert_non_null(line);
	char *end;
	assert_true(!strncmp(line, "@pids ", 6));
	line += 6;
	for (int i = 0; i <= WORKERS; i++, line = end) {
		pids[i] = strtol(line, &end, 10);
		assert_true(end > line && pids[i] > 0);
	}
}

/* `ptshare report --socket sock --json - [extra]`: its stdout. */
static char *report_json_text(const char *sock, const char *extra)
{
	const char *argv[] = { PTSHARE_PATH, "report", "--socket", sock, "--json",
			       "-", extra, NULL };
	struct cmd c;
	int status = cmd_run(&c, argv, NULL);
	if (status)
		fail_msg("ptshare report: status %d:\n%s", status, c.text[1]);
	assert_no_sanitizer_report(&c);
	assert_string_equal(c.text[1], "");
	char *text = strdup(c.text[0]);
	cmd_free(&c);
	return text;
}

static struct jr_value *parsed(const char *text)
{
	struct jr_error err;
	struct jr_value *doc = jr_parse(text, strlen(text), &err);
	if (!doc)
		fail_msg("report: at %zu: %s", err.offset, err.what);
	if (!schema_valid(text, strlen(text), "the report")) {
		jr_free(doc);
		fail_msg("the report is not valid against docs/report.schema.json");
	}
	return doc;
}

/* Every process of the workload, alive, read by the reading the report
 * asked for and exact, at the peak too; nobody else; nothing lost.  The
 * parent's VmPTE. */
static int64_t assert_live(const struct jr_value *doc, const long pids[WORKERS + 1])
{
	for (int i = 0; i <= WORKERS; i++) {
		const struct jr_value *f = report_final(doc, pids[i]);
		assert_non_null(f);
		assert_true(jr_bool(jr_get(f, "alive")));
		assert_string_equal(jr_path_str(f, "checkpoint"), "timer");
		int64_t kernel = jr_path_i64(f, "vmpte_kb", -1);
		assert_true(kernel > 0);
		assert_int_equal(jr_path_i64(f, "model_kb", -2), kernel);
		assert_non_null(report_process(doc, pids[i]));
	}
	assert_int_equal(jr_len(jr_get(doc, "final_checkpoints")), WORKERS + 1);
	assert_int_equal(jr_path_i64(doc, "stream.lost", -1), 0);
	assert_int_equal(jr_path_i64(doc, "stream.malformed", -1), 0);
	return jr_path_i64(report_final(doc, pids[0]), "vmpte_kb", -1);
}

static void test_live(void **state)
{
	char dir[64];
	tmp_make(dir, sizeof(dir));
	char *json = strdup(tmp_path(dir, "run.json"));
	char *trace = strdup(tmp_path(dir, "run.trace"));
	char *again = strdup(tmp_path(dir, "replay.json"));
	char *text = strdup(tmp_path(dir, "live.txt"));
	const char *run[] = { PTSHARE_PATH, "run", "--interval", "0", "--json", json,
			      "--record", trace, "--", REPORT_SUBJECT_PATH, NULL };
	struct cmd c;
	long pids[WORKERS + 1];
	cmd_start(&c, run, NULL);
	char *sock = socket_said(&c);
	pids_said(&c, pids);

	char *first = report_json_text(sock, NULL);
	struct jr_value *doc = parsed(first);
	int64_t before = assert_live(doc, pids);
	jr_free(doc);

	/* A reading of everyone right after another is skipped, as the
	 * timer's is (the daemon's time is bounded): asked again until one
	 * is made, which sees the growth. */
	assert_int_equal(write(c.in, "grow\n", 5), 5);
	assert_string_equal(cmd_line(&c), "grown");
	char *second;
	int64_t after;
	for (int tries = 0;; tries++) {
		second = report_json_text(sock, NULL);
		doc = parsed(second);
		after = assert_live(doc, pids);
		if (after >= before + GROW_KB || tries == 100)
			break;
		jr_free(doc);
		free(second);
		usleep(100000);
	}
	assert_true(after >= before + GROW_KB);
	/* The peak moved to the reading that saw the growth. */
	assert_int_equal(jr_path_i64(report_process(doc, pids[0]), "vmpte_kb", -1),
			 after);
	jr_free(doc);

	/* Without a reading: what the daemon knew, which nothing changed. */
	char *known = report_json_text(sock, "--no-read");
	assert_string_equal(known, second);

	/* The text, to a private file. */
	const char *as_text[] = { PTSHARE_PATH, "report", "--socket", sock, "--top",
				  "2", "-o", text, NULL };
	struct cmd t;
	assert_int_equal(cmd_run(&t, as_text, NULL), 0);
	assert_string_equal(t.text[0], "");
	cmd_free(&t);
	struct stat st;
	assert_int_equal(stat(text, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	char *said = file_read(text, NULL);
	const char *head = "ptshare run: 4 processes modelled at the peak, 4 seen in all\n";
	if (strncmp(said, head, strlen(head)))
		fail_msg("the text report begins otherwise:\n%s", said);

	/* The end of the run: every process exact at its last checkpoint, no
	 * client among them, and the report a replay of the trace gives (the
	 * readings the clients asked for are in it, like the timer's). */
	cmd_close_stdin(&c);
	int status = cmd_finish(&c);
	if (status)
		fail_msg("ptshare run: status %d:\n%s", status, c.text[1]);
	assert_no_sanitizer_report(&c);
	assert_int_equal(access(sock, F_OK), -1);
	doc = report_read(json);
	assert_finals_exact(doc, WORKERS + 1);
	assert_int_equal(jr_path_i64(doc, "stream.lost", -1), 0);
	assert_int_equal(jr_path_i64(doc, "stream.malformed", -1), 0);
	assert_true(jr_path_i64(report_process(doc, pids[0]), "vmpte_kb", -1) >= after);
	jr_free(doc);
	assert_replay_same(PTSHARE_PATH, trace, "--json", json, again);

	const char *files[] = { "run.json", "run.trace", "replay.json", "live.txt",
				NULL };
	tmp_remove(dir, files);
	cmd_free(&c);
	free(first), free(second), free(known), free(said);
	free(json), free(trace), free(again), free(text), free(sock);
}

/* A client of our own, to send what `ptshare report` never would. */
static int reach(const char *sock)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		return -1;
	return fd;
}

static struct pts_report_req request(uint32_t outputs)
{
	return (struct pts_report_req){
		.h = { .type = PTS_REPORT_REQ, .size = sizeof(struct pts_report_req),
		       .seq = 1 },
		.version = PTS_WIRE_VERSION, .outputs = outputs,
		.flags = PTS_REPORT_NO_READ,
	};
}

/* Sends len bytes of req with the fds on fd and waits (bounded) for the
 * answer: its err and output, or type 0 when none came. */
static struct pts_report_done send_on(int fd, const void *req, size_t len,
				      const int *fds, size_t nfds)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(4 * sizeof(int))];
	} ctl = { 0 };
	struct iovec iov = { (void *)req, len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (nfds) {
		m.msg_control = ctl.buf;
		m.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
		struct cmsghdr *h = CMSG_FIRSTHDR(&m);
		h->cmsg_level = SOL_SOCKET;
		h->cmsg_type = SCM_RIGHTS;
		h->cmsg_len = CMSG_LEN(nfds * sizeof(int));
		memcpy(CMSG_DATA(h), fds, nfds * sizeof(int));
	}
	struct pts_report_done d = { 0 };
	sendmsg(fd, &m, MSG_NOSIGNAL);
	struct pollfd p = { fd, POLLIN, 0 };
	if (poll(&p, 1, CMD_TIMEOUT_MS) == 1 &&
	    recv(fd, &d, sizeof(d), MSG_WAITALL) != sizeof(d))
		d.h.type = 0;
	return d;
}

static struct pts_report_done ask(const char *sock, const void *req, size_t len,
				  const int *fds, size_t nfds)
{
	int fd = reach(sock);
	assert_true(fd >= 0);
	struct pts_report_done d = send_on(fd, req, len, fds, nfds);
	close(fd);
	return d;
}

static void expect(const char *sock, const struct pts_report_req *q,
		   size_t len, const int *fds, size_t nfds, int err,
		   uint32_t output, const char *what)
{
	struct pts_report_done d = ask(sock, q, len, fds, nfds);
	if (d.h.type != PTS_REPORT_DONE || d.err != err || d.output != output)
		fail_msg("%s: answer type %u, err %d (%s), output %u; not err %d, "
			 "output %u", what, d.h.type, d.err, strerror(d.err),
			 d.output, err, output);
}

static int memfd(void)
{
	int fd = memfd_create("test_report", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	assert_true(fd >= 0);
	return fd;
}

/* Outputs the daemon must not write: only memory cannot keep it waiting. */
static void bad_outputs(const char *sock, const char *dir)
{
	const struct pts_report_req text = request(PTS_REPORT_TEXT);
	int p[2], sp[2];
	assert_int_equal(pipe2(p, O_CLOEXEC | O_NONBLOCK), 0);
	expect(sock, &text, sizeof(text), &p[1], 1, EINVAL, PTS_REPORT_TEXT, "a pipe");
	char byte;
	assert_int_equal(read(p[0], &byte, 1), -1); /* nothing written */
	assert_int_equal(errno, EAGAIN);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
	expect(sock, &text, sizeof(text), &sp[0], 1, EINVAL, PTS_REPORT_TEXT,
	       "a socket");
	int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	expect(sock, &text, sizeof(text), &null, 1, EINVAL, PTS_REPORT_TEXT,
	       "/dev/null");
	/* A file: memory on tmpfs, else refused. */
	struct statfs sf;
	const char *path = tmp_path(dir, "file");
	int file = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	assert_true(file >= 0 && !fstatfs(file, &sf));
	bool on_tmpfs = sf.f_type == TMPFS_MAGIC;
	expect(sock, &text, sizeof(text), &file, 1, on_tmpfs ? 0 : EINVAL,
	       on_tmpfs ? 0 : PTS_REPORT_TEXT, "a file");
	unlink(path);
	/* Memory, but not for writing. */
	int mem = memfd(), ro;
	char fdpath[64];
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", mem);
	assert_true((ro = open(fdpath, O_RDONLY | O_CLOEXEC)) >= 0);
	expect(sock, &text, sizeof(text), &ro, 1, EBADF, PTS_REPORT_TEXT,
	       "a read-only memfd");
	int sealed = memfd();
	assert_int_equal(fcntl(sealed, F_ADD_SEALS, F_SEAL_WRITE), 0);
	expect(sock, &text, sizeof(text), &sealed, 1, EPERM, PTS_REPORT_TEXT,
	       "a sealed memfd");
	/* One bad output: none is written. */
	const struct pts_report_req two = request(PTS_REPORT_JSON | PTS_REPORT_HTML);
	int fds[2] = { mem, p[1] };
	expect(sock, &two, sizeof(two), fds, 2, EINVAL, PTS_REPORT_HTML,
	       "a memfd and a pipe");
	assert_int_equal(lseek(mem, 0, SEEK_END), 0);
	int all[] = { p[0], p[1], sp[0], sp[1], null, file, mem, ro, sealed };
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		close(all[i]);
}

static void bad_requests(const char *sock)
{
	int mem = memfd();
	struct pts_report_req q = request(PTS_REPORT_JSON | PTS_REPORT_HTML);
	expect(sock, &q, sizeof(q), &mem, 1, EBADF, 0, "two outputs, one fd");
	q = request(PTS_REPORT_TEXT);
	expect(sock, &q, sizeof(q), NULL, 0, EBADF, 0, "no fd");
	q.version = PTS_WIRE_VERSION + 1;
	expect(sock, &q, sizeof(q), &mem, 1, EPROTONOSUPPORT, 0, "another version");
	q = request(0);
	expect(sock, &q, sizeof(q), NULL, 0, EINVAL, 0, "no output");
	q = request(1u << 3);
	expect(sock, &q, sizeof(q), &mem, 1, EINVAL, 0, "an output unknown");
	q = request(PTS_REPORT_TEXT);
	q.flags = 1u << 5;
	expect(sock, &q, sizeof(q), &mem, 1, EINVAL, 0, "a flag unknown");
	q = request(PTS_REPORT_TEXT);
	q.h.type = PTS_HELLO;
	expect(sock, &q, sizeof(q), &mem, 1, EPROTO, 0, "a HELLO");
	expect(sock, &q, 5, &mem, 1, EPROTO, 0, "5 bytes");
	assert_int_equal(lseek(mem, 0, SEEK_END), 0);
	/* And a good one, by hand. */
	q = request(PTS_REPORT_JSON);
	expect(sock, &q, sizeof(q), &mem, 1, 0, 0, "a good request");
	char head[2] = "";
	assert_int_equal(pread(mem, head, 1, 0), 1);
	assert_string_equal(head, "{");
	close(mem);
}

/* Another user, who could reach the socket if its mode let them: the
 * daemon asks the kernel who it is, and refuses. */
static void another_user(const char *sock, const char *dir)
{
	assert_int_equal(chmod(dir, 0711), 0);
	assert_int_equal(chmod(sock, 0666), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
			_exit(200);
		int fd = reach(sock);
		if (fd < 0)
			_exit(201);
		int mem = memfd_create("nobody", MFD_CLOEXEC);
		const struct pts_report_req q = request(PTS_REPORT_TEXT);
		struct pts_report_done d = send_on(fd, &q, sizeof(q), &mem, 1);
		struct stat st;
		_exit(d.h.type != PTS_REPORT_DONE ? 202
		      : fstat(mem, &st) || st.st_size ? 203 : d.err);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), EACCES);
	assert_int_equal(chmod(dir, 0700), 0);
}

static void expect_cmd(const char *const argv[], int want, const char *says)
{
	struct cmd c;
	int status = cmd_run(&c, argv, NULL);
	assert_no_sanitizer_report(&c);
	if (status != want || !strstr(c.text[1], says))
		fail_msg("%s %s: status %d, not %d; no '%s' in:\n%s", argv[1],
			 argv[2] ? argv[2] : "", status, want, says, c.text[1]);
	cmd_free(&c);
}

static void test_refused(void **state)
{
	struct daemon_run d;
	daemon_dir(&d);
	char *sock = strdup(tmp_path(d.dir, "report"));
	const char *extra[] = { "--report-socket", sock, NULL };
	daemon_start(&d, extra, false);
	struct stat st;
	assert_int_equal(stat(sock, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);

	bad_outputs(sock, d.dir);
	bad_requests(sock);
	another_user(sock, d.dir);

	/* A client that says nothing holds its connection, not the daemon,
	 * and is let go. */
	int silent = reach(sock);
	assert_true(silent >= 0);
	const char *now[] = { PTSHARE_PATH, "report", "--socket", sock,
			      "--no-read", NULL };
	expect_cmd(now, 0, "");
	struct pollfd p = { silent, POLLIN, 0 };
	char byte;
	assert_int_equal(poll(&p, 1, CMD_TIMEOUT_MS), 1);
	assert_int_equal(recv(silent, &byte, 1, 0), 0);
	close(silent);

	const char *none[] = { PTSHARE_PATH, "report", "--socket",
			       "/nonexistent/ptshare/report", NULL };
	expect_cmd(none, 1, "ptshare report: no daemon at "
		   "/nonexistent/ptshare/report: No such file or directory\n");
	const char *shims[] = { PTSHARE_PATH, "report", "--socket", sock_of(&d), NULL };
	expect_cmd(shims, 1, "is not a report socket");

	/* Through it all, nothing reached the ingest. */
	assert_int_equal(daemon_down(&d, SIGTERM), 0);
	assert_int_equal(access(sock, F_OK), -1);
	struct jr_value *doc = report_read(tmp_path(d.dir, "report.json"));
	assert_int_equal(jr_len(jr_get(doc, "final_checkpoints")), 0);
	assert_int_equal(jr_path_i64(doc, "stream.records", -1), 0);
	assert_int_equal(jr_path_i64(doc, "stream.malformed", -1), 0);
	assert_int_equal(trace_records(tmp_path(d.dir, "trace"), PTS_CONN_OPEN), 0);
	jr_free(doc);
	daemon_free(&d);
	free(sock);
}

static void test_cli(void **state)
{
	const char *help[] = { PTSHARE_PATH, "report", "--help", NULL };
	struct cmd c;
	assert_int_equal(cmd_run(&c, help, NULL), 0);
	assert_non_null(strstr(c.text[0], "usage: ptshare report"));
	cmd_free(&c);
	const char *list[] = { PTSHARE_PATH, "--help", NULL };
	assert_int_equal(cmd_run(&c, list, NULL), 0);
	assert_non_null(strstr(c.text[0], "  report "));
	cmd_free(&c);
	expect_cmd((const char *[]){ PTSHARE_PATH, "report", NULL }, 2,
		   "--socket PATH is required");
	expect_cmd((const char *[]){ PTSHARE_PATH, "report", "--socket", "s", "--top",
				     "many", NULL }, 2, "bad number 'many'");
	expect_cmd((const char *[]){ PTSHARE_PATH, "report", "--socket", "s", "--json",
				     "-", "--html", "-", NULL }, 2,
		   "only one output can go to stdout");
	expect_cmd((const char *[]){ PTSHARE_PATH, "report", "--socket", "s", "more",
				     NULL }, 2, "unexpected argument 'more'");
	expect_cmd((const char *[]){ PTSHARE_PATH, "report", "--bogus", NULL }, 2,
		   "ptshare report: unknown option '--bogus'\n"
		   "Try 'ptshare report --help' for more information.\n");

	/* ptshared: something at the report socket's path already. */
	char dir[64];
	tmp_make(dir, sizeof(dir));
	char *taken = strdup(tmp_path(dir, "taken"));
	close(open(taken, O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
	const char *daemon[] = { PTSHARED_PATH, "--socket", tmp_path(dir, "sock"),
				 "--report-socket", taken, NULL };
	expect_cmd(daemon, 1, "Address already in use");
	assert_int_equal(access(tmp_path(dir, "sock"), F_OK), -1);
	tmp_remove(dir, (const char *[]){ "taken", NULL });
	free(taken);
}

static int teardown(void **state)
{
	cleanup_leftovers();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_live, teardown),
		cmocka_unit_test_teardown(test_refused, teardown),
		cmocka_unit_test_teardown(test_cli, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
