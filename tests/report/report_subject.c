/* SPDX-License-Identifier: MIT */
/*
 * A long-running workload for the `ptshare report` test: a parent and
 * WORKERS children over shared memory, idle until told, so that reports
 * asked for while it runs see it at rest.  Built without sanitizers (the
 * shim is preloaded into it, and its page tables must be its own).
 *
 * It prints "@pids PARENT CHILD..." once every process has touched the
 * shared memory, then reads lines on stdin: "grow" maps and touches
 * GROW_BYTES more in the parent ("grown" once done); the end of stdin
 * ends the children (the end of a pipe), then the parent.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../support/subject.h"

#define WORKERS 3
#define PAGE 4096UL
#define SHARED_BYTES (32UL << 20)
#define GROW_BYTES (64UL << 20)

static void *touched(size_t len, int flags)
{
	char *p = map_anon(len, flags);
	touch(p, len);
	return p;
}

int main(void)
{
	volatile char *shared = touched(SHARED_BYTES, MAP_SHARED);
	int ready[2], hold[2];
	pid_t kids[WORKERS];
	if (pipe(ready) || pipe(hold))
		die("pipe");
	fflush(stdout);
	for (int i = 0; i < WORKERS; i++) {
		if ((kids[i] = fork()) < 0)
			die("fork");
		if (kids[i])
			continue;
		close(ready[0]);
		close(hold[1]);
		for (size_t off = 0; off < SHARED_BYTES; off += PAGE)
			(void)shared[off];
		close(ready[1]);
		char c;
		while (read(hold[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(ready[1]);
	close(hold[0]);
	char c;
	ssize_t n;
	while ((n = read(ready[0], &c, 1)) != 0) /* every child touched it */
		if (n < 0 && errno != EINTR)
			die("read");
	printf("@pids %d", (int)getpid());
	for (int i = 0; i < WORKERS; i++)
		printf(" %d", (int)kids[i]);
	printf("\n");
	fflush(stdout);
	char line[64];
	while (fgets(line, sizeof(line), stdin)) {
		if (strcmp(line, "grow\n"))
			continue;
		touched(GROW_BYTES, MAP_PRIVATE);
		printf("grown\n");
		fflush(stdout);
	}
	close(hold[1]);
	int status, bad = 0;
	for (int i = 0; i < WORKERS; i++)
		if (waitpid(kids[i], &status, 0) < 0 || status)
			bad = 1;
	return bad;
}
