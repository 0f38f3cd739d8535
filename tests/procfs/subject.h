/* SPDX-License-Identifier: MIT */
/*
 * A child process for the live tests: forked from the test, it runs the
 * functions the test sends it, one at a time, so the test can read its /proc
 * files between steps while it waits quietly in read(2).
 */
#ifndef PTSHARE_TESTS_SUBJECT_H
#define PTSHARE_TESTS_SUBJECT_H

#include <sys/types.h>

struct subject {
	pid_t pid;
	int cmd_fd;   /* test -> child */
	int reply_fd; /* child -> test */
};

/* Returns 0, or -errno when the child cannot be started. */
int subject_start(struct subject *s);
/*
 * Runs fn in the child on a copy of the len bytes at arg (at most
 * SUBJECT_ARG_MAX; the child's memory is its own since the fork) and returns
 * what fn returned.  A function that fails returns -errno; one that does not
 * return (exec, _exit) gives -EPIPE.
 */
#define SUBJECT_ARG_MAX 512
int subject_run(struct subject *s, int (*fn)(void *arg), const void *arg,
		size_t len);
/* Kills the child and reaps it; returns its wait status. */
int subject_stop(struct subject *s);

/* Functions for subject_run. */
struct subject_range {
	unsigned long addr;
	unsigned long len;
};
int subject_populate_write(void *range); /* MADV_POPULATE_WRITE */
int subject_populate_read(void *range);  /* MADV_POPULATE_READ */
int subject_munmap(void *range);

#endif
