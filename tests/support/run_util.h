/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the end-to-end tests of `ptshare run` and ptshared (tests/run,
 * tests/torture): commands started with their output captured and every
 * wait bounded, private temporary directories that are checked empty and
 * removed, ptshared started on its own, the JSON report, and the trace the
 * daemon writes.
 */
#ifndef PTSHARE_TESTS_RUN_UTIL_H
#define PTSHARE_TESTS_RUN_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "json_read.h"
#include "skip.h"

/* Long enough for a checkpoint of 1 GiB under AddressSanitizer; a command
 * still running then is killed and the test fails. */
#define CMD_TIMEOUT_MS 300000

/* A command in a process group of its own. */
struct cmd {
	pid_t pid;
	int in;            /* its stdin, for writing; -1 once closed */
	int out, err;      /* its stdout and stderr, read into: */
	char *text[2];     /* stdout, stderr: NUL-terminated */
	size_t len[2], cap[2];
	size_t line_at;    /* stdout up to here was returned by cmd_line */
};

struct cmd_opts {
	char *const *env;  /* NULL: ours */
	int ready_fd;      /* > 0: given to the command as its fd 3 */
	bool ignore_sigint;
};

void cmd_start(struct cmd *c, const char *const argv[], const struct cmd_opts *o);
/* The next line of its stdout (without the newline; NULL at the end, or
 * when the bound passed).  Valid until the next call. */
const char *cmd_line(struct cmd *c);
/* Until its stderr holds text (false at its end, or at the bound). */
bool cmd_wait_stderr(struct cmd *c, const char *text);
void cmd_close_stdin(struct cmd *c);
/* Reads the rest and waits: its exit status, 128 + the signal that killed
 * it, or -1 when it had to be killed at the bound. */
int cmd_finish(struct cmd *c);
void cmd_free(struct cmd *c);
/* Kills (with their process groups) and reaps the commands started and
 * not finished: what a failed test left. */
void cmd_kill_leftovers(void);
/* That, and removes the directories made and not removed. */
void cleanup_leftovers(void);
/* Start, finish: the exit status; the output stays in c until cmd_free. */
int cmd_run(struct cmd *c, const char *const argv[], const struct cmd_opts *o);
/* Fails the test with the command's output when stderr shows a sanitizer
 * report. */
void assert_no_sanitizer_report(const struct cmd *c);
/* argv run to its end: it must exit 0 without a sanitizer report, or the
 * test fails with its stderr. */
void cmd_run_ok(const char *const argv[]);

/* A fresh private directory under /tmp; tmp_path() names a file in it
 * (in one of 8 buffers used in turn). */
void tmp_make(char *dir, size_t cap);
const char *tmp_path(const char *dir, const char *name);
/* Removes dir with the files named (NULL-terminated); fails the test when
 * a JSON document in it is not valid against docs/report.schema.json
 * (schema_check.h), or when anything else was left in it (removing that
 * too). */
void tmp_remove(const char *dir, const char *const files[]);
/* The number of entries of dir. */
size_t dir_entries(const char *dir);
/*
 * cmocka setup and teardown of a test that runs `ptshare run`: a fresh
 * TMPDIR (run_tmpdir), where it makes its directory; afterwards nothing may
 * be left there, nor a trace kept by default in the current directory (the
 * build tree), and nothing is left anywhere, even after a failure.
 */
extern char run_tmpdir[64];
int run_tmpdir_setup(void **state);
int run_tmpdir_teardown(void **state);

/* For what only root may do (CI runs as root): test_skip() when not
 * root. */
void require_root(void);
/* The daemon `ptshare run` (c) started: the child whose command line
 * names ptshared (under valgrind, its comm is valgrind's); or the test
 * fails. */
pid_t daemon_of(const struct cmd *c);
/* The whole file at path, NUL-terminated, its length in *len unless len
 * is NULL; or the test fails. */
char *file_read(const char *path, size_t *len);
/* `ptshare replay trace FORMAT out` (FORMAT --json or --html, ptshare the
 * binary) writes exactly what the run wrote to ran; or the test fails. */
void assert_replay_same(const char *ptshare, const char *trace,
			const char *format, const char *ran, const char *out);

/* The parsed report, checked against docs/report.schema.json, or the
 * test fails. */
struct jr_value *report_read(const char *path);
/* final_checkpoints entry of pid, or NULL. */
const struct jr_value *report_final(const struct jr_value *doc, long pid);
/* processes entry (at the peak) of pid, or NULL. */
const struct jr_value *report_process(const struct jr_value *doc, long pid);
/* Every final checkpoint has model_kb == vmpte_kb (>= 0), and there are n
 * of them. */
void assert_finals_exact(const struct jr_value *doc, size_t n);

/* CK_BEGIN records of the timer for pid in the trace at path so far. */
size_t trace_timer_checkpoints(const char *path, int32_t pid);
/* Records of that type in the trace at path so far. */
size_t trace_records(const char *path, uint16_t type);

/* ptshared on its own, in a fresh private directory: its socket, and its
 * reports and trace (report.json, report.txt, trace) in that directory. */
struct daemon_run {
	char dir[64];
	struct cmd c;
};
/* Makes the directory and starts it there with extra options; waits for
 * its "ready". */
void daemon_up(struct daemon_run *d, const char *const extra[], bool ignore_sigint);
/* The same in two steps, for a test that needs the socket's path before
 * the daemon listens on it. */
void daemon_dir(struct daemon_run *d);
void daemon_start(struct daemon_run *d, const char *const extra[],
		  bool ignore_sigint);
const char *sock_of(const struct daemon_run *d);
/* Ends it with sig; its exit status.  Nothing but the report is left. */
int daemon_down(struct daemon_run *d, int sig);
/* Removes the directory with the reports and the trace. */
void daemon_free(struct daemon_run *d);

/* Polls cond(arg) every 10 ms: true once it holds, false when it still
 * does not after CMD_TIMEOUT_MS. */
bool eventually(bool (*cond)(const void *arg), const void *arg);

/* Whether pid exists (zombies included). */
bool pid_exists(pid_t pid);

#endif
