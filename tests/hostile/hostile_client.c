/* SPDX-License-Identifier: MIT */
/*
 * A hostile client of ptshared (docs/daemon.md, Hostile clients): connects
 * to the socket in argv[1] and plays the scenario in argv[2], printing one
 * line per fact the test checks.  Built without sanitizers: the daemon
 * reads its /proc.
 *
 *   liar PID      HELLO claiming PID as its parent, PTS_FORK records
 *                 claiming PID and init as its children, EXIT
 *   oversize      HELLO, packets larger than any record, EXIT
 *   truncated     HELLO, records cut short, then silence (the connection
 *                 held) until a line on stdin, then EXIT
 *   deaf          HELLO, then records the daemon acks, never reading them,
 *                 until the daemon hangs up
 *   fds           connections whose HELLO brings fds that are not
 *                 userfaultfds (a pipe, a file, a socket, two at once), and
 *                 a record with more fds than a packet may bring: each must
 *                 be closed by the daemon
 *   claims N      HELLO, N mappings that do not exist (some populated, one
 *                 of 64 TiB), N unmappings of nothing, EXIT
 *   storm N P     N connections one after the other, opened and closed (a
 *                 HELLO every 1000th); after P of them, "paused" and a line
 *                 on stdin
 *   crowd N       N processes connected at once, each with a HELLO: how
 *                 many were acked and how many refused; they hold their
 *                 connections until a line on stdin
 *   kicked-exits N  N connections one after the other, each a HELLO with
 *                 a record ring, then EXIT in the ring and two kicks a
 *                 moment apart, as a shim whose ring was half full kicks
 *                 again when it waits for EXIT's ACK: how many EXITs were
 *                 acked (a daemon that ended the connection with a kick
 *                 unread reset it, and the ACK was lost)
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../support/subject.h"

#include "hostile_wire.h"
#include "ingest/rec_ring.h"

static const char *sock_path;

/* A line on stdin, or its end. */
static void wait_line(void)
{
	char line[16];
	if (!fgets(line, sizeof(line), stdin))
		clearerr(stdin);
}

static struct hconn open_conn(void)
{
	struct hconn c;
	if (hconn_open(&c, sock_path))
		die("connect");
	return c;
}

static int liar(pid_t victim)
{
	struct hconn c = open_conn();
	struct pts_hello h = { .version = PTS_WIRE_VERSION, .ppid = victim };
	snprintf(h.exe, sizeof(h.exe), "hostile_subject");
	say("hello %s\n", hconn_ask(&c, &h.h, PTS_HELLO, sizeof(h), -1));
	const pid_t claimed[] = { victim, 1 };
	for (size_t i = 0; i < 2; i++) {
		struct pts_fork f = { .child = claimed[i] };
		hconn_send(&c, &f.h, PTS_FORK, sizeof(f), -1);
	}
	struct pts_exit e = { 0 };
	say("exit %s\n", hconn_ask(&c, &e.h, PTS_EXIT, sizeof(e), -1));
	return 0;
}

/* Each packet here is malformed once. */
static int oversize(void)
{
	static unsigned char big[65536];
	struct hconn c = open_conn();
	struct pts_hello h = { .version = PTS_WIRE_VERSION };
	say("hello %s\n", hconn_ask(&c, &h.h, PTS_HELLO, sizeof(h), -1));
	memset(big, 0xab, sizeof(big));
	struct pts_hdr *r = (struct pts_hdr *)big;
	*r = (struct pts_hdr){ .type = PTS_MUNMAP, .size = PTS_REC_MAX, .seq = ++c.seq };
	unsigned n = 0;
	n += hconn_raw(&c, big, PTS_REC_MAX + 1, -1);
	n += hconn_raw(&c, big, sizeof(big), -1);
	n += hconn_raw(&c, big, PTS_REC_MAX, -1); /* a size no MUNMAP has */
	c.seq--; /* none of them counted */
	struct pts_exit e = { 0 };
	say("malformed %u\n", n);
	say("exit %s\n", hconn_ask(&c, &e.h, PTS_EXIT, sizeof(e), -1));
	return 0;
}

static int truncated(void)
{
	struct hconn c = open_conn();
	struct pts_hello h = { .version = PTS_WIRE_VERSION };
	say("hello %s\n", hconn_ask(&c, &h.h, PTS_HELLO, sizeof(h), -1));
	struct pts_mmap m = { .fd = -1 };
	hconn_fill(&c, &m.h, PTS_MMAP, sizeof(m));
	unsigned n = hconn_raw(&c, &m, sizeof(m) / 2, -1);   /* half a record */
	n += hconn_raw(&c, &m, sizeof(m.h), -1);             /* its header alone */
	n += hconn_raw(&c, &m, 3, -1);                       /* not even that */
	c.seq--;
	say("malformed %u\n", n);
	say("stopped\n");
	wait_line();
	struct pts_exit e = { 0 };
	say("exit %s\n", hconn_ask(&c, &e.h, PTS_EXIT, sizeof(e), -1));
	return 0;
}

/* A failed mremap with EFAULT is acked (docs/faults.md, mremap): the
 * daemon answers every one, and this client reads none. */
static int deaf(void)
{
	struct hconn c = open_conn();
	struct pts_hello h = { .version = PTS_WIRE_VERSION };
	say("hello %s\n", hconn_ask(&c, &h.h, PTS_HELLO, sizeof(h), -1));
	for (unsigned i = 0; i < 1000000; i++) {
		struct pts_mremap m = { .old_addr = 1u << 20, .old_len = 4096,
					.new_addr = ~0ull, .new_len = 8192,
					.result_errno = EFAULT };
		hconn_fill(&c, &m.h, PTS_MREMAP, sizeof(m));
		m.h.flags = PTS_F_FAILED;
		if (!hconn_raw(&c, &m, sizeof(m), -1)) {
			say("deaf dropped\n");
			return 0;
		}
	}
	say("deaf served\n");
	return 0;
}

/* The daemon, as the kernel says who our peer is. */
static pid_t daemon_pid(const struct hconn *c)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	if (getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &cred, &len))
		die("SO_PEERCRED");
	return cred.pid;
}

/* Whether the daemon holds a descriptor of what fd is: a file whose link
 * in /proc is the same. */
static bool daemon_holds(pid_t d, int fd)
{
	char path[64], want[PATH_MAX], got[PATH_MAX];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(path, want, sizeof(want));
	if (n < 0)
		die("readlink");
	snprintf(path, sizeof(path), "/proc/%d/fd", (int)d);
	DIR *dir = opendir(path);
	if (!dir)
		die("opendir /proc/DAEMON/fd");
	bool held = false;
	for (struct dirent *e; !held && (e = readdir(dir));) {
		ssize_t m = readlinkat(dirfd(dir), e->d_name, got, sizeof(got));
		held = m == n && !memcmp(got, want, (size_t)n);
	}
	closedir(dir);
	return held;
}

/* Until the daemon holds none of fds (at most 120 s): true when it let
 * them go. */
static bool released(pid_t d, const int *fds, size_t n)
{
	for (int tries = 0; tries < 12000; tries++) {
		bool any = false;
		for (size_t i = 0; i < n && !any; i++)
			any = daemon_holds(d, fds[i]);
		if (!any)
			return true;
		usleep(10000);
	}
	return false;
}

/* A HELLO saying it brings a userfaultfd, with fds that are not one:
 * "closed" once the daemon has acked it, let them go, and acked an EXIT. */
static const char *hello_with(const int *fds, size_t n)
{
	struct hconn c = open_conn();
	struct pts_hello h = { .version = PTS_WIRE_VERSION, .flags = PTS_HELLO_UFFD };
	struct pts_exit e = { 0 };
	const char *said = hconn_ask_fds(&c, &h.h, PTS_HELLO, sizeof(h), fds, n);
	if (!strcmp(said, "acked"))
		said = !released(daemon_pid(&c), fds, n) ? "kept"
		       : !strcmp(hconn_ask(&c, &e.h, PTS_EXIT, sizeof(e), -1), "acked")
			       ? "closed" : "exit not acked";
	hconn_close(&c);
	return said;
}

static int fds(void)
{
	int p[2], q[2], s[2];
	char file[] = "/tmp/ptshare-hostile-XXXXXX";
	int f = mkstemp(file);
	if (f < 0 || pipe2(p, O_CLOEXEC) || pipe2(q, O_CLOEXEC) ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s))
		die("fds");
	unlink(file);
	const int two[] = { p[1], q[1] };
	say("pipe %s\n", hello_with(&p[1], 1));
	say("file %s\n", hello_with(&f, 1));
	say("socket %s\n", hello_with(&s[0], 1));
	say("two %s\n", hello_with(two, 2));
	/* More than a packet may bring (recv.h: RECV_FDS_MAX): the kernel
	 * closes those that do not fit, the daemon the others. */
	int many[8];
	for (size_t i = 0; i < 8; i++)
		many[i] = i % 2 ? p[1] : q[0];
	struct hconn c = open_conn();
	struct pts_hello h = { .version = PTS_WIRE_VERSION };
	hconn_ask(&c, &h.h, PTS_HELLO, sizeof(h), -1);
	struct pts_range r = { 0 };
	hconn_fill(&c, &r.h, PTS_MUNMAP, sizeof(r));
	hconn_raw_fds(&c, &r, sizeof(r), many, 8);
	say("many %s\n", released(daemon_pid(&c), many, 8) ? "closed" : "kept");
	struct pts_exit e = { 0 };
	say("exit %s\n", hconn_ask(&c, &e.h, PTS_EXIT, sizeof(e), -1));
	return 0;
}

static void claim_map(struct hconn *c, uint64_t addr, uint64_t len, int flags)
{
	struct pts_mmap m = { .addr = addr, .len = len, .prot = PROT_READ | PROT_WRITE,
			      .flags = flags | MAP_ANONYMOUS, .fd = -1 };
	hconn_send(c, &m.h, PTS_MMAP, sizeof(m), -1);
}

/* Claims of mappings that are not there, far from anything the process
 * has (below 4 GiB: nothing of a PIE program lives there). */
static int claims(unsigned n)
{
	struct hconn c = open_conn();
	struct pts_hello h = { .version = PTS_WIRE_VERSION };
	say("hello %s\n", hconn_ask(&c, &h.h, PTS_HELLO, sizeof(h), -1));
	claim_map(&c, 1ull << 32, 64ull << 40, MAP_PRIVATE | MAP_POPULATE);
	for (unsigned i = 0; i < n; i++)
		claim_map(&c, (1ull << 20) + i * (8ull << 12), 4096 << (i % 2),
			  (i % 4 == 3 ? MAP_SHARED : MAP_PRIVATE) |
			  (i % 3 == 0 ? MAP_POPULATE : 0));
	for (unsigned i = 0; i < n; i++) {
		struct pts_range u = { .addr = (1ull << 33) + i * 4096ull, .len = 4096 };
		hconn_send(&c, &u.h, PTS_MUNMAP, sizeof(u), -1);
	}
	struct pts_exit e = { 0 };
	say("exit %s\n", hconn_ask(&c, &e.h, PTS_EXIT, sizeof(e), -1));
	return 0;
}

static int storm(unsigned n, unsigned pause)
{
	unsigned acked = 0;
	for (unsigned i = 1; i <= n; i++) {
		struct hconn c = open_conn();
		if (i % 1000 == 0) {
			struct pts_hello h = { .version = PTS_WIRE_VERSION };
			acked += !strcmp(hconn_ask(&c, &h.h, PTS_HELLO, sizeof(h), -1),
					 "acked");
		}
		hconn_close(&c);
		if (i == pause) {
			say("paused\n");
			wait_line();
		}
	}
	say("storm %u acked %u\n", n, acked);
	return 0;
}

/* One process of the crowd (one connection per process, as a shim has):
 * says on told whether its HELLO was acked ('a') or refused ('r'), then
 * holds its connection until release reaches its end. */
static _Noreturn void crowd_member(int told, int release)
{
	struct hconn c = open_conn();
	struct pts_hello h = { .version = PTS_WIRE_VERSION };
	const char *r = hconn_ask(&c, &h.h, PTS_HELLO, sizeof(h), -1);
	char said = !strcmp(r, "acked") ? 'a' : !strcmp(r, "hung up") ? 'r' : 'n';
	if (write(told, &said, 1) != 1)
		_exit(1);
	while (read(release, &said, 1) > 0)
		;
	_exit(0);
}

static int crowd(unsigned n)
{
	unsigned acked = 0, refused = 0;
	int told[2], release[2];
	if (pipe2(told, O_CLOEXEC) || pipe2(release, O_CLOEXEC))
		die("pipe");
	for (unsigned i = 0; i < n; i++) {
		pid_t pid = fork();
		if (pid < 0)
			die("fork");
		if (!pid) {
			close(release[1]);
			crowd_member(told[1], release[0]);
		}
	}
	close(told[1]);
	close(release[0]);
	for (unsigned i = 0; i < n; i++) {
		char said;
		if (read(told[0], &said, 1) != 1)
			die("a member of the crowd");
		acked += said == 'a';
		refused += said == 'r';
	}
	say("crowd acked %u refused %u\n", acked, refused);
	wait_line();
	close(release[1]);
	while (wait(NULL) > 0)
		;
	return 0;
}

/* A record ring as the shim makes one (docs/wire-protocol.md). */
#define RING_DATA (4u << 10)

/* One process, one connection: HELLO with a ring, EXIT in the ring, two
 * kicks gap_us apart, the EXIT's ACK.  Exits 0 when it was acked. */
static _Noreturn void kicked_exit(unsigned gap_us)
{
	static const struct pts_hdr kick = { .type = PTS_RING_KICK,
					      .size = sizeof(kick) };
	struct hconn c = open_conn();
	struct pts_ring *ring;
	int fd = rec_ring_memfd(RING_DATA, &ring);
	if (fd < 0)
		die("the ring");
	struct pts_hello h = { .version = PTS_WIRE_VERSION, .flags = PTS_HELLO_RING };
	const char *r = hconn_ask(&c, &h.h, PTS_HELLO, sizeof(h), fd);
	struct pts_exit e = { 0 };
	hconn_fill(&c, &e.h, PTS_EXIT, sizeof(e));
	struct iovec iov = { &e, sizeof(e) };
	rec_ring_write(ring, 0, &iov, 1);
	hconn_raw(&c, &kick, sizeof(kick), -1);
	/* the second kick meets the daemon anywhere between the first and
	 * its end of the connection */
	struct timespec gap = { 0, (long)gap_us * 1000 };
	nanosleep(&gap, NULL);
	hconn_raw(&c, &kick, sizeof(kick), -1);
	const char *x = hconn_wait_ack(&c, e.h.seq);
	if (strcmp(r, "acked") || strcmp(x, "acked"))
		fprintf(stderr, "HELLO %s, EXIT %s (%s)\n", r, x, strerror(errno));
	_exit(strcmp(r, "acked") || strcmp(x, "acked"));
}

static int kicked_exits(unsigned n)
{
	unsigned acked = 0;
	for (unsigned i = 0; i < n; i++) {
		pid_t pid = fork();
		if (pid < 0)
			die("fork");
		if (!pid)
			kicked_exit(i % 64 * 2);
		int st;
		if (waitpid(pid, &st, 0) != pid)
			die("waitpid");
		acked += WIFEXITED(st) && WEXITSTATUS(st) == 0;
	}
	say("kicked-exits %u acked %u\n", n, acked);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fputs("usage: hostile_client SOCKET liar PID|oversize|truncated|deaf|"
		      "fds|claims N|storm N P|crowd N|kicked-exits N\n", stderr);
		return 2;
	}
	sock_path = argv[1];
	const char *s = argv[2];
	unsigned a = argc > 3 ? (unsigned)strtoul(argv[3], NULL, 10) : 0;
	unsigned b = argc > 4 ? (unsigned)strtoul(argv[4], NULL, 10) : 0;
	if (!strcmp(s, "liar"))
		return liar((pid_t)a);
	if (!strcmp(s, "oversize"))
		return oversize();
	if (!strcmp(s, "truncated"))
		return truncated();
	if (!strcmp(s, "deaf"))
		return deaf();
	if (!strcmp(s, "fds"))
		return fds();
	if (!strcmp(s, "claims"))
		return claims(a);
	if (!strcmp(s, "storm"))
		return storm(a, b);
	if (!strcmp(s, "crowd"))
		return crowd(a);
	if (!strcmp(s, "kicked-exits"))
		return kicked_exits(a);
	fprintf(stderr, "hostile_client: no scenario '%s'\n", s);
	return 2;
}
