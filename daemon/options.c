/* SPDX-License-Identifier: MIT */
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>

#include "access.h"
#include "cli.h"
#include "options.h"
#include "ptshare/wire.h"

/* A day: longer intervals are surely a mistake in the unit. */
#define INTERVAL_MAX 86400

static void usage(FILE *f)
{
	fputs("usage: ptshared --socket PATH [--report-socket PATH] [--policy LIST]\n"
	      "                [--interval S] [--faults table|all|off] [--json FILE]\n"
	      "                [--text FILE] [--html FILE] [--record FILE] [--top N]\n"
	      "                [--ready-fd N] [--allow-users LIST|all] [--max-clients N]\n"
	      "                [--max-clients-per-user N]\n"
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
	      "                  table (default: a process's first fault in each\n"
	      "                  2 MiB span), all (every one), off (pagemap only)\n"
	      "  --json FILE     write the JSON report to FILE (0600; '-': stdout)\n"
	      "  --html FILE     write the HTML report to FILE (0600; '-': stdout)\n"
	      "  --text FILE     write the text report to FILE (0600; '-': stdout;\n"
	      "                  default: stderr)\n"
	      "  --record FILE   keep every record applied in a trace (0600)\n"
	      "  --top N         processes and mappings the text lists (default 20,\n"
	      "                  0: all)\n"
	      "  --ready-fd N    write \"ready\\n\" to fd N and close it once listening\n"
	      "  --allow-users LIST  serve these users' processes too (names or\n"
	      "                  uids, comma-separated, or all): the socket is made\n"
	      "                  0666; its directory may be root's (default: only\n"
	      "                  the daemon's own user)\n"
	      "  --max-clients N connections served at once (default: 16384, or\n"
	      "                  half the fd limit when that is less)\n"
	      "  --max-clients-per-user N  of them, one user's at most (default:\n"
	      "                  a quarter of --max-clients with --allow-users,\n"
	      "                  else all)\n"
	      "\n"
	      "Exit status: 0 after a clean shutdown, 1 on a failure, 2 on a usage\n"
	      "error.\n",
	      f);
}

static int bad(const char *what, const char *arg)
{
	fprintf(stderr, "ptshared: %s '%s'\n", what, arg);
	usage(stderr);
	return 2;
}

int daemon_options_parse(struct daemon_options *o, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "report-socket", required_argument, NULL, 'S' },
		{ "policy", required_argument, NULL, 'P' },
		{ "interval", required_argument, NULL, 'i' },
		{ "json", required_argument, NULL, 'j' },
		{ "html", required_argument, NULL, 'H' },
		{ "text", required_argument, NULL, 't' },
		{ "record", required_argument, NULL, 'r' },
		{ "top", required_argument, NULL, 'n' },
		{ "ready-fd", required_argument, NULL, 'R' },
		{ "faults", required_argument, NULL, 'f' },
		{ "allow-users", required_argument, NULL, 'u' },
		{ "max-clients", required_argument, NULL, 'm' },
		{ "max-clients-per-user", required_argument, NULL, 'M' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	*o = (struct daemon_options){ .interval_s = 1, .top = 20, .ready_fd = -1,
				      .faults = PTS_FAULTS_TABLE };
	uint64_t fd;
	char err[128];
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			o->socket = optarg;
			break;
		case 'S':
			o->report_socket = optarg;
			break;
		case 'P':
			o->policies = optarg;
			break;
		case 'i':
			if (cli_u64(optarg, &o->interval_s) ||
			    o->interval_s > INTERVAL_MAX)
				return bad("bad interval (seconds, at most a day)", optarg);
			break;
		case 'j':
			o->json = optarg;
			break;
		case 'H':
			o->html = optarg;
			break;
		case 't':
			o->text = optarg;
			break;
		case 'r':
			o->record = optarg;
			break;
		case 'n':
			if (cli_u64(optarg, &o->top))
				return bad("bad number", optarg);
			break;
		case 'R':
			if (cli_u64(optarg, &fd) || fd > INT_MAX ||
			    fcntl((int)fd, F_GETFD) < 0)
				return bad("--ready-fd is not an open file descriptor",
					   optarg);
			o->ready_fd = (int)fd;
			break;
		case 'f':
			if (cli_faults(optarg, &o->faults))
				return bad("--faults is table, all or off, not", optarg);
			break;
		case 'u':
			if (access_allow_users(optarg, err, sizeof(err))) {
				fprintf(stderr, "ptshared: %s\n", err);
				usage(stderr);
				return 2;
			}
			break;
		case 'm':
			if (cli_u64(optarg, &o->max_clients) || !o->max_clients)
				return bad("bad --max-clients (at least 1)", optarg);
			break;
		case 'M':
			if (cli_u64(optarg, &o->max_per_user) || !o->max_per_user)
				return bad("bad --max-clients-per-user (at least 1)",
					   optarg);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc)
		return bad("unexpected argument", argv[optind]);
	if (!o->socket) {
		fputs("ptshared: --socket PATH is required\n", stderr);
		usage(stderr);
		return 2;
	}
	return -1;
}
