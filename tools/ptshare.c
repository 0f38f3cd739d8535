/* SPDX-License-Identifier: MIT */
/* ptshare: how many page tables would this workload share if the kernel
 * shared page tables, and what would that save? */
#include <stdio.h>
#include <string.h>

#include "cli/cli_options.h"
#include "commands.h"
#include "ptshare/policy.h"

static const struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *what;
} commands[] = {
	{ "snapshot", cmd_snapshot,
	  "estimate sharing for running processes, from /proc alone" },
	{ "top", cmd_top,
	  "watch the processes with the most page-table memory, live" },
	{ "run", cmd_run, "trace a program from start to end, and report" },
	{ "replay", cmd_replay, "rebuild a report from a trace of ptshare run" },
	{ "report", cmd_report, "the report of a ptshare run still running, now" },
	{ "aslr", cmd_aslr,
	  "run a program with and without address randomisation, and compare" },
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

/* The commands and the policies, one a line: the man pages' test and the
 * bash completion read them here. */
static void usage(void)
{
	fputs("usage: ptshare <command> [options]\n"
	      "       ptshare help <command>\n"
	      "       ptshare -V | --version | version\n"
	      "\ncommands:\n", stdout);
	for (size_t i = 0; i < NCOMMANDS; i++)
		printf("  %-10s %s\n", commands[i].name, commands[i].what);
	printf("  %-10s %s\n  %-10s %s\n", "help",
	       "describe a command, as 'ptshare <command> --help' does",
	       "version", "print ptshare's version");
	fputs("\npolicies (--policy LIST, comma-separated; docs/model.md):\n",
	      stdout);
	for (size_t i = 0; mm_policies[i]; i++)
		printf("  %s\n", mm_policies[i]->name);
	fputs("\n'ptshare <command> --help' and 'man ptshare-<command>' "
	      "describe a command.\n", stdout);
}

static const struct command *command(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(name, commands[i].name))
			return &commands[i];
	return NULL;
}

/* "ptshare: what 'arg'; the commands: ...": a usage error. */
static int unknown(const char *what, const char *arg)
{
	char names[128] = "";
	for (size_t i = 0; i < NCOMMANDS; i++)
		snprintf(names + strlen(names), sizeof(names) - strlen(names),
			 "%s%s", i ? ", " : "", commands[i].name);
	if (arg)
		return cli_usage("ptshare", "%s '%s' (the commands: %s)", what,
				 arg, names);
	return cli_usage("ptshare", "%s (the commands: %s)", what, names);
}

/* ptshare help [CMD]: CMD's --help, or ours. */
static int help(int argc, char **argv)
{
	if (argc < 2) {
		usage();
		return 0;
	}
	const struct command *c = command(argv[1]);
	if (!c)
		return unknown("no help for", argv[1]);
	if (argc > 2)
		return cli_usage("ptshare help", "one command at a time");
	char *args[] = { argv[1], "--help", NULL };
	return c->run(2, args);
}

int main(int argc, char **argv)
{
	ptshare_sigpipe_ignore();
	if (argc < 2)
		return unknown("no command given", NULL);
	const char *a = argv[1];
	if (!strcmp(a, "--help") || !strcmp(a, "-h") || !strcmp(a, "help"))
		return help(argc - 1, argv + 1);
	if (!strcmp(a, "--version") || !strcmp(a, "-V") ||
	    !strcmp(a, "version")) {
		printf("ptshare %s\n", PTSHARE_VERSION);
		return 0;
	}
	const struct command *c = command(a);
	if (c)
		return c->run(argc - 1, argv + 1);
	return unknown(*a == '-' ? "unknown option" : "unknown command", a);
}
