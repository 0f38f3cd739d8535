/* SPDX-License-Identifier: MIT */
/* The ptshare subcommands: each takes its own argv (argv[0] is its name)
 * and returns the exit status: 0 done, 1 failed, 2 usage error. */
#ifndef PTSHARE_COMMANDS_H
#define PTSHARE_COMMANDS_H

#include <stddef.h>

#include "cli/cli_options.h"
#include "report/report.h"

int cmd_snapshot(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_aslr(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_top(int argc, char **argv);

/* A reader gone from a report's pipe (`ptshare run ... 2>&1 | head`) is a
 * write error, not ptshare's death by SIGPIPE, which would leave a run's
 * directory behind and end with 141 instead of the program's status:
 * main ignores SIGPIPE first thing, and a program ptshare runs gets it
 * back as ptshare got it (ignored or not) just before its exec. */
void ptshare_sigpipe_ignore(void);
void ptshare_sigpipe_restore(void);

/* The text report, headed by command (report_text: v->top_n rows; with
 * v->verbose, the refusals' reasons), to text (-o FILE), or when NULL on
 * stdout unless another output is "-"; the JSON report to v->json, the
 * HTML page to v->html (0600 files) and the OpenMetrics totals to
 * v->openmetrics (replaced whole: cli_replace_open); NULL: not wanted.
 * 0, or 1 said. */
int write_reports(const struct report *r, const char *command, const char *text,
		  const struct cli_values *v);
/* The same without the text (and the flame graphs, --flamegraph: FILE and
 * FILE.LABEL): 0, or 1 with the reason printed. */
int write_report_files(const struct report *r, const struct cli_values *v);

#endif
