/* SPDX-License-Identifier: MIT */
/*
 * The programs the `ptshare run` tests trace: one scenario per argv[1].
 * Built without sanitizers (the shim is preloaded into it, and its page
 * tables must be its own).  Everything it prints is deterministic except
 * the lines starting with '@', which carry pids; output is flushed before
 * every fork, so that no line is printed twice.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../support/subject.h"

#include "run_subject.h"

#define PAGE 4096UL
#define MIB (1UL << 20)

extern char **environ;

/* A line on stdin: the test's go-ahead. */
static void wait_for_test(void)
{
	char line[16];
	if (!fgets(line, sizeof(line), stdin))
		exit(101);
}

/*
 * A parent maps FORKTREE_BYTES of shared anonymous memory at FORKTREE_ADDR
 * (run_subject.h says why there) and forks FORKTREE_WORKERS workers, which
 * inherit it at the same address; each touches every page.  Once all have,
 * the parent prints their pids and waits for the test; then they all exit.
 */
static int forktree(void)
{
	char *pool = mmap((void *)FORKTREE_ADDR, FORKTREE_BYTES,
			  PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	int touched[2], release[2];
	pid_t pids[FORKTREE_WORKERS];
	if (pool != (char *)FORKTREE_ADDR)
		die("mmap at FORKTREE_ADDR");
	if (pipe(touched) || pipe(release))
		die("pipe");
	for (int i = 0; i < FORKTREE_WORKERS; i++) {
		if ((pids[i] = fork()) < 0)
			die("fork");
		if (pids[i])
			continue;
		char c;
		close(release[1]);
		touch(pool, FORKTREE_BYTES);
		if (write(touched[1], "t", 1) != 1)
			_exit(1);
		/* Until the parent closes release: end of file. */
		_exit(read(release[0], &c, 1) == 0 ? 0 : 1);
	}
	close(release[0]);
	for (int i = 0; i < FORKTREE_WORKERS; i++) {
		char c;
		if (read(touched[0], &c, 1) != 1)
			die("read");
	}
	say("@ready %d", (int)getpid());
	for (int i = 0; i < FORKTREE_WORKERS; i++)
		say(" %d", (int)pids[i]);
	say("\n");
	wait_for_test();
	close(release[1]);
	int bad = 0;
	for (int i = 0; i < FORKTREE_WORKERS; i++) {
		int st = wait_child(pids[i]);
		bad |= !WIFEXITED(st) || WEXITSTATUS(st);
	}
	say("forktree %s\n", bad ? "failed" : "done");
	return bad;
}

/* A SysV segment attached by a parent and, inherited, by its child; both
 * touch it.  IPC_RMID at once: the segment goes when both have gone. */
static int sysv(void)
{
	int id = shmget(IPC_PRIVATE, SYSV_BYTES, IPC_CREAT | 0600);
	if (id < 0)
		die("shmget");
	char *seg = shmat(id, NULL, 0);
	shmctl(id, IPC_RMID, NULL);
	if (seg == (char *)-1)
		die("shmat");
	touch(seg, SYSV_BYTES);
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		touch(seg, SYSV_BYTES);
		_exit(shmdt(seg) ? 1 : 0);
	}
	int st = wait_child(pid);
	say("sysv %s\n", WIFEXITED(st) && !WEXITSTATUS(st) ? "done" : "failed");
	return 0;
}

/* Moves, grows, shrinks and reprotects mappings, anonymous and shared. */
static int remap(void)
{
	char *a = map_anon(16 * MIB, MAP_PRIVATE);
	touch(a, 16 * MIB);
	char *b = mremap(a, 16 * MIB, 32 * MIB, MREMAP_MAYMOVE);
	if (b == MAP_FAILED)
		die("mremap grow");
	touch(b, 32 * MIB);
	char *hole = map_anon(64 * MIB, MAP_PRIVATE);
	munmap(hole, 64 * MIB);
	char *c = mremap(b, 32 * MIB, 32 * MIB, MREMAP_MAYMOVE | MREMAP_FIXED,
			 hole + 16 * MIB);
	if (c == MAP_FAILED)
		die("mremap fixed");
	if (mremap(c, 32 * MIB, 8 * MIB, 0) == MAP_FAILED)
		die("mremap shrink");
	if (mprotect(c + 2 * MIB, 2 * MIB, PROT_READ) ||
	    mprotect(c, 8 * MIB, PROT_READ | PROT_WRITE) ||
	    mprotect(c + 1 * MIB, 5 * MIB, PROT_NONE))
		die("mprotect");
	/* Shared memory moves; it cannot grow past its object's size. */
	char *s = map_anon(8 * MIB, MAP_SHARED);
	touch(s, 8 * MIB);
	char *t = mremap(s, 8 * MIB, 8 * MIB, MREMAP_MAYMOVE | MREMAP_FIXED,
			 hole + 48 * MIB);
	if (t == MAP_FAILED)
		die("mremap shared");
	touch(t, 8 * MIB);
	if (mprotect(t + 4 * MIB, 4 * MIB, PROT_READ))
		die("mprotect shared");
	munmap(c + 6 * MIB, 2 * MIB);
	say("remap done\n");
	return 0;
}

/* Closes every fd, the shim's included, and takes the low numbers over:
 * the shim must neither write into them nor break the program. */
static int closefds(void)
{
	struct rlimit rl;
	say("closefds start\n");
	int out = dup(1);
	if (out < 0 || getrlimit(RLIMIT_NOFILE, &rl))
		die("dup");
	for (int fd = 0; fd < (int)rl.rlim_cur && fd < 65536; fd++)
		if (fd != out)
			close(fd);
	int null = open("/dev/null", O_RDWR);
	for (int fd = 0; fd < 16; fd++)
		if (fd != out && fd != null)
			dup2(null, fd);
	char *p = map_anon(4 * MIB, MAP_PRIVATE);
	touch(p, 4 * MIB);
	munmap(p, 4 * MIB);
	/* It runs on untraced: long enough for the daemon to see the close
	 * while it lives (a loaded machine took more than the few ms the
	 * mapping takes), which is what tells it from an exit. */
	struct timespec on = { .tv_nsec = 500 * 1000 * 1000 };
	nanosleep(&on, NULL);
	dup2(out, 1);
	say("closefds done\n");
	return 0;
}

/*
 * Every thread maps, touches and reprotects memory of its own, and maps and
 * unmaps memory it never touches.  Touched memory stays until exit: tables
 * the kernel keeps after an unmap of touched pages (for the other mappings
 * in their span) come from faults only userfaultfd would show the daemon.
 */
static void *thread_maps(void *arg)
{
	size_t len = (size_t)(uintptr_t)arg * MIB;
	for (int round = 0; round < 20; round++) {
		char *p = map_anon(len, MAP_PRIVATE);
		char *q = map_anon(2 * len, MAP_PRIVATE);
		touch(p, len);
		if (mprotect(p, len / 2, PROT_READ) || munmap(q, 2 * len))
			die("thread");
	}
	return NULL;
}

/* Threads mapping at once, on stacks mapped (through the shim) and touched
 * here.  glibc would madvise away the unused part of a stack it allocated
 * when the thread exits, behind the shim: a page table left with no page
 * present is invisible to /proc, and the model would be one table short. */
static int threads(void)
{
	enum { STACK = 256 << 10 };
	pthread_t t[THREADS];
	pthread_attr_t attr;
	if (pthread_attr_init(&attr))
		die("pthread_attr");
	for (uintptr_t i = 0; i < THREADS; i++) {
		char *stack = map_anon(STACK, MAP_PRIVATE);
		touch(stack, STACK);
		if (pthread_attr_setstack(&attr, stack, STACK) ||
		    pthread_create(&t[i], &attr, thread_maps, (void *)(i % 2 + 1)))
			die("pthread_create");
	}
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	say("threads done\n");
	return 0;
}

/* A thread whose malloc arena grows past 2 MiB and shrinks back: glibc
 * trims it with its own madvise(MADV_DONTNEED), which no interposer sees,
 * and the page tables it emptied stay (docs/procfs.md). */
static void *arena_thread(void *arg)
{
	enum { BLOCKS = 40, BLOCK = 100000 };
	char *p[BLOCKS];
	for (int i = 0; i < BLOCKS; i++) {
		if (!(p[i] = malloc(BLOCK)))
			die("malloc");
		memset(p[i], 1, BLOCK);
	}
	for (int i = BLOCKS; i-- > 0;)
		free(p[i]);
	return arg;
}

static int arena(void)
{
	/* A fork waits for this image's first reading, and the child's exit
	 * makes its own: the thread comes and goes before any other, which
	 * would see its pages. */
	say("@arena %d\n", (int)getpid());
	pid_t child = fork();
	if (child < 0)
		die("fork");
	if (!child)
		_exit(0);
	wait_child(child);
	pthread_t t;
	if (pthread_create(&t, NULL, arena_thread, NULL) || pthread_join(t, NULL))
		die("pthread_create");
	say("arena done\n");
	return 0;
}

/* A new image that maps and touches memory of its own. */
static int leaf(void)
{
	char *p = map_anon(4 * MIB, MAP_PRIVATE);
	touch(p, 4 * MIB);
	say("leaf\n");
	return 0;
}

/* The same process in a new image: its old image's last records and the
 * new image's HELLO come on two connections.  Many records just before the
 * exec: the daemon may still be reading them when the new image connects. */
static int exec_self(const char *self)
{
	char *const argv[] = { (char *)self, "leaf", NULL };
	for (int i = 0; i < EXEC_MAPS; i++)
		munmap(map_anon(64 << 10, MAP_PRIVATE), 64 << 10);
	char *p = map_anon(4 * MIB, MAP_PRIVATE);
	touch(p, 4 * MIB);
	say("exec start\n");
	execv(self, argv);
	die("execv");
}

/* vfork + exec, and posix_spawn, of leaf. */
static int spawn(const char *self)
{
	char *const argv[] = { (char *)self, "leaf", NULL };
	say("spawn start\n");
	pid_t v = vfork();
	if (v < 0)
		die("vfork");
	if (!v) {
		execv(self, argv);
		_exit(127);
	}
	int st = wait_child(v);
	pid_t s;
	errno = posix_spawn(&s, self, NULL, NULL, argv, environ);
	if (errno)
		die("posix_spawn");
	int st2 = wait_child(s);
	bool ok = WIFEXITED(st) && !WEXITSTATUS(st) && WIFEXITED(st2) &&
		  !WEXITSTATUS(st2);
	say("spawn %s\n", ok ? "done" : "failed");
	return 0;
}

/* Plenty of output, every byte value included, for the pass-through. */
static int chatter(void)
{
	unsigned char line[257];
	for (int i = 0; i < 256; i++)
		line[i] = (unsigned char)i;
	line[256] = '\n';
	for (int n = 0; n < 4096; n++)
		if (fwrite(line, 1, sizeof(line), stdout) != sizeof(line))
			die("fwrite");
	fflush(stdout);
	return 0;
}

static volatile sig_atomic_t caught;

static void on_signal(int sig)
{
	caught = sig;
}

/* Waits for INT, TERM, HUP or QUIT and exits with its number. */
static int signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	say("@waiting %d\n", (int)getpid());
	while (!caught)
		pause();
	say("signal %d\n", (int)caught);
	return caught;
}

/* A server that daemonises: its grandchild, in a session of its own,
 * outlives the program's first process and ends at SIGTERM (or when its
 * stdin ends: a test that failed leaves nothing running). */
static int daemonise(void)
{
	int ready[2];
	char c;
	if (pipe(ready))
		die("pipe");
	pid_t mid = fork();
	if (mid < 0)
		die("fork");
	if (!mid) {
		setsid();
		pid_t server = fork();
		if (server < 0)
			_exit(1);
		if (server)
			_exit(0);
		struct sigaction sa = { .sa_handler = on_signal }; /* no SA_RESTART */
		sigemptyset(&sa.sa_mask);
		sigaction(SIGTERM, &sa, NULL);
		char *p = map_anon(4 * MIB, MAP_PRIVATE);
		touch(p, 4 * MIB);
		say("@server %d\n", (int)getpid());
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		while (!caught && read(0, &c, 1) > 0)
			;
		say("server %s\n", caught ? "done" : "orphaned");
		_exit(0);
	}
	wait_child(mid);
	if (read(ready[0], &c, 1) != 1)
		die("read");
	say("@parent %d\n", (int)getpid());
	return 0;
}

int main(int argc, char **argv)
{
	const char *s = argc > 1 ? argv[1] : "";
	if (!strcmp(s, "forktree"))
		return forktree();
	if (!strcmp(s, "sysv"))
		return sysv();
	if (!strcmp(s, "remap"))
		return remap();
	if (!strcmp(s, "closefds"))
		return closefds();
	if (!strcmp(s, "threads"))
		return threads();
	if (!strcmp(s, "arena"))
		return arena();
	if (!strcmp(s, "spawn"))
		return spawn(argv[0]);
	if (!strcmp(s, "exec"))
		return exec_self(argv[0]);
	if (!strcmp(s, "leaf"))
		return leaf();
	if (!strcmp(s, "chatter"))
		return chatter();
	if (!strcmp(s, "signals"))
		return signals();
	if (!strcmp(s, "daemonise"))
		return daemonise();
	if (!strcmp(s, "exit") && argc > 2) {
		say("exit %s\n", argv[2]);
		return atoi(argv[2]);
	}
	if (!strcmp(s, "kill") && argc > 2) {
		say("kill %s\n", argv[2]);
		raise(atoi(argv[2]));
		return 0;
	}
	fprintf(stderr, "usage: run_subject forktree|sysv|remap|closefds|threads|"
		"arena|spawn|exec|leaf|chatter|signals|daemonise|exit N|"
		"kill SIG\n");
	return 2;
}
