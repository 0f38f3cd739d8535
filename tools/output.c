/* SPDX-License-Identifier: MIT */
/* Writing a report where the user asked: text on stdout, JSON and HTML to
 * files. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "commands.h"

static struct sigaction sigpipe_was;

void ptshare_sigpipe_ignore(void)
{
	sigaction(SIGPIPE, &(struct sigaction){ .sa_handler = SIG_IGN },
		  &sigpipe_was);
}

void ptshare_sigpipe_restore(void)
{
	sigaction(SIGPIPE, &sigpipe_was, NULL);
}

/* path: "-" for stdout, else as cli_output_open takes it.  0, or 1 with
 * the message. */
static int write_file(const char *path, const struct report *r, bool html)
{
	char why[256];
	FILE *f = cli_output_open(path, why, sizeof(why));
	if (!f) {
		fprintf(stderr, "ptshare: cannot write %s: %s\n", path, why);
		return 1;
	}
	errno = 0;
	int err = 0;
	if (html)
		err = -report_html(f, r);
	else
		report_json(f, r);
	int closed = cli_output_close(f);
	if (err || closed) {
		fprintf(stderr, "ptshare: writing %s: %s\n", path,
			strerror(err ? err : closed));
		return 1;
	}
	return 0;
}

int write_report_files(const struct report *r, const char *json,
		       const char *html)
{
	int bad = json ? write_file(json, r, false) : 0;
	return html ? bad | write_file(html, r, true) : bad;
}

/* The text report to path (cli_output_open's): 0, or 1 said. */
static int write_text(const char *path, const struct report *r,
		      const char *command, size_t top, bool verbose)
{
	char why[256];
	FILE *f = cli_output_open(path, why, sizeof(why));
	if (!f) {
		fprintf(stderr, "ptshare: cannot write %s: %s\n", path, why);
		return 1;
	}
	errno = 0;
	report_text(f, r, command, top, verbose);
	int err = cli_output_close(f);
	if (err)
		fprintf(stderr, "ptshare: writing %s: %s\n", path, strerror(err));
	return err ? 1 : 0;
}

int write_reports(const struct report *r, const char *command, const char *text,
		  const char *json, const char *html, size_t top, bool verbose)
{
	int bad = 0;
	if (text)
		bad = write_text(text, r, command, top, verbose);
	else if (!(json && !strcmp(json, "-")) && !(html && !strcmp(html, "-")))
		report_text(stdout, r, command, top, verbose);
	return bad | write_report_files(r, json, html);
}
