/* SPDX-License-Identifier: MIT */
/*
 * The tables of edge_subject (docs/promises.md): every function the shim
 * interposes, called with edge-case arguments and with bad pointers, next
 * to the system call it makes, each call in a child of its own.  What each
 * call gave back is printed, never an address: the output of a plain run
 * and of a traced one are compared byte for byte.
 */
#ifndef PTSHARE_TESTS_EDGE_TABLE_H
#define PTSHARE_TESTS_EDGE_TABLE_H

#include <stdbool.h>
#include <sys/types.h>

#define EDGE_LEAF_STATUS 77  /* `edge_subject leaf`: what an exec ran */

enum edge_flag {
	EDGE_NO_RAW = 1u << 0, /* no system call does what the function does */
	EDGE_BAD = 1u << 1,    /* run once with a PROT_NONE page, once unmapped */
};

struct edge_row {
	const char *name;
	/* The call through the function (raw false) or as the system call
	 * (raw true); says what it gave back with edge_said_*, or execs.
	 * bad: the pointer to pass where the row wants a bad one. */
	void (*call)(bool raw, const char *bad);
	unsigned flags;   /* enum edge_flag */
};

/* What an exec'd row runs: this program, as `leaf`, and its fd. */
extern const char *edge_self;
extern char *const edge_leaf_argv[];
extern char *const edge_leaf_envp[];
int edge_self_fd(void);
/* An executable file without #!, which says `exit 9`. */
extern const char *edge_script;

/* What the call gave back, for the row's column. */
void edge_said_ptr(void *r, const void *hint, const void *old);
void edge_said_int(long r);
void edge_said_err(int err);
void edge_said(const char *text);
/* posix_spawn's answer, and how the child it spawned (*pid) ended. */
void edge_said_spawn(int err, const pid_t *pid);
/* The system calls of the exec family. */
long edge_sys_execve(const char *path, char *const argv[], char *const envp[]);
long edge_sys_execveat(int fd, const char *path, char *const argv[],
		       char *const envp[], int flags);
/* A free, page-aligned range of n pages; n pages mapped read-write. */
char *edge_free_range(unsigned n);
char *edge_anon(unsigned n);

extern const struct edge_row edge_calls[];     /* edge-case arguments */
extern const struct edge_row edge_bad_ptrs[];  /* bad pointers */

/* Runs every row of table (ended by a row without a name) and prints it. */
void edge_run(const struct edge_row *table);

#endif
