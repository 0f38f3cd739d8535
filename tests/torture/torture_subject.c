/* SPDX-License-Identifier: MIT */
/*
 * The torture suite's programs (docs/promises.md): one scenario per argv[1],
 * each run plainly and under ptshare, and their output and exit status
 * compared byte for byte.  So everything printed is deterministic: checksums
 * of data, counts, children's exit statuses; never pids, addresses or
 * anything that depends on timing.  Output is flushed before every fork.
 * Built without sanitizers: the shim is preloaded into it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../support/subject.h"
#include "lib/clock.h"

#include "torture_subject.h"
#include "torture_scene.h"

const char *self;

/* FNV-1a over len bytes, continuing from h. */
uint64_t fnv(uint64_t h, const void *p, size_t len)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < len; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

/* The byte at i of the pattern of seed: every 64th byte set. */
static unsigned char pattern(uint64_t seed, size_t i)
{
	return i % 64 ? 0 : (unsigned char)(seed * 131 + i / 64);
}

/* Memory filled with the pattern of seed, and the checksum of what reads
 * back. */
uint64_t fill_sum(unsigned char *p, size_t len, uint64_t seed)
{
	for (size_t i = 0; i < len; i += 64)
		p[i] = pattern(seed, i);
	return fnv(seed, p, len);
}

/* What fill_sum gives, without memory: for a parent to check a child. */
static uint64_t pattern_sum(size_t len, uint64_t seed)
{
	uint64_t h = seed;
	for (size_t i = 0; i < len; i++)
		h = fnv(h, &(unsigned char){ pattern(seed, i) }, 1);
	return h;
}

/* A mapping of len filled and summed, then unmapped. */
uint64_t scratch_sum(size_t len, uint64_t seed)
{
	unsigned char *p = map_anon(len, MAP_PRIVATE);
	uint64_t h = fill_sum(p, len, seed);
	munmap(p, len);
	return h;
}

/* A child that fills and sums a MiB of its own, and exits with a status
 * made of the sum: its parent tells it went right. */
pid_t fork_summing_child(uint64_t seed)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid)
		_exit(scratch_sum(MIB, seed) % 100 + 1);
	return pid;
}

/* "exit N" or "signal N", for the output. */
const char *status_text(int status)
{
	static char buf[32];
	if (WIFEXITED(status))
		snprintf(buf, sizeof(buf), "exit %d", WEXITSTATUS(status));
	else
		snprintf(buf, sizeof(buf), "signal %d", WTERMSIG(status));
	return buf;
}

/* ---- 64 threads mapping and unmapping at once ---- */

static pthread_barrier_t start_line;
static uint64_t thread_sums[THREADS];

static void *thread_maps(void *arg)
{
	unsigned id = (unsigned)(uintptr_t)arg;
	uint64_t h = FNV_START;
	pthread_barrier_wait(&start_line);
	for (unsigned r = 0; r < THREAD_ROUNDS; r++) {
		size_t len = PAGE * (1 + (id + r) % 16);
		int flags = (id + r) % 5 ? MAP_PRIVATE : MAP_SHARED;
		unsigned char *p = map_anon(len, flags);
		h = fnv(h, &(uint64_t){ fill_sum(p, len, id * 1000 + r) }, 8);
		if (mprotect(p, PAGE, PROT_READ) ||
		    madvise(p + len - PAGE, PAGE, MADV_DONTNEED))
			die("mprotect");
		if (len > PAGE && munmap(p + PAGE, len - PAGE))
			die("munmap tail");
		h = fnv(h, p, 64);
		if (munmap(p, PAGE))
			die("munmap");
	}
	thread_sums[id] = h;
	return NULL;
}

static int threads(void)
{
	pthread_t t[THREADS];
	uint64_t h = FNV_START;
	if (pthread_barrier_init(&start_line, NULL, THREADS))
		die("barrier");
	for (uintptr_t i = 0; i < THREADS; i++)
		if ((errno = pthread_create(&t[i], NULL, thread_maps, (void *)i)))
			die("pthread_create");
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < THREADS; i++)
		h = fnv(h, &thread_sums[i], 8);
	say("threads %d x %d rounds: sum %016llx\n", THREADS, THREAD_ROUNDS,
	    (unsigned long long)h);
	return 0;
}

/* ---- signal handlers that map memory ---- */

static sem_t handled;
static volatile uint64_t handler_sum = FNV_START;
static volatile unsigned handler_runs;
static volatile sig_atomic_t mapper_stop;
static sigjmp_buf mapper_jump;
static volatile unsigned mapper_jumps;

/* Both handlers map, fill and unmap memory; SIGUSR2's then jumps out of
 * whatever the mapping thread was doing. */
static void on_map_signal(int sig)
{
	int err = errno;
	unsigned n = handler_runs++;
	size_t len = PAGE * (1 + n % 8);
	unsigned char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p != MAP_FAILED) {
		uint64_t s = fill_sum(p, len, n);
		handler_sum = fnv(handler_sum, &s, 8);
		munmap(p, len);
	}
	errno = err;
	mapper_jumps += sig == SIGUSR2;
	sem_post(&handled);
	if (sig == SIGUSR2)
		siglongjmp(mapper_jump, 1);
}

/* Maps and unmaps until told to stop; the signals land in the middle. */
static void *mapper(void *arg)
{
	if (!sigsetjmp(mapper_jump, 1))
		sem_post(&handled); /* ready to be jumped to */
	while (!mapper_stop) {
		void *p = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p != MAP_FAILED)
			munmap(p, 2 * PAGE);
	}
	return NULL;
}

static void sem_wait_all(sem_t *s)
{
	while (sem_wait(s))
		if (errno != EINTR)
			die("sem_wait");
}

static int sigmap(void)
{
	struct sigaction sa = { .sa_handler = on_map_signal, .sa_flags = SA_RESTART };
	pthread_t t;
	sigemptyset(&sa.sa_mask);
	if (sem_init(&handled, 0, 0) || sigaction(SIGUSR1, &sa, NULL) ||
	    sigaction(SIGUSR2, &sa, NULL))
		die("sigaction");
	if ((errno = pthread_create(&t, NULL, mapper, NULL)))
		die("pthread_create");
	sem_wait_all(&handled);
	for (int i = 0; i < SIGNALS; i++) {
		if ((errno = pthread_kill(t, i % 3 ? SIGUSR1 : SIGUSR2)))
			die("pthread_kill");
		sem_wait_all(&handled);
	}
	/* And on this thread, between its own calls. */
	for (int i = 0; i < SIGNALS / 10; i++) {
		void *p = map_anon(PAGE, MAP_PRIVATE);
		raise(SIGUSR1);
		sem_wait_all(&handled);
		munmap(p, PAGE);
	}
	mapper_stop = 1;
	pthread_join(t, NULL);
	say("sigmap: %u handlers ran, %u jumped, sum %016llx\n", handler_runs,
	    mapper_jumps, (unsigned long long)handler_sum);
	return 0;
}

/* ---- 1,000 short-lived children, nested three deep ---- */

/* What leaf number i exits with: a checksum of memory it filled, and keeps
 * (so that its tables are all seen at its exit checkpoint). */
static int leaf_status(unsigned i)
{
	unsigned char *p = map_anon(16 * PAGE, MAP_PRIVATE);
	return (int)(fill_sum(p, 16 * PAGE, i) % 200) + 1;
}

/* The same, computed by its parent to check it. */
static int leaf_expected(unsigned i)
{
	return (int)(pattern_sum(16 * PAGE, i) % 200) + 1;
}

/* At depth STORM_DEPTH a leaf; above it, STORM_FANOUT children at once.
 * Returns how many leaves below exited as they should (<= 100 fits an
 * exit status for depth >= 1). */
static int storm(int depth, unsigned index)
{
	pid_t kids[STORM_FANOUT];
	int good = 0;
	if (depth == STORM_DEPTH)
		return leaf_status(index);
	for (int i = 0; i < STORM_FANOUT; i++) {
		fflush(stdout);
		if ((kids[i] = fork()) < 0)
			die("fork");
		if (!kids[i])
			_exit(storm(depth + 1, index * STORM_FANOUT + (unsigned)i));
	}
	for (int i = 0; i < STORM_FANOUT; i++) {
		int st = wait_child(kids[i]);
		unsigned child = index * STORM_FANOUT + (unsigned)i;
		if (!WIFEXITED(st))
			continue;
		if (depth + 1 == STORM_DEPTH)
			good += WEXITSTATUS(st) == leaf_expected(child);
		else
			good += WEXITSTATUS(st);
	}
	return good;
}

static int forkstorm(void)
{
	pid_t kids[STORM_FANOUT];
	int total = 0;
	for (int i = 0; i < STORM_FANOUT; i++) {
		fflush(stdout);
		if ((kids[i] = fork()) < 0)
			die("fork");
		if (!kids[i])
			_exit(storm(2, (unsigned)i));
	}
	for (int i = 0; i < STORM_FANOUT; i++) {
		int st = wait_child(kids[i]);
		say("forkstorm child %d: %s\n", i, status_text(st));
		total += WIFEXITED(st) ? WEXITSTATUS(st) : 0;
	}
	say("forkstorm: %d of %d leaves exited as they should\n", total,
	    STORM_FANOUT * STORM_FANOUT * STORM_FANOUT);
	return 0;
}

/* ---- forks while other threads are inside the shim ---- */

/* SPIN_SITES functions that map and unmap, each from its own call site:
 * the first call stack through a call site is the slow one, which reads
 * the unwinding tables and writes the unwinder's cache (shim/stack.c). */
#define SITE(n)                                                        \
	static __attribute__((noinline)) void site_##n(void)           \
	{                                                              \
		munmap(map_anon(PAGE, MAP_PRIVATE), PAGE);             \
		__asm__ volatile("" ::: "memory");                     \
	}
#define SITES8(n) SITE(n##0) SITE(n##1) SITE(n##2) SITE(n##3) \
		  SITE(n##4) SITE(n##5) SITE(n##6) SITE(n##7)
SITES8(1) SITES8(2) SITES8(3) SITES8(4) SITES8(5) SITES8(6) SITES8(7) SITES8(8)
#define SITES8_REF(n) site_##n##0, site_##n##1, site_##n##2, site_##n##3, \
		      site_##n##4, site_##n##5, site_##n##6, site_##n##7
static void (*const sites[SPIN_SITES])(void) = {
	SITES8_REF(1), SITES8_REF(2), SITES8_REF(3), SITES8_REF(4),
	SITES8_REF(5), SITES8_REF(6), SITES8_REF(7), SITES8_REF(8),
};

static void *map_once(void *arg)
{
	sites[(uintptr_t)arg % SPIN_SITES]();
	return NULL;
}

/* The child's status, or SIGKILL's once it has not ended within
 * CHILD_BOUND_S: a child that hangs shows in the output. */
static int wait_bounded(pid_t pid)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);
	struct pollfd p = { .fd = fd, .events = POLLIN };
	if (fd < 0)
		die("pidfd_open");
	while (poll(&p, 1, CHILD_BOUND_S * 1000) < 0)
		if (errno != EINTR)
			die("poll");
	if (!p.revents)
		kill(pid, SIGKILL);
	close(fd);
	return wait_child(pid);
}

/*
 * Children forked just as new threads map memory, each from a call site
 * not seen before, so that a fork often comes while one of them is in the
 * middle of the shim (taking a call stack the slow way, sending its
 * record): each child maps memory itself and exits.  Every call site is
 * new only once per image: the program then execs itself, `rounds` times.
 */
static int forkspin(const char *rounds)
{
	int left = atoi(rounds), good = 0;
	for (unsigned i = 0; i < SPIN_SITES / SPINNERS; i++) {
		pthread_t t[SPINNERS];
		for (uintptr_t k = 0; k < SPINNERS; k++)
			if ((errno = pthread_create(&t[k], NULL, map_once,
						    (void *)(i * SPINNERS + k))))
				die("pthread_create");
		fflush(stdout);
		pid_t pid = fork();
		if (pid < 0)
			die("fork");
		if (!pid)
			_exit(scratch_sum(4 * PAGE, i) % 100 + 1);
		for (int k = 0; k < SPINNERS; k++)
			pthread_join(t[k], NULL);
		int st = wait_bounded(pid);
		good += WIFEXITED(st) &&
			WEXITSTATUS(st) == pattern_sum(4 * PAGE, i) % 100 + 1;
	}
	say("forkspin %d: %d of %d children exited as they should\n", left,
	    good, SPIN_SITES / SPINNERS);
	if (left > 1) {
		char next[16];
		snprintf(next, sizeof(next), "%d", left - 1);
		char *const argv[] = { (char *)self, "forkspin", next, NULL };
		execv(self, argv);
		die("execv");
	}
	return 0;
}

/* ---- vfork + exec, posix_spawn, clone ---- */

/* A new image that maps and sums memory, and keeps it: the leaf of
 * several scenarios. */
static int leaf(const char *tag)
{
	uint64_t h = fill_sum(map_anon(MIB, MAP_PRIVATE), MIB, strlen(tag));
	say("leaf %s: sum %016llx\n", tag, (unsigned long long)h);
	return LEAF_STATUS;
}

static int clone_plain(void *arg)
{
	char line[64];
	uint64_t h = scratch_sum(MIB, 12);
	int n = snprintf(line, sizeof(line), "clone child: sum %016llx\n",
			 (unsigned long long)h);
	if (write(1, line, (size_t)n) != n)
		return 1;
	return 12;
}

static int clone_exec(void *arg)
{
	char *const argv[] = { (char *)self, "leaf", "clone-vfork", NULL };
	execv(self, argv);
	return 127;
}

/* clone(2) through glibc's wrapper, on a stack of our own. */
static int clone_run(int (*fn)(void *), int flags)
{
	enum { STACK = 256 << 10 };
	char *stack = map_anon(STACK, MAP_PRIVATE);
	fflush(stdout);
	pid_t pid = clone(fn, stack + STACK, flags | SIGCHLD, NULL);
	if (pid < 0)
		die("clone");
	int st = wait_child(pid);
	munmap(stack, STACK);
	return st;
}

static int spawn(void)
{
	char *const vf[] = { (char *)self, "leaf", "vfork", NULL };
	char *const ps[] = { (char *)self, "leaf", "posix_spawn", NULL };
	pid_t pid;

	fflush(stdout);
	if ((pid = vfork()) < 0)
		die("vfork");
	if (!pid) {
		execv(self, vf);
		_exit(127);
	}
	say("vfork+exec: %s\n", status_text(wait_child(pid)));

	if ((pid = vfork()) < 0)
		die("vfork");
	if (!pid) {
		execl("/nonexistent/torture", "torture", (char *)NULL);
		_exit(errno == ENOENT ? 42 : 43);
	}
	say("vfork+failed exec: %s\n", status_text(wait_child(pid)));

	if ((errno = posix_spawn(&pid, self, NULL, NULL, ps, environ)))
		die("posix_spawn");
	say("posix_spawn: %s\n", status_text(wait_child(pid)));

	say("clone: %s\n", status_text(clone_run(clone_plain, 0)));
	say("clone vm+vfork+exec: %s\n",
	    status_text(clone_run(clone_exec, CLONE_VM | CLONE_VFORK)));

	say("system: %s\n", status_text(system("exit 4")));
	return 0;
}

/* ---- closefrom, close_range, dup2 over every low fd ---- */

static int fds(void)
{
	int out = dup(1), null = open("/dev/null", O_RDWR);
	char *const argv[] = { (char *)self, "leaf", "fds", NULL };
	if (out < 0 || null < 0)
		die("dup");
	fflush(stdout);
	for (int fd = 0; fd < LOW_FDS; fd++)
		if (fd != out && fd != null && dup2(null, fd) != fd)
			die("dup2");
	dprintf(out, "dup2 over %d fds: sum %016llx\n", LOW_FDS,
		(unsigned long long)scratch_sum(4 * MIB, 1));
	/* Everything above out goes, the shim's fds with it. */
	if (close_range((unsigned)out + 1, ~0U, CLOSE_RANGE_CLOEXEC) ||
	    close_range((unsigned)out + 1, ~0U, 0))
		die("close_range");
	closefrom(out + 1);
	int next = open("/dev/null", O_RDONLY);
	dprintf(out, "close_range: next fd %s, sum %016llx\n",
		next == out + 1 ? "is the lowest" : "is not the lowest",
		(unsigned long long)scratch_sum(4 * MIB, 2));
	close(next);
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid)
		_exit(scratch_sum(MIB, 3) % 100 + 1);
	dprintf(out, "fork after close_range: %s\n", status_text(wait_child(pid)));
	if (dup2(out, 1) != 1)
		die("dup2 stdout");
	execv(self, argv);
	die("execv");
}

/* ---- exec of a static program and of a set-user-ID one ---- */

/* fork + exec, vfork + exec and posix_spawn of `path [first] HOW`. */
static void exec_three(const char *path, const char *first)
{
	static const char *const hows[] = { "fork", "vfork", "posix_spawn" };
	for (int i = 0; i < 3; i++) {
		char *argv[4] = { (char *)path };
		int k = 1;
		pid_t pid;
		if (first)
			argv[k++] = (char *)first;
		argv[k] = (char *)hows[i];
		fflush(stdout);
		if (i == 2) {
			if ((errno = posix_spawn(&pid, path, NULL, NULL, argv, environ)))
				die("posix_spawn");
		} else if ((pid = i ? vfork() : fork()) < 0) {
			die("fork");
		} else if (!pid) {
			execv(path, argv);
			_exit(127);
		}
		say("%s%s: %s\n", hows[i], i < 2 ? "+exec" : "",
		    status_text(wait_child(pid)));
	}
}

/* A set-user-ID copy of this program runs this: ld.so ignored LD_PRELOAD. */
static int secure_leaf(const char *tag)
{
	say("secure leaf %s: AT_SECURE %lu, sum %016llx\n", tag,
	    getauxval(AT_SECURE), (unsigned long long)scratch_sum(MIB, 5));
	return SECURE_STATUS;
}

/* ---- a program that exhausts its fds ---- */

/* With RLIMIT_NOFILE soft and hard, runs fdcount in a new image (so that
 * the limit is in place before anything of it runs). */
static int fdlimit(const char *soft, const char *hard)
{
	struct rlimit rl = { strtoul(soft, NULL, 10), strtoul(hard, NULL, 10) };
	char *const argv[] = { (char *)self, "fdcount", NULL };
	if (setrlimit(RLIMIT_NOFILE, &rl))
		die("setrlimit");
	fflush(stdout);
	execv(self, argv);
	die("execv");
}

/* Opens fds until EMFILE, forks and maps while none is left, then gives
 * them back. */
static int fdcount(void)
{
	struct rlimit rl;
	int first = -1, last = -1, opened = 0, fd;
	if (getrlimit(RLIMIT_NOFILE, &rl))
		die("getrlimit");
	while ((fd = open("/dev/null", O_RDONLY)) >= 0) {
		if (first < 0)
			first = fd;
		last = fd;
		opened++;
	}
	int why = errno;
	uint64_t h = scratch_sum(MIB, 6);
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid)
		_exit(scratch_sum(MIB, 7) % 100 + 1);
	int st = wait_child(pid);
	for (fd = first; fd >= 0 && fd <= last; fd++)
		close(fd);
	say("fdcount: limit %llu, opened %d (fds %d to %d) until %s\n",
	    (unsigned long long)rl.rlim_cur, opened, first, last,
	    why == EMFILE ? "EMFILE" : strerror(why));
	say("fdcount: with none left, sum %016llx, child %s\n",
	    (unsigned long long)h, status_text(st));
	return 0;
}

/* ---- an exec with no fd free below RLIMIT_NOFILE ---- */

/* Every fd below FULL_FDS taken (the last close-on-exec with cloexec) and
 * the soft limit lowered to FULL_FDS: between fork and exec, as a program
 * that limits what it runs does. */
static void fds_full(bool cloexec)
{
	struct rlimit rl;
	int fd;
	while ((fd = open("/dev/null", O_RDONLY)) >= 0 && fd < FULL_FDS - 1)
		;
	if (fd < 0 || getrlimit(RLIMIT_NOFILE, &rl))
		die("open");
	if (fd > FULL_FDS - 1)
		close(fd);
	rl.rlim_cur = FULL_FDS;
	if ((cloexec && fcntl(FULL_FDS - 1, F_SETFD, FD_CLOEXEC)) ||
	    setrlimit(RLIMIT_NOFILE, &rl))
		die("setrlimit");
}

/* How run_full runs its program. */
enum full_how {
	FULL_SPAWN = 1 << 0,        /* by posix_spawn, not exec */
	FULL_CLOEXEC = 1 << 1,      /* one of the fds taken is close-on-exec */
	FULL_THEIRS_AFTER = 1 << 2, /* an LD_PRELOAD object of its own, last */
	FULL_THEIRS_FIRST = 1 << 3, /* the same, first */
};

/* LD_PRELOAD with an object of the program's own, before or after what
 * it had. */
static void preload_theirs(bool first)
{
	const char *had = getenv("LD_PRELOAD"), *theirs = "/nonexistent/libtheirs.so";
	char list[4096];
	if (!had || !*had)
		snprintf(list, sizeof(list), "%s", theirs);
	else
		snprintf(list, sizeof(list), "%s:%s", first ? theirs : had,
			 first ? had : theirs);
	if (setenv("LD_PRELOAD", list, 1))
		die("setenv");
}

/* A child that runs argv with every fd taken, as how says (when it
 * spawns, it exits as the spawned program did). */
static void run_full(const char *what, char *const argv[], unsigned how)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		if (how & (FULL_THEIRS_AFTER | FULL_THEIRS_FIRST))
			preload_theirs(how & FULL_THEIRS_FIRST);
		fds_full(how & FULL_CLOEXEC);
		if (how & FULL_SPAWN) {
			pid_t sp;
			if ((errno = posix_spawn(&sp, argv[0], NULL, NULL, argv, environ)))
				_exit(126);
			int st = wait_child(sp);
			_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
		}
		execv(argv[0], argv);
		_exit(127);
	}
	say("%s: %s\n", what, status_text(wait_child(pid)));
}

/*
 * The dynamic loader needs a free fd below the soft limit to open each
 * library, the shim among them.  Without one, a program that needs no
 * library runs anyway (and says what LD_PRELOAD it got), one that needs
 * libc fails (exit 127), each with what the loader says, and nothing
 * more.  One fd that the exec closes is enough.
 */
static int execfull(const char *nolibc)
{
	char *const lean[] = { (char *)nolibc, NULL };
	char *const leaf[] = { (char *)self, "leaf", "execfull", NULL };
	run_full("exec of a program needing no library, no fd free", lean, 0);
	run_full("the same with an LD_PRELOAD object of the program's own, last",
		 lean, FULL_THEIRS_AFTER);
	run_full("the same with it first", lean, FULL_THEIRS_FIRST);
	run_full("exec of a program needing libc, no fd free", leaf, 0);
	run_full("posix_spawn of a program needing no library, no fd free", lean,
		 FULL_SPAWN);
	run_full("exec of a program needing libc, one fd close-on-exec", leaf,
		 FULL_CLOEXEC);
	return 0;
}

/* ---- a program that maps until vm.max_map_count ---- */

/* The lines of /proc/self/maps: its mappings.  read(2) into a static
 * buffer: at the limit, stdio could not allocate. */
static long count_maps(void)
{
	static char buf[1 << 16];
	long lines = 0;
	ssize_t n;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		die("/proc/self/maps");
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < n; i++)
			lines += buf[i] == '\n';
	close(fd);
	return lines;
}

/*
 * One-page mappings of alternating protection (so none merge) until mmap
 * fails, MAP_NORESERVE (so none merges with a mapping made before, which
 * the holes the shim's mappings leave would decide).  What it prints
 * depends on how many mappings the process had to begin with: "before"
 * and "mapped" differ under ptshare by the shim's own mappings, "limit"
 * does not (docs/promises.md).
 */
static int maxmap(void)
{
	const size_t max = 1 << 17;
	void **maps = map_anon(max * sizeof(void *), MAP_PRIVATE);
	size_t n = 0;
	long before = count_maps();
	while (n < max) {
		int prot = n % 2 ? PROT_READ : PROT_READ | PROT_WRITE;
		void *p = mmap(NULL, PAGE, prot,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p == MAP_FAILED)
			break;
		maps[n++] = p;
	}
	int why = errno;
	long at_limit = count_maps();
	for (size_t i = 0; i < n; i++)
		munmap(maps[i], PAGE);
	long after = count_maps();
	munmap(maps, max * sizeof(void *));
	say("maxmap: limit %ld mappings, reached with %s\n", at_limit,
	    why == ENOMEM ? "ENOMEM" : strerror(why));
	say("maxmap: before %ld, mapped %zu, after %ld\n", before, n, after);
	/* What the report's delay is counted from (CLOCK_MONOTONIC is the
	 * machine's): the exit, and its wait for the daemon, come after. */
	say("maxmap: exits at %llu ns\n", (unsigned long long)now_ns());
	return 0;
}

int main(int argc, char **argv)
{
	const char *s = argc > 1 ? argv[1] : "";
	const char *a = argc > 2 ? argv[2] : NULL;
	self = argv[0];
	if (!strcmp(s, "threads"))
		return threads();
	if (!strcmp(s, "sigmap"))
		return sigmap();
	if (!strcmp(s, "forkstorm"))
		return forkstorm();
	if (!strcmp(s, "forkspin") && a)
		return forkspin(a);
	if (!strcmp(s, "spawn"))
		return spawn();
	if (!strcmp(s, "fds"))
		return fds();
	if (!strcmp(s, "exec") && a) {
		exec_three(a, argc > 3 ? argv[3] : NULL);
		return 0;
	}
	if (!strcmp(s, "fdlimit") && argc > 3)
		return fdlimit(argv[2], argv[3]);
	if (!strcmp(s, "fdcount"))
		return fdcount();
	if (!strcmp(s, "execfull") && a)
		return execfull(a);
	if (!strcmp(s, "maxmap"))
		return maxmap();
	if (!strcmp(s, "mix"))
		return mix();
	if (!strcmp(s, "late"))
		return late();
	if (!strcmp(s, "killgroup"))
		return killgroup();
	if (!strcmp(s, "stalled"))
		return stalled();
	if (!strcmp(s, "leaf"))
		return leaf(a ? a : "-");
	if (!strcmp(s, "secure"))
		return secure_leaf(a ? a : "-");
	fprintf(stderr, "usage: torture_subject threads|sigmap|forkstorm|forkspin N|spawn|fds|"
		"exec PATH [ARG]|fdlimit SOFT HARD|fdcount|execfull NOLIBC|maxmap|mix|"
		"late|killgroup|stalled|leaf TAG|secure TAG\n");
	return 2;
}
