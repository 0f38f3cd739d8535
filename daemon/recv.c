/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "recv.h"

void recv_prepare(struct msghdr *m, struct packet_space *s)
{
	s->iov = (struct iovec){ s->data, sizeof(s->data) };
	*m = (struct msghdr){
		.msg_iov = &s->iov, .msg_iovlen = 1,
		.msg_control = s->ctl.buf, .msg_controllen = sizeof(s->ctl.buf),
	};
}

void recv_close_fds(const struct msghdr *m)
{
	for (struct cmsghdr *h = CMSG_FIRSTHDR(m); h;
	     h = CMSG_NXTHDR((struct msghdr *)m, h)) {
		if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS)
			continue;
		size_t n = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(h) + i * sizeof(int), sizeof(fd));
			close(fd);
		}
	}
}

size_t recv_fds(const struct msghdr *m, int *fds, size_t max)
{
	size_t n = 0;
	for (struct cmsghdr *h = CMSG_FIRSTHDR(m); h;
	     h = CMSG_NXTHDR((struct msghdr *)m, h)) {
		if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < (h->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++, n++)
			if (n < max)
				memcpy(&fds[n], CMSG_DATA(h) + i * sizeof(int), sizeof(int));
	}
	return n;
}

int recv_burst(struct burst *b, int fd, unsigned max)
{
	max = max < RECV_BURST ? max : RECV_BURST;
	for (unsigned i = 0; i < max; i++)
		recv_prepare(&b->m[i].msg_hdr, &b->s[i]);
	int n;
	do
		n = recvmmsg(fd, b->m, max, MSG_DONTWAIT | MSG_TRUNC | MSG_CMSG_CLOEXEC,
			     NULL);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

bool recv_peer_closed(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLRDHUP };
	return poll(&p, 1, 0) < 0 ||
	       (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL));
}
