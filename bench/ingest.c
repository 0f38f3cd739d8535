/* SPDX-License-Identifier: MIT */
/*
 * bench/ingest: how fast ptshared takes records in, against a trivial
 * reader of the same socket type measured in the same run.
 *
 * CLIENTS processes connect, say HELLO (and wait for its ACK), send
 * RECORDS records each as fast as the reader takes them, then EXIT and
 * wait for its ACK.  As the shim does, a client hands over a record ring
 * with its HELLO and writes its records there (waiting, kicked, for room:
 * the reader's pace sets the rate); with --socket, it sends each on the
 * socket instead (blocking sends), as the shim did before the ring.  The
 * records are what a program mapping and unmapping small regions sends:
 * MMAP, MPROTECT, MUNMAP, over and over.  The rate is all records over the
 * time from the first send to the last ACK.
 *
 * The trivial reader is a single-threaded epoll loop on a SOCK_SEQPACKET
 * socket: it reads one packet per recv(), and every ring at every wake-up
 * (and every 100 ms, as ptshared), copying each record out as ptshared
 * does (ingest/rec_ring.c), and answers HELLO and EXIT with an ACK at
 * once, with no model and no /proc: the baseline of the same bytes
 * through the same shared memory.  The daemon does the real work:
 * io_uring, validation, the model of every policy, and a /proc checkpoint
 * at each HELLO and EXIT.
 * Goal on the socket (--socket, the first issue's): the daemon's rate at
 * least 0.8 of the trivial reader's.  Through the ring the trivial reader
 * is a copy of the bytes, the baseline issue 13 asks to print beside its
 * goal of 3M records/s: the ratio is printed, with no goal.
 *
 * Also, for each reader: the round trip of a HELLO (connect, HELLO, ACK:
 * what a new process waits for), median over the clients while they flood,
 * and median of HELLOS one after another from a single client alone (each
 * with its ring, as the shim gives it; with --socket, without): back to
 * back (the daemon may still be reading the one before: its connect
 * reading follows its ACK), and SPACED_US apart (it is done with it).
 * Issue 13's goals: 3M records/s, and a HELLO alone within 2x the trivial
 * reader's.
 *
 * With --trace, the daemon keeps a trace (--record, in the benchmark's
 * directory), and with --heartbeat it beats in a memfd (--heartbeat-fd):
 * both, as `ptshare run` starts it (docs/run.md).
 *
 * With --policy LIST the daemon models those policies (its --policy)
 * rather than every built-in one: the cost of a policy per record is the
 * difference of two runs.
 *
 * usage: ingest [--records N] [--repeat N] [--trace] [--heartbeat]
 *               [--policy LIST] [--socket]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_rounds.h"
#include "ingest/rec_ring.h"
#include "ptshare/wire.h"

#define CLIENTS 8
#define REGION (64u << 10)
#define HELLOS 200
/* Past the daemon's wait for a new image's first reading (2 ms after its
 * HELLO when it sends nothing: ingest/readings_owed.c) and that reading:
 * HELLOs exactly 2 ms apart met each the one before's reading. */
#define SPACED_US 5000
/* A client's ring: the shim's default size (docs/shim.md, ring=). */
#define RING_DATA (128u << 10)

static char dir[64], sock_path[108], trace_path[108];
static bool with_trace, with_heartbeat, by_socket;
static const char *policies; /* --policy for the daemon; NULL: its default */

static _Noreturn void die(const char *what)
{
	fprintf(stderr, "bench/ingest: %s: %s\n", what, strerror(errno));
	exit(1);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* --- the clients --- */

struct client_result {
	double hello_s;   /* connect + HELLO + ACK */
	double done;      /* when EXIT was ACKed (now()) */
	bool ok;
};

static void hdr(struct pts_hdr *h, uint16_t type, size_t size, uint32_t *seq)
{
	*h = (struct pts_hdr){ .type = type, .size = (uint16_t)size, .seq = ++*seq,
			       .tid = (uint32_t)getpid() };
}

static bool send_rec(int fd, const void *rec, size_t len)
{
	return send(fd, rec, len, MSG_NOSIGNAL) == (ssize_t)len;
}

/* A client's way to the reader: its socket, and its ring (NULL: none). */
struct way {
	int fd;
	struct pts_ring *ring;
	uint64_t head;
};

static void kick(const struct way *w)
{
	struct pts_hdr k = { .type = PTS_RING_KICK, .size = sizeof(k) };
	send(w->fd, &k, sizeof(k), MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* A ring as the shim makes it: its memfd, for HELLO. */
static int ring_make(struct way *w)
{
	int fd = rec_ring_memfd(RING_DATA, &w->ring);
	if (fd < 0)
		die("the ring");
	return fd;
}

/* A record to the reader: into the ring, waiting for room as the shim
 * does (kicked, asleep on tail_wake), or on the socket. */
static bool put_rec(struct way *w, const void *rec, size_t len)
{
	if (!w->ring)
		return send_rec(w->fd, rec, len);
	uint64_t need = rec_ring_span(len);
	uint64_t before = RING_DATA - rec_ring_room(w->ring, w->head);
	for (int naps = 0; rec_ring_room(w->ring, w->head) < need; naps++) {
		uint32_t seen;
		if (rec_ring_ask_room(w->ring, w->head, need, &seen))
			break;
		if (naps == 6000)
			return false; /* a minute without room */
		kick(w);
		struct timespec ts = { 0, 10000000 };
		syscall(SYS_futex, &w->ring->tail_wake, FUTEX_WAIT, seen, &ts, NULL, 0);
	}
	struct iovec iov = { (void *)rec, len };
	w->head = rec_ring_write(w->ring, w->head, &iov, 1);
	if (before < RING_DATA / 2 && before + need >= RING_DATA / 2)
		kick(w);
	return true;
}

/* HELLO, with the ring's memfd when there is one. */
static bool hello_send(struct way *w, struct pts_hello *h, int ring_fd)
{
	union {
		struct cmsghdr c;
		char b[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov = { h, sizeof(*h) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (ring_fd >= 0) {
		h->flags |= PTS_HELLO_RING;
		m.msg_control = ctl.b;
		m.msg_controllen = sizeof(ctl.b);
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);
		*c = (struct cmsghdr){ .cmsg_len = CMSG_LEN(sizeof(int)),
				       .cmsg_level = SOL_SOCKET,
				       .cmsg_type = SCM_RIGHTS };
		memcpy(CMSG_DATA(c), &ring_fd, sizeof(ring_fd));
	}
	bool sent = sendmsg(w->fd, &m, MSG_NOSIGNAL) == (ssize_t)sizeof(*h);
	if (ring_fd >= 0)
		close(ring_fd);
	return sent;
}

static bool acked(int fd, uint32_t seq)
{
	struct pts_ack a;
	struct pollfd p = { fd, POLLIN, 0 };
	while (poll(&p, 1, 60000) == 1)
		if (recv(fd, &a, sizeof(a), 0) != sizeof(a))
			return false;
		else if (a.h.type == PTS_ACK && a.acked_seq == seq)
			return true;
	return false;
}

/* One client, in a child process: waits for go (a byte on start_fd). */
static struct client_result client(int start_fd, unsigned records)
{
	struct client_result r = { 0 };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	uint32_t seq = 0;
	char c;
	strcpy(sa.sun_path, sock_path);
	/* An address that is free in this process for the records to name:
	 * the exit checkpoint then finds what they said, nothing there. */
	char *region = mmap(NULL, REGION, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED || read(start_fd, &c, 1) != 1)
		return r;
	munmap(region, REGION);
	double t0 = now();
	struct way w = { .fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0) };
	if (w.fd < 0 || connect(w.fd, (struct sockaddr *)&sa, sizeof(sa)))
		return r;
	struct pts_hello h = { .version = PTS_WIRE_VERSION, .ppid = getppid() };
	snprintf(h.exe, sizeof(h.exe), "bench-client");
	hdr(&h.h, PTS_HELLO, sizeof(h), &seq);
	if (!hello_send(&w, &h, by_socket ? -1 : ring_make(&w)) ||
	    !acked(w.fd, h.h.seq))
		return r;
	r.hello_s = now() - t0;
	struct pts_mmap m = {
		.addr = (uintptr_t)region, .len = REGION, .prot = PROT_READ | PROT_WRITE,
		.flags = MAP_PRIVATE | MAP_ANONYMOUS, .fd = -1,
	};
	struct pts_range p = { .addr = (uintptr_t)region, .len = REGION / 2,
			       .arg = PROT_READ };
	struct pts_range u = { .addr = (uintptr_t)region, .len = REGION };
	for (unsigned i = 0; i < records; i++) {
		bool sent;
		switch (i % 3) {
		case 0:
			hdr(&m.h, PTS_MMAP, sizeof(m), &seq);
			sent = put_rec(&w, &m, sizeof(m));
			break;
		case 1:
			hdr(&p.h, PTS_MPROTECT, sizeof(p), &seq);
			sent = put_rec(&w, &p, sizeof(p));
			break;
		default:
			hdr(&u.h, PTS_MUNMAP, sizeof(u), &seq);
			sent = put_rec(&w, &u, sizeof(u));
		}
		if (!sent)
			return r;
	}
	if (records % 3) { /* end unmapped, as the kernel has it */
		hdr(&u.h, PTS_MUNMAP, sizeof(u), &seq);
		put_rec(&w, &u, sizeof(u));
	}
	struct pts_exit e = { 0 };
	hdr(&e.h, PTS_EXIT, sizeof(e), &seq);
	if (!put_rec(&w, &e, sizeof(e)))
		return r;
	if (w.ring)
		kick(&w); /* EXIT is waited for */
	if (!acked(w.fd, e.h.seq))
		return r;
	r.done = now();
	r.ok = true;
	return r;
}

/* The clients, started and released at once: the records per second, and
 * the median HELLO round trip. */
static double run_clients(unsigned records, double *hello)
{
	int start[2], results[2];
	pid_t pids[CLIENTS];
	if (pipe(start) || pipe(results))
		die("pipe");
	for (int i = 0; i < CLIENTS; i++) {
		if ((pids[i] = fork()) < 0)
			die("fork");
		if (!pids[i]) {
			close(start[1]);
			struct client_result r = client(start[0], records);
			_exit(write(results[1], &r, sizeof(r)) == sizeof(r) ? 0 : 1);
		}
	}
	close(results[1]);
	close(start[0]);
	double t0 = now();
	char go[CLIENTS] = { 0 };
	if (write(start[1], go, sizeof(go)) != sizeof(go))
		die("write");
	double end = t0, hellos[CLIENTS];
	for (int i = 0; i < CLIENTS; i++) {
		struct client_result r;
		if (read(results[0], &r, sizeof(r)) != sizeof(r) || !r.ok) {
			errno = EPROTO;
			die("a client failed");
		}
		end = r.done > end ? r.done : end;
		hellos[i] = r.hello_s;
	}
	for (int i = 0; i < CLIENTS; i++)
		waitpid(pids[i], NULL, 0);
	close(start[1]);
	close(results[0]);
	qsort(hellos, CLIENTS, sizeof(hellos[0]), cmp_double);
	*hello = hellos[CLIENTS / 2];
	return CLIENTS * (records + 3.0) / (end - t0);
}

/* --- the trivial reader --- */

static void ack(int fd, const struct pts_hdr *h)
{
	struct pts_ack a = { .h = { .type = PTS_ACK, .size = sizeof(a) },
			     .acked_seq = h->seq };
	send(fd, &a, sizeof(a), MSG_DONTWAIT | MSG_NOSIGNAL);
}

/* The rings of the reader's connections, by fd. */
#define READER_FDS 1024
static struct reader_ring {
	struct pts_ring *ring;
	struct rec_ring_view v;
} rings[READER_FDS];

/* A record the reader took: HELLO and EXIT acked. */
static void took(int fd, const struct pts_hdr *h)
{
	if (h->type == PTS_HELLO || h->type == PTS_EXIT)
		ack(fd, h);
}

/* What fd's ring holds, copied out record by record. */
static void ring_drain(int fd)
{
	struct reader_ring *r = &rings[fd];
	unsigned char rec[PTS_REC_MAX];
	size_t len;
	if (!r->ring)
		return;
	uint64_t head = __atomic_load_n(&r->ring->head, __ATOMIC_ACQUIRE);
	while (rec_ring_next(&r->v, head, rec, &len) == REC_RING_RECORD)
		took(fd, (const struct pts_hdr *)rec);
	rec_ring_give_back(r->ring, r->v.tail);
}

/* The ring a HELLO brought, mapped. */
static void ring_take(int fd, const struct msghdr *m)
{
	struct cmsghdr *c = CMSG_FIRSTHDR((struct msghdr *)m);
	struct stat st;
	int rfd;
	if (!c || c->cmsg_type != SCM_RIGHTS || fd >= READER_FDS)
		return;
	memcpy(&rfd, CMSG_DATA(c), sizeof(rfd));
	if (!fstat(rfd, &st)) {
		void *p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE,
			       MAP_SHARED, rfd, 0);
		if (p != MAP_FAILED)
			rings[fd] = (struct reader_ring){
				p, { (unsigned char *)p + PTS_RING_DATA,
				     (uint32_t)(st.st_size - PTS_RING_DATA), 0 } };
	}
	close(rfd);
}

static void reader_close(int fd)
{
	ring_drain(fd);
	if (fd < READER_FDS && rings[fd].ring) {
		munmap(rings[fd].ring, PTS_RING_DATA + (size_t)rings[fd].v.size);
		rings[fd].ring = NULL;
	}
	close(fd);
}

/* One packet of fd: a record, or a kick. */
static void reader_packet(int fd)
{
	union {
		struct pts_hdr h;
		unsigned char b[PTS_REC_MAX + 1];
	} buf;
	union {
		struct cmsghdr c;
		char b[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov = { &buf, sizeof(buf) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = ctl.b, .msg_controllen = sizeof(ctl.b) };
	ssize_t len = recvmsg(fd, &m, MSG_CMSG_CLOEXEC);
	if (len <= 0) {
		reader_close(fd);
	} else if (buf.h.type == PTS_RING_KICK) {
		ring_drain(fd);
	} else {
		if (buf.h.type == PTS_HELLO)
			ring_take(fd, &m);
		took(fd, &buf.h);
	}
}

/* Serves until killed; every ring at every wake-up, and every 100 ms. */
static _Noreturn void trivial_reader(int listener)
{
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = listener };
	epoll_ctl(ep, EPOLL_CTL_ADD, listener, &ev);
	for (;;) {
		struct epoll_event evs[16];
		int n = epoll_wait(ep, evs, 16, PTS_HEARTBEAT_IDLE_MS);
		for (int i = 0; i < n; i++) {
			int fd = evs[i].data.fd;
			if (fd != listener) {
				reader_packet(fd);
				continue;
			}
			int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
			ev = (struct epoll_event){ .events = EPOLLIN, .data.fd = c };
			epoll_ctl(ep, EPOLL_CTL_ADD, c, &ev);
		}
		for (int fd = 0; fd < READER_FDS; fd++)
			ring_drain(fd);
	}
}

static pid_t trivial_start(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	strcpy(sa.sun_path, sock_path);
	int listener = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (listener < 0 || bind(listener, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(listener, SOMAXCONN))
		die("listen");
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid)
		trivial_reader(listener);
	close(listener);
	return pid;
}

static void trivial_stop(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	unlink(sock_path);
}

/* --- the daemon --- */

static pid_t daemon_start(void)
{
	int ready[2];
	char buf[8];
	if (pipe(ready))
		die("pipe");
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		const char *argv[16] = { PTSHARED_PATH, "--socket", sock_path,
					 "--interval", "0", "--text", "/dev/null",
					 "--ready-fd", "3" };
		size_t n = 9;
		dup2(ready[1], 3);
		if (with_trace) {
			argv[n++] = "--record";
			argv[n++] = trace_path;
		}
		int hb = with_heartbeat ? memfd_create("heartbeat", 0) : -1;
		if (hb >= 0 && !ftruncate(hb, PTS_HEARTBEAT_SIZE) && dup2(hb, 4) == 4) {
			argv[n++] = "--heartbeat-fd";
			argv[n++] = "4";
		}
		if (policies) {
			argv[n++] = "--policy";
			argv[n++] = policies;
		}
		execv(PTSHARED_PATH, (char *const *)argv);
		_exit(127);
	}
	close(ready[1]);
	if (read(ready[0], buf, sizeof(buf)) != 6)
		die("ptshared did not start");
	close(ready[0]);
	return pid;
}

static void daemon_stop(pid_t pid)
{
	int status;
	kill(pid, SIGTERM);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		errno = EPROTO;
		die("ptshared failed");
	}
	if (with_trace)
		unlink(trace_path);
}

/* HELLO round trips one after another from one client, gap_us apart
 * (not timed): the median. */
static double lone_hellos(unsigned gap_us)
{
	double t[HELLOS];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	strcpy(sa.sun_path, sock_path);
	for (int i = 0; i < HELLOS; i++) {
		uint32_t seq = 0;
		double t0 = now();
		struct way w = { .fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0) };
		struct pts_hello h = { .version = PTS_WIRE_VERSION, .ppid = getppid() };
		hdr(&h.h, PTS_HELLO, sizeof(h), &seq);
		if (w.fd < 0 || connect(w.fd, (struct sockaddr *)&sa, sizeof(sa)) ||
		    !hello_send(&w, &h, by_socket ? -1 : ring_make(&w)) ||
		    !acked(w.fd, h.h.seq))
			die("hello");
		t[i] = now() - t0;
		close(w.fd);
		if (w.ring)
			munmap(w.ring, PTS_RING_DATA + RING_DATA);
		if (gap_us)
			usleep(gap_us);
	}
	qsort(t, HELLOS, sizeof(t[0]), cmp_double);
	return t[HELLOS / 2];
}

int main(int argc, char **argv)
{
	unsigned records = 200000, repeat = 5;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--trace"))
			with_trace = true;
		else if (!strcmp(argv[i], "--heartbeat"))
			with_heartbeat = true;
		else if (!strcmp(argv[i], "--records") && i + 1 < argc)
			records = (unsigned)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
			repeat = (unsigned)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--policy") && i + 1 < argc)
			policies = argv[++i];
		else if (!strcmp(argv[i], "--socket"))
			by_socket = true;
	snprintf(dir, sizeof(dir), "/tmp/ptshare-bench-XXXXXX");
	if (!mkdtemp(dir))
		die("mkdtemp");
	snprintf(sock_path, sizeof(sock_path), "%s/sock", dir);
	snprintf(trace_path, sizeof(trace_path), "%s/trace", dir);
	signal(SIGPIPE, SIG_IGN);

	double rate_t[32], rate_d[32], hello_t[32], hello_d[32];
	repeat = repeat < 1 ? 1 : repeat > 32 ? 32 : repeat;
	for (unsigned k = 0; k < repeat; k++) {
		pid_t r = trivial_start();
		rate_t[k] = run_clients(records, &hello_t[k]);
		trivial_stop(r);
		r = daemon_start();
		rate_d[k] = run_clients(records, &hello_d[k]);
		daemon_stop(r);
	}
	pid_t r = trivial_start();
	double lone_t = lone_hellos(0), spaced_t = lone_hellos(SPACED_US);
	trivial_stop(r);
	r = daemon_start();
	double lone_d = lone_hellos(0), spaced_d = lone_hellos(SPACED_US);
	daemon_stop(r);
	rmdir(dir);
	/* Each repeat's ratio: the reader and the daemon ran back to back. */
	double ratio[32];
	for (unsigned k = 0; k < repeat; k++)
		ratio[k] = rate_d[k] / rate_t[k];
	int n = (int)repeat;
	double t = bench_median(rate_t, n), d = bench_median(rate_d, n);
	double rt = bench_median(ratio, n), noise = bench_noise(ratio, n);
	printf("ingest from %d clients, %u records each %s, median of %u%s%s, "
	       "policies %s:\n", CLIENTS, records,
	       by_socket ? "on the socket" : "through a record ring", repeat,
	       with_trace ? ", daemon with a trace" : "",
	       with_heartbeat ? ", daemon with a heartbeat" : "",
	       policies ? policies : "every built-in one");
	printf("                  records/s  us/record  HELLO round trip: flooded  "
	       "alone  %d ms apart\n", SPACED_US / 1000);
	printf("  trivial reader %10.0f %10.3f %26.1f us %6.1f us %6.1f us\n", t,
	       1e6 / t, bench_median(hello_t, n) * 1e6, lone_t * 1e6,
	       spaced_t * 1e6);
	printf("  ptshared       %10.0f %10.3f %26.1f us %6.1f us %6.1f us\n", d,
	       1e6 / d, bench_median(hello_d, n) * 1e6, lone_d * 1e6,
	       spaced_d * 1e6);
	printf("  ratio %.2f +-%.1f%%; %.3f us more per record", rt,
	       100 * noise, 1e6 / d - 1e6 / t);
	if (by_socket)
		printf("; goal >= 0.8: %s", bench_verdict(rt, 0.8, true, noise));
	putchar('\n');
	printf("  records/s %.2fM, goal >= 3M: %s; HELLO alone %.2fx, %d ms apart "
	       "%.2fx the trivial reader's, goal <= 2x: %s, %s\n", d / 1e6,
	       d >= 3e6 ? "goal met" : "goal NOT met", lone_d / lone_t,
	       SPACED_US / 1000, spaced_d / spaced_t,
	       lone_d <= 2 * lone_t ? "met" : "NOT met",
	       spaced_d <= 2 * spaced_t ? "met" : "NOT met");
	return 0;
}
