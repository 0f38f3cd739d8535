/* SPDX-License-Identifier: MIT */
/*
 * Running shim_subject (or any program) for a test: in an environment the
 * test spells out entirely, with its stdin and stdout on pipes, and bounded
 * waits (a subject that hangs is killed, and the test fails).
 */
#ifndef PTSHARE_TEST_RUN_H
#define PTSHARE_TEST_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define RUN_TIMEOUT_MS 60000

struct run {
	pid_t pid;
	int in, out;       /* the program's stdin (to write), stdout (to read) */
	char *text;        /* what it printed so far */
	size_t len, cap, seen;
};

/* The environment of a traced run: PATH, LD_PRELOAD=the shim (when
 * preload), PTSHARE_SOCKET (when socket) and PTSHARE_OPTIONS (when
 * options). */
struct run_env {
	char *v[8];
	char store[4][4096];
};
void run_env(struct run_env *e, bool preload, const char *socket,
	     const char *options);

/* What the program runs with; NULL for the defaults. */
struct run_limits {
	unsigned long nofile; /* RLIMIT_NOFILE, 0 for 4096 */
	int nice;             /* added to the test's */
};
void run_start(struct run *r, const char *const argv[], char *const env[],
	       const struct run_limits *lim);
/* The next line it prints (without the newline); false at its end. */
bool run_line(struct run *r, char *buf, size_t cap);
void run_send(struct run *r, const char *text);
/* Closes its stdin, reads the rest, waits; returns the wait status.  The
 * whole output stays in r->text (NUL-terminated) until run_free. */
int run_finish(struct run *r);
void run_free(struct run *r);

/* Its output without the lines starting with '@' (malloc'd). */
char *run_stable_text(const struct run *r);
/* The value after "@key " on the first such line, or NULL (static). */
const char *run_value(const struct run *r, const char *key);

#endif
