/* SPDX-License-Identifier: MIT */
/* ptshared as a child of `ptshare run` (or `ptshare aslr`): started, told
 * to finish, waited for. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "run.h"
#include "lib/clock.h"

/* Bound of the wait for "ready": the daemon has only to listen. */
#define READY_TIMEOUT_MS 30000

/* In the child, between fork and exec: ready_fd and keep_fd (when >= 0)
 * stay open in the daemon. */
static _Noreturn void daemon_exec(const char *who, char **argv, int ready_fd,
				   int keep_fd, pid_t parent)
{
	/* In a process group of its own: what is sent to the program's
	 * group (the terminal's ^C and ^\, a program's kill(0, SIGTERM) at
	 * its shutdown) is the program's.  Not in a session of its own:
	 * that is a scheduler autogroup of its own too, which would split
	 * the CPU half and half between the daemon and the program however
	 * many processes the program has (and made the fork storm's report
	 * wrong in every run).  A group in the background of the terminal
	 * is stopped by SIGTTOU when it writes there (stty tostop) unless
	 * it ignores it: the report may go to the terminal.  The daemon
	 * ends when `ptshare run` says so, or when `ptshare run` itself
	 * dies. */
	if (setpgid(0, 0) < 0)
		_exit(1);
	signal(SIGTTOU, SIG_IGN);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (prctl(PR_SET_PDEATHSIG, SIGTERM) || getppid() != parent)
		_exit(1);
	fcntl(ready_fd, F_SETFD, 0);
	if (keep_fd >= 0)
		fcntl(keep_fd, F_SETFD, 0);
	execv(argv[0], argv);
	fprintf(stderr, "%s: cannot run %s: %s\n", who, argv[0], strerror(errno));
	_exit(1);
}

const char *wait_status_text(int status, char *buf, size_t cap)
{
	if (WIFSIGNALED(status))
		snprintf(buf, cap, "killed by signal %d (%s)", WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
	else
		snprintf(buf, cap, "exit status %d", WEXITSTATUS(status));
	return buf;
}

/* Until it has ended: 0, or -1 when a signal other than SIGCHLD came first
 * from sigfd (a user giving up).  Without sigfd, simply waits. */
static int daemon_wait(struct daemon *d, int sigfd)
{
	while (!d->ended) {
		pid_t r = waitpid(d->pid, &d->status, sigfd < 0 ? 0 : WNOHANG);
		if (r == d->pid || (r < 0 && errno != EINTR)) {
			d->ended = true;
			break;
		}
		struct signalfd_siginfo si;
		if (sigfd >= 0 && read(sigfd, &si, sizeof(si)) == sizeof(si) &&
		    si.ssi_signo != SIGCHLD)
			return -1;
	}
	return 0;
}

/* "ready\n" from fd within the bound; the daemon says why not itself. */
static bool wait_ready(const char *who, int fd)
{
	char buf[8];
	size_t got = 0;
	int64_t deadline = now_ms() + READY_TIMEOUT_MS;
	while (got < 6) {
		struct pollfd p = { fd, POLLIN, 0 };
		int64_t left = deadline - now_ms();
		if (left <= 0 || poll(&p, 1, (int)left) == 0) {
			fprintf(stderr, "%s: ptshared did not start within "
				"%d s\n", who, READY_TIMEOUT_MS / 1000);
			return false;
		}
		ssize_t n = read(fd, buf + got, sizeof(buf) - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		got += (size_t)n;
	}
	return !memcmp(buf, "ready\n", 6);
}

int daemon_start(struct daemon *d, const char *who, char **argv,
		 size_t ready_arg, int keep_fd)
{
	int ready[2];
	char fdnum[16];
	*d = (struct daemon){ .who = who, .program_status = -1 };
	if (pipe2(ready, O_CLOEXEC)) {
		fprintf(stderr, "%s: pipe: %s\n", who, strerror(errno));
		return 1;
	}
	snprintf(fdnum, sizeof(fdnum), "%d", ready[1]);
	argv[ready_arg] = fdnum;
	pid_t parent = getpid();
	d->pid = fork();
	if (d->pid == 0)
		daemon_exec(who, argv, ready[1], keep_fd, parent);
	close(ready[1]);
	if (d->pid < 0) {
		fprintf(stderr, "%s: cannot start ptshared: %s\n", who,
			strerror(errno));
		close(ready[0]);
		return 1;
	}
	bool ok = wait_ready(who, ready[0]);
	close(ready[0]);
	if (ok)
		return 0;
	kill(d->pid, SIGKILL);
	daemon_wait(d, -1);
	fprintf(stderr, "%s: ptshared failed to start\n", who);
	/* It said what was wrong with the options passed on to it. */
	return WIFEXITED(d->status) && WEXITSTATUS(d->status) == 2 ? 2 : 1;
}

void daemon_reap(struct daemon *d)
{
	daemon_wait(d, -1);
}

int daemon_stop(struct daemon *d, int sigfd)
{
	char buf[64];
	if (d->ended) /* early: said when it was seen */
		return d->status ? -1 : 0;
	/* The program's status rides on the signal, for the report's run
	 * details (daemon/run_info.c). */
	if (sigqueue(d->pid, SIGTERM, (union sigval){ .sival_int = d->program_status })
	    == 0 && daemon_wait(d, sigfd)) {
		fprintf(stderr, "%s: interrupted: no report\n", d->who);
		kill(d->pid, SIGKILL);
		daemon_wait(d, -1);
		return -1;
	}
	if (d->status) {
		fprintf(stderr, "%s: ptshared failed (%s)\n", d->who,
			wait_status_text(d->status, buf, sizeof(buf)));
		return -1;
	}
	return 0;
}
