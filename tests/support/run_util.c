/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include "run_util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "ptshare/wire.h"
#include "schema_check.h"
#include "skip.h"
#include "lib/clock.h"

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Commands started and not finished: a failed test leaves them running. */
#define LIVE_MAX 16
static pid_t live[LIVE_MAX];

static void track(pid_t pid, bool on)
{
	for (int i = 0; i < LIVE_MAX; i++)
		if (live[i] == (on ? 0 : pid)) {
			live[i] = on ? pid : 0;
			return;
		}
}

void cmd_kill_leftovers(void)
{
	for (int i = 0; i < LIVE_MAX; i++)
		if (live[i]) {
			kill(-live[i], SIGKILL);
			waitpid(live[i], NULL, 0);
			live[i] = 0;
		}
}

static void child_exec(const char *const argv[], const struct cmd_opts *o,
		       const int in[2], const int out[2], const int err[2])
{
	sigset_t none;
	setpgid(0, 0);
	dup2(in[0], 0);
	dup2(out[1], 1);
	dup2(err[1], 2);
	if (o->ready_fd > 0)
		dup2(o->ready_fd, 3);
	if (o->ignore_sigint)
		signal(SIGINT, SIG_IGN);
	signal(SIGPIPE, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (o->env)
		execve(argv[0], (char *const *)argv, o->env);
	else
		execv(argv[0], (char *const *)argv);
	fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(126);
}

void cmd_start(struct cmd *c, const char *const argv[], const struct cmd_opts *o)
{
	const struct cmd_opts dflt = { 0 };
	int in[2], out[2], err[2];
	memset(c, 0, sizeof(*c));
	/* A command that stops reading its stdin must not kill the test. */
	signal(SIGPIPE, SIG_IGN);
	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC))
		fail_msg("pipe: %s", strerror(errno));
	c->pid = fork();
	if (c->pid < 0)
		fail_msg("fork: %s", strerror(errno));
	if (c->pid == 0)
		child_exec(argv, o ? o : &dflt, in, out, err);
	track(c->pid, true);
	close(in[0]);
	close(out[1]);
	close(err[1]);
	c->in = in[1];
	c->out = out[0];
	c->err = err[0];
	for (int i = 0; i < 2; i++) {
		c->cap[i] = 4096;
		c->text[i] = calloc(1, c->cap[i]);
	}
}

/* Reads what is there (waiting at most until deadline); false when both
 * streams have ended or the deadline passed. */
static bool pump(struct cmd *c, int64_t deadline)
{
	int *fds[2] = { &c->out, &c->err };
	struct pollfd p[2] = { { c->out, POLLIN, 0 }, { c->err, POLLIN, 0 } };
	int64_t left = deadline - now_ms();
	if ((c->out < 0 && c->err < 0) || left <= 0)
		return false;
	int r = poll(p, 2, (int)left);
	if (r <= 0)
		return r < 0 && errno == EINTR;
	for (int i = 0; i < 2; i++) {
		if (!p[i].revents)
			continue;
		if (c->len[i] + 65536 + 1 > c->cap[i]) {
			c->cap[i] = 2 * c->cap[i] + 65536;
			c->text[i] = realloc(c->text[i], c->cap[i]);
		}
		ssize_t n = read(*fds[i], c->text[i] + c->len[i], 65536);
		if (n > 0) {
			c->len[i] += (size_t)n;
			c->text[i][c->len[i]] = '\0';
		} else if (n == 0 || errno != EINTR) {
			close(*fds[i]);
			*fds[i] = -1;
		}
	}
	return true;
}

const char *cmd_line(struct cmd *c)
{
	int64_t deadline = now_ms() + CMD_TIMEOUT_MS;
	for (;;) {
		char *start = c->text[0] + c->line_at;
		char *nl = memchr(start, '\n', c->len[0] - c->line_at);
		if (nl) {
			static char line[4096];
			size_t n = (size_t)(nl - start);
			snprintf(line, sizeof(line), "%.*s", (int)n, start);
			c->line_at += n + 1;
			return line;
		}
		if (!pump(c, deadline))
			return NULL;
	}
}

bool cmd_wait_stderr(struct cmd *c, const char *text)
{
	int64_t deadline = now_ms() + CMD_TIMEOUT_MS;
	while (!strstr(c->text[1], text))
		if (!pump(c, deadline))
			return false;
	return true;
}

void cmd_close_stdin(struct cmd *c)
{
	if (c->in >= 0)
		close(c->in);
	c->in = -1;
}

int cmd_finish(struct cmd *c)
{
	int64_t deadline = now_ms() + CMD_TIMEOUT_MS;
	int status;
	cmd_close_stdin(c);
	while (pump(c, deadline))
		;
	bool timed_out = false;
	for (;;) {
		siginfo_t si = { 0 };
		if (!waitid(P_PID, (id_t)c->pid, &si, WEXITED | WNOHANG | WNOWAIT) &&
		    si.si_pid)
			break;
		if ((timed_out = now_ms() >= deadline))
			break;
		sleep_ms(5);
	}
	/* Whatever it left in its group goes too (the group lives on while
	 * its leader is a zombie). */
	kill(-c->pid, SIGKILL);
	waitpid(c->pid, &status, 0);
	track(c->pid, false);
	if (timed_out) {
		print_error("killed after %d s; its stderr:\n%s\n",
			    CMD_TIMEOUT_MS / 1000, c->text[1]);
		return -1;
	}
	return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

void cmd_free(struct cmd *c)
{
	cmd_close_stdin(c);
	if (c->out >= 0)
		close(c->out);
	if (c->err >= 0)
		close(c->err);
	free(c->text[0]);
	free(c->text[1]);
	memset(c, 0, sizeof(*c));
}

int cmd_run(struct cmd *c, const char *const argv[], const struct cmd_opts *o)
{
	cmd_start(c, argv, o);
	return cmd_finish(c);
}

void assert_no_sanitizer_report(const struct cmd *c)
{
	if (strstr(c->text[1], "Sanitizer") || strstr(c->text[1], "runtime error"))
		fail_msg("sanitizer report:\n%s", c->text[1]);
}

void cmd_run_ok(const char *const argv[])
{
	struct cmd c;
	int status = cmd_run(&c, argv, NULL);
	if (status)
		fail_msg("%s %s: status %d:\n%s", argv[0], argv[1], status, c.text[1]);
	assert_no_sanitizer_report(&c);
	cmd_free(&c);
}

/* Directories made and not removed: a failed test leaves them. */
#define MADE_MAX 16
static char made[MADE_MAX][64];

void tmp_make(char *dir, size_t cap)
{
	snprintf(dir, cap, "/tmp/ptshare-test-XXXXXX");
	if (!mkdtemp(dir))
		fail_msg("mkdtemp: %s", strerror(errno));
	for (int i = 0; i < MADE_MAX; i++)
		if (!made[i][0]) {
			snprintf(made[i], sizeof(made[i]), "%s", dir);
			break;
		}
}

const char *tmp_path(const char *dir, const char *name)
{
	static char paths[8][PATH_MAX];
	static unsigned next;
	char *p = paths[next++ % 8];
	snprintf(p, PATH_MAX, "%s/%s", dir, name);
	return p;
}

size_t dir_entries(const char *dir)
{
	DIR *d = opendir(dir);
	size_t n = 0;
	if (!d)
		return 0;
	for (struct dirent *e; (e = readdir(d));)
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

/* Removes dir and everything in it; the names of what was there, after
 * the ones expected, are appended to left. */
static void remove_tree(const char *dir, char *left, size_t cap)
{
	DIR *d = opendir(dir);
	for (struct dirent *e; d && (e = readdir(d));) {
		char path[PATH_MAX];
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		size_t n = strlen(left);
		snprintf(left + n, cap - n, " %s", e->d_name);
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (unlink(path))
			remove_tree(path, left, cap);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

/* Whether the file is one of ptshare's JSON documents: named so, or
 * beginning as the writer begins them.  An empty file is none: a report
 * made ready (0600) by a daemon killed before it wrote it. */
static bool is_json_document(const char *path, const struct stat *st)
{
	static const char head[] = "{\n  \"schema\": \"ptshare.";
	char buf[sizeof(head) - 1];
	size_t n = strlen(path);
	if (!st->st_size)
		return false;
	if (n > 5 && !strcmp(path + n - 5, ".json"))
		return true;
	FILE *f = fopen(path, "rb");
	bool is = f && fread(buf, 1, sizeof(buf), f) == sizeof(buf) &&
		  !memcmp(buf, head, sizeof(buf));
	if (f)
		fclose(f);
	return is;
}

/* Every JSON document under dir is valid (schema_check.h): a test's
 * outputs are checked before they go, whether the test read them or not.
 * The invalid are named in bad. */
static void check_json_documents(const char *dir, char *bad, size_t cap)
{
	DIR *d = opendir(dir);
	for (struct dirent *e; d && (e = readdir(d));) {
		char path[PATH_MAX];
		struct stat st;
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (lstat(path, &st))
			continue;
		if (S_ISDIR(st.st_mode)) {
			check_json_documents(path, bad, cap);
		} else if (S_ISREG(st.st_mode) && is_json_document(path, &st) &&
			   !schema_valid_file(path)) {
			size_t n = strlen(bad);
			snprintf(bad + n, cap - n, " %s", e->d_name);
		}
	}
	if (d)
		closedir(d);
}

void tmp_remove(const char *dir, const char *const files[])
{
	char left[1024] = "", bad[1024] = "";
	check_json_documents(dir, bad, sizeof(bad));
	for (int i = 0; i < MADE_MAX; i++)
		if (!strcmp(made[i], dir))
			made[i][0] = '\0';
	for (size_t i = 0; files && files[i]; i++)
		unlink(tmp_path(dir, files[i]));
	remove_tree(dir, left, sizeof(left));
	if (*bad)
		fail_msg("not valid against docs/report.schema.json in %s:%s",
			 dir, bad);
	if (*left)
		fail_msg("left behind in %s:%s", dir, left);
}

void cleanup_leftovers(void)
{
	char ignored[1024] = "";
	cmd_kill_leftovers();
	for (int i = 0; i < MADE_MAX; i++)
		if (made[i][0]) {
			remove_tree(made[i], ignored, sizeof(ignored));
			made[i][0] = '\0';
		}
}

void require_root(void)
{
	if (geteuid())
		test_skip("this test needs root");
}

/* Whether one of the NUL-separated words of /proc/PID/cmdline is a path
 * to ptshared (or valgrind's wrapped ptshared.real). */
static bool runs_ptshared(long pid)
{
	char path[64], line[4096];
	snprintf(path, sizeof(path), "/proc/%ld/cmdline", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, line, sizeof(line) - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return false;
	line[n] = '\0';
	for (ssize_t at = 0; at < n; at += (ssize_t)strlen(line + at) + 1) {
		const char *base = strrchr(line + at, '/');
		base = base ? base + 1 : line + at;
		if (!strcmp(base, "ptshared") || !strcmp(base, "ptshared.real"))
			return true;
	}
	return false;
}

pid_t daemon_of(const struct cmd *c)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)c->pid,
		 (int)c->pid);
	FILE *f = fopen(path, "r");
	long pid;
	while (f && fscanf(f, "%ld", &pid) == 1) {
		if (runs_ptshared(pid)) {
			fclose(f);
			return (pid_t)pid;
		}
	}
	if (f)
		fclose(f);
	fail_msg("no ptshared under %d", (int)c->pid);
	return -1;
}

char *file_read(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n = 0;
	if (!f)
		fail_msg("%s: %s", path, strerror(errno));
	FILE *m = open_memstream(&buf, &n);
	char chunk[4096];
	size_t k;
	while ((k = fread(chunk, 1, sizeof(chunk), f)) > 0)
		fwrite(chunk, 1, k, m);
	fclose(f);
	fclose(m);
	if (len)
		*len = n;
	return buf;
}

void assert_replay_same(const char *ptshare, const char *trace,
			const char *format, const char *ran, const char *out)
{
	const char *argv[] = { ptshare, "replay", trace, format, out, NULL };
	struct cmd c;
	size_t ln, rn;
	int status = cmd_run(&c, argv, NULL);
	if (status)
		fail_msg("ptshare replay exited %d:\n%s", status, c.text[1]);
	cmd_free(&c);
	char *l = file_read(ran, &ln), *r = file_read(out, &rn);
	bool same = ln == rn && !memcmp(l, r, ln);
	free(l), free(r);
	if (!same)
		fail_msg("the replay of %s wrote another %s than the run "
			 "(%zu bytes, %zu): diff %s %s", trace, format, ln, rn,
			 ran, out);
}

struct jr_value *report_read(const char *path)
{
	struct jr_error err;
	struct jr_value *doc = jr_parse_file(path, &err);
	if (!doc)
		fail_msg("%s: at %zu: %s", path, err.offset, err.what);
	if (!schema_valid_file(path)) {
		jr_free(doc);
		fail_msg("%s: not valid against docs/report.schema.json", path);
	}
	return doc;
}

static const struct jr_value *by_pid(const struct jr_value *list, long pid)
{
	for (size_t i = 0; i < jr_len(list); i++)
		if (jr_path_i64(jr_at(list, i), "pid", -1) == pid)
			return jr_at(list, i);
	return NULL;
}

const struct jr_value *report_final(const struct jr_value *doc, long pid)
{
	return by_pid(jr_get(doc, "final_checkpoints"), pid);
}

const struct jr_value *report_process(const struct jr_value *doc, long pid)
{
	return by_pid(jr_get(doc, "processes"), pid);
}

void assert_finals_exact(const struct jr_value *doc, size_t n)
{
	const struct jr_value *finals = jr_get(doc, "final_checkpoints");
	for (size_t i = 0; i < jr_len(finals); i++) {
		const struct jr_value *f = jr_at(finals, i);
		int64_t model = jr_path_i64(f, "model_kb", -2);
		int64_t kernel = jr_path_i64(f, "vmpte_kb", -3);
		if (model != kernel || kernel < 0)
			fail_msg("process %lld (%s, at its %s checkpoint): model %lld kB, "
				 "VmPTE %lld kB", (long long)jr_path_i64(f, "pid", 0),
				 jr_path_str(f, "command"), jr_path_str(f, "checkpoint"),
				 (long long)model, (long long)kernel);
	}
	assert_int_equal(jr_len(finals), n);
}

/* The trace format: docs/wire-protocol.md.  The records of the trace at
 * path so far for which match(record, arg) holds. */
static size_t trace_count(const char *path,
			  bool (*match)(const struct pts_hdr *h, const void *arg),
			  const void *arg)
{
	FILE *f = fopen(path, "rb");
	size_t n = 0;
	if (!f)
		return 0;
	union {
		struct pts_hdr h;
		struct pts_ck_begin b;
		unsigned char bytes[PTS_REC_MAX];
	} rec;
	uint32_t frame[2];
	if (fseek(f, 24, SEEK_SET))
		goto out;
	while (fread(frame, sizeof(frame), 1, f) == 1 &&
	       fread(&rec.h, sizeof(rec.h), 1, f) == 1 &&
	       rec.h.size >= sizeof(rec.h) && rec.h.size <= sizeof(rec) &&
	       (rec.h.size == sizeof(rec.h) ||
		fread(rec.bytes + sizeof(rec.h), rec.h.size - sizeof(rec.h), 1, f) == 1))
		n += match(&rec.h, arg);
out:
	fclose(f);
	return n;
}

static bool is_timer_checkpoint(const struct pts_hdr *h, const void *pid)
{
	const struct pts_ck_begin *b = (const struct pts_ck_begin *)h;
	return h->type == PTS_CK_BEGIN && b->pid == *(const int32_t *)pid &&
	       b->reason == PTS_CK_TIMER;
}

size_t trace_timer_checkpoints(const char *path, int32_t pid)
{
	return trace_count(path, is_timer_checkpoint, &pid);
}

static bool is_type(const struct pts_hdr *h, const void *type)
{
	return h->type == *(const uint16_t *)type;
}

size_t trace_records(const char *path, uint16_t type)
{
	return trace_count(path, is_type, &type);
}

bool eventually(bool (*cond)(const void *arg), const void *arg)
{
	int64_t deadline = now_ms() + CMD_TIMEOUT_MS;
	while (!cond(arg))
		if (now_ms() >= deadline)
			return false;
		else
			sleep_ms(10);
	return true;
}

bool pid_exists(pid_t pid)
{
	char path[32];
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	return !access(path, F_OK);
}

void daemon_dir(struct daemon_run *d)
{
	tmp_make(d->dir, sizeof(d->dir));
}

void daemon_start(struct daemon_run *d, const char *const extra[],
		  bool ignore_sigint)
{
	const char *argv[20] = { PTSHARED_PATH };
	const char *const base[] = { "--socket", NULL, "--json", NULL, "--text",
				     NULL, "--record", NULL, "--ready-fd", "3" };
	int ready[2];
	char buf[8] = "";
	size_t n = 1;
	for (size_t i = 0; i < sizeof(base) / sizeof(base[0]); i++)
		argv[n++] = base[i];
	argv[2] = tmp_path(d->dir, "sock");
	argv[4] = tmp_path(d->dir, "report.json");
	argv[6] = tmp_path(d->dir, "report.txt");
	argv[8] = tmp_path(d->dir, "trace");
	for (size_t i = 0; extra && extra[i]; i++)
		argv[n++] = extra[i];
	assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
	const struct cmd_opts o = { .ready_fd = ready[1], .ignore_sigint = ignore_sigint };
	cmd_start(&d->c, argv, &o);
	close(ready[1]);
	struct pollfd p = { ready[0], POLLIN, 0 };
	assert_int_equal(poll(&p, 1, CMD_TIMEOUT_MS), 1);
	assert_int_equal(read(ready[0], buf, sizeof(buf)), 6);
	assert_string_equal(buf, "ready\n");
	close(ready[0]);
}

void daemon_up(struct daemon_run *d, const char *const extra[], bool ignore_sigint)
{
	daemon_dir(d);
	daemon_start(d, extra, ignore_sigint);
}

const char *sock_of(const struct daemon_run *d)
{
	return tmp_path(d->dir, "sock");
}

int daemon_down(struct daemon_run *d, int sig)
{
	kill(d->c.pid, sig);
	int status = cmd_finish(&d->c);
	assert_no_sanitizer_report(&d->c);
	assert_int_equal(access(sock_of(d), F_OK), -1);
	return status;
}

void daemon_free(struct daemon_run *d)
{
	static const char *const reports[] = { "report.json", "report.txt",
					       "trace", NULL };
	cmd_free(&d->c);
	tmp_remove(d->dir, reports);
}

char run_tmpdir[64];

int run_tmpdir_setup(void **state)
{
	(void)state;
	tmp_make(run_tmpdir, sizeof(run_tmpdir));
	setenv("TMPDIR", run_tmpdir, 1);
	return 0;
}

/* The traces `ptshare run` kept by default in our current directory (the
 * build tree), which a test must not leave: removed, and counted. */
static size_t traces_left_here(void)
{
	glob_t g;
	size_t n = 0;
	if (glob("ptshare.*.trace.zst", 0, NULL, &g))
		return 0;
	for (; n < g.gl_pathc; n++)
		unlink(g.gl_pathv[n]);
	globfree(&g);
	return n;
}

int run_tmpdir_teardown(void **state)
{
	(void)state;
	cmd_kill_leftovers();
	size_t left = dir_entries(run_tmpdir), traces = traces_left_here();
	cleanup_leftovers();
	if (left)
		print_error("%zu entries left behind in TMPDIR\n", left);
	if (traces)
		print_error("%zu traces left in the current directory (pass "
			    "--no-record, or run where it is removed)\n", traces);
	return left || traces ? -1 : 0;
}
