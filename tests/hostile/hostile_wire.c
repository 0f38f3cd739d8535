/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "hostile_wire.h"

#define ACK_TIMEOUT_MS 120000
#define FDS_MAX 16

int hconn_open(struct hconn *c, const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	*c = (struct hconn){ .fd = -1 };
	if (strlen(path) >= sizeof(sa.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(sa.sun_path, path);
	c->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (c->fd < 0 || connect(c->fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int err = errno;
		hconn_close(c);
		errno = err;
		return -1;
	}
	return 0;
}

void hconn_close(struct hconn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

void hconn_fill(struct hconn *c, struct pts_hdr *h, uint16_t type, size_t size)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	*h = (struct pts_hdr){
		.type = type, .size = (uint16_t)size, .seq = ++c->seq,
		.time_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec,
		.tid = (uint32_t)gettid(),
	};
}

unsigned hconn_raw_fds(struct hconn *c, const void *buf, size_t len,
		       const int *fds, size_t n)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(FDS_MAX * sizeof(int))];
	} ctl;
	struct iovec iov = { (void *)buf, len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (n > FDS_MAX)
		abort();
	if (n) {
		m.msg_control = ctl.b;
		m.msg_controllen = CMSG_SPACE(n * sizeof(int));
		struct cmsghdr *h = CMSG_FIRSTHDR(&m);
		h->cmsg_level = SOL_SOCKET;
		h->cmsg_type = SCM_RIGHTS;
		h->cmsg_len = CMSG_LEN(n * sizeof(int));
		memcpy(CMSG_DATA(h), fds, n * sizeof(int));
	}
	if (sendmsg(c->fd, &m, MSG_NOSIGNAL) >= 0)
		return 1;
	if (errno == EPIPE || errno == ECONNRESET)
		return 0;
	fprintf(stderr, "hostile_client: sendmsg: %s\n", strerror(errno));
	exit(100);
}

unsigned hconn_raw(struct hconn *c, const void *buf, size_t len, int fd)
{
	return hconn_raw_fds(c, buf, len, &fd, fd >= 0);
}

bool hconn_send(struct hconn *c, struct pts_hdr *h, uint16_t type, size_t size,
		int fd)
{
	hconn_fill(c, h, type, size);
	return hconn_raw(c, h, size, fd);
}

const char *hconn_wait_ack(struct hconn *c, uint32_t seq)
{
	struct pollfd p = { c->fd, POLLIN, 0 };
	for (;;) {
		if (poll(&p, 1, ACK_TIMEOUT_MS) != 1)
			return "no ack";
		struct pts_ack a;
		ssize_t n = recv(c->fd, &a, sizeof(a), 0);
		if (n <= 0)
			return "hung up";
		if (n == sizeof(a) && a.h.type == PTS_ACK && a.acked_seq == seq)
			return "acked";
	}
}

const char *hconn_ask_fds(struct hconn *c, struct pts_hdr *h, uint16_t type,
			  size_t size, const int *fds, size_t n)
{
	hconn_fill(c, h, type, size);
	if (!hconn_raw_fds(c, h, size, fds, n))
		return "hung up";
	return hconn_wait_ack(c, h->seq);
}

const char *hconn_ask(struct hconn *c, struct pts_hdr *h, uint16_t type,
		      size_t size, int fd)
{
	return hconn_ask_fds(c, h, type, size, &fd, fd >= 0);
}
