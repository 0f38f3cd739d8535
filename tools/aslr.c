/* SPDX-License-Identifier: MIT */
/*
 * ptshare aslr: the effect of address randomisation on sharing
 * (docs/aslr.md).  Runs the workload twice through the machinery of
 * `ptshare run`: first with its addresses randomised as the system does,
 * then without (personality ADDR_NO_RANDOMIZE, which every process of the
 * workload inherits), and compares the two reports policy by policy and
 * mapping by mapping.  Unrelated processes that map the same file get it
 * at different addresses when randomised: the exact 2005 policy cannot
 * share their tables, the aslr-tolerant one still can.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "aslr.h"
#include "cli/cli.h"
#include "commands.h"

#define VA_SPACE_PATH "/proc/sys/kernel/randomize_va_space"

static void usage(FILE *f)
{
	fputs("usage: ptshare aslr [--policy LIST] [--json FILE] [--interval S]\n"
	      "                    [--faults off|table|all] [--daemon-timeout S] [--quiet]\n"
	      "                    [--top N] [--report-socket PATH] [-o FILE]\n"
	      "                    [--] CMD [ARGS...]\n"
	      "\n"
	      "Runs CMD twice as `ptshare run` does: first with addresses randomised\n"
	      "as the system does, then without randomisation (personality\n"
	      "ADDR_NO_RANDOMIZE, inherited by every process CMD starts), and prints\n"
	      "both side by side for each policy: table pages, shared tables, bytes\n"
	      "saved, and the mappings whose sharing changed, with why.  The\n"
	      "aslr-tolerant policy on the randomised run shows what sharing that\n"
	      "matches table slots instead of addresses would recover.  CMD's output\n"
	      "is untouched (both runs'); the comparison goes to stderr (or -o FILE).\n"
	      "\n"
	      "  --policy LIST   comma-separated policies (default: all);\n"
	      "                  name[:pte+pmd+pud] picks the levels that share\n"
	      "  --json FILE     also write both reports and the comparison as one\n"
	      "                  JSON document to FILE (0600; not stdout, CMD's)\n"
	      "  --interval S    read every process's /proc every S seconds\n"
	      "                  (default 1; 0: only at start, fork, exec and exit)\n"
	      "  --faults MODE   page faults seen on userfaultfds, as for ptshare run:\n"
	      "                  off (default), table or all\n"
	      "  --daemon-timeout S  end a run's ptshared once it has been stopped\n"
	      "                  or hung this long (default 1; 0: never): that run\n"
	      "                  then has no report\n"
	      "  --quiet         no progress line on stderr while each run runs\n"
	      "  --top N         changed mappings to list (default 20, 0: all)\n"
	      "  --report-socket PATH  where `ptshare report` asks each run for its\n"
	      "                  report while it runs, as for ptshare run\n"
	      "  -o FILE         write the text to FILE (0600; %p: ptshare's pid)\n"
	      "                  instead of stderr\n"
	      "\n"
	      "Exit status: CMD's in the second run (128 + the signal when a signal\n"
	      "killed it), 2 on a usage error or a refused program, 1 when ptshare\n"
	      "itself failed or has no report, 126/127 when CMD cannot be run or\n"
	      "found.\n",
	      f);
}

/* kernel.randomize_va_space, or -1. */
static int va_space(void)
{
	FILE *f = fopen(VA_SPACE_PATH, "re");
	int v = -1;
	if (f && fscanf(f, "%d", &v) != 1)
		v = -1;
	if (f)
		fclose(f);
	return v;
}

/* Where the text and the JSON go: opened before the runs, so that a path
 * that cannot be written is an error before CMD runs twice, not after. */
struct outputs {
	const char *text_path, *json_path;
	FILE *text, *json;
};

/* path, "-" for stdout, or dflt when path is NULL. */
static FILE *output_open(const char *path, FILE *dflt)
{
	if (!path)
		return dflt;
	char why[256];
	FILE *f = cli_output_open(path, why, sizeof(why));
	if (!f)
		fprintf(stderr, "ptshare aslr: cannot write %s: %s\n", path, why);
	return f;
}

/* Flushed, and closed unless standard: 0, or 1 after a write error. */
static int output_close(FILE *f, const char *path)
{
	int err = f ? cli_output_close(f) : 0;
	if (err)
		fprintf(stderr, "ptshare aslr: writing %s: %s\n",
			path ? path : "stderr", strerror(err));
	return err != 0;
}

static int outputs_open(struct outputs *out, const struct run_options *o)
{
	*out = (struct outputs){ .text_path = o->output, .json_path = o->v.json };
	out->text = output_open(o->output, stderr);
	out->json = output_open(o->v.json, NULL);
	if (out->text && (out->json || !o->v.json))
		return 0;
	output_close(out->text, o->output);
	output_close(out->json, o->v.json);
	return -1;
}

/* Both runs done, with reports: compared and written.  0, or 1 when
 * ptshare failed. */
static int compare(struct outputs *out, const struct run_options *o,
		   const struct run_result *run)
{
	struct report_compare cmp;
	int status = 0;
	if (report_compare(&cmp, run[0].report, run[1].report)) {
		fputs("ptshare aslr: out of memory\n", stderr);
		status = 1;
	} else {
		const struct aslr_runs a = {
			.va_space = va_space(), .run = { &run[0], &run[1] },
			.cmp = &cmp,
		};
		errno = 0; /* what output_close() tells of a failed write */
		aslr_text(out->text, &a, (size_t)o->v.top_n);
		if (out->json)
			aslr_json(out->json, &a);
		report_compare_free(&cmp);
	}
	return status;
}

int cmd_aslr(int argc, char **argv)
{
	static const enum run_layout layout[COMPARE_RUNS] = {
		RUN_LAYOUT_RANDOMISED, RUN_LAYOUT_FIXED,
	};
	struct run_options o;
	struct run_setup setup;
	struct run_result run[COMPARE_RUNS] = { 0 };
	int r = run_options_parse(&o, "ptshare aslr", usage, 0, argc, argv);
	if (r >= 0)
		return r;
	/* Options of ptshare run for one run's report, not for two; and
	 * for its trace, which aslr does not keep. */
	if (o.v.record || o.v.html) {
		return cli_usage(o.name, "%s is for ptshare run: it holds one run "
				 "(--json holds both)",
				 o.v.record ? "--record" : "--html");
	}
	if (o.no_record)
		return cli_usage(o.name, "--no-record is for ptshare run: aslr "
				 "keeps no trace");
	if ((r = run_setup(&setup, &o)) >= 0)
		return r;
	struct outputs out;
	if (outputs_open(&out, &o))
		return 1;
	/* A signal passed on to CMD ends a run, not the comparison: a
	 * server runs until it is told to stop, each time. */
	size_t done = 0;
	for (; done < COMPARE_RUNS; done++) {
		if (done)
			fprintf(stderr, "ptshare aslr: now without address "
				"randomisation\n");
		o.layout = layout[done];
		r = run_traced(&setup, &o, true, &run[done]);
		if (!run[done].ran || !run[done].report)
			break;
	}
	if (done < COMPARE_RUNS && run[done].ran) {
		fprintf(stderr, "ptshare aslr: no report of the %s run: no "
			"comparison\n", aslr_run_name[done]);
		r = 1;
	} else if (done == COMPARE_RUNS && compare(&out, &o, run)) {
		r = 1;
	}
	if (output_close(out.text, out.text_path) |
	    output_close(out.json, out.json_path))
		r = 1;
	for (size_t i = 0; i < COMPARE_RUNS; i++)
		run_result_free(&run[i]);
	return r;
}
