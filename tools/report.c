/* SPDX-License-Identifier: MIT */
/*
 * ptshare report: the report of a daemon that is still running, without
 * stopping it (docs/report.md).  Asks on the daemon's report socket with a
 * memfd per output for it to write into, then writes them where the user
 * asked, with the user's own rights: the daemon opens no path for us.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/cli_options.h"
#include "commands.h"
#include "ptshare/wire.h"
#include "lib/clock.h"

/* A reading of every process of a big workload under a loaded machine
 * takes seconds; a daemon that says nothing for this long is stuck. */
#define ANSWER_WAIT_S 300

/* The outputs, in the order of the PTS_REPORT_* bits. */
enum { OUT_TEXT, OUT_JSON, OUT_HTML, NOUT };
static const char *const out_names[NOUT] = { "text", "JSON", "HTML" };

static void usage(FILE *f)
{
	fputs("usage: ptshare report --socket PATH [--json FILE] [--html FILE]\n"
	      "                      [--top N] [--no-read] [-o FILE]\n"
	      "\n"
	      "The report of a `ptshare run` that is still running (a long-running\n"
	      "server, say), without stopping it: the report the run would end with\n"
	      "if it ended now.  Every process is read first, as the daemon's timer\n"
	      "does.  `ptshare run` prints the PATH to use when it starts.\n"
	      "\n"
	      "  --socket PATH   the daemon's report socket (ptshared --report-socket)\n"
	      "  --json FILE     also write the JSON report ('-': stdout, instead of\n"
	      "                  the text report)\n"
	      "  --html FILE     also write the report as an HTML page ('-': stdout)\n"
	      "  --top N         processes and mappings to list (default 20, 0: all)\n"
	      "  --no-read       what the daemon knows already: no /proc read first\n"
	      "  -o FILE         write the text report to FILE (0600; %p: ptshare's\n"
	      "                  pid), not stdout\n"
	      "\n"
	      "Files are created 0600.  Exit status: 0 report written, 1 no daemon\n"
	      "there, or it refused or failed (the reason printed), 2 usage error.\n",
	      f);
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("ptshare report: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* Connected to the daemon's report socket at path: the fd, or -1 with the
 * message. */
static int reach(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = -1;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		errno = ENAMETOOLONG;
	} else {
		strcpy(sa.sun_path, path);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && !connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
			return fd;
	}
	/* The shims' socket is a SOCK_SEQPACKET one: connect() tells. */
	if (errno == EPROTOTYPE)
		say("%s is not a report socket (the traced programs' socket? "
		    "`ptshare run` prints the one to use)", path);
	else
		say("no daemon at %s: %s", path, strerror(errno));
	if (fd >= 0)
		close(fd);
	return -1;
}

/* The request, with the memfds (one per output asked for, in order). */
static int ask(int fd, const struct pts_report_req *q, const int *fds, size_t n)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(NOUT * sizeof(int))];
	} ctl = { 0 };
	struct iovec iov = { (void *)q, sizeof(*q) };
	struct msghdr m = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl.buf, .msg_controllen = CMSG_SPACE(n * sizeof(int)),
	};
	struct cmsghdr *h = CMSG_FIRSTHDR(&m);
	h->cmsg_level = SOL_SOCKET;
	h->cmsg_type = SCM_RIGHTS;
	h->cmsg_len = CMSG_LEN(n * sizeof(int));
	memcpy(CMSG_DATA(h), fds, n * sizeof(int));
	ssize_t r;
	while ((r = sendmsg(fd, &m, MSG_NOSIGNAL)) < 0 && errno == EINTR)
		;
	/* A daemon that refused us at once has closed already: its answer
	 * says why. */
	return r == (ssize_t)sizeof(*q) || (r < 0 && (errno == EPIPE ||
						    errno == ECONNRESET)) ? 0 : -1;
}

/* The daemon's answer: 0 when the report is written, else 1 with the
 * message. */
static int answer(int fd, const char *path)
{
	struct timeval tv = { .tv_sec = ANSWER_WAIT_S };
	struct pts_report_done d;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	ssize_t n;
	while ((n = recv(fd, &d, sizeof(d), MSG_WAITALL)) < 0 && errno == EINTR)
		;
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		say("no answer from the daemon at %s in %d s", path, ANSWER_WAIT_S);
	else if (n < 0)
		say("the daemon at %s: %s", path, strerror(errno));
	else if (n != sizeof(d) || d.h.type != PTS_REPORT_DONE || d.h.size != sizeof(d))
		say("the daemon at %s ended the connection without a report", path);
	else if (!d.err)
		return 0;
	else if (d.err == EACCES)
		say("the daemon at %s refused: only its own user or root may ask", path);
	else if (d.err == ESHUTDOWN)
		say("the daemon at %s is stopping: its final report is on its way",
		    path);
	else if (d.err == EPROTONOSUPPORT)
		say("the daemon at %s speaks another version of the protocol", path);
	else if (d.output & (PTS_REPORT_TEXT | PTS_REPORT_JSON | PTS_REPORT_HTML))
		say("the daemon at %s could not write the %s report: %s", path,
		    out_names[__builtin_ctz(d.output)], strerror(d.err));
	else
		say("the daemon at %s refused the request: %s", path, strerror(d.err));
	return 1;
}

/* What the daemon wrote into the memfd fd, to path ("-": stdout): 0, or 1
 * with the message. */
static int deliver(int fd, const char *path)
{
	char why[256];
	FILE *f = cli_output_open(path, why, sizeof(why));
	if (!f) {
		say("cannot write %s: %s", path, why);
		return 1;
	}
	char buf[65536];
	off_t at = 0;
	ssize_t n;
	errno = 0;
	while ((n = pread(fd, buf, sizeof(buf), at)) > 0 &&
	       fwrite(buf, 1, (size_t)n, f) == (size_t)n)
		at += n;
	int err = n != 0 ? (errno ? errno : EIO) : 0;
	int closed = cli_output_close(f);
	if (err || closed) {
		say("writing %s: %s", strcmp(path, "-") ? path : "stdout",
		    strerror(err ? err : closed));
		return 1;
	}
	return 0;
}

/* Asks the daemon at path for the outputs whose dest is set, and writes
 * them there. */
static int report(const char *path, const char *const dest[NOUT],
		  uint32_t top, uint32_t flags)
{
	struct pts_report_req q = {
		.h = { .type = PTS_REPORT_REQ, .size = sizeof(q), .seq = 1,
		       .tid = (uint32_t)gettid() },
		.version = PTS_WIRE_VERSION, .flags = flags, .top = top,
	};
	int fds[NOUT], status = 1;
	size_t n = 0;
	for (size_t i = 0; i < NOUT; i++) {
		if (!dest[i])
			continue;
		if ((fds[n] = memfd_create(out_names[i], MFD_CLOEXEC)) < 0) {
			say("memfd_create: %s", strerror(errno));
			goto out;
		}
		q.outputs |= 1u << i;
		n++;
	}
	q.h.time_ns = now_ns();
	int sock = reach(path);
	if (sock < 0)
		goto out;
	if (ask(sock, &q, fds, n))
		say("the daemon at %s: %s", path, strerror(errno));
	else
		status = answer(sock, path);
	close(sock);
	for (size_t i = 0, k = 0; !status && i < NOUT; i++)
		if (dest[i])
			status = deliver(fds[k++], dest[i]);
out:
	while (n)
		close(fds[--n]);
	return status;
}

int cmd_report(int argc, char **argv)
{
	static const struct option own[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "no-read", no_argument, NULL, 'N' },
		{ 0 },
	};
	struct cli_parser p;
	cli_parser_init(&p, "ptshare report", usage, CLI_JSON | CLI_HTML | CLI_TOP,
			own, "o:");
	const char *socket = NULL, *dest[NOUT] = { 0 };
	uint32_t flags = 0;
	int c;
	while ((c = cli_next(&p, argc, argv)) != -1) {
		switch (c) {
		case 's':
			socket = optarg;
			break;
		case 'o':
			if (!(dest[OUT_TEXT] = cli_output_template(&p, optarg)))
				return CLI_USAGE_STATUS;
			break;
		case 'N':
			flags |= PTS_REPORT_NO_READ;
			break;
		}
	}
	if (p.status >= 0)
		return p.status;
	if (p.v.top_n > UINT32_MAX)
		return cli_usage_error(&p, "bad number", p.v.top);
	dest[OUT_JSON] = p.v.json;
	dest[OUT_HTML] = p.v.html;
	if (optind < argc)
		return cli_usage_error(&p, "unexpected argument", argv[optind]);
	/* The text goes to stdout unless -o, or another output went there. */
	bool stdout_taken = false;
	for (size_t i = OUT_JSON; i < NOUT; i++)
		stdout_taken |= dest[i] && !strcmp(dest[i], "-");
	if (!dest[OUT_TEXT] && !stdout_taken)
		dest[OUT_TEXT] = "-";
	size_t on_stdout = 0;
	for (size_t i = 0; i < NOUT; i++)
		on_stdout += dest[i] && !strcmp(dest[i], "-");
	if (!socket || on_stdout > 1)
		return cli_usage(p.name, "%s", !socket ? "--socket PATH is required"
				 : "only one output can go to stdout");
	return report(socket, dest, (uint32_t)p.v.top_n, flags);
}
