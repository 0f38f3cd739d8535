/* SPDX-License-Identifier: MIT */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>

#include "access.h"
#include "cli/cli.h"
#include "cli/cli_options.h"
#include "options.h"
#include "report/report.h"
#include "log.h"

/* A day: longer intervals are surely a mistake in the unit. */
#define INTERVAL_MAX 86400

static void usage(FILE *f)
{
	fputs("usage: ptshared --socket PATH [--report-socket PATH] [--policy LIST]\n"
	      "                [--interval S] [--faults off|table|all] [--json FILE]\n"
	      "                [--text FILE] [--html FILE] [--flamegraph FILE]\n"
	      "                [--record FILE] [--top N] [--openmetrics FILE]\n"
	      "                [--verbose] [--group-by process|command|user|cgroup]\n"
	      "                [--ready-fd N] [--heartbeat-fd N] [--allow-users LIST|all]\n"
	      "                [--max-clients N] [--max-clients-per-user N]\n"
	      "                [--command-line TEXT]\n"
	      "       ptshared --version\n"
	      "\n"
	      "The ptshare daemon: listens on a unix SOCK_SEQPACKET socket for the\n"
	      "records of programs run with libptshare.so preloaded, feeds them to\n"
	      "one model per policy, reads each process's /proc at its checkpoints,\n"
	      "and on SIGTERM or SIGINT writes the report.  `ptshare run` starts it.\n"
	      "\n"
	      "  --socket PATH   where to listen (created 0600; its directory must\n"
	      "                  be private to the caller, 0700)\n"
	      "  --report-socket PATH  where `ptshare report --socket PATH` asks\n"
	      "                  for the report while the run goes on (0600)\n"
	      "  --policy LIST   comma-separated policies (default: all)\n"
	      "  --interval S    checkpoint every process every S seconds\n"
	      "                  (default 1; 0: only at connect, fork, exec, exit)\n"
	      "  --faults MODE   page faults on the processes' userfaultfds:\n"
	      "                  off (default: pagemap only), table (a process's\n"
	      "                  first fault in each 2 MiB span; splits its VMAs),\n"
	      "                  all (every one)\n"
	      "  --json FILE     write the JSON report to FILE (0600; '-': stdout)\n"
	      "  --html FILE     write the HTML report to FILE (0600; '-': stdout)\n"
	      "  --flamegraph FILE  write collapsed stacks: FILE by today's PTE\n"
	      "                  tables, FILE.POLICY by the tables each policy saves\n"
	      "                  (0600; docs/flamegraph.md)\n"
	      "  --openmetrics FILE  write the totals as OpenMetrics to FILE\n"
	      "                  (replaced whole at the end, 0644; '-': stdout)\n"
	      "  --text FILE     write the text report to FILE (0600; '-': stdout;\n"
	      "                  default: stderr)\n"
	      "  --record FILE   keep every record applied in a trace (0600)\n"
	      "  --top N         processes and mappings the text lists (default 20,\n"
	      "                  0: all)\n"
	      "  --verbose       the text report also says why the model refused\n"
	      "                  each process's records (the last reason)\n"
	      "  --group-by G    the reports also total the processes by process,\n"
	      "                  command, user or cgroup\n"
	      "  --ready-fd N    write \"ready\\n\" to fd N and close it once listening\n"
	      "  --heartbeat-fd N  a memory file to count the turns of the loop in,\n"
	      "                  for a watcher (`ptshare run`: docs/run.md)\n"
	      "  --allow-users LIST  serve these users' processes too (names or\n"
	      "                  uids, comma-separated, or all): the socket is made\n"
	      "                  0666; its directory may be root's (default: only\n"
	      "                  the daemon's own user)\n"
	      "  --max-clients N connections served at once (default: 16384, or\n"
	      "                  half the fd limit when that is less)\n"
	      "  --max-clients-per-user N  of them, one user's at most (default:\n"
	      "                  a quarter of --max-clients with --allow-users,\n"
	      "                  else all)\n"
	      "  --command-line TEXT  the traced program's command line, for the\n"
	      "                  report's run details (`ptshare run` gives it; the\n"
	      "                  program's wait status comes as the value of its\n"
	      "                  SIGTERM, sigqueue(3))\n"
	      "  -V, --version   print ptshared's version and exit\n"
	      "\n"
	      "Exit status: 0 after a clean shutdown, 1 on a failure, 2 on a usage\n"
	      "error.\n",
	      f);
}

/* The number of an fd open in this process, or -1. */
static int open_fd(const char *arg)
{
	uint64_t fd;
	return cli_u64(arg, &fd) || fd > INT_MAX || fcntl((int)fd, F_GETFD) < 0
	       ? -1 : (int)fd;
}

int daemon_options_parse(struct daemon_options *o, int argc, char **argv)
{
	static const struct option own[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "report-socket", required_argument, NULL, 'S' },
		{ "interval", required_argument, NULL, 'i' },
		{ "text", required_argument, NULL, 't' },
		{ "ready-fd", required_argument, NULL, 'R' },
		{ "heartbeat-fd", required_argument, NULL, 'H' },
		{ "allow-users", required_argument, NULL, 'u' },
		{ "max-clients", required_argument, NULL, 'm' },
		{ "max-clients-per-user", required_argument, NULL, 'M' },
		{ "command-line", required_argument, NULL, 'c' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	struct cli_parser p;
	cli_parser_init(&p, "ptshared", usage, CLI_POLICY | CLI_JSON | CLI_HTML |
			CLI_FLAMEGRAPH | CLI_RECORD | CLI_TOP | CLI_FAULTS | CLI_VERBOSE |
			CLI_GROUP_BY | CLI_OPENMETRICS,
			own, "V");
	*o = (struct daemon_options){ .interval_s = 1, .ready_fd = -1,
				      .heartbeat_fd = -1 };
	char err[128];
	int c;
	while ((c = cli_next(&p, argc, argv)) != -1) {
		switch (c) {
		case 'V':
			printf("ptshared %s\n", PTSHARE_VERSION);
			return 0;
		case 's':
			o->socket = optarg;
			break;
		case 'S':
			o->report_socket = optarg;
			break;
		case 'i':
			if (cli_u64(optarg, &o->interval_s) ||
			    o->interval_s > INTERVAL_MAX)
				return cli_usage_error(&p, "bad interval (seconds, at "
						       "most a day)", optarg);
			break;
		case 't':
			o->text = optarg;
			break;
		case 'c':
			o->command_line = optarg;
			break;
		case 'R':
			if ((o->ready_fd = open_fd(optarg)) < 0)
				return cli_usage_error(&p, "--ready-fd is not an open "
						       "file descriptor", optarg);
			break;
		case 'H':
			if ((o->heartbeat_fd = open_fd(optarg)) < 0)
				return cli_usage_error(&p, "--heartbeat-fd is not an "
						       "open file descriptor", optarg);
			break;
		case 'u':
			if (access_allow_users(optarg, err, sizeof(err)))
				return cli_usage(p.name, "%s", err);
			break;
		case 'm':
			if (cli_u64(optarg, &o->max_clients) || !o->max_clients)
				return cli_usage_error(&p, "bad --max-clients (at least 1)",
						       optarg);
			break;
		case 'M':
			if (cli_u64(optarg, &o->max_per_user) || !o->max_per_user)
				return cli_usage_error(&p, "bad --max-clients-per-user "
						       "(at least 1)", optarg);
			break;
		}
	}
	if (p.status >= 0)
		return p.status;
	if (optind < argc)
		return cli_usage_error(&p, "unexpected argument", argv[optind]);
	if (!o->socket)
		return cli_usage(p.name, "--socket PATH is required");
	o->group_by = p.v.group_by_n;
	o->policies = p.v.policies;
	o->json = p.v.json;
	o->html = p.v.html;
	o->flamegraph = p.v.flamegraph;
	o->openmetrics = p.v.openmetrics;
	o->record = p.v.record;
	o->top = p.v.top_n;
	o->verbose = p.v.verbose;
	o->faults = p.v.faults_mode;
	return -1;
}
