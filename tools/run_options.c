/* SPDX-License-Identifier: MIT */
/* The command line of `ptshare run`, which `ptshare aslr` shares: one
 * parser, so that an option means the same in both. */
#include <getopt.h>
#include <stdio.h>

#include "cli.h"
#include "run.h"
#include "worlds.h"

static int bad(const char *name, void (*usage)(FILE *), const char *what,
	       const char *arg)
{
	fprintf(stderr, "%s: %s '%s'\n", name, what, arg);
	usage(stderr);
	return 2;
}

int run_options_parse(struct run_options *o, const char *name,
		      void (*usage)(FILE *f), int argc, char **argv)
{
	static const struct option opts[] = {
		{ "policy", required_argument, NULL, 'P' },
		{ "json", required_argument, NULL, 'j' },
		{ "html", required_argument, NULL, 'H' },
		{ "interval", required_argument, NULL, 'i' },
		{ "record", required_argument, NULL, 'r' },
		{ "top", required_argument, NULL, 'n' },
		{ "faults", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	uint64_t n;
	uint32_t mode;
	int c;
	*o = (struct run_options){ .name = name };
	/* '+': the options end at CMD, whose own options are its own. */
	while ((c = getopt_long(argc, argv, "+o:", opts, NULL)) != -1) {
		switch (c) {
		case 'P':
			o->policies = optarg;
			break;
		case 'j':
			o->json = optarg;
			break;
		case 'H':
			o->html = optarg;
			break;
		case 'i':
		case 'n':
			if (cli_u64(optarg, &n))
				return bad(name, usage, "bad number", optarg);
			*(c == 'i' ? &o->interval : &o->top) = optarg;
			break;
		case 'r':
			o->record = optarg;
			break;
		case 'f':
			if (cli_faults(optarg, &mode))
				return bad(name, usage, "--faults is table, all or off, not",
					   optarg);
			o->faults = optarg;
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "%s: no command to run\n", name);
		usage(stderr);
		return 2;
	}
	o->cmd = argv + optind;
	struct worlds ws;
	char err[256];
	if (o->policies && worlds_init(&ws, o->policies, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", name, err);
		return 2;
	}
	if (o->policies)
		worlds_free(&ws);
	return -1;
}
