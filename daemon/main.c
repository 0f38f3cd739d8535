/* SPDX-License-Identifier: MIT */
/*
 * ptshared: the daemon of `ptshare run` (docs/daemon.md).  Serves the shims
 * of a traced program until SIGTERM or SIGINT, then takes a last checkpoint
 * of every process and writes the report.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "access.h"
#include "cli/cli_options.h"
#include "ingest/ingest.h"
#include "listen.h"
#include "loop.h"
#include "options.h"
#include "outputs.h"
#include "readings.h"
#include "ptshare/procfs.h"
#include "log.h"
#include "run_info.h"

/*
 * SIGTERM ends the run, and SIGINT unless it was ignored when we started
 * (shells ignore it in background jobs: a ^C at the terminal is for the
 * foreground; `ptshare run` starts us in a process group of our own).
 * Blocked from the start, so that a signal at any moment ends the run
 * cleanly, through the signalfd.
 */
static void block_stop_signals(sigset_t *stop)
{
	struct sigaction sa;
	sigemptyset(stop);
	sigaddset(stop, SIGTERM);
	if (!sigaction(SIGINT, NULL, &sa) && sa.sa_handler != SIG_IGN)
		sigaddset(stop, SIGINT);
	sigprocmask(SIG_BLOCK, stop, NULL);
}

/* Connections served at once by default: each costs about 5 KiB besides
 * its process's model (docs/daemon.md, Hostile clients). */
#define CLIENTS_DEFAULT 16384
#define FDS_OWN 64 /* the daemon's own: reports, trace, ring, /proc */

/* One connection per traced process, and its userfaultfd: as many as the
 * hard limit allows.  Returns --max-clients, or by default as many
 * connections as the limit has room for with their userfaultfds. */
static size_t raise_fd_limit(uint64_t asked)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl))
		rl.rlim_cur = 1024;
	else if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			getrlimit(RLIMIT_NOFILE, &rl);
	}
	uint64_t room = rl.rlim_cur > 2 * FDS_OWN ? (rl.rlim_cur - FDS_OWN) / 2 : FDS_OWN;
	return asked ? asked : room < CLIENTS_DEFAULT ? room : CLIENTS_DEFAULT;
}

/* The watcher's page (--heartbeat-fd; wire.h), or NULL when not watched.
 * One that cannot be mapped is an error at the start: else the daemon
 * would be ended later, for want of a heartbeat. */
static int heartbeat_map(int fd, struct pts_heartbeat **out)
{
	*out = NULL;
	if (fd < 0)
		return 0;
	void *p = mmap(NULL, PTS_HEARTBEAT_SIZE, PROT_READ | PROT_WRITE,
		       MAP_SHARED, fd, 0);
	int err = p == MAP_FAILED ? errno : 0;
	close(fd);
	if (err) {
		say("--heartbeat-fd %d: %s", fd, strerror(err));
		return -1;
	}
	*out = p;
	return 0;
}

static void say_ready(int fd)
{
	if (fd < 0)
		return;
	if (write(fd, "ready\n", 6) != 6)
		say("--ready-fd %d: %s", fd, strerror(errno));
	close(fd);
}

/* A listening socket of type at path (none when path is NULL): its fd,
 * -1 when there is none, or -2 with the message printed. */
static int start_listening(const char *path, int type)
{
	int fd = path ? listen_open(path, type) : -1;
	if (path && fd < 0) {
		say("cannot listen on %s: %s", path, strerror(-fd));
		return -2;
	}
	return fd;
}

/* Processes starting from now on connect to nothing and run untraced at
 * once, instead of waiting for an ACK that would not come; a report
 * client is told there is no daemon. */
static void stop_listening(int fd, const char *path)
{
	if (fd < 0)
		return;
	close(fd);
	unlink(path);
}

/* Whether a read of private anonymous memory maps the zero page here, as
 * the model must know (docs/model.md, fault).  A kernel that cannot say
 * (no PAGEMAP_SCAN: before 6.7) is taken as a stock one, which maps it;
 * so is one that could not be asked, which is said. */
static bool kernel_zero_page(void)
{
	int zp = procfs_zero_page();
	if (zp < 0 && zp != -EOPNOTSUPP)
		say("cannot tell whether a read of private anonymous memory "
		    "maps the zero page (%s): taken as it does", strerror(-zp));
	return zp != 0;
}

/* Serves until the stop signal, then the last checkpoint and the report. */
static int serve(struct ingest *g, struct readings *rd,
		 const struct daemon_options *o, const sigset_t *stop,
		 struct outputs *out, size_t max_clients, size_t max_per_user,
		 struct pts_heartbeat *heartbeat)
{
	char why[PATH_MAX + 160];
	if (access_check_socket_dir(o->socket, why, sizeof(why))) {
		say("cannot listen on %s: %s", o->socket, why);
		return 1;
	}
	int lfd = start_listening(o->socket, SOCK_SEQPACKET);
	int err = lfd < 0 ? 0 : access_open_socket(o->socket);
	if (err) {
		say("chmod %s: %s", o->socket, strerror(-err));
		stop_listening(lfd, o->socket);
		return 1;
	}
	int rfd = lfd < 0 ? -1 : start_listening(o->report_socket, SOCK_STREAM);
	if (lfd < 0 || rfd == -2) {
		stop_listening(lfd, o->socket);
		return 1;
	}
	struct loop l;
	struct pts_run_info info;
	const struct loop_config cfg = {
		.listen_fd = lfd, .report_fd = rfd,
		.interval_s = (unsigned)o->interval_s,
		.stop = stop, .trace = out->trace.f, .heartbeat = heartbeat,
		.faults = o->faults,
		.readings = rd, .max_clients = max_clients,
		.max_per_user = max_per_user,
	};
	ingest_fault_mode(g, 0, o->faults, 0);
	ingest_zero_page(g, kernel_zero_page());
	run_info_start(&info, o->command_line);
	ingest_run_info(g, &info);
	int r = loop_init(&l, g, &cfg);
	if (r) {
		say("io_uring: %s%s", strerror(-r),
		    r == -EPERM ? " (see sysctl kernel.io_uring_disabled)"
		    : r == -EINVAL ? " (Linux 6.1 or later is needed)" : "");
		stop_listening(lfd, o->socket);
		stop_listening(rfd, o->report_socket);
		return 1;
	}
	say_ready(o->ready_fd);
	int status = 0;
	if ((r = loop_run(&l))) {
		say("io_uring: %s; stopping", strerror(-r));
		status = 1;
	}
	loop_drain(&l);
	stop_listening(lfd, o->socket);
	stop_listening(rfd, o->report_socket);
	ingest_checkpoint_all(g, PTS_CK_FINAL);
	readings_make(rd, g);
	run_info_end(&info, &l.sig);
	ingest_run_info(g, &info);
	if (outputs_finish(out, ingest_report(g), (size_t)o->top, o->verbose))
		status = 1;
	loop_free(&l);
	return status;
}

int main(int argc, char **argv)
{
	sigset_t stop;
	block_stop_signals(&stop);
	/* A reader gone from our stdout is a write error, not our death. */
	signal(SIGPIPE, SIG_IGN);
	struct daemon_options o;
	int status = daemon_options_parse(&o, argc, argv);
	if (status >= 0)
		return status;
	struct mm_worlds ws;
	char err[256];
	if (mm_worlds_init(&ws, o.policies, err, sizeof(err)))
		return cli_usage("ptshared", "%s", err);
	struct outputs out;
	struct pts_heartbeat *heartbeat;
	if (heartbeat_map(o.heartbeat_fd, &heartbeat) || outputs_open(&out, &o)) {
		mm_worlds_free(&ws);
		return 1;
	}
	size_t max_clients = raise_fd_limit(o.max_clients);
	/* Serving several users, none may take every connection. */
	size_t max_per_user = o.max_per_user ? o.max_per_user
			    : access_others_allowed() && max_clients >= 4
			    ? max_clients / 4 : max_clients;
	struct readings rd;
	readings_init(&rd);
	const struct ingest_host host = readings_host(&rd);
	struct ingest *g = ingest_new(&ws, &host, out.trace.f);
	if (!g) {
		say("out of memory");
		status = 1;
	} else {
		ingest_report_options(g, o.group_by, o.flamegraph);
		status = serve(g, &rd, &o, &stop, &out, max_clients,
			       max_per_user, heartbeat);
	}
	outputs_close(&out);
	ingest_free(g);
	readings_free(&rd);
	mm_worlds_free(&ws);
	return status;
}
