/* SPDX-License-Identifier: MIT */
/*
 * One traced run of a program (docs/run.md), for `ptshare run` and for
 * `ptshare aslr`, which makes two.  Starts ptshared on a socket in a fresh
 * private directory, runs the program with libptshare.so preloaded, waits
 * for the program and every process it started (daemonised servers too:
 * we are their subreaper), watching the daemon meanwhile (run_watch.c),
 * then has the daemon finish: it writes the report, or keeps the run's
 * records in a trace that is replayed here into a report the caller
 * holds.  It always keeps a trace: a daemon that ended early leaves no
 * report, which is rebuilt from it (run_report.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ingest/ingest.h"
#include "cli/path_open.h"
#include "commands.h"
#include "ptshare/wire.h"
#include "run.h"

/* What a traced run waits for (SIGCHLD) and passes on to the program. */
static const int run_signals[] = { SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT };

/* One traced run. */
struct run_state {
	const struct run_options *o;
	struct daemon d;
	pid_t program;
	bool program_running;
	int status;         /* the program's wait status */
	int sigfd;          /* SIGCHLD and the signals forwarded */
	sigset_t orig_mask; /* the program's */
	struct watch watch;
	struct progress progress; /* the line on stderr while it runs */
	/* Why the daemon ended before it was told to ("" while it serves):
	 * what the report rebuilt from its trace says. */
	char ended_why[REPORT_CUT_WHY_MAX];
	struct run_keep keep; /* where the trace is kept after the run */
};

/* ptshared and libptshare.so, in ptshare's private folder: where the build
 * and the install put it, relative to the directory this program is in
 * (PTSHARE_PKGLIBDIR_FROM_BINDIR, "../lib/ptshare"), so that a moved or
 * installed tree finds its own. */
static int find_companions(const char *who, char *daemon_path, char *shim_path,
			   size_t cap)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0) {
		fprintf(stderr, "%s: /proc/self/exe: %s\n", who, strerror(errno));
		return -1;
	}
	self[n] = '\0';
	*strrchr(self, '/') = '\0';
	const char *dir = PTSHARE_PKGLIBDIR_FROM_BINDIR;
	if ((size_t)snprintf(daemon_path, cap, "%s/%s/ptshared", self, dir) >= cap ||
	    (size_t)snprintf(shim_path, cap, "%s/%s/libptshare.so", self,
			     dir) >= cap) {
		fprintf(stderr, "%s: %s: path too long\n", who, self);
		return -1;
	}
	const char *missing = access(daemon_path, X_OK) ? daemon_path
			      : access(shim_path, R_OK) ? shim_path : NULL;
	if (missing) {
		fprintf(stderr, "%s: %s: %s (ptshared and libptshare.so belong "
			"in %s/%s)\n", who, missing, strerror(errno), self, dir);
		return -1;
	}
	return 0;
}

/* The program, found and checked: -1 to go on, else the exit status. */
static int check_program(const char *who, const char *cmd, char *path,
			 size_t cap)
{
	char why[768];
	int r = program_resolve(cmd, path, cap);
	if (r) {
		fprintf(stderr, "%s: %s: %s\n", who, cmd,
			r == -ENOENT ? "command not found" : strerror(-r));
		return r == -ENOENT ? 127 : 126;
	}
	if (program_preloadable(path, why, sizeof(why)))
		return -1;
	fprintf(stderr,
		"%s: %s: LD_PRELOAD cannot follow it into the program, so "
		"%s cannot trace it.\n"
		"While it runs, `ptshare snapshot --pid PID --tree` reports its page "
		"tables from /proc alone.\n", who, why, who);
	return 2;
}

int run_setup(struct run_setup *s, const struct run_options *o)
{
	if (find_companions(o->name, s->daemon, s->shim, sizeof(s->daemon)))
		return 1;
	return check_program(o->name, o->cmd[0], s->program, sizeof(s->program));
}

/* A fresh directory only we can enter (mkdtemp: 0700), for the sockets
 * (the shims', and the live reports': docs/report.md) and the daemon's
 * trace, unless the user keeps it elsewhere (--record).  In a directory no
 * other user can change: one who could would rename ours and put theirs,
 * and its socket, where the program connects. */
static int make_private_dir(const char *who, char *dir, size_t cap,
			    char *socket, char *report, char *trace, size_t scap)
{
	const char *tmp = getenv("TMPDIR");
	char why[256];
	tmp = tmp && *tmp ? tmp : "/tmp";
	if (cli_path_dir_kept(tmp, why, sizeof(why))) {
		fprintf(stderr, "%s: TMPDIR %s: %s\n", who, tmp, why);
		return -1;
	}
	bool fits = (size_t)snprintf(dir, cap, "%s/ptshare-XXXXXX", tmp) < cap;
	if (!fits)
		errno = ENAMETOOLONG;
	if (!fits || !mkdtemp(dir)) {
		fprintf(stderr, "%s: cannot make a directory in %s: %s\n", who,
			tmp, strerror(errno));
		return -1;
	}
	if ((size_t)snprintf(socket, scap, "%s/sock", dir) >= scap ||
	    (size_t)snprintf(report, scap, "%s/report", dir) >= scap ||
	    (size_t)snprintf(trace, scap, "%s/trace", dir) >= scap) {
		fprintf(stderr, "%s: TMPDIR is too long for a socket path: %s\n",
			who, tmp);
		rmdir(dir);
		return -1;
	}
	return 0;
}

/* cmd as a shell would read it back, cut at cap (for the report's run
 * details): an argument of anything but the usual characters in single
 * quotes. */
static void quote_command(char *const *cmd, char *out, size_t cap)
{
	static const char plain[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				    "0123456789@%+=:,./_-";
	FILE *m = fmemopen(out, cap, "w");
	if (!m) {
		*out = '\0';
		return;
	}
	setvbuf(m, NULL, _IONBF, 0);
	for (char *const *a = cmd; *a; a++) {
		bool q = !**a || (*a)[strspn(*a, plain)];
		fprintf(m, "%s%s", a == cmd ? "" : " ", q ? "'" : "");
		for (const char *c = *a; *c; c++)
			fputs(q && *c == '\'' ? "'\\''" : (char[]){ *c, 0 }, m);
		fputs(q ? "'" : "", m);
	}
	fclose(m);
	out[cap - 1] = '\0';
}

/* The daemon's command line; argv[4] is where the ready fd's number goes.
 * Its words: 8, and two per option passed on (16 at most). */
#define READY_ARG 4
#define DAEMON_ARGV_MAX (8 + 2 * 16 + 1)
static void daemon_args(char **argv, const char *daemon_path, const char *socket,
			const char *report, const char *heartbeat_fd,
			const char *command_line, const struct run_options *o)
{
	const char *const pairs[][2] = {
		{ "--policy", o->v.policies }, { "--json", o->v.json },
		{ "--html", o->v.html }, { "--flamegraph", o->v.flamegraph },
		{ "--openmetrics", o->v.openmetrics },
		{ "--interval", o->v.interval }, { "--record", o->v.record },
		{ "--top", o->v.top }, { "--text", o->output },
		{ "--faults", o->v.faults }, { "--heartbeat-fd", heartbeat_fd },
		{ "--command-line", command_line }, { "--group-by", o->v.group_by },
	};
	_Static_assert(8 + 2 * sizeof(pairs) / sizeof(pairs[0]) < DAEMON_ARGV_MAX,
		       "the daemon's argv holds every option");
	size_t n = 0;
	argv[n++] = (char *)daemon_path;
	argv[n++] = "--socket";
	argv[n++] = (char *)socket;
	argv[n++] = "--ready-fd";
	argv[n++] = NULL; /* READY_ARG */
	argv[n++] = "--report-socket";
	argv[n++] = (char *)report;
	if (o->v.verbose)
		argv[n++] = "--verbose";
	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++)
		if (pairs[i][1]) {
			argv[n++] = (char *)pairs[i][0];
			argv[n++] = (char *)pairs[i][1];
		}
	argv[n] = NULL;
}

/* What the program's images inherit: the shim first in LD_PRELOAD, then
 * whatever the user preloads, and the socket.  Without faults, no image
 * makes a userfaultfd (uffd=0, before the user's own options, which win):
 * a new image or a forked child then runs on without waiting for the
 * daemon to register it (docs/shim.md, HELLO). */
static int program_env(const char *shim_path, const char *socket,
		       uint32_t faults)
{
	const char *theirs = getenv("LD_PRELOAD");
	const char *options = getenv(PTS_OPTIONS_ENV);
	char *preload, *opts = NULL;
	if (asprintf(&preload, "%s%s%s", shim_path, theirs && *theirs ? ":" : "",
		     theirs ? theirs : "") < 0)
		return -1;
	if (faults == PTS_FAULTS_OFF &&
	    asprintf(&opts, "uffd=0%s%s", options && *options ? "," : "",
		     options ? options : "") < 0) {
		free(preload);
		return -1;
	}
	int r = setenv("LD_PRELOAD", preload, 1) | setenv(PTS_SOCKET_ENV, socket, 1);
	if (opts)
		r |= setenv(PTS_OPTIONS_ENV, opts, 1);
	free(preload);
	free(opts);
	return r;
}

/* In the child: the layout asked for, which exec and fork pass on. */
static int set_layout(enum run_layout layout)
{
	if (layout == RUN_LAYOUT_AS_IS)
		return 0;
	int now = personality(0xffffffff);
	if (now < 0)
		return -1;
	now = layout == RUN_LAYOUT_FIXED ? now | ADDR_NO_RANDOMIZE
					 : now & ~ADDR_NO_RANDOMIZE;
	return personality((unsigned long)now) < 0 ? -1 : 0;
}

/* The program, with its environment and layout: set in the child, so
 * that ours (and the next run's daemon's) stays as it was. */
static pid_t start_program(struct run_state *s, const struct run_setup *su,
			   const char *socket)
{
	pid_t pid = fork();
	if (pid)
		return pid;
	sigprocmask(SIG_SETMASK, &s->orig_mask, NULL);
	ptshare_sigpipe_restore();
	if (program_env(su->shim, socket, s->o->v.faults_mode) ||
	    set_layout(s->o->layout)) {
		fprintf(stderr, "%s: %s\n", s->o->name, strerror(errno));
		_exit(126);
	}
	execv(su->program, s->o->cmd);
	int err = errno;
	fprintf(stderr, "%s: cannot run %s: %s\n", s->o->name, su->program,
		strerror(err));
	_exit(err == ENOENT ? 127 : 126);
}

/* Killed, it wrote no report: the report is rebuilt from its trace. */
static bool daemon_left_no_report(const struct run_state *s)
{
	return s->ended_why[0] && WIFSIGNALED(s->d.status);
}

static void daemon_ended_early(struct run_state *s)
{
	char buf[64];
	snprintf(s->ended_why, sizeof(s->ended_why), "ptshared ended early (%s)",
		 wait_status_text(s->d.status, buf, sizeof(buf)));
	fprintf(stderr, "%s: %s: the program runs on untraced, and %s\n",
		s->o->name, s->ended_why, daemon_left_no_report(s)
		? "the report, rebuilt from its trace, ends here"
		: "its report, if it wrote one, ends here");
}

/* The watch found it stopped or hung: ended, so that the kernel lets the
 * faults on its userfaultfds go, and the shims see it gone. */
static void end_daemon(struct run_state *s, const char *why)
{
	snprintf(s->ended_why, sizeof(s->ended_why), "ptshare run ended "
		 "ptshared, which %s", why);
	kill(s->d.pid, SIGKILL);
	fprintf(stderr, "%s: ended ptshared, which %s, so that the program's "
		"faults, forks and exits wait for it no more: the program runs on "
		"untraced, and the report, rebuilt from its trace, ends here\n",
		s->o->name, why);
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
			if (!s->ended_why[0])
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

/* A signal a process of the program sent (to its process group, which is
 * ours: kill(0, SIGTERM) at a server's shutdown, a shell's `trap 'kill 0'
 * EXIT`) reached the program already; sent again, a handler would run
 * twice.  Its sender is known by its pid while it lives, or is a zombie:
 * one gone and reaped already is taken for an outsider. */
static bool from_the_program(const struct run_state *s,
			     const struct signalfd_siginfo *si)
{
	return si->ssi_code <= 0 && si->ssi_pid > 0 &&
	       descends_from_us((pid_t)si->ssi_pid, s->d.ended ? 0 : s->d.pid);
}

/* To the program while it runs; then to the processes that outlived it,
 * which were handed to us, the subreaper, as their parents died. */
static void forward(const struct run_state *s, struct signalfd_siginfo *si)
{
	if (from_the_program(s, si))
		return;
	if (s->program_running)
		pass_on(s->program, si);
	else
		children_each(s->d.ended ? 0 : s->d.pid, pass_on_each, si);
}

/* Until the program and every process it started have ended; the daemon
 * watched meanwhile, while it serves. */
static void wait_all(struct run_state *s)
{
	for (;;) {
		struct signalfd_siginfo si;
		char why[160];
		bool serving = !s->ended_why[0];
		if (serving && watch_stalled(&s->watch, why, sizeof(why))) {
			progress_end(&s->progress);
			end_daemon(s, why);
		}
		progress_tick(&s->progress);
		struct pollfd p = { .fd = s->sigfd, .events = POLLIN };
		int wait = serving ? watch_wait_ms(&s->watch) : -1;
		int line = progress_wait_ms(&s->progress);
		if (poll(&p, 1, line >= 0 && (wait < 0 || line < wait) ? line
								     : wait) <= 0)
			continue;
		ssize_t n = read(s->sigfd, &si, sizeof(si));
		if (n < 0 && errno != EINTR) {
			fprintf(stderr, "%s: signalfd: %s\n", s->o->name,
				strerror(errno));
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
static int traced(struct run_state *s, const struct run_setup *su,
		  const char *socket, const char *report, const char *trace,
		  bool want_report, struct run_result *r)
{
	const struct run_options *o = s->o;
	struct run_options passed = *o;
	char heartbeat_fd[16], command_line[PTS_RUN_CMD];
	/* The daemon's trace is plain: the private one, compressed into the
	 * file kept when the run is over, or a plain --record FILE (run_keep.c);
	 * read here if the daemon ended early. */
	passed.v.record = run_keep_daemon_trace(&s->keep, trace);
	if (want_report) {
		passed.v.json = NULL;
		passed.v.html = NULL;
		passed.v.flamegraph = NULL;
		passed.v.openmetrics = NULL;
		passed.output = "/dev/null";
	}
	if (watch_init(&s->watch, o->name, o->daemon_timeout_s))
		return 1;
	snprintf(heartbeat_fd, sizeof(heartbeat_fd), "%d", s->watch.fd);
	quote_command(o->cmd, command_line, sizeof(command_line));
	char *dargv[DAEMON_ARGV_MAX];
	daemon_args(dargv, su->daemon, socket, report,
		    s->watch.fd >= 0 ? heartbeat_fd : NULL, command_line, &passed);
	int status = daemon_start(&s->d, o->name, dargv, READY_ARG, s->watch.fd);
	if (status)
		return status;
	watch_start(&s->watch, s->d.pid);
	/* On stderr where the report goes too, or where a person reads it;
	 * with -o, a stderr that is a file or a pipe stays the program's. */
	if (!o->output || isatty(STDERR_FILENO))
		fprintf(stderr, "%s: live report: ptshare report --socket %s\n",
			o->name, report);
	if (prctl(PR_SET_CHILD_SUBREAPER, 1)) {
		fprintf(stderr, "%s: %s\n", o->name, strerror(errno));
		daemon_stop(&s->d, -1);
		return 1;
	}
	s->program = start_program(s, su, socket);
	if (s->program < 0) {
		fprintf(stderr, "%s: fork: %s\n", o->name, strerror(errno));
		daemon_stop(&s->d, -1);
		return 1;
	}
	s->program_running = true;
	progress_init(&s->progress, o->name, s->watch.hb, !o->quiet);
	wait_all(s);
	progress_end(&s->progress);
	r->ran = true;
	/* Ended early: the watch's SIGKILL may not have been reaped yet. */
	if (s->ended_why[0])
		daemon_reap(&s->d);
	s->d.program_status = s->status;
	bool clean = !s->ended_why[0] && !daemon_stop(&s->d, s->sigfd);
	const char *cut = daemon_left_no_report(s) ? s->ended_why : NULL;
	/* `ptshare aslr` compares whole runs only. */
	if (want_report ? clean : cut != NULL)
		run_report_rebuild(o->name, passed.v.record, &o->v, cut,
				   s->status, r);
	if (!want_report && r->report)
		run_report_write(o, r->report);
	run_keep_save(&s->keep, o, trace);
	return exit_status(s->status);
}

int run_traced(const struct run_setup *su, const struct run_options *o,
	       bool want_report, struct run_result *r)
{
	char dir[PATH_MAX], socket[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char report[sizeof(socket)], trace[sizeof(socket)];
	struct run_state s = { .o = o, .sigfd = -1, .watch = { .fd = -1 } };
	*r = (struct run_result){ .status = 1 };
	sigset_t sigs;
	sigemptyset(&sigs);
	for (size_t i = 0; i < sizeof(run_signals) / sizeof(run_signals[0]); i++)
		sigaddset(&sigs, run_signals[i]);
	if (sigprocmask(SIG_BLOCK, &sigs, &s.orig_mask) ||
	    (s.sigfd = signalfd(-1, &sigs, SFD_CLOEXEC)) < 0) {
		fprintf(stderr, "%s: signalfd: %s\n", o->name, strerror(errno));
		return r->status;
	}
	/* `ptshare aslr` (want_report) compares its runs, and keeps none. */
	bool kept = want_report || !run_keep_open(&s.keep, o);
	if (kept && make_private_dir(o->name, dir, sizeof(dir), socket, report,
				     trace, sizeof(socket))) {
		run_keep_abandon(&s.keep);
	} else if (kept) {
		/* The user's report socket is the daemon's to make and remove:
		 * what is at its path when the daemon refuses it is not ours. */
		if (o->report_socket)
			snprintf(report, sizeof(report), "%s", o->report_socket);
		r->status = traced(&s, su, socket, report, trace, want_report, r);
		if (!r->ran)
			run_keep_abandon(&s.keep);
		watch_free(&s.watch);
		for (const char *const *p = (const char *const[]){
			     socket, trace, o->report_socket ? NULL : report, NULL };
		     *p; p++)
			if (unlink(*p) && errno != ENOENT)
				fprintf(stderr, "%s: %s: %s\n", o->name, *p,
					strerror(errno));
		if (rmdir(dir))
			fprintf(stderr, "%s: cannot remove %s: %s\n", o->name,
				dir, strerror(errno));
	}
	close(s.sigfd);
	sigprocmask(SIG_SETMASK, &s.orig_mask, NULL);
	return r->status;
}

void run_result_free(struct run_result *r)
{
	if (r->replay) {
		ingest_free(r->replay);
		mm_worlds_free(&r->ws);
	}
	*r = (struct run_result){ 0 };
}
