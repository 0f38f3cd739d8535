/* SPDX-License-Identifier: MIT */
/* Writing a report where the user asked: text on stdout, JSON, HTML and
 * OpenMetrics to files. */
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

/* What goes into a file, and how: one of the report's forms. */
struct report_form {
	enum { FORM_TEXT, FORM_JSON, FORM_HTML, FORM_OPENMETRICS, FORM_FLAME } kind;
	const char *command;
	size_t top;      /* text: rows; flame graph: the policy */
	bool verbose;
};

/* r as form to path ("-" for stdout, else as cli_output_open takes it;
 * OpenMetrics replaced whole, 0644, for node_exporter's textfile
 * collector): 0, or 1 with the message. */
static int write_file(const char *path, const struct report *r,
		      const struct report_form *form)
{
	char why[256];
	struct cli_replace rep;
	bool whole = form->kind == FORM_OPENMETRICS;
	FILE *f = whole ? cli_replace_open(&rep, path, 0644, why, sizeof(why))
			: cli_output_open(path, why, sizeof(why));
	if (!f) {
		fprintf(stderr, "ptshare: cannot write %s: %s\n", path, why);
		return 1;
	}
	errno = 0;
	int err = 0;
	if (form->kind == FORM_HTML)
		err = -report_html(f, r);
	else if (form->kind == FORM_JSON)
		report_json(f, r);
	else if (form->kind == FORM_FLAME)
		report_flamegraph(f, r, form->top);
	else if (whole)
		report_openmetrics(f, r);
	else
		report_text(f, r, form->command, form->top, form->verbose);
	int closed = whole ? cli_replace_close(&rep, f) : cli_output_close(f);
	if (err || closed) {
		fprintf(stderr, "ptshare: writing %s: %s\n", path,
			strerror(err ? err : closed));
		return 1;
	}
	return 0;
}

/* The flame graphs: path for today's tables, path.LABEL for each other
 * policy's saving (docs/flamegraph.md). */
static int write_flamegraphs(const struct report *r, const char *path)
{
	int bad = 0;
	for (size_t k = 0; path && k < r->npol; k++) {
		char buf[4096];
		struct report_form as_flame = { .kind = FORM_FLAME, .top = k };
		bad |= write_file(report_flamegraph_path(r, k, path, buf, sizeof(buf)),
				  r, &as_flame);
	}
	return bad;
}

int write_report_files(const struct report *r, const struct cli_values *v)
{
	static const struct report_form as_json = { .kind = FORM_JSON };
	static const struct report_form as_html = { .kind = FORM_HTML };
	static const struct report_form as_openmetrics = { .kind = FORM_OPENMETRICS };
	int bad = v->json ? write_file(v->json, r, &as_json) : 0;
	bad |= v->html ? write_file(v->html, r, &as_html) : 0;
	bad |= v->openmetrics ? write_file(v->openmetrics, r, &as_openmetrics) : 0;
	return bad | write_flamegraphs(r, v->flamegraph);
}

static bool is_stdout(const char *path)
{
	return path && !strcmp(path, "-");
}

int write_reports(const struct report *r, const char *command, const char *text,
		  const struct cli_values *v)
{
	int bad = 0;
	struct report_form as_text = { FORM_TEXT, command, (size_t)v->top_n,
				       v->verbose };
	if (text)
		bad = write_file(text, r, &as_text);
	else if (!is_stdout(v->json) && !is_stdout(v->html) &&
		 !is_stdout(v->openmetrics))
		report_text(stdout, r, command, as_text.top, v->verbose);
	return bad | write_report_files(r, v);
}
