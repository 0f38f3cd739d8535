/* SPDX-License-Identifier: MIT */
/*
 * The trace `ptshare run` keeps (docs/run.md, The trace): by default
 * ptshare.CMD.PID.trace.zst in the current directory (PID: ptshare's),
 * as perf keeps perf.data and heaptrack heaptrack.NAME.PID.zst; or
 * --record FILE; none with --no-record.  Opened before the program runs,
 * so that a path that cannot be written is refused then, and compressed
 * into from the daemon's plain trace once the run is over.  A plain
 * --record FILE (no .zst) is the daemon's own, written as the run goes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/path_open.h"
#include "run.h"
#include "trace_file.h"

/* CMD's name as a file name's part: its last component, with only
 * letters, digits and ._+- kept (a '_' for anything else). */
static void command_part(const char *cmd, char *out, size_t cap)
{
	const char *base = strrchr(cmd, '/');
	base = base && base[1] ? base + 1 : cmd;
	size_t n = 0;
	for (; *base && n + 1 < cap; base++, n++)
		out[n] = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				"0123456789._+-", *base) ? *base : '_';
	out[n] = '\0';
}

/* The default name, made new in the current directory: O_EXCL neither
 * follows a link there nor takes a file someone put there. */
static FILE *open_default(struct run_keep *k, const char *cmd, char *why,
			  size_t cap)
{
	char part[64];
	command_part(cmd, part, sizeof(part));
	snprintf(k->path, sizeof(k->path), "ptshare.%s.%d.trace.zst", part,
		 (int)getpid());
	int fd = open(k->path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		      0600);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
	if (!f) {
		snprintf(why, cap, "%s%s", strerror(errno), errno == EEXIST
			 ? " (something is there already: a link, or a file of "
			   "another run; --record FILE or --no-record)" : "");
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	k->created = true;
	return f;
}

int run_keep_open(struct run_keep *k, const struct run_options *o)
{
	char why[320];
	*k = (struct run_keep){ 0 };
	if (o->no_record)
		return 0;
	if (o->v.record)
		snprintf(k->path, sizeof(k->path), "%s", o->v.record);
	if ((k->live = o->v.record && !trace_file_compressed(o->v.record)))
		return 0;
	k->f = o->v.record ? cli_output_open(o->v.record, why, sizeof(why))
			   : open_default(k, o->cmd[0], why, sizeof(why));
	if (!k->f) {
		fprintf(stderr, "%s: cannot keep the trace in %s: %s\n", o->name,
			k->path, why);
		return -1;
	}
	return 0;
}

void run_keep_abandon(struct run_keep *k)
{
	if (!k->f)
		return;
	cli_output_close(k->f);
	if (k->created)
		unlink(k->path);
	k->f = NULL;
}

const char *run_keep_daemon_trace(const struct run_keep *k, const char *private)
{
	return k->live ? k->path : private;
}

/* Where the text report went (-o FILE, opened again to append, as safely
 * as it was first; or stderr), for the line that ends it; NULL when
 * there is no such place now (a FIFO whose reader left). */
static FILE *report_end(const struct run_options *o)
{
	if (!o->output)
		return stderr;
	struct path_open p = { .path = o->output,
			       .flags = O_WRONLY | O_APPEND | O_NONBLOCK };
	int fd = cli_path_open(&p);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "a");
	if (!f && fd >= 0)
		close(fd);
	return f;
}

void run_keep_save(struct run_keep *k, const struct run_options *o,
		   const char *trace)
{
	if (!k->f && !k->live)
		return;
	int err = k->live ? 0 : trace_file_save(trace, k->f);
	int cerr = k->live ? 0 : cli_output_close(k->f);
	k->f = NULL;
	if (err || cerr) {
		fprintf(stderr, "%s: writing the trace %s: %s\n", o->name, k->path,
			strerror(err ? err : cerr));
		return;
	}
	/* The report's last line, and where a person reads. */
	FILE *end = report_end(o);
	const char *fmt = "%s: trace kept in %s: ptshare replay %s\n";
	if (end)
		fprintf(end, fmt, o->name, k->path, k->path);
	if (end && end != stderr)
		fclose(end);
	if (end != stderr && isatty(STDERR_FILENO))
		fprintf(stderr, fmt, o->name, k->path, k->path);
}
