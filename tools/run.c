/* SPDX-License-Identifier: MIT */
/*
 * ptshare run: a program traced from start to end (docs/run.md), and its
 * report, written by the daemon; the program's exit status is ours.
 */
#include <stdio.h>

#include "commands.h"
#include "run.h"

static void usage(FILE *f)
{
	fputs("usage: ptshare run [--policy LIST] [--json FILE] [--html FILE]\n"
	      "                   [--openmetrics FILE] [--flamegraph FILE]\n"
	      "                   [--interval S] [--faults off|table|all]\n"
	      "                   [--record FILE | --no-record] [--daemon-timeout S]\n"
	      "                   [--quiet]\n"
	      "                   [--top N] [--verbose] [--report-socket PATH]\n"
	      "                   [--group-by process|command|user|cgroup]\n"
	      "                   [-o FILE] [--] CMD [ARGS...]\n"
	      "\n"
	      "Runs CMD with libptshare.so preloaded, so that every process it starts\n"
	      "tells ptshared what it maps, and reports, once CMD and every process it\n"
	      "started have exited, the page tables the workload had and would have\n"
	      "had under each policy.  CMD's output is untouched; the report goes to\n"
	      "stderr (or -o FILE), and the trace is kept for `ptshare replay`\n"
	      "(ptshare.CMD.PID.trace.zst in the current directory).\n"
	      "Statically linked programs, and set-user-ID\n"
	      "ones of another user, are refused: LD_PRELOAD cannot follow them\n"
	      "(see `ptshare snapshot`).\n"
	      "\n"
	      "  --policy LIST   comma-separated policies (default: all);\n"
	      "                  name[:pte+pmd+pud] picks the levels that share\n"
	      "  --json FILE     also write the JSON report to FILE (0600; not stdout,\n"
	      "                  which is CMD's)\n"
	      "  --html FILE     also write the report as an HTML page (0600)\n"
	      "  --flamegraph FILE\n"
	      "                  also write collapsed stacks (flamegraph.pl,\n"
	      "                  speedscope): FILE, the call stacks by today's PTE\n"
	      "                  tables; FILE.POLICY, by the tables each policy\n"
	      "                  saves (0600)\n"
	      "  --openmetrics FILE  also write the totals as OpenMetrics, for\n"
	      "                  Prometheus (FILE replaced whole, 0644)\n"
	      "  --interval S    read every process's /proc every S seconds\n"
	      "                  (default 1; 0: only at start, fork, exec and exit)\n"
	      "  --faults MODE   page faults seen on userfaultfds (docs/faults.md):\n"
	      "                  off (default: pagemap only, the program's mappings\n"
	      "                  untouched), table (each process's first in each\n"
	      "                  2 MiB span; splits its VMAs), all (every one:\n"
	      "                  exact counts, slower)\n"
	      "  --record FILE   keep the trace in FILE (0600), compressed (zstd)\n"
	      "                  when its name ends in .zst, else plain (default:\n"
	      "                  ptshare.CMD.PID.trace.zst here, PID ptshare's)\n"
	      "  --no-record     keep no trace\n"
	      "  --quiet         no progress line: while CMD runs, and stderr is a\n"
	      "                  terminal, a line there says the processes, records\n"
	      "                  and page tables now (erased before the report)\n"
	      "  --daemon-timeout S  end ptshared once it has been stopped or hung\n"
	      "                  this long, so that the program does not wait for\n"
	      "                  it (default 1; 0: never); the report, rebuilt from\n"
	      "                  its trace, then says it ends there\n"
	      "  --group-by G    also total the processes by process, command, user\n"
	      "                  or cgroup (a container, a systemd service)\n"
	      "  --top N         processes, groups and mappings to list (default 20,\n"
	      "                  0: all)\n"
	      "  --verbose       also say why the model refused each process's\n"
	      "                  records (the last reason)\n"
	      "  --report-socket PATH  where `ptshare report --socket PATH` asks for\n"
	      "                  the report while CMD runs (default: in the run's\n"
	      "                  private directory, said on stderr unless -o and\n"
	      "                  stderr is not a terminal)\n"
	      "  -o FILE         write the text report to FILE (0600; %p: ptshare's\n"
	      "                  pid) instead of stderr\n"
	      "\n"
	      "Signals INT, TERM, HUP and QUIT are passed on to CMD, unless one of its\n"
	      "own processes sent them (to its process group).  Exit status: CMD's\n"
	      "(128 + the signal when a signal killed it), 2 on a usage error or a\n"
	      "refused program, 1 when ptshare itself failed, 126/127 when CMD cannot\n"
	      "be run or found.\n",
	      f);
}

int cmd_run(int argc, char **argv)
{
	struct run_options o;
	struct run_setup setup;
	struct run_result result;
	int r = run_options_parse(&o, "ptshare run", usage,
				  CLI_VERBOSE | CLI_FLAMEGRAPH | CLI_GROUP_BY |
				  CLI_OPENMETRICS, argc, argv);
	if (r >= 0)
		return r;
	if ((r = run_setup(&setup, &o)) >= 0)
		return r;
	r = run_traced(&setup, &o, false, &result);
	run_result_free(&result);
	return r;
}
