/* SPDX-License-Identifier: MIT */
/*
 * The well-behaved program traced while hostile clients attack the same
 * daemon (test_hostile): a parent maps shared memory and forks WORKERS
 * workers; each maps, touches and unmaps memory over and over until the
 * test says stop (a line on stdin), then says how many calls the shim saw
 * ("@calls PID N": the report must show N + 2 records for PID, its HELLO
 * and EXIT besides).  Built without sanitizers: the shim is preloaded.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../support/subject.h"

#define PAGE 4096UL
#define SHARED_BYTES (8UL << 20)
#define ROUND_BYTES (2UL << 20)
#define ROUNDS_ADDR (16UL << 30) /* below anything of a PIE program's */

/* Until the parent closes stop: an mmap and a munmap a round, of a
 * region alone in its GiB, so that the kernel frees its tables with it (a
 * region beside others leaves a table the model cannot see: docs/run.md,
 * Limits). */
static _Noreturn void work(int stop, int index)
{
	unsigned long calls = 0;
	void *at = (void *)(ROUNDS_ADDR + ((unsigned long)index << 30));
	for (;;) {
		char *p = mmap(at, ROUND_BYTES, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
			       -1, 0);
		if (p != at)
			die("mmap");
		touch(p, ROUND_BYTES);
		munmap(p, ROUND_BYTES);
		calls += 2;
		char c;
		if (read(stop, &c, 1) == 0)
			break;
		usleep(10000);
	}
	printf("@calls %d %lu\n", (int)getpid(), calls);
	fflush(stdout);
	_exit(0);
}

int main(int argc, char **argv)
{
	int workers = argc > 1 ? atoi(argv[1]) : 0;
	int stop[2];
	if (workers < 1 || workers > 64) {
		fputs("usage: hostile_subject WORKERS\n", stderr);
		return 2;
	}
	char *shared = mmap(NULL, SHARED_BYTES, PROT_READ | PROT_WRITE,
			    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED || pipe2(stop, O_NONBLOCK))
		die("setup");
	touch(shared, SHARED_BYTES);
	unsigned long calls = 1;
	for (int i = 0; i < workers; i++) {
		pid_t pid = fork();
		if (pid < 0)
			die("fork");
		if (!pid) {
			close(stop[1]);
			work(stop[0], i);
		}
		calls++;
	}
	close(stop[0]);
	printf("@ready %d\n", (int)getpid());
	fflush(stdout);
	char line[16];
	if (!fgets(line, sizeof(line), stdin))
		return 101;
	close(stop[1]);
	int bad = 0;
	for (int i = 0; i < workers; i++) {
		int status;
		if (wait(&status) < 0)
			die("wait");
		bad |= !WIFEXITED(status) || WEXITSTATUS(status);
	}
	printf("@calls %d %lu\n", (int)getpid(), calls);
	return bad;
}
