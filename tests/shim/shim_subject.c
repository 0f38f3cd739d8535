/* SPDX-License-Identifier: MIT */
/*
 * The program the shim tests preload libptshare.so into: an unmodified,
 * unsanitized program (a sanitizer runtime would have to come first in the
 * preload list).  argv[1] picks a scenario; each prints what the test
 * needs on stdout.  Lines starting with '@' carry addresses and pids, which
 * differ from run to run; the rest must be the same with and without the
 * shim.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "subject_proto.h"

#define PAGE 4096ul

static void out(const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (write(1, line, (size_t)n) != n)
		_exit(99);
}

static const char *err_name(int e)
{
	const char *n = strerrorname_np(e);
	return n ? n : "?";
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void wait_stdin(void)
{
	char c;

	if (read(0, &c, 1) != 1)
		_exit(98);
}

static void map_unmap(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED || munmap(p, len))
		_exit(97);
}

static void report(const char *what, bool failed, int err)
{
	out("%s %s %s\n", what, failed ? "failed" : "ok",
	    failed ? err_name(err) : "-");
}

/* Every traced call once, then each failing: their errno must be the
 * kernel's; and a successful call must leave errno alone.  One call per
 * statement: the records' order is the calls' order. */
static int script(const char *file)
{
	int fd = open(file, O_RDONLY);
	struct stat st;
	int rc;

	if (fd < 0 || fstat(fd, &st))
		return 1;
	out("@script %p\n", (void *)script);
	char *a = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *s = mmap64(NULL, 2 * PAGE, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	errno = 4242;
	char *f = mmap(NULL, 2 * PAGE, PROT_READ, MAP_SHARED, fd, PAGE);
	rc = errno;
	out("errno after a successful mmap %d\n", rc);
	out("@anon %p\n@shared %p\n@file %p %llu %llu %d\n", (void *)a,
	    (void *)s, (void *)f, (unsigned long long)st.st_dev,
	    (unsigned long long)st.st_ino, fd);
	rc = mprotect(a, 3 * PAGE, PROT_READ);
	report("mprotect", rc, errno);
	rc = madvise(a, 3 * PAGE, MADV_DONTNEED);
	report("madvise", rc, errno);
	char *r = mremap(a, 3 * PAGE, 6 * PAGE, MREMAP_MAYMOVE);
	char *target = mmap(NULL, 6 * PAGE, PROT_NONE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *fixed = mremap(r, 6 * PAGE, 6 * PAGE,
			     MREMAP_MAYMOVE | MREMAP_FIXED, target);
	out("mremap fixed %s\n", fixed == target ? "at target" : "elsewhere");
	out("@mremap %p\n@fixed %p\n", (void *)r, (void *)fixed);
	int id = shmget(IPC_PRIVATE, 8 * PAGE, IPC_CREAT | 0600);
	char *seg = shmat(id, NULL, SHM_RDONLY);
	out("@shmat %p %d\n", (void *)seg, id);
	rc = shmdt(seg);
	report("shmdt", rc, errno);
	shmctl(id, IPC_RMID, NULL);
	rc = munmap(f, 2 * PAGE);
	rc |= munmap(s, 2 * PAGE);
	rc |= munmap(fixed, 6 * PAGE);
	report("munmap", rc, errno);

	rc = munmap(a + 1, PAGE);
	report("munmap unaligned", rc, errno);
	void *bad = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, 999999, 0);
	report("mmap bad fd", bad == MAP_FAILED, errno);
	bad = mmap(NULL, 1ul << 50, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	report("mmap huge", bad == MAP_FAILED, errno);
	rc = mprotect(fixed, PAGE, PROT_READ);
	report("mprotect unmapped", rc, errno);
	rc = madvise(s, PAGE, 12345);
	report("madvise bad advice", rc, errno);
	bad = mremap(NULL, 0, 0, 0);
	report("mremap nothing", bad == MAP_FAILED, errno);
	bad = shmat(-1, NULL, 0);
	report("shmat bad id", bad == (void *)-1, errno);
	rc = shmdt(fixed);
	report("shmdt nothing", rc, errno);
	close(fd);
	return 0;
}

static int forks(void)
{
	pid_t child = fork();
	int status;

	if (child == 0) {
		out("@child-returned %llu %d\n", (unsigned long long)mono_ns(),
		    getpid());
		map_unmap(PAGE);
		exit(7);
	}
	out("@forked %d\n", child);
	waitpid(child, &status, 0);
	out("child exit %d\n", WEXITSTATUS(status));
	map_unmap(PAGE);
	return 0;
}

/* The child image of the exec scenarios: what it got. */
static int exec_child(void)
{
	static const char *const names[] = { "LD_PRELOAD=", "PTSHARE_SOCKET=",
					     "PTSHARE_OPTIONS=" };

	out("@image %d\n", getpid());
	for (char **e = environ; *e; e++)
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (!strncmp(*e, names[i], strlen(names[i])))
				out("@env %s\n", *e);
	map_unmap(PAGE);
	return 0;
}

/* A sandbox that refuses process_vm_readv (EPERM), as some seccomp
 * profiles do: the shim reads the exec's arguments plainly then. */
static int refuse_process_vm_readv(void)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_readv, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(filter) / sizeof(filter[0]), filter };

	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	       prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

static int execs(const char *how)
{
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *argv[] = { "shim_subject", "exec-child", NULL };
	char *empty[] = { NULL };
	char *foreign[] = { "LD_PRELOAD=/nonexistent/libother.so", NULL };

	if (n <= 0)
		return 1;
	self[n] = '\0';
	out("@image %d\n", getpid());
	map_unmap(PAGE);
	if (!strcmp(how, "execve"))
		execve(self, argv, environ);
	else if (!strcmp(how, "empty-env"))
		execve(self, argv, empty);
	else if (!strcmp(how, "sandboxed") && !refuse_process_vm_readv())
		execve(self, argv, empty);
	else if (!strcmp(how, "foreign-preload"))
		execve(self, argv, foreign);
	else if (!strcmp(how, "execv"))
		execv(self, argv);
	else if (!strcmp(how, "execvp"))
		execvp(self, argv);
	else if (!strcmp(how, "execvpe"))
		execvpe(self, argv, empty);
	else if (!strcmp(how, "execl"))
		execl(self, "shim_subject", "exec-child", (char *)NULL);
	else if (!strcmp(how, "execlp"))
		execlp(self, "shim_subject", "exec-child", (char *)NULL);
	else if (!strcmp(how, "execle"))
		execle(self, "shim_subject", "exec-child", (char *)NULL, empty);
	else if (!strcmp(how, "fexecve") || !strcmp(how, "execveat")) {
		int fd = open(self, O_RDONLY); /* not O_CLOEXEC: no script */
		if (!strcmp(how, "fexecve"))
			fexecve(fd, argv, empty);
		else
			execveat(fd, "", argv, empty, AT_EMPTY_PATH);
	}
	out("exec %s returned %s\n", how, err_name(errno));
	return 1;
}

static int exec_fails(void)
{
	char *argv[] = { "nothing", NULL };

	int rc = execve("/nonexistent/x", argv, environ);
	report("execve", rc, errno);
	rc = execvp("ptshare-no-such-command", argv);
	report("execvp", rc, errno);
	map_unmap(PAGE);
	return 0;
}

static int exits(const char *how, int status)
{
	map_unmap(PAGE);
	if (!strcmp(how, "exit"))
		exit(status);
	if (!strcmp(how, "_exit"))
		_exit(status);
	if (!strcmp(how, "_Exit"))
		_Exit(status);
	return status; /* "return" */
}

/*
 * Takes over every fd from 3 up, the shim's included,
 * with dup2, maps memory, then checks that its pipe holds exactly what it
 * wrote itself and that fd 1000 is still its own.
 */
static int closefds(void)
{
	int p[2];
	char buf[64];

	map_unmap(PAGE);
	if (pipe(p))
		return 1;
	for (int fd = 3; fd < SUBJECT_FD_SPAN; fd++)
		if (fd != p[0] && fd != p[1] && dup2(p[1], fd) != fd)
			return 2;
	if (write(1001, "abc", 3) != 3)
		return 3;
	for (int i = 0; i < 10; i++)
		map_unmap(PAGE);
	if (write(SUBJECT_SHIM_FD, "def", 3) != 3)
		return 4;
	for (int fd = 3; fd < SUBJECT_FD_SPAN; fd++)
		if (fd != p[0] && fd != p[1])
			close(fd);
	close(p[1]);
	ssize_t n = read(p[0], buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	out("pipe holds \"%s\"\n", buf);
	map_unmap(PAGE);
	return 0;
}

struct worker {
	pthread_t t;
	unsigned index, iterations;
};

static void *map_worker(void *arg)
{
	struct worker *w = arg;

	for (unsigned i = 0; i < w->iterations; i++)
		map_unmap((w->index + 1) * PAGE);
	return NULL;
}

static int threads(unsigned iterations)
{
	struct worker w[SUBJECT_THREADS];

	for (unsigned i = 0; i < SUBJECT_THREADS; i++) {
		w[i] = (struct worker){ .index = i, .iterations = iterations };
		pthread_create(&w[i].t, NULL, map_worker, &w[i]);
	}
	for (unsigned i = 0; i < SUBJECT_THREADS; i++)
		pthread_join(w[i].t, NULL);
	out("threads done\n");
	return 0;
}

static atomic_bool stop_mapping;

static void *map_until_stopped(void *arg)
{
	while (!atomic_load(&stop_mapping))
		map_unmap(PAGE);
	return NULL;
}

/* Forks while other threads map: one of them may hold the shim's lock when
 * the child is made, and the child must not wait for it. */
static int fork_threads(unsigned children)
{
	pthread_t t[SUBJECT_THREADS / 2];
	unsigned ok = 0;

	for (unsigned i = 0; i < SUBJECT_THREADS / 2; i++)
		pthread_create(&t[i], NULL, map_until_stopped, NULL);
	for (unsigned i = 0; i < children; i++) {
		int status;
		pid_t child = fork();
		if (child == 0) {
			map_unmap(PAGE);
			exit(0);
		}
		waitpid(child, &status, 0);
		ok += WIFEXITED(status) && WEXITSTATUS(status) == 0;
	}
	atomic_store(&stop_mapping, true);
	for (unsigned i = 0; i < SUBJECT_THREADS / 2; i++)
		pthread_join(t[i], NULL);
	out("children ok %u\n", ok);
	return 0;
}

static volatile sig_atomic_t handled;

static void map_in_handler(int sig)
{
	int err = errno;

	map_unmap(SUBJECT_HANDLER_LEN);
	handled++;
	errno = err;
}

static int signals(unsigned iterations)
{
	struct sigaction sa = { .sa_handler = map_in_handler };
	struct worker w = { .index = 0, .iterations = iterations };

	sigaction(SIGUSR1, &sa, NULL);
	pthread_create(&w.t, NULL, map_worker, &w);
	while (pthread_tryjoin_np(w.t, NULL) == EBUSY)
		pthread_kill(w.t, SIGUSR1);
	out("@handled %d\n", (int)handled);
	out("signals done\n");
	return 0;
}

/* Real-time signals, each with its value, sent to a thread that maps and
 * unmaps: every one reaches the handler once, whether it came inside a
 * traced call (held back to its end) or outside. */
static atomic_uint rt_count;
static atomic_ulong rt_sum;

static void rt_handler(int sig, siginfo_t *si, void *ctx)
{
	atomic_fetch_add(&rt_count, 1);
	atomic_fetch_add(&rt_sum, (unsigned long)si->si_value.sival_int);
}

static int rt_signals(unsigned n)
{
	struct sigaction sa = { .sa_sigaction = rt_handler,
				.sa_flags = SA_SIGINFO };
	struct worker w = { .index = 0, .iterations = ~0u };

	sigaction(SIGRTMIN, &sa, NULL);
	pthread_create(&w.t, NULL, map_worker, &w);
	for (unsigned i = 0; i < n; i++)
		while (pthread_sigqueue(w.t, SIGRTMIN,
					(union sigval){ .sival_int = (int)i }) == EAGAIN)
			sched_yield();
	/* A lost one would leave the count short: 10 s, then say so. */
	for (uint64_t end = mono_ns() + 10000000000ull;
	     atomic_load(&rt_count) < n && mono_ns() < end;)
		sched_yield();
	out("rt signals: %u received, values summing to %lu\n",
	    atomic_load(&rt_count), atomic_load(&rt_sum));
	_exit(0); /* the worker maps for ever */
}

/* The SIGSYS handler runs while the trapped mmap is inside the shim's
 * interposer: it maps memory itself and makes that the trapped call's
 * result. */
static void sigsys_handler(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	void *p = mmap(NULL, SUBJECT_SIGSYS_LEN + PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	uc->uc_mcontext.gregs[REG_RAX] = (greg_t)p;
}

/* A signal sent from inside a traced call (from the SIGSYS handler of its
 * trapped mmap) reaches its handler after the call, with its siginfo; the
 * handler's own calls are traced after the call's record. */
static volatile sig_atomic_t deferred_ran, deferred_value, deferred_code,
	deferred_self;

static void deferred_handler(int sig, siginfo_t *si, void *ctx)
{
	int err = errno;

	deferred_ran++;
	deferred_value = si->si_value.sival_int;
	deferred_code = si->si_code;
	deferred_self = si->si_pid == getpid();
	map_unmap(SUBJECT_HANDLER_LEN);
	errno = err;
}

static void sigsys_queue_handler(int sig, siginfo_t *si, void *ctx)
{
	sigqueue(getpid(), SIGUSR1, (union sigval){ .sival_int = 4242 });
	sigsys_handler(sig, si, ctx);
}

static int trap_mmap(void (*handler)(int, siginfo_t *, void *))
{
	struct sigaction sa = { .sa_sigaction = handler, .sa_flags = SA_SIGINFO };
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mmap, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, args[1])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SUBJECT_SIGSYS_LEN, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(filter) / sizeof(filter[0]), filter };

	sigaction(SIGSYS, &sa, NULL);
	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	       prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

static int sigdefer(void)
{
	struct sigaction sa = { .sa_sigaction = deferred_handler,
				.sa_flags = SA_SIGINFO };

	sigaction(SIGUSR1, &sa, NULL);
	if (trap_mmap(sigsys_queue_handler))
		return 1;
	void *p = mmap(NULL, SUBJECT_SIGSYS_LEN, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	out("@sigsys %p\n", p);
	out("sigdefer: mapped %s, handler ran %d, value %d, code %s, from self %d\n",
	    p == MAP_FAILED ? "nothing" : "memory", (int)deferred_ran,
	    (int)deferred_value, deferred_code == SI_QUEUE ? "SI_QUEUE" : "other",
	    (int)deferred_self);
	return 0;
}

/* What the program sees of its own handlers: the same with and without
 * the shim, which installs its own in their place. */
static volatile sig_atomic_t plain_ran, info_value;

static void plain_handler(int sig)
{
	plain_ran++;
}

static void info_handler(int sig, siginfo_t *si, void *ctx)
{
	info_value = si->si_code == SI_QUEUE && si->si_pid == getpid() ?
			     si->si_value.sival_int : -1;
}

static const char *handler_name(void (*h)(int))
{
	if (h == SIG_DFL)
		return "SIG_DFL";
	if (h == SIG_IGN)
		return "SIG_IGN";
	if (h == SIG_HOLD)
		return "SIG_HOLD";
	if (h == plain_handler)
		return "plain";
	if ((void (*)(void))h == (void (*)(void))info_handler)
		return "info";
	return "unknown";
}

static void view(const char *when, int sig)
{
	struct sigaction sa;
	sigset_t now;
	const int flags = SA_SIGINFO | SA_RESTART | SA_RESETHAND | SA_NODEFER |
			  SA_ONSTACK;

	sigaction(sig, NULL, &sa);
	sigprocmask(SIG_BLOCK, NULL, &now);
	out("%s: %s, flags %#x, masks SIGUSR2 %d, blocked %d\n", when,
	    handler_name(sa.sa_handler), sa.sa_flags & flags,
	    sigismember(&sa.sa_mask, SIGUSR2), sigismember(&now, sig));
}

/* siginterrupt and sigset: what older programs still call. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static int sigview(void)
{
	struct sigaction a = { .sa_handler = plain_handler,
			       .sa_flags = SA_RESTART | SA_RESETHAND };
	struct sigaction b = { .sa_sigaction = info_handler,
			       .sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK };
	struct sigaction old;

	sigaddset(&a.sa_mask, SIGUSR2);
	sigaction(SIGUSR1, &a, &old);
	out("sigaction replaced %s\n", handler_name(old.sa_handler));
	view("installed", SIGUSR1);
	raise(SIGUSR1);
	out("plain ran %d\n", (int)plain_ran);
	view("after one delivery", SIGUSR1);
	sigaction(SIGUSR1, &b, &old);
	out("sigaction replaced %s\n", handler_name(old.sa_handler));
	view("siginfo", SIGUSR1);
	sigqueue(getpid(), SIGUSR1, (union sigval){ .sival_int = 77 });
	out("info got %d\n", (int)info_value);
	/* The same struct both ways (through a pointer: the prototype says
	 * restrict, which programs do not always heed). */
	int (*install)(int, const struct sigaction *, struct sigaction *) =
		sigaction;
	install(SIGUSR1, &old, &old);
	out("restore replaced %s\n", handler_name(old.sa_handler));
	view("restored", SIGUSR1);
	out("signal replaced %s\n", handler_name(signal(SIGUSR2, plain_handler)));
	view("signal", SIGUSR2);
	siginterrupt(SIGUSR2, 1);
	view("siginterrupt", SIGUSR2);
	out("signal replaced %s\n", handler_name(signal(SIGUSR2, SIG_IGN)));
	out("sysv_signal replaced %s\n",
	    handler_name(sysv_signal(SIGHUP, plain_handler)));
	view("sysv_signal", SIGHUP);
	out("sigset replaced %s\n", handler_name(sigset(SIGALRM, plain_handler)));
	out("sigset hold replaced %s\n", handler_name(sigset(SIGALRM, SIG_HOLD)));
	view("held", SIGALRM);
	out("sigset replaced %s\n", handler_name(sigset(SIGALRM, SIG_DFL)));
	view("sigset", SIGALRM);
	sigaction(SIGSEGV, &b, &old);
	view("synchronous", SIGSEGV);
	out("bad signal %d\n", sigaction(SIGRTMIN - 1, &a, NULL) ? errno : 0);
	return 0;
}
#pragma GCC diagnostic pop

static int sigsys(void)
{
	if (trap_mmap(sigsys_handler))
		return 1;
	void *p = mmap(NULL, SUBJECT_SIGSYS_LEN, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	out("@sigsys %p\n", p);
	out("sigsys mapped %s\n", p == MAP_FAILED ? "nothing" : "memory");
	return 0;
}

/* Where a vfork child mapped a page: in its parent's memory, which it
 * borrows (written by the child, as POSIX leaves undefined and Linux
 * does). */
static void *volatile vfork_mapped;

static int vforks(const char *self)
{
	char *argv[] = { "shim_subject", "exec-child", NULL };
	int status;

	map_unmap(PAGE);
	pid_t child = vfork();
	if (child == 0) {
		vfork_mapped = mmap(NULL, PAGE, PROT_READ,
				    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		execve(self, argv, environ);
		_exit(127);
	}
	waitpid(child, &status, 0);
	out("@vforked %d\n", child);
	out("@vfork-mapped %p\n", vfork_mapped);
	out("vfork child exit %d\n", WEXITSTATUS(status));
	child = vfork();
	if (child == 0) {
		execve("/nonexistent/x", argv, environ);
		_exit(42);
	}
	waitpid(child, &status, 0);
	out("vfork failed exec exit %d\n", WEXITSTATUS(status));
	map_unmap(PAGE);
	return 0;
}

static int spawns(const char *self)
{
	char *argv[] = { "shim_subject", "exec-child", NULL };
	char *empty[] = { NULL };
	pid_t a, b;
	int sa, sb;

	if (posix_spawn(&a, self, NULL, NULL, argv, environ) ||
	    posix_spawnp(&b, self, NULL, NULL, argv, empty))
		return 1;
	waitpid(a, &sa, 0);
	waitpid(b, &sb, 0);
	out("@spawned %d %d\n", a, b);
	out("spawned exit %d %d\n", WEXITSTATUS(sa), WEXITSTATUS(sb));
	return 0;
}

/* Maps in three rounds, with a line "ready" and a byte from stdin between
 * them: the test does something to the daemon meanwhile. */
static int rounds(char **counts)
{
	for (int r = 0; r < 3; r++) {
		unsigned n = (unsigned)atoi(counts[r]);
		if (r) {
			out("ready\n");
			wait_stdin();
		}
		for (unsigned i = 0; i < n; i++)
			map_unmap(PAGE);
	}
	out("done\n");
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	unsigned n = argc > 2 ? (unsigned)atoi(argv[2]) : 0;
	char self[4096];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);

	self[len > 0 ? len : 0] = '\0';
	if (!strcmp(mode, "script") && argc > 2)
		return script(argv[2]);
	if (!strcmp(mode, "fork"))
		return forks();
	if (!strcmp(mode, "fork-threads"))
		return fork_threads(n);
	if (!strcmp(mode, "exec") && argc > 2)
		return execs(argv[2]);
	if (!strcmp(mode, "exec-child"))
		return exec_child();
	if (!strcmp(mode, "exec-fail"))
		return exec_fails();
	if (!strcmp(mode, "exit") && argc > 3)
		return exits(argv[2], atoi(argv[3]));
	if (!strcmp(mode, "closefds"))
		return closefds();
	if (!strcmp(mode, "threads"))
		return threads(n);
	if (!strcmp(mode, "signals"))
		return signals(n);
	if (!strcmp(mode, "sigsys"))
		return sigsys();
	if (!strcmp(mode, "rtsignals"))
		return rt_signals(n);
	if (!strcmp(mode, "sigdefer"))
		return sigdefer();
	if (!strcmp(mode, "sigview"))
		return sigview();
	if (!strcmp(mode, "vfork"))
		return vforks(self);
	if (!strcmp(mode, "spawn"))
		return spawns(self);
	if (!strcmp(mode, "rounds") && argc > 4)
		return rounds(argv + 2);
	fprintf(stderr, "shim_subject: unknown scenario %s\n", mode);
	return 2;
}
