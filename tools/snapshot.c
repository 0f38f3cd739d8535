/* SPDX-License-Identifier: MIT */
/* ptshare snapshot: the model fed from /proc alone, for running processes. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>

#include "cli/cli.h"
#include "cli/cli_options.h"
#include "commands.h"
#include "snapshot_read.h"

static void usage(FILE *f)
{
	fputs("usage: ptshare snapshot [--pid PID [--tree]] [--policy LIST]\n"
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

int cmd_snapshot(int argc, char **argv)
{
	static const struct option own[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "tree", no_argument, NULL, 't' },
		{ "min-mapping", required_argument, NULL, 'm' },
		{ 0 },
	};
	struct cli_parser p;
	cli_parser_init(&p, "ptshare snapshot", usage,
			CLI_POLICY | CLI_JSON | CLI_HTML | CLI_OPENMETRICS | CLI_TOP |
			CLI_GROUP_BY,
			own, "o:");
	const char *text = NULL;
	uint64_t pid = 0, min_mapping = MM_SPAN(PT_PTE);
	bool tree = false;
	int c;
	while ((c = cli_next(&p, argc, argv)) != -1) {
		switch (c) {
		case 'p':
			if (cli_u64(optarg, &pid) || !pid || pid > INT_MAX)
				return cli_usage_error(&p, "bad pid", optarg);
			break;
		case 't':
			tree = true;
			break;
		case 'm':
			if (cli_u64(optarg, &min_mapping))
				return cli_usage_error(&p, "bad number", optarg);
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
	if (tree && !pid)
		return cli_usage(p.name, "--tree needs --pid");
	struct snapshot s;
	char err[256];
	int r = snapshot_read(&s, p.v.policies, (int)pid, tree, err, sizeof(err));
	if (r == -EINVAL) {
		snapshot_free(&s);
		return cli_usage(p.name, "%s", err);
	}
	if (r) {
		fprintf(stderr, "ptshare snapshot: %s\n", err);
		snapshot_free(&s);
		return 1;
	}
	struct report rep;
	if (snapshot_report(&s, p.v.group_by_n, min_mapping, &rep)) {
		fprintf(stderr, "ptshare snapshot: out of memory\n");
		snapshot_free(&s);
		return 1;
	}
	r = write_reports(&rep, "snapshot", text, &p.v);
	report_free(&rep);
	if (!r && !s.nprocs) {
		fprintf(stderr, "ptshare snapshot: no process could be read\n");
		r = 1;
	}
	snapshot_free(&s);
	return r;
}
