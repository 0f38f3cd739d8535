/* SPDX-License-Identifier: MIT */
/*
 * The exec family: PTS_EXEC just before, PTS_EXEC_FAILED if it returns, and
 * the new image's environment kept traced (env.c).  The real exec runs
 * outside the critical section: a signal handler could longjmp out of a
 * failing exec, and the new image inherits the signal mask.
 *
 * In a vfork child, shim_enter_process() declines (the pid is not the
 * state's): nothing is sent and nothing shared is written; the new image
 * says HELLO itself.  The l-variants build their argv on the stack, as
 * glibc does.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <unistd.h>

#include "env.h"
#include "peek.h"
#include "shim.h"

enum exec_how { EXEC_PATH, EXEC_SEARCH, EXEC_AT, EXEC_FD };

struct exec_req {
	enum exec_how how;
	int fd;               /* EXEC_AT: the directory; EXEC_FD: the file */
	const char *path;
	char *const *argv;
	int flags;            /* EXEC_AT */
};

static int exec_real(void *arg, char *const envp[])
{
	const struct exec_req *r = arg;
	const struct shim_real *f = &shim_real;

	switch (r->how) {
	case EXEC_PATH:
		if (f->execve)
			return f->execve(r->path, r->argv, envp);
		break;
	case EXEC_SEARCH:
		if (f->execvpe)
			return f->execvpe(r->path, r->argv, envp);
		break;
	case EXEC_AT:
		if (f->execveat)
			return f->execveat(r->fd, r->path, r->argv, envp, r->flags);
		break;
	case EXEC_FD:
		if (f->fexecve)
			return f->fexecve(r->fd, r->argv, envp);
		break;
	}
	errno = ENOSYS;
	return -1;
}

/* What PTS_EXEC names: the path as given, or the fd executed.  A path
 * that cannot be read names nothing: the kernel fails that exec (EFAULT),
 * or glibc crashes in it as it would untraced (execvp's). */
static void exec_path(const struct exec_req *r, char *path, size_t cap)
{
	long n = r->how == EXEC_FD ? 0 : peek_str(path, cap, r->path);

	if (n < 0) {
		path[0] = '\0';
	} else if (n == 0 && (r->how == EXEC_AT || r->how == EXEC_FD)) {
		size_t k = str_copy(path, cap, "/proc/self/fd/");
		fmt_ulong(path + k, cap - k, (unsigned long)r->fd);
	}
}

static int exec_traced(void *arg, char *const envp[], enum env_made made)
{
	struct pts_exec m = { .flags = made == ENV_NO_FD ? PTS_EXEC_NO_FD : 0 };
	struct shim_call c;

	/* A forked child is read (its fork's reading) before its image
	 * goes: the new one may never say HELLO (a static or set-user-ID
	 * program), and may end before a reading finds it.  Not in a vfork
	 * child: the state is its parent's. */
	if (shim_proc.model_copied && shim_is_state_process() &&
	    proc_tracing_wanted())
		ring_wait_read();
	if (!shim_enter_process(&c))
		return exec_real(arg, envp);
	exec_path(arg, m.path, sizeof(m.path));
	rec_send(&c, PTS_EXEC, &m.h, sizeof(m), NULL);
	shim_leave(&c);
	int r = exec_real(arg, envp);
	if (shim_enter_process(&c)) {
		shim_returned(&c, true);
		m.result_errno = c.err;
		rec_send(&c, PTS_EXEC_FAILED, &m.h, sizeof(m), NULL);
		shim_leave(&c);
	}
	return r;
}

static int exec_run(const struct exec_req *r, char *const envp[])
{
	real_resolve();
	return env_run(envp, exec_traced, (void *)r);
}

SHIM_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	struct exec_req r = { EXEC_PATH, -1, path, argv, 0 };
	return exec_run(&r, envp);
}

SHIM_EXPORT int execv(const char *path, char *const argv[])
{
	struct exec_req r = { EXEC_PATH, -1, path, argv, 0 };
	return exec_run(&r, environ);
}

SHIM_EXPORT int execvpe(const char *file, char *const argv[],
			char *const envp[])
{
	struct exec_req r = { EXEC_SEARCH, -1, file, argv, 0 };
	return exec_run(&r, envp);
}

SHIM_EXPORT int execvp(const char *file, char *const argv[])
{
	struct exec_req r = { EXEC_SEARCH, -1, file, argv, 0 };
	return exec_run(&r, environ);
}

SHIM_EXPORT int execveat(int dirfd, const char *path, char *const argv[],
			 char *const envp[], int flags)
{
	struct exec_req r = { EXEC_AT, dirfd, path, argv, flags };
	return exec_run(&r, envp);
}

SHIM_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	struct exec_req r = { EXEC_FD, fd, NULL, argv, 0 };

	/* glibc fails a NULL envp with EINVAL before any system call;
	 * completed (env.c), it would pass that check and run the file. */
	if (!envp) {
		real_resolve();
		return exec_real(&r, envp);
	}
	return exec_run(&r, envp);
}

/* execl(), execlp(), execle(): the arguments after arg, up to the NULL,
 * become an argv on this frame's stack (as glibc's do); execle's envp
 * follows the NULL. */
static int exec_list(enum exec_how how, const char *path, const char *arg,
		     va_list *ap, bool envp_follows)
{
	ptrdiff_t argc = 1;
	va_list count;

	va_copy(count, *ap);
	while (va_arg(count, const char *))
		argc++;
	va_end(count);
	char *argv[argc + 1];
	argv[0] = (char *)arg;
	for (ptrdiff_t i = 1; i <= argc; i++)
		argv[i] = va_arg(*ap, char *);
	char *const *envp = envp_follows ? va_arg(*ap, char *const *) : environ;
	struct exec_req r = { how, -1, path, argv, 0 };
	return exec_run(&r, envp);
}

SHIM_EXPORT int execl(const char *path, const char *arg, ...)
{
	va_list ap;

	va_start(ap, arg);
	int r = exec_list(EXEC_PATH, path, arg, &ap, false);
	va_end(ap);
	return r;
}

SHIM_EXPORT int execlp(const char *file, const char *arg, ...)
{
	va_list ap;

	va_start(ap, arg);
	int r = exec_list(EXEC_SEARCH, file, arg, &ap, false);
	va_end(ap);
	return r;
}

SHIM_EXPORT int execle(const char *path, const char *arg, ...)
{
	va_list ap;

	va_start(ap, arg);
	int r = exec_list(EXEC_PATH, path, arg, &ap, true);
	va_end(ap);
	return r;
}
