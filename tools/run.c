/* SPDX-License-Identifier: MIT */
/*
 * ptshare run: a program traced from start to end (docs/run.md).  Starts
 * ptshared on a socket in a fresh private directory, runs the program with
 * libptshare.so preloaded, waits for the program and every process it
 * started (daemonised servers too: `ptshare run` is their subreaper), then
 * asks the daemon for the report and exits with the program's status.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "ptshare/wire.h"
#include "run.h"
#include "worlds.h"

/* What `ptshare run` waits for (SIGCHLD) and passes on to the program. */
static const int run_signals[] = { SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT };

struct run_options {
	const char *policies, *json, *interval, *record, *top, *output;
	char **cmd;
};

/* One traced run. */
struct run_state {
	struct daemon d;
	pid_t program;
	bool program_running;
	int status;         /* the program's wait status */
	int sigfd;          /* SIGCHLD and the signals forwarded */
	sigset_t orig_mask; /* the program's */
};

static void usage(FILE *f)
{
	fputs("usage: ptshare run [--policy LIST] [--json FILE] [--interval S]\n"
	      "                   [--record FILE] [--top N] [-o FILE] [--] CMD [ARGS...]\n"
	      "\n"
	      "Runs CMD with libptshare.so preloaded, so that every process it starts\n"
	      "tells ptshared what it maps, and reports, once CMD and every process it\n"
	      "started have exited, the page tables the workload had and would have\n"
	      "had under each policy.  CMD's output is untouched; the report goes to\n"
	      "stderr (or -o FILE).  Statically linked and set-user-ID programs are\n"
	      "refused: LD_PRELOAD cannot follow them (see `ptshare snapshot`).\n"
	      "\n"
	      "  --policy LIST   comma-separated policies (default: all);\n"
	      "                  name[:pte+pmd+pud] picks the levels that share\n"
	      "  --json FILE     also write the JSON report to FILE (0600)\n"
	      "  --interval S    read every process's /proc every S seconds\n"
	      "                  (default 1; 0: only at start, fork, exec and exit)\n"
	      "  --record FILE   keep the records in a trace file (0600)\n"
	      "  --top N         processes and mappings to list (default 20, 0: all)\n"
	      "  -o FILE         write the text report to FILE (0600) instead of stderr\n"
	      "\n"
	      "Signals INT, TERM, HUP and QUIT are passed on to CMD.  Exit status: CMD's\n"
	      "(128 + the signal when a signal killed it), 2 on a usage error or a\n"
	      "refused program, 1 when ptshare itself failed, 126/127 when CMD cannot\n"
	      "be run or found.\n",
	      f);
}

static int bad(const char *what, const char *arg)
{
	fprintf(stderr, "ptshare run: %s '%s'\n", what, arg);
	usage(stderr);
	return 2;
}

/* -1 to go on, else the exit status. */
static int parse(struct run_options *o, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "policy", required_argument, NULL, 'P' },
		{ "json", required_argument, NULL, 'j' },
		{ "interval", required_argument, NULL, 'i' },
		{ "record", required_argument, NULL, 'r' },
		{ "top", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	uint64_t n;
	int c;
	*o = (struct run_options){ 0 };
	/* '+': the options end at CMD, whose own options are its own. */
	while ((c = getopt_long(argc, argv, "+o:", opts, NULL)) != -1) {
		switch (c) {
		case 'P':
			o->policies = optarg;
			break;
		case 'j':
			o->json = optarg;
			break;
		case 'i':
		case 'n':
			if (cli_u64(optarg, &n))
				return bad("bad number", optarg);
			*(c == 'i' ? &o->interval : &o->top) = optarg;
			break;
		case 'r':
			o->record = optarg;
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		fputs("ptshare run: no command to run\n", stderr);
		usage(stderr);
		return 2;
	}
	o->cmd = argv + optind;
	struct worlds ws;
	char err[256];
	if (o->policies && worlds_init(&ws, o->policies, err, sizeof(err))) {
		fprintf(stderr, "ptshare run: %s\n", err);
		return 2;
	}
	if (o->policies)
		worlds_free(&ws);
	return -1;
}

/* ptshared and libptshare.so, from the directory this program is in. */
static int find_companions(char *daemon_path, char *shim_path, size_t cap)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0) {
		fprintf(stderr, "ptshare run: /proc/self/exe: %s\n", strerror(errno));
		return -1;
	}
	self[n] = '\0';
	*strrchr(self, '/') = '\0';
	if ((size_t)snprintf(daemon_path, cap, "%s/ptshared", self) >= cap ||
	    (size_t)snprintf(shim_path, cap, "%s/libptshare.so", self) >= cap) {
		fprintf(stderr, "ptshare run: %s: path too long\n", self);
		return -1;
	}
	const char *missing = access(daemon_path, X_OK) ? daemon_path
			      : access(shim_path, R_OK) ? shim_path : NULL;
	if (missing) {
		fprintf(stderr, "ptshare run: %s: %s (ptshared and libptshare.so "
			"belong beside ptshare)\n", missing, strerror(errno));
		return -1;
	}
	return 0;
}

/* The program, found and checked: -1 to go on, else the exit status. */
static int check_program(const char *cmd, char *path, size_t cap)
{
	char why[768];
	int r = program_resolve(cmd, path, cap);
	if (r) {
		fprintf(stderr, "ptshare run: %s: %s\n", cmd,
			r == -ENOENT ? "command not found" : strerror(-r));
		return r == -ENOENT ? 127 : 126;
	}
	if (program_preloadable(path, why, sizeof(why)))
		return -1;
	fprintf(stderr,
		"ptshare run: %s: LD_PRELOAD cannot follow it into the program, so "
		"ptshare run cannot trace it.\n"
		"While it runs, `ptshare snapshot --pid PID --tree` reports its page "
		"tables from /proc alone.\n", why);
	return 2;
}

/* A fresh directory only we can enter (mkdtemp: 0700), for the socket. */
static int make_private_dir(char *dir, size_t cap, char *socket, size_t scap)
{
	const char *tmp = getenv("TMPDIR");
	tmp = tmp && *tmp ? tmp : "/tmp";
	bool fits = (size_t)snprintf(dir, cap, "%s/ptshare-XXXXXX", tmp) < cap;
	if (!fits)
		errno = ENAMETOOLONG;
	if (!fits || !mkdtemp(dir)) {
		fprintf(stderr, "ptshare run: cannot make a directory in %s: %s\n",
			tmp, strerror(errno));
		return -1;
	}
	if ((size_t)snprintf(socket, scap, "%s/sock", dir) >= scap) {
		fprintf(stderr, "ptshare run: TMPDIR is too long for a socket "
			"path: %s\n", tmp);
		rmdir(dir);
		return -1;
	}
	return 0;
}

/* The daemon's command line; argv[4] is where the ready fd's number goes. */
#define READY_ARG 4
static void daemon_args(char **argv, const char *daemon_path, const char *socket,
			const struct run_options *o)
{
	const char *const pairs[][2] = {
		{ "--policy", o->policies }, { "--json", o->json },
		{ "--interval", o->interval }, { "--record", o->record },
		{ "--top", o->top }, { "--text", o->output },
	};
	size_t n = 0;
	argv[n++] = (char *)daemon_path;
	argv[n++] = "--socket";
	argv[n++] = (char *)socket;
	argv[n++] = "--ready-fd";
	argv[n++] = NULL; /* READY_ARG */
	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++)
		if (pairs[i][1]) {
			argv[n++] = (char *)pairs[i][0];
			argv[n++] = (char *)pairs[i][1];
		}
	argv[n] = NULL;
}

/* What the program's images inherit: the shim first in LD_PRELOAD, then
 * whatever the user preloads, and the socket. */
static int program_env(const char *shim_path, const char *socket)
{
	const char *theirs = getenv("LD_PRELOAD");
	char *preload;
	if (asprintf(&preload, "%s%s%s", shim_path, theirs && *theirs ? ":" : "",
		     theirs ? theirs : "") < 0)
		return -1;
	int r = setenv("LD_PRELOAD", preload, 1) | setenv(PTS_SOCKET_ENV, socket, 1);
	free(preload);
	return r;
}

static pid_t start_program(struct run_state *s, const char *path, char **argv)
{
	pid_t pid = fork();
	if (pid)
		return pid;
	sigprocmask(SIG_SETMASK, &s->orig_mask, NULL);
	execv(path, argv);
	int err = errno;
	fprintf(stderr, "ptshare run: cannot run %s: %s\n", path, strerror(err));
	_exit(err == ENOENT ? 127 : 126);
}

static void daemon_ended_early(const struct run_state *s)
{
	char buf[64];
	fprintf(stderr, "ptshare run: ptshared ended early (%s): the program "
		"runs on untraced, and there will be no report\n",
		wait_status_text(s->d.status, buf, sizeof(buf)));
}

/* Reaps what has ended; true when no process is left but the daemon. */
static bool reap_children(struct run_state *s)
{
	int status;
	pid_t pid;
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		if (pid == s->program) {
			s->status = status;
			s->program_running = false;
		} else if (pid == s->d.pid) {
			s->d.ended = true;
			s->d.status = status;
			daemon_ended_early(s);
		}
	}
	return !s->program_running &&
	       !children_each(s->d.ended ? 0 : s->d.pid, NULL, NULL);
}

/* A signal the kernel sent our whole process group (the terminal's ^C)
 * reached every process still in it already: not twice. */
static void pass_on(pid_t pid, const struct signalfd_siginfo *si)
{
	if (si->ssi_code != SI_KERNEL || getpgid(pid) != getpgrp())
		kill(pid, (int)si->ssi_signo);
}

static void pass_on_each(pid_t pid, void *si)
{
	pass_on(pid, si);
}

/* To the program while it runs; then to the processes that outlived it,
 * which were handed to us, the subreaper, as their parents died. */
static void forward(const struct run_state *s, struct signalfd_siginfo *si)
{
	if (s->program_running)
		pass_on(s->program, si);
	else
		children_each(s->d.ended ? 0 : s->d.pid, pass_on_each, si);
}

/* Until the program and every process it started have ended. */
static void wait_all(struct run_state *s)
{
	for (;;) {
		struct signalfd_siginfo si;
		ssize_t n = read(s->sigfd, &si, sizeof(si));
		if (n < 0 && errno != EINTR) {
			fprintf(stderr, "ptshare run: signalfd: %s\n", strerror(errno));
			return;
		}
		if (n != sizeof(si))
			continue;
		if (si.ssi_signo != SIGCHLD)
			forward(s, &si);
		else if (reap_children(s))
			return;
	}
}

static int exit_status(int status)
{
	return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

/* With the signals blocked and the directory made: the run itself. */
static int traced_run(struct run_state *s, const struct run_options *o,
		      const char *program, const char *daemon_path,
		      const char *shim_path, const char *socket)
{
	char *dargv[20];
	daemon_args(dargv, daemon_path, socket, o);
	int r = daemon_start(&s->d, dargv, READY_ARG);
	if (r)
		return r;
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) || program_env(shim_path, socket)) {
		fprintf(stderr, "ptshare run: %s\n", strerror(errno));
		daemon_stop(&s->d, -1);
		return 1;
	}
	s->program = start_program(s, program, o->cmd);
	if (s->program < 0) {
		fprintf(stderr, "ptshare run: fork: %s\n", strerror(errno));
		daemon_stop(&s->d, -1);
		return 1;
	}
	s->program_running = true;
	wait_all(s);
	daemon_stop(&s->d, s->sigfd);
	return exit_status(s->status);
}

int cmd_run(int argc, char **argv)
{
	struct run_options o;
	char daemon_path[PATH_MAX], shim_path[PATH_MAX], program[PATH_MAX];
	char dir[PATH_MAX], socket[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int r = parse(&o, argc, argv);
	if (r >= 0)
		return r;
	if (find_companions(daemon_path, shim_path, sizeof(daemon_path)))
		return 1;
	if ((r = check_program(o.cmd[0], program, sizeof(program))) >= 0)
		return r;
	struct run_state s = { .sigfd = -1 };
	sigset_t sigs;
	sigemptyset(&sigs);
	for (size_t i = 0; i < sizeof(run_signals) / sizeof(run_signals[0]); i++)
		sigaddset(&sigs, run_signals[i]);
	if (sigprocmask(SIG_BLOCK, &sigs, &s.orig_mask) ||
	    (s.sigfd = signalfd(-1, &sigs, SFD_CLOEXEC)) < 0) {
		fprintf(stderr, "ptshare run: signalfd: %s\n", strerror(errno));
		return 1;
	}
	if (make_private_dir(dir, sizeof(dir), socket, sizeof(socket))) {
		close(s.sigfd);
		return 1;
	}
	r = traced_run(&s, &o, program, daemon_path, shim_path, socket);
	if (unlink(socket) && errno != ENOENT)
		fprintf(stderr, "ptshare run: %s: %s\n", socket, strerror(errno));
	if (rmdir(dir))
		fprintf(stderr, "ptshare run: cannot remove %s: %s\n", dir,
			strerror(errno));
	close(s.sigfd);
	return r;
}
