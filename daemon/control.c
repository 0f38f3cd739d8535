/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "access.h"
#include "control.h"
#include "ingest/ingest.h"
#include "outputs.h"
#include "lib/clock.h"

#define ALL_OUTPUTS (PTS_REPORT_TEXT | PTS_REPORT_JSON | PTS_REPORT_HTML)

/* A 24-byte send on a unix socket completes or fails at once: a client
 * that does not read, or is gone, loses its answer; the daemon never
 * waits on it. */
static void tell(int fd, int err, uint32_t output)
{
	struct pts_report_done d = {
		.h = { .type = PTS_REPORT_DONE, .size = sizeof(d), .seq = 1,
		       .time_ns = now_ns() },
		.err = err, .output = output,
	};
	send(fd, &d, sizeof(d), MSG_DONTWAIT | MSG_NOSIGNAL);
}

struct control_client *control_accept(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct control_client *c = NULL;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) ||
	    !access_may_report(cred.uid))
		tell(fd, EACCES, 0);
	else if (!(c = calloc(1, sizeof(*c))))
		tell(fd, ENOMEM, 0);
	if (!c) {
		close(fd);
		return NULL;
	}
	c->fd = fd;
	for (size_t i = 0; i < CONTROL_OUTPUTS; i++)
		c->out[i] = -1;
	recv_prepare(&c->msg, &c->rx);
	return c;
}

/*
 * An output the daemon may write: a memory file (a memfd, or another shmem
 * file: F_GET_SEALS answers only for them), open for writing, not sealed
 * against it.  Writing into memory cannot keep the daemon waiting; a pipe
 * or a socket nobody reads could, and so could a file on a slow mount or
 * one the client serves itself (FUSE).  0, or the errno write(2) would
 * give, EINVAL for anything but a memory file.
 */
static int memory_file(int fd)
{
	struct stat st;
	int fl = fcntl(fd, F_GETFL), seals = fcntl(fd, F_GET_SEALS);
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || fl < 0 || seals < 0)
		return EINVAL;
	if ((fl & O_ACCMODE) == O_RDONLY)
		return EBADF;
	if (seals & (F_SEAL_WRITE | F_SEAL_FUTURE_WRITE | F_SEAL_GROW))
		return EPERM;
	return 0;
}

/* Why the request q, len bytes received with nfds fds, cannot be served
 * (an errno), or 0. */
static int check_request(const struct pts_report_req *q, size_t len,
			 size_t nfds)
{
	if (len != sizeof(*q) || q->h.type != PTS_REPORT_REQ ||
	    q->h.size != sizeof(*q) || q->h.nframes)
		return EPROTO;
	if (q->version != PTS_WIRE_VERSION)
		return EPROTONOSUPPORT;
	if (!q->outputs || (q->outputs & ~ALL_OUTPUTS) ||
	    (q->flags & ~PTS_REPORT_NO_READ))
		return EINVAL;
	if (nfds != (size_t)__builtin_popcount(q->outputs))
		return EBADF;
	return 0;
}

bool control_request(struct control_client *c, size_t len)
{
	int fds[RECV_FDS_MAX];
	size_t nfds = recv_fds(&c->msg, fds, RECV_FDS_MAX);
	memcpy(&c->req, c->rx.data, len < sizeof(c->req) ? len : sizeof(c->req));
	int err = check_request(&c->req, len, nfds);
	uint32_t bad = 0;
	for (size_t i = 0, k = 0; !err && i < CONTROL_OUTPUTS; i++)
		if ((c->req.outputs & (1u << i)) && (err = memory_file(fds[k++])))
			bad = 1u << i;
	if (err) {
		recv_close_fds(&c->msg);
		tell(c->fd, err, bad);
		return false;
	}
	for (size_t i = 0, k = 0; i < CONTROL_OUTPUTS; i++)
		if (c->req.outputs & (1u << i))
			c->out[i] = fds[k++];
	return true;
}

bool control_wants_read(const struct control_client *c)
{
	return !(c->req.flags & PTS_REPORT_NO_READ);
}

void control_answer(struct control_client *c, const struct report *r)
{
	struct outputs o = { 0 };
	struct output *slot[CONTROL_OUTPUTS] = { &o.text, &o.json, &o.html };
	int err = 0;
	uint32_t bad = 0;
	for (size_t i = 0; i < CONTROL_OUTPUTS && !err; i++) {
		if (c->out[i] < 0)
			continue;
		if (!(slot[i]->f = fdopen(c->out[i], "w"))) {
			err = errno;
			bad = 1u << i;
		} else {
			c->out[i] = -1; /* the stream's now */
		}
	}
	if (!err && (err = -outputs_write(&o, r, c->req.top, false)))
		bad = PTS_REPORT_HTML;
	for (size_t i = 0; i < CONTROL_OUTPUTS; i++) {
		if (!slot[i]->f)
			continue;
		errno = 0;
		bool failed = ferror(slot[i]->f);
		failed |= fclose(slot[i]->f) != 0;
		if (failed && !err) {
			err = errno ? errno : EIO;
			bad = 1u << i;
		}
	}
	tell(c->fd, err, bad);
}

void control_refuse(struct control_client *c, int err)
{
	tell(c->fd, err, 0);
}

void control_free(struct control_client *c)
{
	close(c->fd);
	for (size_t i = 0; i < CONTROL_OUTPUTS; i++)
		if (c->out[i] >= 0)
			close(c->out[i]);
	free(c);
}

void control_answer_all(struct control_client **list, struct ingest *g)
{
	while (*list) {
		struct control_client *c = *list;
		*list = c->next;
		control_answer(c, ingest_report_now(g));
		control_free(c);
	}
}
