/* SPDX-License-Identifier: MIT */
/*
 * Processes for the snapshot tests to read.  Built WITHOUT sanitizers: the
 * workload's page tables must be those of the program, not of a sanitizer
 * runtime's shadow memory and allocator.
 *
 *   snap_subject MODE [ARGS] [--timeout SECONDS]
 *
 * Every mode puts itself in a new process group (so the test can kill the
 * whole tree with one kill(-pgid)), sets things up, prints one line
 * "ready PID..." on stdout and then waits, doing nothing, until its stdin
 * reaches EOF or delivers a byte (the test closes its end, or dies), or the
 * timeout (default 600 s) passes; then it kills its children and exits.
 * Children die with their parent (PR_SET_PDEATHSIG), so nothing is left
 * behind if the test is killed.  A setup failure prints "error ..." and
 * exits 1.
 *
 * Modes:
 *   workload FILE   the sharing workload (snapshot_workload.c): A-E at fixed
 *                   addresses in the 512 GiB slot at SLOT_BASE, 3 workers.
 *                   ready PARENT SHMID WORKER1 WORKER2 WORKER3
 *   perm            a root parent and a child that became uid/gid 65534
 *                   (and dumpable again).  ready PARENT CHILD
 *   victim          a parent that ignores SIGCHLD (its children are reaped
 *                   by the kernel at once) and one child.  ready PARENT CHILD
 *   zombie          a parent and a child that has exited and is not reaped.
 *                   ready PARENT ZOMBIE
 *   churn           a parent with one steady child, that forks a child
 *                   every 5 ms; each maps and touches 1-4 MiB and exits
 *                   within 100 ms (SIGCHLD ignored: the kernel reaps them).
 *                   ready PARENT STEADY
 *   malloc          mallocs, touches and frees a lot, keeps part of it.
 *                   ready PID
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "snap_proto.h"

#define PAGE 4096UL
#define MAX_CHILDREN 8

static int timeout_s = 600;
static pid_t children[MAX_CHILDREN];
static int nchildren;

static _Noreturn void die(const char *what)
{
	printf("error %s: %s\n", what, strerror(errno));
	fflush(stdout);
	for (int i = 0; i < nchildren; i++)
		kill(children[i], SIGKILL);
	exit(1);
}

static void ready(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void ready(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
}

/* Blocks until stdin ends or speaks, or the timeout; kills the children. */
static _Noreturn void wait_for_end(void)
{
	struct pollfd p = { .fd = 0, .events = POLLIN };
	while (poll(&p, 1, timeout_s * 1000) < 0 && errno == EINTR)
		;
	for (int i = 0; i < nchildren; i++)
		kill(children[i], SIGKILL);
	for (int i = 0; i < nchildren; i++)
		waitpid(children[i], NULL, 0);
	_exit(0);
}

/* In a child: die with the parent (checked after setting, against the race
 * where the parent died first). */
static void die_with_parent(pid_t parent)
{
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
		_exit(1);
}

static pid_t spawn(void)
{
	pid_t parent = getpid();
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		nchildren = 0;
		die_with_parent(parent);
		return 0;
	}
	if (nchildren < MAX_CHILDREN)
		children[nchildren++] = pid;
	return pid;
}

static void write_pages(uint64_t addr, uint64_t len)
{
	for (uint64_t a = addr; a < addr + len; a += PAGE)
		*(volatile char *)a = 1;
}

static unsigned read_pages(uint64_t addr, uint64_t len)
{
	unsigned sum = 0;
	for (uint64_t a = addr; a < addr + len; a += PAGE)
		sum += *(volatile unsigned char *)a;
	return sum;
}

/* Nothing may live in the slot: every table in it is the workload's. */
static void check_slot_free(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	if (!f)
		die("open /proc/self/maps");
	while (fgets(line, sizeof(line), f)) {
		unsigned long long s, e;
		if (sscanf(line, "%llx-%llx", &s, &e) == 2 &&
		    s < SLOT_BASE + SLOT_SIZE && e > SLOT_BASE) {
			errno = EEXIST;
			die("the workload slot is not free");
		}
	}
	fclose(f);
}

static void map_fixed(uint64_t addr, uint64_t len, int prot, int flags, int fd,
		      const char *what)
{
	void *p = mmap((void *)addr, len, prot, flags | MAP_FIXED_NOREPLACE, fd, 0);
	if (p == MAP_FAILED)
		die(what);
	if ((uint64_t)p != addr) {
		errno = EEXIST;
		die(what);
	}
}

static _Noreturn void mode_workload(const char *path)
{
	check_slot_free();
	/* A: shared anonymous memory (shmem). */
	map_fixed(SLOT_BASE + A_OFF, A_LEN, PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, "mmap A");
	write_pages(SLOT_BASE + A_OFF, A_LEN);
	/* B: a SysV segment, removed at once (it lives while attached). */
	int shmid = shmget(IPC_PRIVATE, B_LEN, IPC_CREAT | 0600);
	if (shmid < 0)
		die("shmget B");
	void *b = shmat(shmid, (void *)(SLOT_BASE + B_OFF), 0);
	int saved = errno;
	shmctl(shmid, IPC_RMID, NULL);
	errno = saved;
	if (b == (void *)-1)
		die("shmat B");
	if ((uint64_t)b != SLOT_BASE + B_OFF) {
		errno = EEXIST;
		die("shmat B");
	}
	write_pages(SLOT_BASE + B_OFF, B_LEN);
	/* C: a memfd, shared. */
	int mfd = memfd_create(C_MEMFD_NAME, MFD_CLOEXEC);
	if (mfd < 0 || ftruncate(mfd, C_LEN))
		die("memfd C");
	map_fixed(SLOT_BASE + C_OFF, C_LEN, PROT_READ | PROT_WRITE, MAP_SHARED,
		  mfd, "mmap C");
	close(mfd);
	write_pages(SLOT_BASE + C_OFF, C_LEN);
	/* D: the test's file, private read-only, at an address that is not
	 * congruent to its offset modulo 2 MiB: never mapped by a PMD. */
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		die("open D");
	map_fixed(SLOT_BASE + D_OFF, D_LEN, PROT_READ, MAP_PRIVATE, fd, "mmap D");
	close(fd);
	unsigned sum = read_pages(SLOT_BASE + D_OFF, D_LEN);
	/* E: private anonymous, written before fork: fork copies its tables. */
	map_fixed(SLOT_BASE + E_OFF, E_LEN, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, "mmap E");
	write_pages(SLOT_BASE + E_OFF, E_LEN);

	int rp[2];
	if (pipe2(rp, O_CLOEXEC))
		die("pipe");
	pid_t w[WORKERS];
	for (int i = 0; i < WORKERS; i++) {
		if ((w[i] = spawn()) == 0) {
			close(rp[0]);
			sum += read_pages(SLOT_BASE + A_OFF, A_LEN);
			sum += read_pages(SLOT_BASE + B_OFF, B_LEN);
			sum += read_pages(SLOT_BASE + C_OFF, C_LEN);
			sum += read_pages(SLOT_BASE + D_OFF, D_LEN);
			char c = (char)('0' + (sum & 1)); /* keep the reads */
			if (write(rp[1], &c, 1) != 1)
				_exit(1);
			close(rp[1]);
			for (;;)
				pause();
		}
	}
	close(rp[1]);
	for (int i = 0; i < WORKERS; i++) {
		char c;
		if (read(rp[0], &c, 1) != 1) {
			errno = EPIPE;
			die("a worker died before it was ready");
		}
	}
	close(rp[0]);
	ready("ready %d %d %d %d %d\n", (int)getpid(), shmid, (int)w[0],
	      (int)w[1], (int)w[2]);
	wait_for_end();
}

static _Noreturn void mode_perm(void)
{
	int rp[2];
	if (pipe2(rp, O_CLOEXEC))
		die("pipe");
	pid_t child = spawn();
	if (child == 0) {
		pid_t parent = getppid();
		gid_t nobody = 65534;
		if (setgroups(1, &nobody) || setgid(65534) || setuid(65534))
			_exit(2);
		/* Changing credentials made the process non-dumpable, which
		 * would hide it from its own uid too, and cleared the death
		 * signal. */
		if (prctl(PR_SET_DUMPABLE, 1))
			_exit(3);
		die_with_parent(parent);
		if (write(rp[1], "r", 1) != 1)
			_exit(4);
		for (;;)
			pause();
	}
	close(rp[1]);
	char c;
	if (read(rp[0], &c, 1) != 1) {
		errno = EPIPE;
		die("the unprivileged child died");
	}
	ready("ready %d %d\n", (int)getpid(), (int)child);
	wait_for_end();
}

static _Noreturn void mode_victim(void)
{
	signal(SIGCHLD, SIG_IGN); /* children are reaped as they exit */
	pid_t child = spawn();
	if (child == 0)
		for (;;)
			pause();
	ready("ready %d %d\n", (int)getpid(), (int)child);
	wait_for_end();
}

static _Noreturn void mode_zombie(void)
{
	pid_t child = spawn();
	if (child == 0)
		_exit(0);
	siginfo_t si;
	/* Wait until it is a zombie, without reaping it. */
	if (waitid(P_PID, (id_t)child, &si, WEXITED | WNOWAIT))
		die("waitid");
	ready("ready %d %d\n", (int)getpid(), (int)child);
	wait_for_end();
}

static _Noreturn void mode_churn(void)
{
	pid_t steady = spawn();
	if (steady == 0)
		for (;;)
			pause();
	signal(SIGCHLD, SIG_IGN);
	pid_t parent = getpid();
	ready("ready %d %d\n", (int)parent, (int)steady);
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (unsigned i = 0;; i++) {
		struct pollfd p = { .fd = 0, .events = POLLIN };
		if (poll(&p, 1, 5) != 0)
			_exit(0);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec > timeout_s)
			_exit(0);
		fflush(stdout);
		pid_t pid = fork();
		if (pid != 0)
			continue; /* a failed fork: try again later */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
			_exit(1);
		/* Map and touch a little, live 0-100 ms, exit. */
		size_t len = (size_t)(1 + i % 4) << 20;
		char *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m != MAP_FAILED)
			write_pages((uint64_t)m, len);
		usleep(1000 * (i * 37 % 101));
		_exit(0);
	}
}

static _Noreturn void mode_malloc(void)
{
	enum { N = 4096 };
	static void *keep[N];
	unsigned seed = 12345;
	for (int round = 0; round < 16; round++)
		for (int i = 0; i < N; i++) {
			seed = seed * 1103515245 + 12345;
			size_t len = 16 + (seed >> 8) % (i % 64 == 0 ? 1 << 20 : 4096);
			free(keep[i]);
			keep[i] = malloc(len);
			if (!keep[i])
				die("malloc");
			memset(keep[i], round, len);
		}
	for (int i = 0; i < N; i += 2) {
		free(keep[i]);
		keep[i] = NULL;
	}
	ready("ready %d\n", (int)getpid());
	wait_for_end();
}

int main(int argc, char **argv)
{
	int nargs = argc;
	if (argc >= 3 && !strcmp(argv[argc - 2], "--timeout")) {
		timeout_s = atoi(argv[argc - 1]);
		nargs -= 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (setpgid(0, 0))
		die("setpgid");
	const char *mode = nargs > 1 ? argv[1] : "";
	if (!strcmp(mode, "workload") && nargs == 3)
		mode_workload(argv[2]);
	if (nargs == 2) {
		if (!strcmp(mode, "perm"))
			mode_perm();
		if (!strcmp(mode, "victim"))
			mode_victim();
		if (!strcmp(mode, "zombie"))
			mode_zombie();
		if (!strcmp(mode, "churn"))
			mode_churn();
		if (!strcmp(mode, "malloc"))
			mode_malloc();
	}
	fprintf(stderr, "usage: snap_subject workload FILE | perm | victim | "
		"zombie | churn | malloc  [--timeout SECONDS]\n");
	return 2;
}
