/* SPDX-License-Identifier: MIT */
/*
 * What the programs the end-to-end tests run (and trace) have in common:
 * dying with a word on stderr and exit status 100, which no scenario
 * returns; printing a line at once, since their output is compared byte for
 * byte and a fork must not copy buffered text; anonymous memory mapped and
 * touched page by page; a child waited for.  Header-only: the subjects are built without the
 * sanitizers and without the test libraries.  Include after _GNU_SOURCE.
 */
#ifndef PTSHARE_TESTS_SUBJECT_H
#define PTSHARE_TESTS_SUBJECT_H

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>

#define SUBJECT_PAGE 4096UL

static inline _Noreturn void die(const char *what)
{
	fprintf(stderr, "%s: %s: %s\n", program_invocation_short_name, what,
		strerror(errno));
	exit(100);
}

static inline void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void say(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
}

static inline void touch(volatile char *p, size_t len)
{
	for (size_t off = 0; off < len; off += SUBJECT_PAGE)
		p[off] = (char)(off / SUBJECT_PAGE);
}

static inline void *map_anon(size_t len, int flags)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, flags | MAP_ANONYMOUS,
		       -1, 0);
	if (p == MAP_FAILED)
		die("mmap");
	return p;
}

/* The status of child pid, however often a signal interrupts the wait. */
static inline int wait_child(pid_t pid)
{
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			die("waitpid");
	return status;
}

#endif
