/* SPDX-License-Identifier: MIT */
/*
 * bench/uffd: what seeing page faults costs a program (docs/faults.md).
 * The workload: a parent maps 1 GiB of shared anonymous memory and forks 8
 * workers, which each write every page of their eighth of it (262,144
 * first touches in all); it reports the time from its first fork to its
 * last worker's end.  Run, in rounds whose order rotates:
 *
 *   native  the workload alone
 *   off     under `ptshare run --faults off`: what tracing costs without
 *           faults (the forks' and exits' checkpoints)
 *   table   under `ptshare run --faults table`
 *   all     under `ptshare run --faults all`
 *   bare    the workload with a bare handler of its own: each worker
 *           passes a userfaultfd to a process that registers the memory
 *           and, in a poll loop, only reads the faults and resolves them
 *           (UFFDIO_ZEROPAGE), as ptshared's all mode does without the
 *           model, the trace and the ring
 *
 * Prints each run, then medians: table's speed against native (goal >=
 * 0.95), and the time all mode adds to native against the time the bare
 * handler adds (goal <= 1.5), each with a verdict only beyond the rounds'
 * spread.  Each traced run's JSON report says the mode its processes had
 * and the faults they saw: without userfaultfd access table and all run
 * as off, and then no verdict is given.  Needs root or access to
 * userfaultfd; the ptshare it runs should be a release build.
 *
 * usage: uffd [--rounds N] [--workers N] [--mib N] [--cpus LIST]
 *   defaults: 5 rounds, 8 workers, 1024 MiB
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_rounds.h"
#include "lib/clock.h"

#ifndef PTSHARE_BIN
#error "PTSHARE_BIN must name the ptshare executable"
#endif

#define PAGE 4096UL
#define MAX_WORKERS 64

enum variant { NATIVE, OFF, TABLE, ALL, BARE, VARIANTS };
static const char *const variant_name[VARIANTS] = { "native", "off", "table",
						    "all", "bare" };

struct opts {
	int rounds, workers, mib;
	const char *cpus;
	char json[64]; /* the traced runs' report */
};

/* What a traced run's report says of its faults. */
struct seen {
	uint64_t faults;  /* seen on userfaultfds, summed over the processes */
	unsigned off;     /* processes whose mode was off */
};

static _Noreturn void die(const char *what)
{
	fprintf(stderr, "bench/uffd: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* The bare handler's side of a worker: its userfaultfd made ready and
 * registered over the pool, the worker told, the fd kept for the loop. */
static int adopt(int sock, char *pool, size_t bytes)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(2 * sizeof(int))];
	} ctl;
	char byte;
	struct iovec iov = { &byte, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf) };
	if (recvmsg(sock, &m, MSG_CMSG_CLOEXEC) <= 0)
		return -1;
	int fds[2];
	memcpy(fds, CMSG_DATA(CMSG_FIRSTHDR(&m)), sizeof(fds));
	struct uffdio_api api = {
		.api = UFFD_API,
		.features = UFFD_FEATURE_MISSING_SHMEM | UFFD_FEATURE_MINOR_SHMEM,
	};
	struct uffdio_register reg = {
		.range = { (uintptr_t)pool, bytes },
		.mode = UFFDIO_REGISTER_MODE_MISSING | UFFDIO_REGISTER_MODE_MINOR,
	};
	if (ioctl(fds[0], UFFDIO_API, &api) || ioctl(fds[0], UFFDIO_REGISTER, &reg))
		die("bare handler: register");
	if (write(fds[1], "r", 1) != 1)
		die("bare handler: ack");
	close(fds[1]);
	return fds[0];
}

/* Every fault queued on fd, read and resolved. */
static void resolve_all(int fd)
{
	struct uffd_msg msg[64];
	ssize_t n;
	while ((n = read(fd, msg, sizeof(msg))) > 0)
		for (size_t i = 0; i < (size_t)n / sizeof(*msg); i++) {
			if (msg[i].event != UFFD_EVENT_PAGEFAULT)
				continue;
			uint64_t addr = msg[i].arg.pagefault.address & ~(PAGE - 1);
			int r;
			if (msg[i].arg.pagefault.flags & UFFD_PAGEFAULT_FLAG_MINOR) {
				struct uffdio_continue c = { .range = { addr, PAGE } };
				r = ioctl(fd, UFFDIO_CONTINUE, &c);
			} else {
				struct uffdio_zeropage z = { .range = { addr, PAGE } };
				r = ioctl(fd, UFFDIO_ZEROPAGE, &z);
			}
			if (r && errno == EEXIST) {
				struct uffdio_range w = { addr, PAGE };
				ioctl(fd, UFFDIO_WAKE, &w);
			}
		}
}

/* The bare handler: a poll loop over the workers' userfaultfds and the
 * socket they arrive on, until the workload closes it. */
static _Noreturn void bare_handler(int sock, char *pool, size_t bytes)
{
	struct pollfd p[MAX_WORKERS + 1] = { { .fd = sock, .events = POLLIN } };
	nfds_t n = 1;
	for (;;) {
		if (poll(p, n, -1) < 0 && errno != EINTR)
			die("bare handler: poll");
		for (nfds_t i = 1; i < n; i++)
			if (p[i].revents & POLLIN)
				resolve_all(p[i].fd);
		if (p[0].revents & (POLLHUP | POLLERR))
			_exit(0);
		if (p[0].revents & POLLIN) {
			int fd = adopt(sock, pool, bytes);
			if (fd < 0)
				_exit(0);
			if (n <= MAX_WORKERS)
				p[n++] = (struct pollfd){ .fd = fd, .events = POLLIN };
		}
	}
}

/* A worker of the bare variant: its userfaultfd (and a socket for the
 * answer) to the handler, then the wait until it has registered. */
static void hand_over(int sock)
{
	int fds[2], ack[2];
	fds[0] = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (fds[0] < 0 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ack))
		die("worker: userfaultfd");
	fds[1] = ack[1];
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(fds))];
	} ctl;
	char byte = 'u';
	struct iovec iov = { &byte, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf) };
	struct cmsghdr *h = CMSG_FIRSTHDR(&m);
	h->cmsg_level = SOL_SOCKET;
	h->cmsg_type = SCM_RIGHTS;
	h->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(h), fds, sizeof(fds));
	if (sendmsg(sock, &m, 0) != 1 || read(ack[0], &byte, 1) != 1)
		die("worker: hand over");
	close(fds[0]);
	close(ack[0]);
	close(ack[1]);
}

/* The workload (see the top); bare: with its own handler. */
static int workload(int workers, size_t bytes, bool bare)
{
	char *pool = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int sv[2] = { -1, -1 };
	pid_t handler = -1, pids[MAX_WORKERS];
	if (pool == MAP_FAILED)
		die("mmap");
	if (bare) {
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
			die("socketpair");
		if (!(handler = fork())) {
			close(sv[1]); /* the workload's end: its close ends us */
			bare_handler(sv[0], pool, bytes);
		}
		close(sv[0]);
	}
	size_t slice = bytes / (size_t)workers;
	fflush(stdout);
	uint64_t t0 = now_ns();
	for (int i = 0; i < workers; i++) {
		if ((pids[i] = fork()) < 0)
			die("fork");
		if (pids[i])
			continue;
		if (bare)
			hand_over(sv[1]);
		volatile char *p = pool + (size_t)i * slice;
		for (size_t off = 0; off < slice; off += PAGE)
			p[off] = 1;
		_exit(0);
	}
	int bad = 0;
	for (int i = 0; i < workers; i++) {
		int st;
		if (waitpid(pids[i], &st, 0) != pids[i] || !WIFEXITED(st) ||
		    WEXITSTATUS(st))
			bad = 1;
	}
	uint64_t t1 = now_ns();
	if (bare) {
		close(sv[1]);
		waitpid(handler, NULL, 0);
	}
	printf("elapsed_ns %llu\n", (unsigned long long)(t1 - t0));
	return bad;
}

/* The faults the processes of the report at path saw under linux, and how
 * many had mode off (the report's format: docs/report-json.md). */
static struct seen seen_in(const char *path)
{
	static char buf[1 << 20];
	struct seen s = { 0 };
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = '\0';
	const char *stream = strstr(buf, "\"stream\"");
	for (const char *p = buf; (p = strstr(p, "\"fault_mode\": \"off\"")); p++)
		s.off += !stream || p < stream;
	/* Each final checkpoint's "faults": { "linux": { "seen": N, ... */
	for (const char *p = buf; (p = strstr(p, "\"faults\": {")); p++) {
		const char *q = p + strlen("\"faults\": {");
		q += strspn(q, " \n");
		if (!strncmp(q, "\"linux\"", 7) && (q = strstr(q, "\"seen\": ")))
			s.faults += strtoull(q + strlen("\"seen\": "), NULL, 10);
	}
	return s;
}

/* One run of a variant: the workload's time in seconds; what a traced
 * run's report says of its faults in *seen. */
static double run(const char *self, const struct opts *o, enum variant v,
		  struct seen *seen)
{
	char workers[16], mib[16];
	snprintf(workers, sizeof(workers), "%d", o->workers);
	snprintf(mib, sizeof(mib), "%d", o->mib);
	const char *argv[20];
	size_t n = 0;
	if (v == OFF || v == TABLE || v == ALL) {
		const char *const pre[] = { PTSHARE_BIN, "run", "--no-record",
					    "--faults",
					    variant_name[v], "-o", "/dev/null",
					    "--json", o->json, "--" };
		for (size_t i = 0; i < sizeof(pre) / sizeof(pre[0]); i++)
			argv[n++] = pre[i];
	}
	argv[n++] = self;
	argv[n++] = v == BARE ? "--bare-workload" : "--workload";
	argv[n++] = workers;
	argv[n++] = mib;
	argv[n] = NULL;
	int out[2];
	if (pipe2(out, O_CLOEXEC))
		die("pipe");
	pid_t pid = fork();
	if (!pid) {
		dup2(out[1], 1);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(out[1]);
	char buf[4096];
	size_t len = 0;
	ssize_t r;
	while (len < sizeof(buf) - 1 && (r = read(out[0], buf + len,
						 sizeof(buf) - 1 - len)) > 0)
		len += (size_t)r;
	buf[len] = '\0';
	close(out[0]);
	int st;
	unsigned long long ns;
	const char *at = strstr(buf, "elapsed_ns ");
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) ||
	    !at || sscanf(at, "elapsed_ns %llu", &ns) != 1) {
		fprintf(stderr, "bench/uffd: the %s run failed:\n%s\n",
			variant_name[v], buf);
		exit(1);
	}
	if (v == OFF || v == TABLE || v == ALL)
		*seen = seen_in(o->json);
	return (double)ns / 1e9;
}

/* The rounds' runs, and what they need. */
struct runs {
	const char *self;
	const struct opts *o;
	double t[VARIANTS][BENCH_MAX_ROUNDS]; /* seconds */
	struct seen seen[VARIANTS][BENCH_MAX_ROUNDS];
};

/* One run in a round: its time kept and printed. */
static void measure(int variant, int round, void *arg)
{
	struct runs *runs = arg;
	double *t = &runs->t[variant][round];
	struct seen *s = &runs->seen[variant][round];
	*t = run(runs->self, runs->o, (enum variant)variant, s);
	printf("round %d  %-7s %8.3f s", round + 1, variant_name[variant], *t);
	if (variant == OFF || variant == TABLE || variant == ALL)
		printf("  %llu faults seen, %u processes in mode off",
		       (unsigned long long)s->faults, s->off);
	printf("\n");
	fflush(stdout);
}

static int parse(struct opts *o, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "rounds", required_argument, NULL, 'r' },
		{ "workers", required_argument, NULL, 'w' },
		{ "mib", required_argument, NULL, 'm' },
		{ "cpus", required_argument, NULL, 'c' },
		{ 0 },
	};
	*o = (struct opts){ .rounds = 5, .workers = 8, .mib = 1024 };
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		int *n = c == 'r' ? &o->rounds : c == 'w' ? &o->workers
		       : c == 'm' ? &o->mib : NULL;
		if (c == 'c')
			o->cpus = optarg;
		else if (!n || (*n = atoi(optarg)) <= 0)
			return -1;
	}
	return optind < argc || o->rounds > BENCH_MAX_ROUNDS ||
	       o->workers > MAX_WORKERS ? -1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && (!strcmp(argv[1], "--workload") ||
			  !strcmp(argv[1], "--bare-workload")))
		return workload(atoi(argv[2]), (size_t)atoi(argv[3]) << 20,
				!strcmp(argv[1], "--bare-workload"));
	struct opts o;
	if (parse(&o, argc, argv)) {
		fputs("usage: uffd [--rounds N] [--workers N] [--mib N] "
		      "[--cpus N,N,...]\n", stderr);
		return 2;
	}
	/* The whole run (the workloads and ptshare too) on these CPUs. */
	if (o.cpus && bench_pin("bench/uffd", o.cpus))
		return 2;
	char self[4096];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len <= 0)
		die("/proc/self/exe");
	self[len] = '\0';
	printf("%d workers each writing every page of %d MiB / %d of shared "
	       "anonymous memory; %d rounds, CPUs %s\n", o.workers, o.mib,
	       o.workers, o.rounds, o.cpus ? o.cpus : "all");
	snprintf(o.json, sizeof(o.json), "/tmp/ptshare-bench-uffd-%d.json",
		 (int)getpid());
	struct runs runs = { .self = self, .o = &o };
	bench_rounds(o.rounds, VARIANTS, measure, &runs);
	unlink(o.json);
	double (*t)[BENCH_MAX_ROUNDS] = runs.t;
	double m[VARIANTS], speed[BENCH_MAX_ROUNDS], off_speed[BENCH_MAX_ROUNDS];
	double cost[BENCH_MAX_ROUNDS];
	for (int v = 0; v < VARIANTS; v++)
		m[v] = bench_median(t[v], o.rounds);
	/* A mode with a userfaultfd in every process, and faults seen. */
	bool sees[VARIANTS] = { false };
	for (int v = TABLE; v <= ALL; v++) {
		sees[v] = true;
		for (int r = 0; r < o.rounds; r++)
			sees[v] &= runs.seen[v][r].faults > 0 && !runs.seen[v][r].off;
	}
	for (int r = 0; r < o.rounds; r++) {
		speed[r] = t[NATIVE][r] / t[TABLE][r];
		off_speed[r] = t[NATIVE][r] / t[OFF][r];
		cost[r] = (t[ALL][r] - t[NATIVE][r]) / (t[BARE][r] - t[NATIVE][r]);
	}
	double table_speed = bench_median(speed, o.rounds);
	double added_all = m[ALL] - m[NATIVE], added_bare = m[BARE] - m[NATIVE];
	double ratio = bench_median(cost, o.rounds);
	printf("\nmedians of %d rounds: native %.3f s, off %.3f s, table %.3f s, "
	       "all %.3f s, bare handler %.3f s\n", o.rounds, m[NATIVE], m[OFF],
	       m[TABLE], m[ALL], m[BARE]);
	printf("table: %.3f +-%.1f%% of native speed (median of the rounds' "
	       "ratios); off: %.3f; goal >= 0.95: %s\n", table_speed,
	       100 * bench_noise(speed, o.rounds), bench_median(off_speed, o.rounds),
	       sees[TABLE] ? bench_verdict(table_speed, 0.95, true,
					   bench_noise(speed, o.rounds))
			   : "no verdict: table saw no faults (no userfaultfd?)");
	printf("all: adds %.3f s to native, the bare handler %.3f s: %.2f +-%.1f%% "
	       "its cost (median of the rounds' ratios), %.2fx its time; goal "
	       "<= 1.5: %s\n", added_all, added_bare, ratio,
	       100 * bench_noise(cost, o.rounds), m[ALL] / m[BARE],
	       sees[ALL] ? bench_verdict(ratio, 1.5, false,
					 bench_noise(cost, o.rounds))
			 : "no verdict: all saw no faults (no userfaultfd?)");
	return 0;
}
