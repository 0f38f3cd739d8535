/* SPDX-License-Identifier: MIT */
/*
 * The reports `ptshare run` makes itself from the trace its daemon kept
 * (docs/run.md): `ptshare aslr`'s, which it compares, and `ptshare run`'s
 * when the daemon ended before it could write one (killed, or ended by
 * the watch: run_watch.c), written then where the daemon would have.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "commands.h"
#include "ingest/ingest.h"
#include "run.h"
#include "ingest/trace.h"

/* The run's end, which a daemon that ended early did not record: now, and
 * the program's wait status. */
static void run_ended(struct ingest *g, const struct report *rep, int status)
{
	struct pts_run_info i = rep->stream.run;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	i.end_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	i.wait_status = status;
	ingest_run_info(g, &i);
}

void run_report_rebuild(const char *who, const char *trace,
			const struct cli_values *v, const char *cut, int status,
			struct run_result *r)
{
	char err[256];
	if (mm_worlds_init(&r->ws, v->policies, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", who, err);
		return;
	}
	FILE *f = fopen(trace, "rbe");
	if (!f || !(r->replay = ingest_new(&r->ws, NULL, NULL))) {
		fprintf(stderr, "%s: %s: %s\n", who, trace,
			f ? "out of memory" : strerror(errno));
		if (f)
			fclose(f);
		mm_worlds_free(&r->ws);
		return;
	}
	ingest_report_options(r->replay, v->group_by_n, v->flamegraph);
	struct trace_error te;
	int read = ingest_trace_replay(f, r->replay, cut != NULL, &te);
	fclose(f);
	if (read < 0) {
		fprintf(stderr, "%s: the run's trace: %s at offset %llu\n", who,
			te.what, (unsigned long long)te.offset);
		return;
	}
	if (cut)
		ingest_cut_short(r->replay, cut, read == 1);
	r->report = ingest_report(r->replay);
	if (cut && r->report->stream.has_run) {
		run_ended(r->replay, r->report, status);
		r->report = ingest_report(r->replay);
	}
}

int run_report_write(const struct run_options *o, const struct report *r)
{
	char why[256];
	FILE *text = o->output ? cli_output_open(o->output, why, sizeof(why))
			       : stderr;
	if (!text) {
		fprintf(stderr, "%s: cannot write %s: %s\n", o->name, o->output,
			why);
		return 1;
	}
	errno = 0;
	report_text(text, r, r->command, (size_t)o->v.top_n, o->v.verbose);
	int err = cli_output_close(text);
	if (err)
		fprintf(stderr, "%s: writing %s: %s\n", o->name,
			o->output ? o->output : "stderr", strerror(err));
	return write_report_files(r, &o->v) | (err != 0);
}
