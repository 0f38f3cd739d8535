/* SPDX-License-Identifier: MIT */
/* The parts of `ptshare run` (run.c): the program to trace, and the daemon
 * that traces it. */
#ifndef PTSHARE_RUN_H
#define PTSHARE_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* run_program.c */

/* cmd found as execvp() would: itself when it holds a '/', else the first
 * executable regular file of that name in PATH.  0, -ENOENT or -EACCES. */
int program_resolve(const char *cmd, char *path, size_t cap);
/* Whether LD_PRELOAD can follow path into the program (through a script's
 * interpreter too); if not, why, in why. */
bool program_preloadable(const char *path, char *why, size_t cap);

/* run_daemon.c */

struct daemon {
	pid_t pid;
	bool ended;    /* reaped */
	int status;    /* its wait status, once ended */
};

/* Starts argv[0] (argv[ready_arg] is a placeholder for the number of the
 * fd it says "ready" on) and waits, bounded, for its "ready".  0, or the
 * exit status for `ptshare run` (2: the daemon refused the options passed
 * on to it; 1: another failure), with the reason printed and the daemon
 * reaped. */
int daemon_start(struct daemon *d, char **argv, size_t ready_arg);
/* Asks it to finish (SIGTERM: it writes the report) and waits; a signal
 * other than SIGCHLD read from sigfd meanwhile (a user giving up) kills it
 * instead.  0 when it exited cleanly, else -1 (the reason printed, unless
 * it had ended already: its reaper tells). */
int daemon_stop(struct daemon *d, int sigfd);
/* "exit status 3", "killed by signal 9 (Killed)": for messages. */
const char *wait_status_text(int status, char *buf, size_t cap);

/* run_children.c */

/* Calls fn (when not NULL) for each child of ours but skip; returns how
 * many there are, zombies included. */
size_t children_each(pid_t skip, void (*fn)(pid_t pid, void *arg), void *arg);

#endif
