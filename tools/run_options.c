/* SPDX-License-Identifier: MIT */
/* The command line of `ptshare run`, which `ptshare aslr` shares: one
 * parser, so that an option means the same in both. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/un.h>

#include "cli/cli.h"
#include "cli/cli_options.h"
#include "run.h"
#include "ptshare/mm.h"

/* Longer bounds are surely a mistake in the unit. */
#define DAEMON_TIMEOUT_MAX 3600

/* Whether an output at path would be stdout, which CMD writes to. */
static bool is_stdout(const char *path)
{
	return path && (!strcmp(path, "-") || !strcmp(path, "/dev/stdout") ||
			!strcmp(path, "/dev/fd/1") || !strcmp(path, "/proc/self/fd/1"));
}

int run_options_parse(struct run_options *o, const char *name,
		      void (*usage)(FILE *f), unsigned extra, int argc,
		      char **argv)
{
	static const struct option own[] = {
		{ "daemon-timeout", required_argument, NULL, 'T' },
		{ "report-socket", required_argument, NULL, 'S' },
		{ "no-record", no_argument, NULL, 'N' },
		{ "quiet", no_argument, NULL, 'q' },
		{ 0 },
	};
	struct cli_parser p;
	uint64_t timeout;
	int c;
	/* '+': the options end at CMD, whose own options are its own. */
	cli_parser_init(&p, name, usage, CLI_POLICY | CLI_JSON | CLI_HTML |
			CLI_INTERVAL | CLI_RECORD | CLI_TOP | CLI_FAULTS | extra,
			own, "+o:");
	*o = (struct run_options){ .name = name,
				   .daemon_timeout_s = DAEMON_TIMEOUT_DEFAULT };
	while ((c = cli_next(&p, argc, argv)) != -1) {
		if (c == 'o') {
			if (!(o->output = cli_output_template(&p, optarg)))
				return CLI_USAGE_STATUS;
		} else if (c == 'N') {
			o->no_record = true;
		} else if (c == 'q') {
			o->quiet = true;
		} else if (c == 'S') {
			if (strlen(optarg) >= sizeof(((struct sockaddr_un *)0)->sun_path))
				return cli_usage_error(&p, "--report-socket is too long "
						       "for a socket's path", optarg);
			o->report_socket = optarg;
		} else if (cli_u64(optarg, &timeout) || timeout > DAEMON_TIMEOUT_MAX) {
			return cli_usage_error(&p, "bad --daemon-timeout (seconds, "
					       "at most an hour)", optarg);
		} else {
			o->daemon_timeout_s = (unsigned)timeout;
		}
	}
	if (p.status >= 0)
		return p.status;
	o->v = p.v;
	/* CMD's stdout is ours: a report there would be mixed with what CMD
	 * writes, and no reader could take it apart. */
	const char *mixed = is_stdout(o->v.json) ? o->v.json
			    : is_stdout(o->v.html) ? o->v.html
			    : is_stdout(o->v.openmetrics) ? o->v.openmetrics
			    : is_stdout(o->output) ? o->output
			    : is_stdout(o->v.record) ? o->v.record : NULL;
	if (mixed)
		return cli_usage(name, "'%s' is CMD's stdout too: its output and "
				 "the report would mix; name a file", mixed);
	if (o->no_record && o->v.record)
		return cli_usage(name, "--record and --no-record: which?");
	if (optind >= argc)
		return cli_usage(name, "no command to run");
	o->cmd = argv + optind;
	struct mm_worlds ws;
	char err[256];
	if (o->v.policies &&
	    mm_worlds_init(&ws, o->v.policies, err, sizeof(err))) {
		return cli_usage(name, "%s", err);
	}
	if (o->v.policies)
		mm_worlds_free(&ws);
	return -1;
}
