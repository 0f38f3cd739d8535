/* SPDX-License-Identifier: MIT */
/* Where the daemon's report and trace go.  The files are created when the
 * daemon starts, so that a path that cannot be written is an error then,
 * not after the whole run. */
#ifndef PTSHARED_OUTPUTS_H
#define PTSHARED_OUTPUTS_H

#include <stddef.h>
#include <stdio.h>

#include "cli/cli.h"
#include "options.h"
#include "report/report.h"

struct output {
	const char *name; /* for messages */
	FILE *f;          /* NULL: not wanted */
};

struct outputs {
	struct output text, json, html, trace;
	const char *flamegraph; /* written at the end, or NULL */
	/* the totals for Prometheus, put in place whole at the end */
	struct output openmetrics;
	struct cli_replace replace;
};

/* 0, or -1 with the message printed (and nothing left open). */
int outputs_open(struct outputs *out, const struct daemon_options *o);
/* The report, in each format whose file is open (a live report's too):
 * 0, or -ENOMEM when the HTML page could not be made. */
int outputs_write(const struct outputs *out, const struct report *r, size_t top,
		  bool verbose);
/* Writes the report and closes everything: 0, or -1 with the message
 * printed when any of it could not be written. */
int outputs_finish(struct outputs *out, const struct report *r, size_t top,
		   bool verbose);
/* Closes what is still open (a run that ended before its report). */
void outputs_close(struct outputs *out);

#endif
