/* SPDX-License-Identifier: MIT */
/* ptshare replay: a trace of `ptshare run --record` fed to the same ingest,
 * under any policies, on any machine. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_options.h"
#include "commands.h"
#include "ingest/trace.h"
#include "report/report.h"
#include "trace_file.h"

static void usage(FILE *f)
{
	fputs("usage: ptshare replay FILE [--policy LIST] [--json FILE] [--html FILE]\n"
	      "                      [--openmetrics FILE] [--flamegraph FILE] [--top N]\n"
	      "                      [-o FILE] [--verbose]\n"
	      "                      [--group-by process|command|user|cgroup]\n"
	      "\n"
	      "Rebuilds the report of a `ptshare run` from the trace it kept\n"
	      "(ptshare.CMD.PID.trace.zst, or --record FILE) offline: every\n"
	      "record the daemon applied (the shim's calls, the page faults, what\n"
	      "/proc said at each checkpoint) goes through the same code again.\n"
	      "With the run's policies the report is the run's; other policies\n"
	      "answer what-if questions (name:pte+pmd+pud picks the levels).\n"
	      "\n"
	      "  --policy LIST   comma-separated policies (default: all)\n"
	      "  --json FILE     also write the JSON report ('-': stdout, instead\n"
	      "                  of the text report)\n"
	      "  --html FILE     also write the report as an HTML page (0600)\n"
	      "  --openmetrics FILE\n"
	      "                  also write the totals as OpenMetrics, for\n"
	      "                  Prometheus (FILE replaced whole, 0644)\n"
	      "  --flamegraph FILE\n"
	      "                  also write collapsed stacks (flamegraph.pl,\n"
	      "                  speedscope): FILE, the call stacks by today's PTE\n"
	      "                  tables; FILE.POLICY, by the tables each policy\n"
	      "                  saves (0600)\n"
	      "  --group-by G    also total the processes by process, command,\n"
	      "                  user or cgroup (as the run's readings found them)\n"
	      "  --top N         processes, groups and mappings to list (default 20,\n"
	      "                  0: all)\n"
	      "  -o FILE         write the text report to FILE (0600; %p: ptshare's\n"
	      "                  pid), not stdout\n"
	      "  --verbose       also say why the model refused each process's\n"
	      "                  records (the last reason)\n"
	      "\n"
	      "FILE is plain or compressed with zstd (told by its first bytes);\n"
	      "'-' reads it from stdin.  A replay takes at most 256 bytes of memory\n"
	      "per byte of the trace, uncompressed (and 64 MiB); a trace that needs\n"
	      "more is refused as a corrupt one.\n"
	      "\n"
	      "Call sites are named from the object files here: a file whose\n"
	      "build id is not the run's is warned about, one line each on\n"
	      "stderr (and in the JSON's build_ids_changed).\n"
	      "\n"
	      "Exit status: 0 report written, 1 the trace is truncated or corrupt\n"
	      "(the report of what was readable is written) or cannot be read,\n"
	      "2 usage error.\n", f);
}

/* One line per object whose file here is another build than the run's:
 * its call sites are named from this one (docs/report-json.md). */
static void warn_build_ids(const struct report *r)
{
	for (size_t i = 0; i < r->nbuild_ids; i++) {
		const struct report_build_id *b = &r->build_ids[i];
		fprintf(stderr, "ptshare replay: warning: %s: build id %s here, %s "
			"in the trace: its call sites are named from another "
			"build\n", b->object, *b->here ? b->here : "none",
			b->trace);
	}
}

int cmd_replay(int argc, char **argv)
{
	struct cli_parser p;
	cli_parser_init(&p, "ptshare replay", usage, CLI_POLICY | CLI_JSON |
			CLI_HTML | CLI_OPENMETRICS | CLI_FLAMEGRAPH | CLI_TOP |
			CLI_VERBOSE | CLI_GROUP_BY, NULL,
			"o:");
	const char *text = NULL;
	while (cli_next(&p, argc, argv) != -1)
		if (!(text = cli_output_template(&p, optarg)))
			return CLI_USAGE_STATUS;
	if (p.status >= 0)
		return p.status;
	if (optind + 1 != argc) {
		return cli_usage(p.name, "%s", optind == argc ? "which trace?"
				 : "one trace at a time");
	}
	struct mm_worlds ws;
	char err[256];
	if (mm_worlds_init(&ws, p.v.policies, err, sizeof(err))) {
		return cli_usage(p.name, "%s", err);
	}
	FILE *f = trace_file_open(argv[optind]);
	struct ingest *g = f ? ingest_new(&ws, NULL, NULL) : NULL;
	if (!g) {
		fprintf(stderr, "ptshare replay: %s: %s\n", argv[optind],
			f ? "out of memory" : strerror(errno));
		if (f)
			fclose(f);
		mm_worlds_free(&ws);
		return 1;
	}
	ingest_report_options(g, p.v.group_by_n, p.v.flamegraph);
	struct trace_error te;
	int r = ingest_trace_replay(f, g, false, &te);
	if (r)
		fprintf(stderr, "ptshare replay: %s: %s at offset %llu; the report "
			"shows what came before\n", argv[optind], te.what,
			(unsigned long long)te.offset);
	fclose(f);
	const struct report *rep = ingest_report(g);
	warn_build_ids(rep);
	int w = write_reports(rep, "replay", text, &p.v);
	ingest_free(g);
	mm_worlds_free(&ws);
	return r || w ? 1 : 0;
}
