/* SPDX-License-Identifier: MIT */
/* The ptshare subcommands: each takes its own argv (argv[0] is its name)
 * and returns the exit status: 0 done, 1 failed, 2 usage error. */
#ifndef PTSHARE_COMMANDS_H
#define PTSHARE_COMMANDS_H

#include <stddef.h>

#include "report/report.h"

int cmd_snapshot(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_aslr(int argc, char **argv);
int cmd_report(int argc, char **argv);

/* The text report on stdout, headed by command (report_text; verbose:
 * with the refusals' reasons), unless json or html is "-"; JSON to json
 * and the HTML page to html (0600 files; NULL: not wanted). */
int write_reports(const struct report *r, const char *command, const char *json,
		  const char *html, size_t top, bool verbose);
/* The same without the text: 0, or 1 with the reason printed. */
int write_report_files(const struct report *r, const char *json,
		       const char *html);

#endif
