/* SPDX-License-Identifier: MIT */
/* ptshare: how many page tables would this workload share if the kernel
 * shared page tables, and what would that save? */
#include <stdio.h>
#include <string.h>

#include "commands.h"

static const struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *what;
} commands[] = {
	{ "snapshot", cmd_snapshot,
	  "estimate sharing for running processes, from /proc alone" },
	{ "run", cmd_run, "trace a program from start to end, and report" },
	{ "replay", cmd_replay, "rebuild a report from a trace of ptshare run" },
	{ "report", cmd_report, "the report of a ptshare run still running, now" },
	{ "aslr", cmd_aslr,
	  "run a program with and without address randomisation, and compare" },
};

static void usage(FILE *f)
{
	fputs("usage: ptshare <command> [options]\n\ncommands:\n", f);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].what);
	fputs("\n'ptshare <command> --help' describes a command.\n"
	      "Policies: linux (today), mccracken-2005, aslr-tolerant, "
	      "hugetlb-pmd, hugetlb-2m, thp-shmem, mshare (and cow-pte, by\n"
	      "name only); docs/model.md.\n", f);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("ptshare %s\n", PTSHARE_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "ptshare: unknown command '%s'\n\n", argv[1]);
	usage(stderr);
	return 2;
}
