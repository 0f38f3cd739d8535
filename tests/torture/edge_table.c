/* SPDX-License-Identifier: MIT */
/*
 * Running the tables of edge_table.h: each row twice (the function, then
 * the system call), each in a child of its own so that an exec, an exit or
 * a crash ends only that child.  The child says what came back through a
 * close-on-exec pipe; when it says nothing, its end is the answer (the
 * exec'd leaf's status, a signal).  One line per row:
 *
 *     name: function <what>; syscall <what>
 *
 * Built into a library the subject needs, so that its constructor runs
 * before the shim's (`early`): the interposers then stand in for the real
 * functions with the shim's own first versions (shim/real.c).  There the
 * children are forked by the system call: the shim's fork() would look the
 * real functions up, and the first versions would be gone.
 */
#define _GNU_SOURCE
#include "edge_table.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define PAGE 4096UL

const char *edge_self;
const char *edge_script;
char *const edge_leaf_argv[] = { "edge_subject", "leaf", NULL };
char *const edge_leaf_envp[] = { "EDGE=1", NULL };

static int said_fd = -1;
static bool early;

int edge_self_fd(void)
{
	int fd = open(edge_self, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		_exit(101);
	return fd;
}

void edge_said(const char *text)
{
	if (write(said_fd, text, strlen(text)) < 0)
		_exit(102);
}

static void said_errno(const char *value, int err)
{
	char line[64];
	const char *name = strerrorname_np(err);
	snprintf(line, sizeof(line), "%s %s", value, name ? name : "?");
	edge_said(line);
}

void edge_said_ptr(void *r, const void *hint, const void *old)
{
	if (r == MAP_FAILED)
		said_errno("MAP_FAILED", errno);
	else
		edge_said(r == hint ? "at the hint" : r == old ? "in place" : "elsewhere");
}

void edge_said_int(long r)
{
	char n[32];
	if (r < 0) {
		said_errno("-1", errno);
		return;
	}
	snprintf(n, sizeof(n), "%ld", r);
	edge_said(n);
}

void edge_said_err(int err)
{
	if (err)
		said_errno("error", err);
	else
		edge_said("0");
}

void edge_said_spawn(int err, const pid_t *pid)
{
	char line[64];
	int st;
	if (err) {
		edge_said_err(err);
		return;
	}
	waitpid(*pid, &st, 0);
	snprintf(line, sizeof(line), "0, a child that %s %d",
		 WIFEXITED(st) ? "exits" : "is killed by",
		 WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	edge_said(line);
}

long edge_sys_execve(const char *path, char *const argv[], char *const envp[])
{
	return syscall(SYS_execve, path, argv, envp);
}

long edge_sys_execveat(int fd, const char *path, char *const argv[],
		       char *const envp[], int flags)
{
	return syscall(SYS_execveat, fd, path, argv, envp, flags);
}

char *edge_free_range(unsigned n)
{
	char *p = mmap(NULL, n * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED || munmap(p, n * PAGE))
		_exit(103);
	return p;
}

char *edge_anon(unsigned n)
{
	char *p = mmap(NULL, n * PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		_exit(104);
	return p;
}

/* A readable page followed by a bad one, PROT_NONE or unmapped: the
 * bad one, so that a row can also put a string or an array of pointers
 * right before it, running into it. */
static const char *bad_page(bool unmapped)
{
	char *p = edge_anon(2);
	if (unmapped ? munmap(p + PAGE, PAGE) : mprotect(p + PAGE, PAGE, PROT_NONE))
		_exit(105);
	return p + PAGE;
}

/* One column: what the child said, else how it ended. */
static void column(char *out, size_t cap, const struct edge_row *row, bool raw,
		   int bad)
{
	int fds[2];
	size_t n = 0;
	if (pipe2(fds, O_CLOEXEC))
		_exit(106);
	fflush(stdout);
	pid_t pid = early ? (pid_t)syscall(SYS_fork) : fork();
	if (pid < 0)
		_exit(107);
	if (!pid) {
		close(fds[0]);
		said_fd = fds[1];
		row->call(raw, bad ? bad_page(bad == 2) : NULL);
		_exit(0);
	}
	close(fds[1]);
	for (ssize_t r; n + 1 < cap && (r = read(fds[0], out + n, cap - 1 - n));)
		if (r > 0)
			n += (size_t)r;
		else if (errno != EINTR)
			break;
	out[n] = '\0';
	close(fds[0]);
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			_exit(108);
	if (n)
		return;
	if (WIFEXITED(st) && WEXITSTATUS(st) == EDGE_LEAF_STATUS)
		snprintf(out, cap, "ran the program");
	else if (WIFEXITED(st))
		snprintf(out, cap, "exit %d", WEXITSTATUS(st));
	else
		snprintf(out, cap, "killed by SIG%s", sigabbrev_np(WTERMSIG(st)));
}

static void script_make(void)
{
	static char path[256];
	const char *dir = getenv("TMPDIR");
	snprintf(path, sizeof(path), "%s/edge-script-%d", dir ? dir : "/tmp",
		 (int)getpid());
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	if (fd < 0 || write(fd, "exit 9\n", 7) != 7 || close(fd))
		_exit(109);
	edge_script = path;
}

void edge_run(const struct edge_row *table)
{
	/* bad: 0 none, 1 a PROT_NONE page, 2 an unmapped one */
	static const char *const kinds[] = { "", " (PROT_NONE)", " (unmapped)" };
	char fn[128], sys[128];
	script_make();
	for (const struct edge_row *row = table; row->name; row++) {
		int last = row->flags & EDGE_BAD ? 2 : 0;
		for (int bad = last ? 1 : 0; bad <= last; bad++) {
			column(fn, sizeof(fn), row, false, bad);
			if (row->flags & EDGE_NO_RAW)
				snprintf(sys, sizeof(sys), "-");
			else
				column(sys, sizeof(sys), row, true, bad);
			printf("%s%s: function %s; syscall %s\n", row->name,
			       kinds[bad], fn, sys);
			fflush(stdout);
		}
	}
	unlink(edge_script);
}

static void self_find(void)
{
	static char path[4096];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
	if (n <= 0)
		_exit(110);
	path[n] = '\0';
	edge_self = path;
}

/* Before the shim's constructor (this library is initialised first):
 * `early` runs the table of edge-case arguments there. */
__attribute__((constructor)) static void edge_early(int argc, char **argv)
{
	self_find();
	if (argc > 1 && !strcmp(argv[1], "early")) {
		early = true;
		printf("before the shim's constructor:\n");
		edge_run(edge_calls);
	}
}
