/* SPDX-License-Identifier: MIT */
/* The hostile clients' side of the wire (docs/wire-protocol.md): records
 * sent as they are, or cut short, or with fds; ACKs waited for, bounded. */
#ifndef PTSHARE_TESTS_HOSTILE_WIRE_H
#define PTSHARE_TESTS_HOSTILE_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ptshare/wire.h"

struct hconn {
	int fd;
	uint32_t seq; /* of the last record filled */
};

/* Connected to the daemon at path: 0, or -1 with errno set. */
int hconn_open(struct hconn *c, const char *path);
void hconn_close(struct hconn *c);
/* The header of a record of type and size, numbered next. */
void hconn_fill(struct hconn *c, struct pts_hdr *h, uint16_t type, size_t size);
/* One packet of len bytes as it is, with n fds (SCM_RIGHTS): 1, or 0 once
 * the daemon has hung up. */
unsigned hconn_raw_fds(struct hconn *c, const void *buf, size_t len,
		       const int *fds, size_t n);
/* The same with one fd, or none when fd < 0. */
unsigned hconn_raw(struct hconn *c, const void *buf, size_t len, int fd);
/* A record filled and sent: false once the daemon has hung up. */
bool hconn_send(struct hconn *c, struct pts_hdr *h, uint16_t type, size_t size,
		int fd);
/* The ACK of seq: "acked", "hung up", or "no ack" after 120 s. */
const char *hconn_wait_ack(struct hconn *c, uint32_t seq);
/* A record sent (with its fds) and its ACK waited for. */
const char *hconn_ask_fds(struct hconn *c, struct pts_hdr *h, uint16_t type,
			  size_t size, const int *fds, size_t n);
const char *hconn_ask(struct hconn *c, struct pts_hdr *h, uint16_t type,
		      size_t size, int fd);

#endif
