/* SPDX-License-Identifier: MIT */
/*
 * Live reports (docs/report.md): a client of the report socket sends one
 * PTS_REPORT_REQ with a memfd per output it wants; the daemon writes the
 * report as it stands into them, answers PTS_REPORT_DONE and closes.  The
 * files are the client's (it writes them on, with its own rights): the
 * daemon opens no path for anyone, and writes only into memory, which no
 * client can make it wait on.  Who may ask is access.h's to decide
 * (access_may_report): the daemon's user and root alone.
 */
#ifndef PTSHARED_CONTROL_H
#define PTSHARED_CONTROL_H

#include <stdbool.h>
#include <stddef.h>

#include "ptshare/wire.h"
#include "recv.h"
#include "report/report.h"

struct ingest;

/* Outputs a request may ask for: text, JSON, HTML (PTS_REPORT_*). */
#define CONTROL_OUTPUTS 3

struct control_client {
	int fd;
	struct msghdr msg;      /* of the ring's recvmsg of the request, into rx */
	struct packet_space rx;
	struct pts_report_req req;         /* once control_request took it */
	int out[CONTROL_OUTPUTS];          /* its memfds; -1: not asked for */
	struct control_client *next;       /* in the loop's requests to serve */
};

/* fd was just accepted on the report socket: a client whose request is to
 * be received with msg, or NULL (fd closed) when its user may not ask (it
 * was told so) or memory ran out. */
struct control_client *control_accept(int fd);
/* The request received, len bytes: true when it is to be served; else the
 * client was told why not. */
bool control_request(struct control_client *c, size_t len);
/* Whether it asked for a checkpoint of every process first. */
bool control_wants_read(const struct control_client *c);
/* Writes r into the client's outputs and tells it how that went. */
void control_answer(struct control_client *c, const struct report *r);
/* Tells the client why there is no report: err, an errno. */
void control_refuse(struct control_client *c, int err);
/* Closes its connection and outputs, and frees it. */
void control_free(struct control_client *c);
/* Answers every client of the list with the report now, frees each, and
 * empties the list. */
void control_answer_all(struct control_client **list, struct ingest *g);

#endif
