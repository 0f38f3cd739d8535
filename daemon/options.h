/* SPDX-License-Identifier: MIT */
/* ptshared's command line (docs/daemon.md). */
#ifndef PTSHARED_OPTIONS_H
#define PTSHARED_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

struct daemon_options {
	const char *socket;   /* required */
	const char *report_socket; /* live reports (docs/report.md), or NULL */
	const char *policies; /* NULL: every built-in policy */
	uint64_t interval_s;  /* timer checkpoints; 0: none */
	const char *json;     /* NULL: no JSON report */
	const char *html;     /* NULL: no HTML report */
	const char *flamegraph; /* NULL: no flame graphs (docs/flamegraph.md) */
	const char *openmetrics; /* NULL: no OpenMetrics totals */
	const char *text;     /* NULL: stderr; "-": stdout */
	const char *record;   /* NULL: no trace */
	const char *command_line; /* the program's, for the run's details */
	uint64_t top;         /* rows of the text report; 0: all */
	bool verbose;         /* each refusal's reason in the text report */
	uint32_t group_by;    /* enum report_group_by (--group-by) */
	int ready_fd;         /* -1: none */
	int heartbeat_fd;     /* a memfd to beat in (wire.h), or -1 */
	uint32_t faults;      /* enum pts_faults (docs/faults.md) */
	uint64_t max_clients; /* 0: the default (docs/daemon.md, Hostile clients) */
	uint64_t max_per_user; /* of them one user's; 0: the default (same) */
};

/* Returns -1 when the run should go on, else the exit status (0 after
 * --help or --version, 2 after a usage error, with the message printed). */
int daemon_options_parse(struct daemon_options *o, int argc, char **argv);

#endif
