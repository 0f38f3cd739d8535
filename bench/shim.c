/* SPDX-License-Identifier: MIT */
/*
 * bench/shim: what the shim costs a program per intercepted call.  A child
 * maps and unmaps one anonymous page in a loop and reports the time per
 * pair; it runs without the shim (the baseline), with the shim but no
 * daemon (every interposer goes straight through), and traced by a minimal
 * receiver in this process (ACKs HELLO and EXIT, reads and drops the rest,
 * from the record ring as the daemon does, or from the socket with the
 * shim's ring=0: the cost of a send per record) without and with call
 * stacks.  REPEAT rounds of every variant, in a rotating order; the
 * medians of the times and of each round's ratio to its run without the
 * shim.  Then what the shim's ioctl
 * interposer costs every request it lets through (FIONREAD of a pipe):
 * the child calls ioctl, and glibc's ioctl found past the shim
 * (dlsym(RTLD_NEXT)), in alternate batches, the fastest batch of each
 * kept: other work on the machine slows a batch, never speeds it up.
 * Last, what a traced exec adds before the kernel's work: an execve of a
 * missing file, with an environment of 40 entries, in a loop.
 *
 * Not sanitized: the shim is preloaded into the child, and a sanitizer
 * runtime would have to come first.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ingest/rec_ring.h"
#include "ptshare/wire.h"

#define PAIRS 200000
#define REPEAT 5

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

#define BATCH 1000
#define BATCHES 400
#define EXECS 5000
#define EXEC_ENV 40

/* The child: ns per ioctl through the interposer (if any), and past it,
 * the fastest batch of each, on stdout. */
static int ioctl_loop(void)
{
	int (*past)(int, unsigned long, ...) = dlsym(RTLD_NEXT, "ioctl");
	int fds[2], n;
	double best[2] = { 1e30, 1e30 };
	if (!past || pipe(fds))
		return 1;
	for (int b = 0; b < BATCHES; b++)
		for (int way = 0; way < 2; way++) {
			double t = now_ns();
			for (int i = 0; i < BATCH; i++)
				if ((way ? past : ioctl)(fds[0], FIONREAD, &n))
					return 1;
			t = (now_ns() - t) / BATCH;
			best[way] = t < best[way] ? t : best[way];
		}
	printf("%.1f %.1f\n", best[0], best[1]);
	return 0;
}

/* The child: ns per mmap+munmap pair, on stdout. */
static int map_loop(void)
{
	for (int i = 0; i < PAIRS / 10; i++) /* warm up */
		munmap(mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
			    -1, 0), 4096);
	double t = now_ns();
	for (int i = 0; i < PAIRS; i++) {
		void *p = mmap(NULL, 4096, PROT_READ,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED || munmap(p, 4096))
			return 1;
	}
	printf("%.1f\n", (now_ns() - t) / PAIRS);
	return 0;
}

/* The child: ns per execve of a missing file with EXEC_ENV entries in its
 * environment (a login shell's size), on stdout: what a traced exec adds
 * before the kernel's own work (PTS_EXEC, PTS_EXEC_FAILED, the new
 * image's environment built). */
static int exec_loop(void)
{
	extern char **environ;
	char *env[EXEC_ENV + 1], fill[EXEC_ENV][32];
	char *argv[] = { "missing", NULL };
	int n = 0;
	for (char **e = environ; *e && n < EXEC_ENV / 2; e++)
		env[n++] = *e;
	for (int i = 0; n < EXEC_ENV; i++) {
		snprintf(fill[i], sizeof(fill[i]), "BENCH_VAR_%02d=a value", i);
		env[n++] = fill[i];
	}
	env[n] = NULL;
	double t = now_ns();
	for (int i = 0; i < EXECS; i++)
		if (execve("/nonexistent/ptshare-bench", argv, env) != -1 ||
		    errno != ENOENT)
			return 1;
	printf("%.1f\n", (now_ns() - t) / EXECS);
	return 0;
}

struct receiver {
	int listener;
	atomic_ulong records;
	atomic_bool stop;
};

/* The ring a HELLO brought (its last fd), mapped; NULL without one. */
static struct pts_ring *ring_of(struct msghdr *m, struct rec_ring_view *v)
{
	struct cmsghdr *c = CMSG_FIRSTHDR(m);
	struct stat st;
	int fd = -1;
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return NULL;
	size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
	if (!n)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
		if (i + 1 < n)
			close(fd);
	}
	const struct pts_hello *h = m->msg_iov->iov_base;
	if (!(h->flags & PTS_HELLO_RING) || fstat(fd, &st)) {
		close(fd);
		return NULL;
	}
	void *p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE,
		       MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return NULL;
	*v = (struct rec_ring_view){ (unsigned char *)p + PTS_RING_DATA,
				     (uint32_t)(st.st_size - PTS_RING_DATA), 0 };
	return p;
}

static void ack(int fd, const struct pts_hdr *h)
{
	struct pts_ack a = { .h = { .type = PTS_ACK, .size = sizeof(a) },
			     .acked_seq = h->seq };
	send(fd, &a, sizeof(a), MSG_NOSIGNAL);
}

/* Counts a record; acks HELLO and EXIT. */
static void take(struct receiver *rc, int fd, const struct pts_hdr *h)
{
	rc->records++;
	if (h->type == PTS_HELLO || h->type == PTS_EXIT)
		ack(fd, h);
}

/* What the ring holds, as the daemon takes it: then tail given back, and
 * the shim woken if it waits for room. */
static void drain(struct receiver *rc, int fd, struct pts_ring *r,
		  struct rec_ring_view *v)
{
	unsigned char rec[PTS_REC_MAX];
	size_t len;
	uint64_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
	while (rec_ring_next(v, head, rec, &len) == REC_RING_RECORD)
		take(rc, fd, (const struct pts_hdr *)rec);
	rec_ring_give_back(r, v->tail);
}

/* One connection at a time: the child is single-threaded and never forks.
 * Its ring is read at every kick and every 100 ms, as ptshared does. */
static void serve(struct receiver *rc, int fd)
{
	unsigned char buf[PTS_REC_MAX];
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(4 * sizeof(int))];
	} ctl;
	struct iovec iov = { buf, sizeof(buf) };
	struct rec_ring_view v;
	struct pts_ring *ring = NULL;
	for (bool open = true; open;) {
		struct pollfd p = { fd, POLLIN, 0 };
		if (poll(&p, 1, 100) < 0)
			break;
		if (ring)
			drain(rc, fd, ring, &v);
		for (;;) {
			struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
					    .msg_control = ctl.b,
					    .msg_controllen = sizeof(ctl.b) };
			ssize_t n = recvmsg(fd, &m, MSG_DONTWAIT);
			if (n <= 0) {
				open = n < 0 && errno == EAGAIN;
				break;
			}
			const struct pts_hdr *h = (const void *)buf;
			if (h->type == PTS_RING_KICK)
				continue;
			if (h->type == PTS_HELLO && !ring)
				ring = ring_of(&m, &v);
			take(rc, fd, h);
		}
	}
	if (ring) {
		drain(rc, fd, ring, &v);
		munmap(ring, PTS_RING_DATA + (size_t)v.size);
	}
}

static void *receive(void *arg)
{
	struct receiver *rc = arg;

	while (!rc->stop) {
		struct pollfd p = { rc->listener, POLLIN, 0 };
		if (poll(&p, 1, 50) <= 0)
			continue;
		int fd = accept(rc->listener, NULL, NULL);
		serve(rc, fd);
		close(fd);
	}
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* What the child run with env (what: its loop) printed. */
static const char *child_output(const char *self, const char *what,
				char *const env[])
{
	static char text[64];
	int out[2];
	if (pipe(out))
		exit(1);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(out[1], 1);
		execle(self, self, what, (char *)NULL, env);
		_exit(127);
	}
	close(out[1]);
	ssize_t n = read(out[0], text, sizeof(text) - 1);
	close(out[0]);
	int status;
	waitpid(pid, &status, 0);
	if (n <= 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "bench/shim: the child failed\n");
		exit(1);
	}
	text[n] = '\0';
	return text;
}

struct variant {
	const char *name;
	char **env;
};


int main(int argc, char **argv)
{
	char self[4096], dir[] = "/tmp/ptshare-bench-XXXXXX";
	char preload[4200], socket_env[200];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct receiver rc = { 0 };
	pthread_t thread;

	if (argc > 1 && !strcmp(argv[1], "--map-loop"))
		return map_loop();
	if (argc > 1 && !strcmp(argv[1], "--ioctl-loop"))
		return ioctl_loop();
	if (argc > 1 && !strcmp(argv[1], "--exec-loop"))
		return exec_loop();
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0 || !mkdtemp(dir))
		return 1;
	self[n] = '\0';
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/sock", dir);
	rc.listener = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	if (bind(rc.listener, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(rc.listener, 8) || pthread_create(&thread, NULL, receive, &rc))
		return 1;
	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s", SHIM_PATH);
	snprintf(socket_env, sizeof(socket_env), "PTSHARE_SOCKET=%s", sa.sun_path);

	char *plain[] = { NULL };
	char *no_daemon[] = { preload, NULL };
	char *no_stack[] = { preload, socket_env, "PTSHARE_OPTIONS=stack=0", NULL };
	char *traced[] = { preload, socket_env, NULL };
	char *sock_no_stack[] = { preload, socket_env,
				  "PTSHARE_OPTIONS=stack=0,ring=0", NULL };
	char *sock_traced[] = { preload, socket_env, "PTSHARE_OPTIONS=ring=0",
				NULL };
	const struct variant runs[] = {
		{ "without the shim", plain },
		{ "shim, no daemon", no_daemon },
		{ "traced, stack=0", no_stack },
		{ "traced, 4 frames", traced },
		{ "socket, stack=0", sock_no_stack },
		{ "socket, 4 frames", sock_traced },
	};

	printf("mmap+munmap of one anonymous page, %d pairs, median of %d rounds, "
	       "ratios to each round's run without the shim "
	       "(%d records a traced run)\n", PAIRS, REPEAT,
	       2 * (PAIRS + PAIRS / 10) + 2);
	size_t nruns = sizeof(runs) / sizeof(runs[0]);
	double ns[REPEAT][sizeof(runs) / sizeof(runs[0])];
	unsigned long got[sizeof(runs) / sizeof(runs[0])] = { 0 };
	/* Each round runs every variant, in an order that rotates: load that
	 * comes and goes spoils a round's ratios together, not one variant. */
	for (int r = 0; r < REPEAT; r++)
		for (size_t j = 0; j < nruns; j++) {
			size_t i = (j + (size_t)r) % nruns;
			unsigned long before = rc.records;
			ns[r][i] = atof(child_output(self, "--map-loop", runs[i].env));
			got[i] += rc.records - before;
		}
	for (size_t i = 0; i < nruns; i++) {
		double t[REPEAT], ratio[REPEAT];
		for (int r = 0; r < REPEAT; r++) {
			t[r] = ns[r][i];
			ratio[r] = ns[r][i] / ns[r][0];
		}
		qsort(t, REPEAT, sizeof(t[0]), cmp_double);
		qsort(ratio, REPEAT, sizeof(ratio[0]), cmp_double);
		double base[REPEAT];
		for (int r = 0; r < REPEAT; r++)
			base[r] = ns[r][0];
		qsort(base, REPEAT, sizeof(base[0]), cmp_double);
		printf("%-18s %7.0f ns/pair %6.2fx  %5.0f ns added per call, "
		       "%lu records received\n", runs[i].name, t[REPEAT / 2],
		       ratio[REPEAT / 2], (t[REPEAT / 2] - base[REPEAT / 2]) / 2,
		       got[i] / REPEAT);
	}
	printf("ioctl(FIONREAD) of a pipe, the fastest of %d batches of %d "
	       "(none traced)\n", BATCHES, BATCH);
	for (size_t i = 0; i < nruns; i++) {
		double call[2];
		if (sscanf(child_output(self, "--ioctl-loop", runs[i].env), "%lf %lf",
			   &call[0], &call[1]) != 2)
			exit(1);
		printf("%-18s %6.1f ns/call, %6.1f past the shim: %5.1f ns added\n",
		       runs[i].name, call[0], call[1], call[0] - call[1]);
	}
	printf("execve of a missing file with %d environment entries, %d "
	       "calls, median of %d runs\n", EXEC_ENV, EXECS, REPEAT);
	for (size_t i = 0; i < nruns; i++) {
		double t[REPEAT];
		for (int r = 0; r < REPEAT; r++)
			t[r] = atof(child_output(self, "--exec-loop", runs[i].env));
		qsort(t, REPEAT, sizeof(t[0]), cmp_double);
		printf("%-18s %7.0f ns/call\n", runs[i].name, t[REPEAT / 2]);
	}
	rc.stop = 1;
	pthread_join(thread, NULL);
	close(rc.listener);
	unlink(sa.sun_path);
	rmdir(dir);
	return 0;
}
