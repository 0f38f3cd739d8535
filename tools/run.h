/* SPDX-License-Identifier: MIT */
/* The parts of `ptshare run` and `ptshare aslr`: their options, one traced
 * run of the program (run_traced.c), the program to trace, and the daemon
 * that traces it. */
#ifndef PTSHARE_RUN_H
#define PTSHARE_RUN_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "cli/cli_options.h"
#include "ptshare/wire.h"
#include "report/report.h"
#include "ptshare/mm.h"

struct ingest;

/* The address layout the program gets (personality ADDR_NO_RANDOMIZE,
 * which every process it starts inherits). */
enum run_layout {
	RUN_LAYOUT_AS_IS,      /* ours, untouched: `ptshare run` */
	RUN_LAYOUT_RANDOMISED, /* randomised as the system does */
	RUN_LAYOUT_FIXED,      /* not randomised */
};

/* A daemon that is stopped or hung this long (s) is ended (run_watch.c). */
#define DAEMON_TIMEOUT_DEFAULT 1

struct run_options {
	const char *name; /* "ptshare run": for messages */
	struct cli_values v; /* passed on to the daemon as given */
	const char *output;
	const char *report_socket; /* --report-socket; NULL: in the run's dir */
	unsigned daemon_timeout_s; /* --daemon-timeout; 0: not watched */
	char **cmd;
	enum run_layout layout;
	bool no_record; /* --no-record: no trace kept (run_keep.c) */
	bool quiet;     /* --quiet: no progress line */
};

/* run_options.c */

/* The options of `ptshare run` (docs/run.md) into o, for the command
 * name, whose usage() is printed on --help, with the shared options of
 * extra (enum cli_shared) too.  -1 to go on, else the exit status (0
 * after --help, 2 after a usage error). */
int run_options_parse(struct run_options *o, const char *name,
		      void (*usage)(FILE *f), unsigned extra, int argc,
		      char **argv);

/* run_traced.c */

/* What every run of the command needs, found once. */
struct run_setup {
	char daemon[PATH_MAX], shim[PATH_MAX], program[PATH_MAX];
};

/* ptshared and libptshare.so in our private folder, and o->cmd resolved and checked:
 * -1 to go on, else the exit status (1, 2, 126, 127; the reason printed). */
int run_setup(struct run_setup *s, const struct run_options *o);

/* How one traced run went. */
struct run_result {
	int status;      /* the exit status `ptshare run` gives it */
	bool ran;        /* the program ran: status is its own */
	/* Asked for: the run's report, rebuilt from its records (NULL when
	 * there is none), and what it lives in. */
	const struct report *report;
	struct mm_worlds ws;
	struct ingest *replay;
};

/*
 * Runs o->cmd traced, from its start until it and every process it started
 * have ended, and returns r->status.  Without want_report the daemon writes
 * the report where o says (`ptshare run`), or, when it was killed (or ended
 * by the watch), it is rebuilt from its trace and written there.  With
 * want_report, the daemon writes nothing (o->json, o->output and o->record
 * are not passed on): the run's records go to a trace in the private
 * directory, which is replayed into r->report, when the daemon finished
 * the run (else r->report is NULL).  Free r with run_result_free() either
 * way.
 */
int run_traced(const struct run_setup *s, const struct run_options *o,
	       bool want_report, struct run_result *r);
void run_result_free(struct run_result *r);

/* run_report.c */

/* The report of the run recorded in trace, under the run's policies and
 * groups (v), into
 * r->report (NULL, with the reason printed, when there is none).  cut:
 * why the records end before the run did (the daemon was ended), which
 * the report says, or NULL: the trace must then be whole; the program's
 * wait status is then status, which the daemon could not record. */
void run_report_rebuild(const char *who, const char *trace,
			const struct cli_values *v, const char *cut, int status,
			struct run_result *r);
/* r written where o says `ptshare run` writes its report (-o or stderr,
 * --json, --html): 0, or 1 with the reason printed. */
int run_report_write(const struct run_options *o, const struct report *r);

/* run_keep.c: the trace kept after the run (docs/run.md, The trace). */

struct run_keep {
	char path[PATH_MAX];
	FILE *f;      /* NULL: none kept here */
	bool created; /* the default name, made by us */
	bool live;    /* path is plain, the daemon's own trace (--record FILE) */
};

/* Where o keeps the trace, opened (none with --no-record): 0, or -1 with
 * the reason printed. */
int run_keep_open(struct run_keep *k, const struct run_options *o);
/* The trace the daemon writes: k's when it is live, else private (which
 * run_keep_save compresses). */
const char *run_keep_daemon_trace(const struct run_keep *k, const char *private);
/* The plain trace at trace compressed into k's file, unless the daemon
 * wrote it there (live); its name and the replay command said, or why it
 * could not be written. */
void run_keep_save(struct run_keep *k, const struct run_options *o,
		   const char *trace);
/* The run never started: the file closed, and removed when we made it. */
void run_keep_abandon(struct run_keep *k);

/* run_program.c */

/* cmd found as execvp() would: itself when it holds a '/', else the first
 * executable regular file of that name in PATH.  0, -ENOENT or -EACCES. */
int program_resolve(const char *cmd, char *path, size_t cap);
/* Whether LD_PRELOAD can follow path into the program (through a script's
 * interpreter too); if not, why, in why. */
bool program_preloadable(const char *path, char *why, size_t cap);

/* run_daemon.c */

struct daemon {
	const char *who; /* the command, for messages */
	pid_t pid;
	bool ended;    /* reaped */
	int status;    /* its wait status, once ended */
	int program_status; /* the program's wait status, -1 until known */
};

/* Starts argv[0] (argv[ready_arg] is a placeholder for the number of the
 * fd it says "ready" on; keep_fd, when >= 0, an fd of ours it inherits)
 * and waits, bounded, for its "ready".  0, or the exit status for the
 * command who (2: the daemon refused the options passed on to it; 1:
 * another failure), with the reason printed and the daemon reaped. */
int daemon_start(struct daemon *d, const char *who, char **argv,
		 size_t ready_arg, int keep_fd);
/* Asks it to finish (SIGTERM, carrying d->program_status: it writes the
 * report) and waits; a signal
 * other than SIGCHLD read from sigfd meanwhile (a user giving up) kills it
 * instead.  0 when it exited cleanly, else -1 (the reason printed, unless
 * it had ended already: its reaper tells). */
int daemon_stop(struct daemon *d, int sigfd);
/* Waits for it to end, when it was killed. */
void daemon_reap(struct daemon *d);
/* "exit status 3", "killed by signal 9 (Killed)": for messages. */
const char *wait_status_text(int status, char *buf, size_t cap);

/* run_watch.c: the daemon watched while the program runs. */

struct watch {
	struct pts_heartbeat *hb; /* the daemon's turns and progress */
	int fd;              /* its memory file, until the daemon has it */
	pid_t pid;
	clockid_t cpu;       /* the daemon's CPU clock */
	uint64_t beats;      /* as last seen */
	int64_t cpu_ns;      /* as last seen */
	uint64_t idle;       /* the CPUs' idle time (jiffies), as last seen */
	int64_t next_ms;     /* when the next check is due */
	unsigned bound;      /* checks without a sign of life that end it */
	unsigned quiet;      /* checks since its last sign of life */
	unsigned still;      /* checks since its loop last turned */
};

/* A watch with the bound in seconds (0: none, the page kept for the
 * progress line): the page to pass the daemon is w->fd (close-on-exec).
 * 0, or -1 with the reason printed. */
int watch_init(struct watch *w, const char *who, unsigned bound_s);
/* The daemon has started: watched from now. */
void watch_start(struct watch *w, pid_t daemon);
/* Until the next check is due, for poll(): -1 when not watched. */
int watch_wait_ms(const struct watch *w);
/* The check, when it is due: true when the daemon must be ended, with why
 * in why. */
bool watch_stalled(struct watch *w, char *why, size_t cap);
void watch_free(struct watch *w);

/* run_progress.c: the line on stderr that says how far the run is. */

struct progress {
	const struct pts_heartbeat *hb; /* NULL: no line */
	const char *who;
	int64_t start_ms, next_ms;
	bool shown;          /* a line is on the terminal */
};

/* A line from hb's figures, when stderr is a terminal and on. */
void progress_init(struct progress *p, const char *who,
		   const struct pts_heartbeat *hb, bool on);
/* Until the line is due again, for poll(): -1 when there is none. */
int progress_wait_ms(const struct progress *p);
/* The line redrawn, when it is due (about once a second). */
void progress_tick(struct progress *p);
/* The line erased, and no more of it. */
void progress_end(struct progress *p);

/* run_children.c */

/* Calls fn (when not NULL) for each child of ours but skip; returns how
 * many there are, zombies included. */
size_t children_each(pid_t skip, void (*fn)(pid_t pid, void *arg), void *arg);
/* Whether pid is a descendant of ours through a child other than skip: a
 * process of the program, since we are its subreaper.  False for a
 * process gone, whose line of parents cannot be read. */
bool descends_from_us(pid_t pid, pid_t skip);

#endif
