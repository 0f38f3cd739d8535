/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>

#include "cli/cli.h"
#include "outputs.h"
#include "log.h"

/* path, or "-" for stdout, or dflt when path is NULL. */
static int output_open(struct output *o, const char *path, FILE *dflt)
{
	*o = (struct output){ path ? path : "stderr", dflt };
	if (!path)
		return 0;
	if (!strcmp(path, "-"))
		o->name = "stdout";
	char why[256];
	if (!(o->f = cli_output_open(path, why, sizeof(why)))) {
		say("cannot write %s: %s", path, why);
		return -1;
	}
	return 0;
}

/* The OpenMetrics file, written to a new file beside path that replaces
 * it at the end (cli_replace_open), so that node_exporter never reads
 * half of it. */
static int openmetrics_open(struct outputs *out, const char *path)
{
	char why[256];
	out->openmetrics = (struct output){ path, NULL };
	if (!path)
		return 0;
	out->openmetrics.f = cli_replace_open(&out->replace, path, 0644, why,
					      sizeof(why));
	if (!out->openmetrics.f) {
		say("cannot write %s: %s", path, why);
		return -1;
	}
	return 0;
}

/* Flushes, and closes unless it is a standard stream. */
static int output_close(struct output *o)
{
	if (!o->f)
		return 0;
	errno = 0;
	int err = cli_output_close(o->f);
	if (err)
		say("writing %s: %s", o->name, strerror(err));
	o->f = NULL;
	return err ? -1 : 0;
}

int outputs_open(struct outputs *out, const struct daemon_options *o)
{
	*out = (struct outputs){ 0 };
	if (!output_open(&out->text, o->text, stderr) &&
	    !output_open(&out->json, o->json, NULL) &&
	    !output_open(&out->html, o->html, NULL) &&
	    !output_open(&out->trace, o->record, NULL) &&
	    !openmetrics_open(out, o->openmetrics)) {
		out->flamegraph = o->flamegraph;
		return 0;
	}
	outputs_close(out);
	return -1;
}

void outputs_close(struct outputs *out)
{
	if (out->openmetrics.f) /* no report: the file there stays */
		cli_replace_abandon(&out->replace, out->openmetrics.f);
	out->openmetrics.f = NULL;
	output_close(&out->trace);
	output_close(&out->json);
	output_close(&out->html);
	output_close(&out->text);
}

int outputs_write(const struct outputs *out, const struct report *r, size_t top,
		  bool verbose)
{
	if (out->text.f)
		report_text(out->text.f, r, r->command, top, verbose);
	if (out->json.f)
		report_json(out->json.f, r);
	return out->html.f ? report_html(out->html.f, r) : 0;
}

/* The flame graphs, when asked for: FILE and FILE.LABEL (made at the end,
 * a file per policy). */
static int flamegraphs(const char *path, const struct report *r)
{
	int bad = 0;
	for (size_t k = 0; path && k < r->npol; k++) {
		char buf[4096];
		struct output o;
		if (output_open(&o, report_flamegraph_path(r, k, path, buf,
							   sizeof(buf)), NULL)) {
			bad = -1;
			continue;
		}
		report_flamegraph(o.f, r, k);
		bad |= output_close(&o);
	}
	return bad;
}

int outputs_finish(struct outputs *out, const struct report *r, size_t top,
		   bool verbose)
{
	int bad = outputs_write(out, r, top, verbose) != 0;
	if (bad)
		say("writing %s: out of memory", out->html.name);
	if (out->openmetrics.f) {
		errno = 0;
		report_openmetrics(out->openmetrics.f, r);
		int err = cli_replace_close(&out->replace, out->openmetrics.f);
		out->openmetrics.f = NULL;
		if (err)
			say("writing %s: %s", out->openmetrics.name, strerror(err));
		bad |= err != 0;
	}
	bad |= output_close(&out->trace);
	bad |= output_close(&out->json);
	bad |= output_close(&out->html);
	bad |= output_close(&out->text);
	bad |= flamegraphs(out->flamegraph, r);
	return bad ? -1 : 0;
}
