/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the snapshot end-to-end tests: running ptshare with its
 * output captured, starting snap_subject process trees and taking them
 * down again without leaving anything behind.
 */
#ifndef PTSHARE_TESTS_SNAP_UTIL_H
#define PTSHARE_TESTS_SNAP_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "json_read.h"

#ifndef PTSHARE_PATH
#error "PTSHARE_PATH must name the ptshare executable"
#endif
#ifndef SNAP_SUBJECT_PATH
#error "SNAP_SUBJECT_PATH must name the snap_subject executable"
#endif

/* A command's result: exit code (128 + signal when killed), output. */
struct run {
	int code;
	char *out, *err;
	size_t outlen, errlen;
};

/*
 * When ptshare, stopped at a system call by run_traced(), opens path
 * (an openat of exactly that path; the n-th such call, from 1), on its entry
 * (before the kernel opens it) or its exit (once the file is open):
 * hook(arg) runs while ptshare is stopped, then ptshare is let go untraced.
 */
struct trace_trigger {
	const char *path;
	int nth;
	bool at_exit;
	void (*hook)(void *arg);
	void *arg;
	bool fired; /* set by run_traced */
};

/*
 * Runs argv (argv[0] a path), stdin /dev/null, stdout and stderr captured.
 * uid >= 0: as that uid and gid, with no supplementary groups.  Returns 0,
 * or -errno when it could not be run.
 */
int run_cmd(struct run *r, const char *const argv[], int uid);
int run_traced(struct run *r, const char *const argv[],
	       struct trace_trigger *t);
void run_free(struct run *r);
/* true when stderr shows a sanitizer report (ASan, UBSan, LSan). */
bool run_sanitizer_report(const struct run *r);
/* Prints the command's stderr (and stdout when asked) for a failure. */
void run_dump(const struct run *r, const char *what, bool out);

/* A process group started by the test: its leader and what it printed. */
struct pgroup {
	pid_t pid;     /* leader; the group's id */
	int in_fd;     /* its stdin: closing it tells a snap_subject to end */
	long ready[8]; /* the numbers after "ready" */
	int nready;
};

/*
 * Makes this process the reaper of its orphans (PR_SET_CHILD_SUBREAPER),
 * so that every process a test starts is reaped by the test itself, and
 * installs SIGINT/SIGTERM/SIGHUP handlers that kill the groups started and
 * remove the registered temporary paths.  Call once, first.
 */
void snap_init(void);
/* Registers a path to remove (unlink or rmdir) at cleanup; in order. */
void snap_cleanup_path(const char *path);
/* Removes the registered paths now (last registered first). */
void snap_cleanup_paths(void);

/*
 * Starts snap_subject with args (NULL-terminated) in a new process group
 * and waits for its "ready" line.  Returns 0 or -1 (message printed).
 */
int subject_start(struct pgroup *g, const char *const args[]);
/*
 * Starts an arbitrary program (argv[0] looked up in PATH) in a new process
 * group, stdin a pipe, stdout and stderr /dev/null; it dies with the test.
 */
int program_start(struct pgroup *g, const char *const argv[]);
/*
 * Ends the group: closes its stdin, SIGKILLs every member and reaps them
 * all.  Returns 0, or -1 when members were still there after 30 s.
 */
int group_stop(struct pgroup *g);
/* Stops every group still running (after a failed test); 0 or -1. */
int groups_stop_all(void);
/* Pids of the live members of the group (up to cap); their number. */
size_t group_members(const struct pgroup *g, pid_t *pids, size_t cap);

/* Whether a process exists (zombies included). */
bool pid_exists(pid_t pid);
/* A pid no process has now: one of a child just reaped. */
pid_t unused_pid(void);
/* /proc/PID/status field as text ("" when absent). */
int proc_status_field(pid_t pid, const char *field, char *out, size_t len);
/* A kernel thread with children (kthreadd), or 0. */
pid_t find_kthreadd(void);

/* The report's process entry of pid, its not_modelled entry, its mapping
 * row starting at start. */
const struct jr_value *report_proc(const struct jr_value *doc, long pid);
const struct jr_value *report_skip(const struct jr_value *doc, long pid);
const struct jr_value *report_mapping(const struct jr_value *doc,
				      uint64_t start);
/* The linux model's tables of a process entry, in kB (VmPTE's unit). */
uint64_t report_linux_kb(const struct jr_value *proc);

/* Parses r's stdout (a file) as the JSON report, checked against
 * docs/report.schema.json, or NULL with the error printed. */
struct jr_value *parse_report_text(const char *text, size_t len);
struct jr_value *parse_report_file(const char *path);

/* A temporary directory under /tmp, registered for cleanup. */
int make_temp_dir(char *out, size_t len, const char *tag);

#endif
