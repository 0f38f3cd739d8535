/* SPDX-License-Identifier: MIT */
/*
 * Receiving packets: the space each one lands in (one byte more than any
 * record, so that a larger packet shows as larger, and control space for
 * the fds a packet may bring), singly for the ring's recvmsg of a
 * connection, or a burst of them at once with recvmmsg.
 */
#ifndef PTSHARED_RECV_H
#define PTSHARED_RECV_H

#include <stdbool.h>
#include <sys/socket.h>

#include "ptshare/wire.h"

/* File descriptors one packet may bring (SCM_RIGHTS); the kernel discards
 * any beyond them. */
#define RECV_FDS_MAX 4
/* Packets a burst reads in one system call. */
#define RECV_BURST 16

struct packet_space {
	struct iovec iov;
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(RECV_FDS_MAX * sizeof(int))];
	} ctl;
	unsigned char data[PTS_REC_MAX + 1];
};

/* m ready to receive a packet into s. */
void recv_prepare(struct msghdr *m, struct packet_space *s);
/* Closes every fd that came with the packet m received. */
void recv_close_fds(const struct msghdr *m);
/* The fds that came with m, in order, into fds (at most max of them):
 * how many came. */
size_t recv_fds(const struct msghdr *m, int *fds, size_t max);

struct burst {
	struct mmsghdr m[RECV_BURST];
	struct packet_space s[RECV_BURST];
};

/* Up to max (at most RECV_BURST) packets queued on fd, without waiting:
 * how many, or -errno (-EAGAIN: none).  m[i].msg_len is each one's real
 * length (MSG_TRUNC), which may exceed the space it landed in. */
int recv_burst(struct burst *b, int fd, unsigned max);

/* A read of nothing is the end of the stream, or an empty packet (which
 * SOCK_SEQPACKET allows, and a hostile peer may send): only a hang-up
 * tells them apart.  Whether fd's peer hung up (or we stopped reading). */
bool recv_peer_closed(int fd);

#endif
