/* SPDX-License-Identifier: MIT */
/*
 * The connection to the daemon: a unix SOCK_SEQPACKET socket, one record
 * per packet, close-on-exec (an exec closes it: the daemon sees EOF and the
 * new image connects anew).  It lives at a high fd number, out of the
 * program's way, and is checked to be ours before every use: a program may
 * close every fd or dup2 over it, and then the number is the program's.
 * Raw system calls only: the glibc wrappers are cancellation points.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "shim.h"
#include "lib/clock.h"

#define FD_BASE 1000
/* The default (wmem_default, 208 KiB) holds about 280 records: a burst of
 * calls while the daemon is not running would lose records.  The kernel
 * caps this at net.core.wmem_max; memory is used only while it lags. */
#define SEND_BUFFER (4 << 20)
/* Below a lower RLIMIT_NOFILE, this far under the limit. */
#define FD_LIMIT_MARGIN 8
/* Above a soft RLIMIT_NOFILE up to this, when the hard limit leaves room:
 * past it, the fd table a fork copies would grow too much. */
#define FD_ABOVE_LIMIT_MAX 4096

static long dup_high(int fd, long base)
{
	return syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, base);
}

/*
 * Just above the soft limit, where the program cannot open an fd: the
 * shim's fds then take none of the ones it may count on.  F_DUPFD wants a
 * base under the soft limit, so the limit is raised for the call and put
 * back.  Called where the process has one thread (the constructor, the
 * child of fork): no other thread sees the raised limit.
 */
static long dup_above_limit(int fd, const struct rlimit *rl)
{
	struct rlimit raised = { rl->rlim_cur + FD_LIMIT_MARGIN, rl->rlim_max };

	if (rl->rlim_cur > FD_ABOVE_LIMIT_MAX || raised.rlim_cur > rl->rlim_max ||
	    syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, &raised, NULL))
		return -1;
	long high = dup_high(fd, (long)rl->rlim_cur);
	syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, rl, NULL);
	return high;
}

int fd_move_high(int fd)
{
	struct rlimit rl;
	long base = FD_BASE, high = -1;

	if (!syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &rl)) {
		high = dup_above_limit(fd, &rl);
		if (rl.rlim_cur <= FD_BASE)
			base = (long)rl.rlim_cur - FD_LIMIT_MARGIN;
	}
	if (high < 0 && base > fd)
		high = dup_high(fd, base);
	if (high < 0)
		return fd; /* nothing free up there: stay where we are */
	syscall(SYS_close, fd);
	return (int)high;
}

/* When a wait for the daemon that starts now gives up.  A daemon that let
 * one run out is stopped or hung: waiting wait_ms at every fork and exit
 * would stall the program process after process. */
int64_t conn_deadline(void)
{
	return now_ms() + (shim_proc.daemon_late ? 0 : shim_cfg.wait_ms);
}

/* A wait that ran out: no more waits from here on. */
bool conn_late(void)
{
	shim_proc.daemon_late = true;
	return false;
}

/* An ACK that did not come in time, of a record the daemon has not even
 * read (still in the ring, or its bytes still charged to our socket:
 * SIOCOUTQ) is late; one the daemon read, and works on, is not: a daemon
 * that lags (1,111 processes forked at once) is no stopped one, and the
 * processes waiting give it the time to read each before it is gone. */
bool conn_unread_late(void)
{
	int unread = 0;

	if (!(shim_proc.ring && ring_unread()) &&
	    !syscall(SYS_ioctl, shim_proc.fd, SIOCOUTQ, &unread) && !unread)
		return false;
	return conn_late();
}

/* Non-blocking, so that a daemon whose backlog is full costs at most
 * wait_ms (a unix socket then says EAGAIN: retried every millisecond). */
int conn_open(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const struct timespec ms = { 0, 1000000 };
	int64_t deadline = conn_deadline();
	int sndbuf = SEND_BUFFER;

	str_copy(sa.sun_path, sizeof(sa.sun_path), shim_cfg.socket_path);
	long fd = syscall(SYS_socket, AF_UNIX,
			  SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	syscall(SYS_setsockopt, fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	while (syscall(SYS_connect, fd, &sa, sizeof(sa))) {
		int err = errno;
		if ((err != EAGAIN && err != EINTR) || now_ms() >= deadline) {
			if (err == EAGAIN)
				conn_late();
			syscall(SYS_close, fd);
			return -err;
		}
		syscall(SYS_nanosleep, &ms, NULL);
	}
	return fd_move_high((int)fd);
}

bool conn_is_ours(void)
{
	struct stat st;

	return shim_proc.fd >= 0 && !fstat(shim_proc.fd, &st) &&
	       S_ISSOCK(st.st_mode) && st.st_dev == shim_proc.fd_dev &&
	       st.st_ino == shim_proc.fd_ino;
}

/* Whether the daemon is gone (it closed the connection, or the program
 * took its fd): a poll of nothing, which reads nothing. */
bool conn_gone(void)
{
	struct pollfd p = { .fd = shim_proc.fd, .events = 0 };

	return !conn_is_ours() || (syscall(SYS_poll, &p, 1, 0) > 0 &&
				   (p.revents & (POLLHUP | POLLERR)));
}

/* Room in the socket for a record, until deadline. */
static bool wait_room(int64_t deadline)
{
	for (;;) {
		int64_t left = deadline - now_ms();
		struct pollfd p = { .fd = shim_proc.fd, .events = POLLOUT };

		if (left <= 0)
			return conn_late();
		long r = syscall(SYS_poll, &p, 1, (int)left);
		if (r > 0)
			return true;
		if (r < 0 && errno != EINTR)
			return false;
	}
}

int conn_send(const struct iovec *iov, int n, const struct fd_pass *pass,
	      bool wait)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(pass->fd))];
	} ctl;
	struct msghdr m = { .msg_iov = (struct iovec *)iov, .msg_iovlen = n };
	int64_t deadline = wait ? conn_deadline() : 0;

	if (pass && pass->n) {
		size_t bytes = sizeof(int) * (size_t)pass->n;
		m.msg_control = ctl.buf;
		m.msg_controllen = CMSG_SPACE(bytes);
		struct cmsghdr *h = CMSG_FIRSTHDR(&m);
		h->cmsg_level = SOL_SOCKET;
		h->cmsg_type = SCM_RIGHTS;
		h->cmsg_len = CMSG_LEN(bytes);
		memcpy(CMSG_DATA(h), pass->fd, bytes);
	}
	/* MSG_NOSIGNAL: a dead daemon must not SIGPIPE the program. */
	while (syscall(SYS_sendmsg, shim_proc.fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		if ((errno != EAGAIN && errno != ENOBUFS) || !wait || !wait_room(deadline))
			return -errno;
	return 0;
}

/* An ACK of seq, ignoring anything else (a late ACK of an earlier record,
 * after that wait had given up). */
static bool is_ack(const struct pts_ack *a, long len, uint32_t seq)
{
	return len == (long)sizeof(*a) && a->h.type == PTS_ACK &&
	       a->h.size == sizeof(*a) && a->acked_seq == seq;
}

bool conn_wait_ack(uint32_t seq)
{
	int64_t deadline = conn_deadline();

	/* With a ring, no send checked the fd: its number may be the
	 * program's now, which we must not read from. */
	if (!conn_is_ours()) {
		shim_quiet("the program took the connection's fd", false);
		return false;
	}

	if (shim_proc.ring && ring_unread())
		ring_kick(); /* the record waited on is in the ring */

	for (;;) {
		int64_t left = deadline - now_ms();
		struct pollfd p = { .fd = shim_proc.fd, .events = POLLIN };
		struct pts_ack a;

		if (left < 0)
			left = 0;
		long r = syscall(SYS_poll, &p, 1, (int)left);
		if (r < 0 && errno != EINTR)
			return false;
		if (r <= 0) {
			if (left == 0)
				return conn_unread_late();
			continue;
		}
		/* MSG_TRUNC: the length of the packet, not of what fitted. */
		long n = syscall(SYS_recvfrom, shim_proc.fd, &a, sizeof(a),
				 MSG_DONTWAIT | MSG_TRUNC, NULL, NULL);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
			shim_quiet("the daemon closed the connection", true);
			return false;
		}
		if (is_ack(&a, n, seq))
			return true;
	}
}
