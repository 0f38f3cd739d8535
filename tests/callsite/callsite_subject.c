/* SPDX-License-Identifier: MIT */
/*
 * Maps memory from known lines of known functions and says which on
 * stdout ("site FUNCTION LINE"), so that the test can check the call sites
 * `ptshare run` reports without hard-coding a line: a private anonymous
 * mapping (never shareable), a SysV segment (shmat), and a shared mapping
 * moved by mremap (it keeps the call site of its mmap).  Only a
 * child forked afterwards writes to the private mapping: its copy is
 * reported apart from the parent's (it has anonymous pages), with the call
 * site it inherited.
 * Built with -g -O0 and never sanitized: the shim is preloaded into it.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <unistd.h>

#define MIB (1u << 20)
#define SIZE (4 * MIB)
#define RW (PROT_READ | PROT_WRITE)
#define PRIVATE_ANON (MAP_PRIVATE | MAP_ANONYMOUS)
#define SHARED_ANON (MAP_SHARED | MAP_ANONYMOUS)

static void say(const char *function, int line)
{
	printf("site %s %d\n", function, line);
}

static void *check(void *p, const char *what)
{
	if (p == MAP_FAILED) {
		perror(what);
		exit(1);
	}
	return p;
}

/* Each call is on the line whose number it prints. */
static __attribute__((noinline)) char *make_private(void)
{
	int line = __LINE__; char *p = mmap(NULL, SIZE, RW, PRIVATE_ANON, -1, 0);
	say(__func__, line);
	return check(p, "mmap");
}

static __attribute__((noinline)) char *attach_segment(void)
{
	int id = shmget(IPC_PRIVATE, SIZE, IPC_CREAT | 0600);
	if (id < 0) {
		perror("shmget");
		exit(1);
	}
	int line = __LINE__; char *p = shmat(id, NULL, 0);
	say(__func__, line);
	shmctl(id, IPC_RMID, NULL);
	return memset(check(p == (void *)-1 ? MAP_FAILED : p, "shmat"), 1, SIZE);
}

static __attribute__((noinline)) char *make_shared(void)
{
	int line = __LINE__; char *p = mmap(NULL, SIZE, RW, SHARED_ANON, -1, 0);
	say(__func__, line);
	return check(p, "mmap");
}

/* Onto a range reserved here: the mapping that lands there is still the
 * one make_shared made, the reservation is gone. */
static __attribute__((noinline)) char *move_shared(char *p)
{
	char *to = check(mmap(NULL, SIZE, PROT_NONE, PRIVATE_ANON, -1, 0), "mmap");
	p = check(mremap(p, SIZE, SIZE, MREMAP_MAYMOVE | MREMAP_FIXED, to), "mremap");
	return memset(p, 1, SIZE);
}

int main(void)
{
	char *priv = make_private();
	char *seg = attach_segment();
	char *shared = move_shared(make_shared());
	fflush(stdout);
	pid_t child = fork();
	if (child < 0) {
		perror("fork");
		return 1;
	}
	if (!child) {
		memset(priv, 2, SIZE);
		_exit(0);
	}
	int status;
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		return 1;
	return !(priv[0] == 0 && seg[0] == 1 && shared[SIZE - 1] == 1);
}
