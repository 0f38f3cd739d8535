/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE /* pipe2 */
#include "population.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>

/* Smaller than PIPE_BUF: one atomic write per member. */
struct report {
	pid_t pid, ppid;
	int tag;
	int err;      /* what setup returned */
	int started;  /* members it started itself, to be waited for too */
};

int population_init(struct population *p)
{
	memset(p, 0, sizeof(*p));
	p->ready_fd[0] = p->ready_fd[1] = -1;
	/* Members whose parent died are reaped here, not by init. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) || pipe2(p->ready_fd, O_CLOEXEC))
		return -errno;
	return 0;
}

static _Noreturn void member(struct population *p, pid_t parent,
			     int (*setup)(struct population *p, void *arg),
			     void *arg, int tag)
{
	/* Die with the parent, even if it died before this line. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
		_exit(1);
	if (p->ready_fd[0] >= 0)
		close(p->ready_fd[0]);
	p->ready_fd[0] = -1;
	p->started = 0; /* the parent's count was copied with its memory */
	struct report r = { getpid(), parent, tag, setup(p, arg), 0 };
	r.started = p->started;
	/* Closing our end lets population_wait see EOF once all are ready. */
	if (write(p->ready_fd[1], &r, sizeof(r)) != (ssize_t)sizeof(r) || r.err)
		_exit(1);
	close(p->ready_fd[1]);
	for (;;)
		pause();
}

int population_start(struct population *p,
		     int (*setup)(struct population *p, void *arg), void *arg,
		     int tag)
{
	if (p->ready_fd[1] < 0)
		return -EINVAL; /* population_wait has run */
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0)
		member(p, parent, setup, arg, tag);
	p->started++;
	return 0;
}

static int add_member(struct population *p, const struct report *r)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 64;
		void *m = realloc(p->members, cap * sizeof(*p->members));
		if (!m)
			return -ENOMEM;
		p->members = m;
		p->cap = cap;
	}
	p->members[p->n++] = (struct population_member){ r->pid, r->ppid, r->tag };
	return 0;
}

int population_wait(struct population *p)
{
	if (p->ready_fd[0] < 0)
		return 0;
	close(p->ready_fd[1]);
	p->ready_fd[1] = -1;
	/* Every report adds the members its sender started. */
	long expected = p->started, reports = 0;
	int err = 0;
	struct report r;
	ssize_t got;
	while ((got = read(p->ready_fd[0], &r, sizeof(r))) == (ssize_t)sizeof(r)) {
		reports++;
		expected += r.started;
		int e = r.err ? r.err : add_member(p, &r);
		err = err ? err : e;
	}
	if (got < 0 && !err)
		err = -errno;
	close(p->ready_fd[0]);
	p->ready_fd[0] = -1;
	return err ? err : reports < expected ? -ECHILD : 0;
}

void population_stop(struct population *p)
{
	population_wait(p); /* none is left halfway through its setup */
	/* All killed before any is reaped: no pid can be reused meanwhile. */
	for (size_t i = 0; i < p->n; i++)
		kill(p->members[i].pid, SIGKILL);
	while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
		;
	free(p->members);
	p->members = NULL;
	p->n = p->cap = 0;
}
