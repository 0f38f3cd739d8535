/* SPDX-License-Identifier: MIT */
/*
 * A hand-written client of ptshared, for its tests: connects to the socket
 * in argv[1] and plays the scenario in argv[2], printing what happened, one
 * line per fact the test checks.  Built without sanitizers: the daemon
 * reads its /proc at every checkpoint.
 *
 *   polite   HELLO, a mapping and its unmapping, EXIT; prints the ACKs,
 *            then whether the daemon ended the connection (nothing
 *            follows an EXIT) while the client still runs
 *   hostile  HELLO, then every kind of malformed packet (some carrying
 *            fds), then EXIT; prints how many were malformed and whether
 *            the daemon closed the fds it was sent
 *   flood    HELLO, then malformed packets until the daemon hangs up
 *   ghost    HELLO, and gone without reading the ACK
 *   liar     HELLO, an mprotect told as done over memory it never mapped
 *            (which the model refuses), EXIT; prints the ACKs
 *   linger   HELLO, then waits for a line on stdin before its EXIT
 *   exec     what an exec looks like: HELLO, then (after a line on stdin)
 *            records and PTS_EXEC on that connection, which closes, and
 *            at once a second connection (the new image) with HELLO ("queued"
 *            once it is sent) and EXIT
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "../support/subject.h"

#include "ptshare/wire.h"

#define ACK_TIMEOUT_MS 30000

#define EXEC_RECORDS 100 /* before the exec: they fit in the socket */

static const char *sock_path;
static int sock;
static uint32_t seq;

static void hdr(struct pts_hdr *h, uint16_t type, size_t size)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	*h = (struct pts_hdr){
		.type = type, .size = (uint16_t)size, .seq = ++seq,
		.time_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec,
		.tid = (uint32_t)gettid(),
	};
}

/* One packet, with fd passed along when fd >= 0.  False once the daemon
 * has hung up. */
static bool send_packet(const void *buf, size_t len, int fd)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov = { (void *)buf, len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (fd >= 0) {
		m.msg_control = ctl.b;
		m.msg_controllen = sizeof(ctl.b);
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	if (sendmsg(sock, &m, MSG_NOSIGNAL) >= 0)
		return true;
	if (errno == EPIPE || errno == ECONNRESET)
		return false;
	die("sendmsg");
}

/* The ACK of seq: "acked", or "hung up", or "no ack" after the bound. */
static const char *wait_ack(uint32_t acked)
{
	struct pollfd p = { sock, POLLIN, 0 };
	for (;;) {
		if (poll(&p, 1, ACK_TIMEOUT_MS) != 1)
			return "no ack";
		struct pts_ack a;
		ssize_t n = recv(sock, &a, sizeof(a), 0);
		if (n <= 0)
			return "hung up";
		if (n == sizeof(a) && a.h.type == PTS_ACK && a.acked_seq == acked)
			return "acked";
	}
}

static void connect_socket(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	strcpy(sa.sun_path, sock_path);
	sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (sock < 0 || connect(sock, (struct sockaddr *)&sa, sizeof(sa)))
		die("connect");
	seq = 0;
}

static const char *hello(void)
{
	struct pts_hello m = { .version = PTS_WIRE_VERSION, .ppid = getppid() };
	snprintf(m.exe, sizeof(m.exe), "run_client");
	hdr(&m.h, PTS_HELLO, sizeof(m));
	send_packet(&m, sizeof(m), -1);
	return wait_ack(m.h.seq);
}

static const char *bye(void)
{
	struct pts_exit m = { .status = 0 };
	hdr(&m.h, PTS_EXIT, sizeof(m));
	send_packet(&m, sizeof(m), -1);
	return wait_ack(m.h.seq);
}

/* A real mapping of len bytes, told as the shim would, then its
 * unmapping. */
static void map_and_unmap(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		die("mmap");
	memset(p, 1, len);
	struct pts_mmap m = {
		.addr = (uintptr_t)p, .len = len, .prot = PROT_READ | PROT_WRITE,
		.flags = MAP_PRIVATE | MAP_ANONYMOUS, .fd = -1,
	};
	hdr(&m.h, PTS_MMAP, sizeof(m));
	send_packet(&m, sizeof(m), -1);
	munmap(p, len);
	struct pts_range u = { .addr = (uintptr_t)p, .len = len };
	hdr(&u.h, PTS_MUNMAP, sizeof(u));
	send_packet(&u, sizeof(u), -1);
}

/* "ended" once the daemon has hung up, "open" after the bound. */
static const char *hang_up(void)
{
	struct pollfd p = { sock, POLLRDHUP, 0 };
	char b;
	if (poll(&p, 1, ACK_TIMEOUT_MS) != 1)
		return "open";
	return recv(sock, &b, 1, MSG_DONTWAIT) == 0 ? "ended" : "open";
}

static int polite(void)
{
	printf("hello %s\n", hello());
	map_and_unmap(4u << 20);
	printf("exit %s\n", bye());
	printf("connection %s\n", hang_up());
	return 0;
}

static int liar(void)
{
	printf("hello %s\n", hello());
	struct pts_range m = { .addr = 1ull << 40, .len = 4096,
			       .arg = PROT_READ };
	hdr(&m.h, PTS_MPROTECT, sizeof(m));
	send_packet(&m, sizeof(m), -1);
	printf("exit %s\n", bye());
	return 0;
}

static int exec_like(void)
{
	struct pts_exec x = { 0 };
	struct pts_hello h = { .version = PTS_WIRE_VERSION, .ppid = getppid(),
			       .flags = PTS_HELLO_EXECED };
	char line[16];
	printf("hello %s\n", hello());
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	for (int i = 0; i < EXEC_RECORDS / 2; i++)
		map_and_unmap(64u << 10);
	snprintf(x.path, sizeof(x.path), "/proc/self/exe");
	hdr(&x.h, PTS_EXEC, sizeof(x));
	send_packet(&x, sizeof(x), -1);
	close(sock);
	connect_socket();
	hdr(&h.h, PTS_HELLO, sizeof(h));
	send_packet(&h, sizeof(h), -1);
	printf("queued\n");
	fflush(stdout);
	printf("new image %s\n", wait_ack(h.h.seq));
	printf("exit %s\n", bye());
	return 0;
}

/* A pipe whose write end goes to the daemon: once the daemon has closed
 * its copy, the read end sees the end of file. */
struct passed {
	int rd, wr;
};

static struct passed pass_pipe(void)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC))
		die("pipe");
	return (struct passed){ p[0], p[1] };
}

static bool closed_by_daemon(struct passed *p)
{
	struct pollfd q = { p->rd, POLLIN, 0 };
	char c;
	close(p->wr);
	return poll(&q, 1, ACK_TIMEOUT_MS) == 1 && read(p->rd, &c, 1) == 0;
}

/* Every packet here is malformed; the daemon must count each once. */
static int hostile(void)
{
	static unsigned char big[PTS_REC_MAX + 512];
	struct pts_hello h = { .version = PTS_WIRE_VERSION };
	struct pts_exit e = { 0 };
	struct pts_range r = { 0 };
	struct passed p1 = pass_pipe(), p2 = pass_pipe();
	unsigned n = 0;

	printf("hello %s\n", hello());
	uint32_t good = seq; /* the last valid sequence number */
	n += send_packet("", 0, -1);                      /* empty */
	n += send_packet("abc", 3, p1.wr);                /* short, with an fd */
	memset(big, 0xff, sizeof(big));
	n += send_packet(big, sizeof(big), -1);           /* oversized */
	n += send_packet(big, PTS_REC_MAX + 1, -1);       /* one byte too many */
	hdr(&e.h, PTS_EXIT, sizeof(e));
	e.h.size = sizeof(e) + 8;
	n += send_packet(&e, sizeof(e), -1);              /* size disagrees */
	hdr(&e.h, 200, sizeof(e));
	n += send_packet(&e, sizeof(e), p2.wr);           /* unknown type */
	hdr(&r.h, PTS_CK_BEGIN, sizeof(r));
	n += send_packet(&r, sizeof(r), -1);              /* the daemon's own */
	hdr(&r.h, PTS_MUNMAP, sizeof(r));
	r.h.nframes = PTS_MAX_FRAMES + 1;
	n += send_packet(&r, sizeof(r), -1);              /* frames, size */
	hdr(&h.h, PTS_HELLO, sizeof(h));
	memset(h.exe, 'x', sizeof(h.exe));
	n += send_packet(&h, sizeof(h), -1);              /* unterminated */
	snprintf(h.exe, sizeof(h.exe), "again");
	h.h.seq = good + 1; /* in sequence: only its type is wrong */
	n += send_packet(&h, sizeof(h), -1);              /* a second HELLO */
	hdr(&r.h, PTS_MUNMAP, sizeof(r));
	r.h.seq = good;
	n += send_packet(&r, sizeof(r), -1);              /* seq again */
	seq = good;
	printf("malformed %u\n", n);
	printf("fds %s\n", closed_by_daemon(&p1) && closed_by_daemon(&p2)
				   ? "closed" : "kept");
	printf("exit %s\n", bye());
	return 0;
}

static int flood(void)
{
	printf("hello %s\n", hello());
	for (int i = 0; i < 100000; i++)
		if (!send_packet("bad", 3, -1))
			break;
	printf("flood %s\n", wait_ack(0));
	return 0;
}

static int ghost(void)
{
	struct pts_hello m = { .version = PTS_WIRE_VERSION, .ppid = getppid() };
	hdr(&m.h, PTS_HELLO, sizeof(m));
	send_packet(&m, sizeof(m), -1);
	return 0;
}

static int linger(void)
{
	char line[16];
	printf("hello %s\n", hello());
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	printf("exit %s\n", bye());
	return 0;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*play)(void);
	} scenarios[] = {
		{ "polite", polite }, { "hostile", hostile }, { "flood", flood },
		{ "ghost", ghost }, { "linger", linger }, { "exec", exec_like },
		{ "liar", liar },
	};
	if (argc != 3 || strlen(argv[1]) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
		fputs("usage: run_client SOCKET "
		      "polite|hostile|flood|ghost|linger|exec|liar\n", stderr);
		return 2;
	}
	sock_path = argv[1];
	connect_socket();
	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
		if (!strcmp(argv[2], scenarios[i].name))
			return scenarios[i].play();
	fprintf(stderr, "run_client: no scenario '%s'\n", argv[2]);
	return 2;
}
