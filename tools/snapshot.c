/* SPDX-License-Identifier: MIT */
/* ptshare snapshot: the model fed from /proc alone, for running processes. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/cli_options.h"
#include "commands.h"
#include "lib/clock.h"
#include "snapshot_read.h"

static void usage(FILE *f)
{
	fputs("usage: ptshare snapshot [--pid PID [--tree]] [--policy LIST]\n"
	      "                        [--interval S --count N]\n"
	      "                        [--json FILE] [--html FILE] [--openmetrics FILE]\n"
	      "                        [--group-by process|command|user|cgroup]\n"
	      "                        [--top N] [--min-mapping BYTES] [-o FILE]\n"
	      "\n"
	      "Reads every process the caller may read (or PID, and with --tree its\n"
	      "descendants) from /proc: mappings, populated pages (PAGEMAP_SCAN) and\n"
	      "VmPTE.  Builds one model per policy and reports today's page tables\n"
	      "(model beside the kernel's VmPTE) and the tables under each policy.\n"
	      "\n"
	      "  --pid PID          only this process\n"
	      "  --tree             with --pid: and its descendants\n"
	      "  --policy LIST      comma-separated policies (default: all);\n"
	      "                     name[:pte+pmd+pud] picks the levels that share\n"
	      "  --count N          read N times (default 1): the report is the\n"
	      "                     reading with the most page tables, and its\n"
	      "                     series holds every reading\n"
	      "  --interval S       with --count: S seconds between readings (0-86400)\n"
	      "  --json FILE        also write the JSON report to FILE ('-': stdout,\n"
	      "                     instead of the text report)\n"
	      "  --html FILE        also write the report as an HTML page (0600)\n"
	      "  --openmetrics FILE also write the totals as OpenMetrics, for\n"
	      "                     Prometheus (FILE replaced whole, 0644)\n"
	      "  --group-by G       also total the processes by process, command,\n"
	      "                     user or cgroup (a container, a systemd service)\n"
	      "  --top N            processes, groups and mappings to list (default\n"
	      "                     20, 0: all)\n"
	      "  --min-mapping B    list mappings of at least B bytes (default 2 MiB)\n"
	      "  -o FILE            write the text report to FILE (0600; %p: ptshare's\n"
	      "                     pid), not stdout\n"
	      "\n"
	      "Exit status: 0 report written, 1 nothing could be read or the JSON,\n"
	      "HTML or OpenMetrics could not be written, 2 usage error.\n",
	      f);
}

/* What to read, and how often. */
struct snapshot_plan {
	const char *policies;
	uint64_t pid, min_mapping;
	bool tree;
	uint64_t interval_s, count;
	uint32_t group_by;
};

/* A point of the series from the reading in s. */
static int add_point(struct report_series *series, const struct snapshot *s,
		     uint64_t t_ns)
{
	struct report_point pt = { .t_ns = t_ns, .processes = (uint32_t)s->nprocs };
	for (size_t i = 0; i < s->nprocs; i++)
		if (s->procs[i].vmpte_kb > 0)
			pt.vmpte_kb += (uint64_t)s->procs[i].vmpte_kb;
	report_point_tables(&pt, &s->ws);
	return report_series_add(series, &pt);
}

/* One reading (with the cache of the readings before it, or NULL), its
 * report into rep: 0, 1 (why said on stderr) or -ENOMEM. */
static int read_once(struct snapshot *s, const struct snapshot_plan *plan,
		     struct snapshot_cache *cache, struct report *rep)
{
	char err[256];
	int r = snapshot_read(s, plan->policies, (int)plan->pid, plan->tree,
			      cache, err, sizeof(err));
	if (r && r != -ENOMEM) {
		fprintf(stderr, "ptshare snapshot: %s\n", err);
		return 1;
	}
	return r ? r : snapshot_report(s, plan->group_by, plan->min_mapping, rep);
}

/* count readings, interval_s apart: the report of the one with the most
 * of today's tables, with the series of all.  0, 1 or -ENOMEM. */
static int read_series(const struct snapshot_plan *plan, struct report *out,
		       size_t *nprocs)
{
	struct report_series series = { 0 };
	/* A process asleep since the reading before is read from its status
	 * (docs/procfs.md, At rest). */
	struct snapshot_cache cache = { 0 };
	uint64_t start = now_ns(), most = 0;
	int r = 0;
	*out = (struct report){ 0 };
	for (uint64_t i = 0; !r && i < plan->count; i++) {
		struct snapshot s;
		struct report rep = { 0 };
		if (i)
			sleep((unsigned)plan->interval_s);
		uint64_t t = i ? now_ns() - start : 0;
		r = read_once(&s, plan, plan->count > 1 ? &cache : NULL, &rep);
		uint64_t tables = r ? 0 : report_sum3(rep.totals[0].distinct);
		if (!r && !(r = add_point(&series, &s, t)) && (!i || tables > most)) {
			most = tables;
			*nprocs = s.nprocs;
			report_free(out);
			*out = rep;
		} else {
			report_free(&rep);
		}
		snapshot_free(&s);
	}
	snapshot_cache_free(&cache);
	if (!r)
		r = report_set_series(out, &series);
	report_series_free(&series);
	if (r)
		report_free(out);
	return r;
}

int cmd_snapshot(int argc, char **argv)
{
	static const struct option own[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "tree", no_argument, NULL, 't' },
		{ "min-mapping", required_argument, NULL, 'm' },
		{ "count", required_argument, NULL, 'c' },
		{ 0 },
	};
	struct cli_parser p;
	cli_parser_init(&p, "ptshare snapshot", usage,
			CLI_POLICY | CLI_JSON | CLI_HTML | CLI_OPENMETRICS |
				CLI_TOP | CLI_INTERVAL | CLI_GROUP_BY,
			own, "o:");
	const char *text = NULL;
	struct snapshot_plan plan = { .min_mapping = MM_SPAN(PT_PTE), .count = 1 };
	int c;
	while ((c = cli_next(&p, argc, argv)) != -1) {
		switch (c) {
		case 'p':
			if (cli_u64(optarg, &plan.pid) || !plan.pid || plan.pid > INT_MAX)
				return cli_usage_error(&p, "bad pid", optarg);
			break;
		case 't':
			plan.tree = true;
			break;
		case 'm':
			if (cli_u64(optarg, &plan.min_mapping))
				return cli_usage_error(&p, "bad number", optarg);
			break;
		case 'c':
			if (cli_u64(optarg, &plan.count) || !plan.count ||
			    plan.count > REPORT_SERIES_MAX * 1000u)
				return cli_usage_error(&p, "bad count", optarg);
			break;
		case 'o':
			if (!(text = cli_output_template(&p, optarg)))
				return CLI_USAGE_STATUS;
			break;
		}
	}
	if (p.status >= 0)
		return p.status;
	if (optind < argc)
		return cli_usage_error(&p, "unexpected argument", argv[optind]);
	if (plan.tree && !plan.pid)
		return cli_usage(p.name, "--tree needs --pid");
	if (p.v.interval && (cli_u64(p.v.interval, &plan.interval_s) ||
			     plan.interval_s > 86400))
		return cli_usage_error(&p, "--interval is 0 to 86400 seconds, not",
				       p.v.interval);
	if (p.v.interval && plan.count < 2)
		return cli_usage(p.name, "--interval needs --count N, N > 1");
	struct mm_worlds ws;
	char err[256];
	if (mm_worlds_init(&ws, p.v.policies, err, sizeof(err)))
		return cli_usage(p.name, "%s", err);
	mm_worlds_free(&ws);
	plan.policies = p.v.policies;
	plan.group_by = p.v.group_by_n;
	struct report rep;
	size_t nprocs = 0;
	int r = read_series(&plan, &rep, &nprocs);
	if (r < 0)
		fprintf(stderr, "ptshare snapshot: %s\n", strerror(-r));
	if (r)
		return 1;
	r = write_reports(&rep, "snapshot", text, &p.v);
	report_free(&rep);
	if (!r && !nprocs) {
		fprintf(stderr, "ptshare snapshot: no process could be read\n");
		r = 1;
	}
	return r;
}
