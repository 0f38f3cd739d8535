/* SPDX-License-Identifier: MIT */
/*
 * The options the ptshare commands and ptshared share: each has one name,
 * one check and one message wherever it is taken (`ptshare run` passes
 * them on to the daemon as it got them).  A command names the ones it
 * takes (a mask of enum cli_shared) and its own options; cli_next() hands
 * it its own one by one and takes the shared ones, --help (always there)
 * and the usage errors itself.  A usage error is one line saying what was
 * wrong, prefixed with the command's name ("ptshare run: "), and a pointer
 * to its --help; exit status 2.
 */
#ifndef PTSHARE_CLI_OPTIONS_H
#define PTSHARE_CLI_OPTIONS_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* The exit status of a usage error. */
#define CLI_USAGE_STATUS 2

enum cli_shared {
	CLI_POLICY = 1 << 0,   /* --policy LIST */
	CLI_JSON = 1 << 1,     /* --json FILE */
	CLI_HTML = 1 << 2,     /* --html FILE */
	CLI_RECORD = 1 << 3,   /* --record FILE */
	CLI_TOP = 1 << 4,      /* --top N */
	CLI_INTERVAL = 1 << 5, /* --interval S, a number (the daemon bounds it) */
	CLI_FAULTS = 1 << 6,   /* --faults table|all|off */
	CLI_VERBOSE = 1 << 7,  /* --verbose: each refusal's reason in the text */
	CLI_OPENMETRICS = 1 << 8, /* --openmetrics FILE (docs/fleet.md) */
	CLI_FLAMEGRAPH = 1 << 9, /* --flamegraph FILE (docs/flamegraph.md) */
	CLI_GROUP_BY = 1 << 10, /* --group-by process|command|user|cgroup */
};

/* --group-by's values, in the order of enum report_group_by (0: none). */
#define CLI_GROUP_BY_NAMES "process", "command", "user", "cgroup"

/* What the shared options said: the arguments as given (checked), NULL
 * for an option not given, and the numbers they spell. */
struct cli_values {
	const char *policies, *json, *html, *record, *top, *interval, *faults;
	const char *openmetrics, *flamegraph, *group_by;
	uint64_t top_n;       /* 20 when not given */
	uint32_t faults_mode; /* enum pts_faults; table when not given */
	uint32_t group_by_n;  /* 1 + its index in CLI_GROUP_BY_NAMES; 0: none */
	bool verbose;         /* --verbose given */
};

#define CLI_MAX_OPTIONS 24

struct cli_parser {
	const char *name;          /* "ptshare run": for messages */
	void (*usage)(FILE *f);    /* on --help, to stdout */
	struct cli_values v;
	int status;                /* -1, or the exit status to end with */
	char short_options[16];    /* getopt_long's optstring */
	struct option table[CLI_MAX_OPTIONS]; /* its own, then the shared */
};

/* For the command name taking the shared options of the mask shared, its
 * own options (ended by { 0 }; NULL: none) and short_options ("+o:" at
 * most). */
void cli_parser_init(struct cli_parser *p, const char *name,
		     void (*usage)(FILE *f), unsigned shared,
		     const struct option *own, const char *short_options);
/* The next of the command's own options (its val, optarg set), or -1 at
 * the end of the options or when p->status says to end: 0 after --help,
 * 2 after a usage error (its message printed). */
int cli_next(struct cli_parser *p, int argc, char **argv);
/* -o FILE as every command takes it: "%p" in FILE is this process's pid,
 * "%%" a '%', as in valgrind's --log-file.  The path (in a buffer of the
 * module's, for the one -o of the command line), or NULL after a usage
 * error said (another '%', a path too long). */
const char *cli_output_template(const struct cli_parser *p, const char *file);
/* "name: what 'arg'" and the pointer to --help on stderr: returns 2. */
int cli_usage_error(const struct cli_parser *p, const char *what,
		    const char *arg);
/* "name: " and the message on stderr, then "Try 'name --help' for more
 * information.": returns CLI_USAGE_STATUS. */
int cli_usage(const char *name, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
