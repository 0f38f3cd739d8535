/* SPDX-License-Identifier: MIT */
/*
 * The hugetlb workload kernel_hugetlb measures (built without sanitizers:
 * between its two readings it must allocate no table but the scripted
 * ones).  It maps 2 GiB of a hugetlb memfd (2 MiB pages, MAP_SHARED,
 * MAP_NORESERVE: no pool reservation, a page taken at its first touch) at
 * KH_ADDR, alone in its 512 GiB slot, forks the children asked, and says
 * "ready PID PID..." on stdout.  Commands on stdin, one a line, each
 * answered by a line: "w" (warm up: the two huge pages the touches use
 * put in the file, a round trip on every pipe) "warm"; "t" (every process
 * touches one page in each GiB, the parent first) "touched"; "u" (every
 * process unmaps the 2 GiB, which frees the slot's tables, and maps them
 * again) "unmapped"; on "q" or end of input the children are killed and
 * it exits.  The children die
 * with it (PR_SET_PDEATHSIG), so no huge page outlives the test.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kh_proto.h"

static void touch(volatile char *base)
{
	base[0] = 1;
	base[KH_GIB] = 1;
}

/* munmap() frees every table of the slot; the same mapping again. */
static int remap(int fd, char *base)
{
	return munmap(base, 2 * KH_GIB) ||
	       mmap(base, 2 * KH_GIB, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_NORESERVE | MAP_FIXED_NOREPLACE, fd, 0) != base;
}

/* Each child does c (its ack read back); 0, or -1. */
static int relay(const int *cmd, int ack, int kids, char c)
{
	for (int i = 0; i < kids; i++)
		if (write(cmd[i], &c, 1) != 1)
			return -1;
	for (int i = 0; i < kids; i++)
		if (read(ack, &c, 1) != 1)
			return -1;
	return 0;
}

int main(int argc, char **argv)
{
	int kids = argc > 1 ? atoi(argv[1]) : 0;
	if (kids < 1 || kids > KH_MAX_KIDS)
		return 2;
	int fd = memfd_create("kh", MFD_HUGETLB);
	if (fd < 0 || ftruncate(fd, 2 * KH_GIB)) {
		perror("kh_subject: hugetlb memfd");
		return 1;
	}
	char *base = mmap((void *)KH_ADDR, 2 * KH_GIB, PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_NORESERVE | MAP_FIXED_NOREPLACE, fd, 0);
	if (base != (char *)KH_ADDR) {
		perror("kh_subject: mmap");
		return 1;
	}
	int cmd[KH_MAX_KIDS], ack[2];
	if (pipe(ack))
		return 1;
	pid_t pid[KH_MAX_KIDS];
	for (int i = 0; i < kids; i++) {
		int p[2]; /* a command pipe each: one child, one command */
		if (pipe(p))
			return 1;
		cmd[i] = p[1];
		pid[i] = fork();
		if (pid[i] < 0)
			return 1;
		if (!pid[i]) {
			char c;
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() == 1)
				_exit(1);
			while (read(p[0], &c, 1) == 1) {
				if (c == 't')
					touch(base);
				else if (c == 'u' && remap(fd, base))
					_exit(1);
				if (write(ack[1], &c, 1) != 1)
					_exit(1);
			}
			_exit(1);
		}
		close(p[0]);
	}
	printf("ready %d", (int)getpid());
	for (int i = 0; i < kids; i++)
		printf(" %d", (int)pid[i]);
	printf("\n");
	fflush(stdout);
	char line[16];
	int rc = 1;
	while (fgets(line, sizeof(line), stdin)) {
		if (line[0] == 'w') { /* warm up: pipes' pages, the file's */
			if (fallocate(fd, 0, 0, KH_HUGE) ||
			    fallocate(fd, 0, KH_GIB, KH_HUGE) ||
			    relay(cmd, ack[0], kids, 'w'))
				goto out;
			printf("warm\n");
		} else if (line[0] == 't') {
			touch(base);
			if (relay(cmd, ack[0], kids, 't'))
				goto out;
			printf("touched\n");
		} else if (line[0] == 'u') {
			if (remap(fd, base) || relay(cmd, ack[0], kids, 'u'))
				goto out;
			printf("unmapped\n");
		} else if (line[0] == 'q') {
			rc = 0;
			break;
		}
		fflush(stdout);
	}
out:
	for (int i = 0; i < kids; i++)
		kill(pid[i], SIGKILL);
	for (int i = 0; i < kids; i++)
		waitpid(pid[i], NULL, 0);
	return rc;
}
