/* SPDX-License-Identifier: MIT */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_options.h"
#include "ptshare/wire.h"

/* The shared options, in the order of enum cli_shared's bits, then --help,
 * and where each one's argument goes (--verbose and --help take none);
 * getopt_long gives SHARED_VAL + their index. */
#define SHARED_VAL 0x100
#define GIVEN(field) offsetof(struct cli_values, field)
static const struct {
	const char *name;
	size_t given;
} shared_options[] = {
	{ "policy", GIVEN(policies) }, { "json", GIVEN(json) },
	{ "html", GIVEN(html) }, { "record", GIVEN(record) },
	{ "top", GIVEN(top) }, { "interval", GIVEN(interval) },
	{ "faults", GIVEN(faults) }, { "verbose", 0 },
	{ "openmetrics", GIVEN(openmetrics) },
	{ "flamegraph", GIVEN(flamegraph) },
	{ "group-by", GIVEN(group_by) }, { "help", 0 },
};
#define NSHARED (sizeof(shared_options) / sizeof(shared_options[0]))
#define HELP (NSHARED - 1)

void cli_parser_init(struct cli_parser *p, const char *name,
		     void (*usage)(FILE *f), unsigned shared,
		     const struct option *own, const char *short_options)
{
	*p = (struct cli_parser){
		.name = name, .usage = usage, .status = -1,
		.v = { .top_n = 20, .faults_mode = PTS_FAULTS_OFF },
	};
	/* ':' after any '+': a missing argument is told apart (':') from
	 * an unknown option ('?'), and getopt says neither itself. */
	bool in_order = *short_options == '+';
	if (strlen(short_options) + 2 > sizeof(p->short_options))
		abort();
	snprintf(p->short_options, sizeof(p->short_options), "%s:%s",
		 in_order ? "+" : "", short_options + in_order);
	size_t n = 0;
	while (own && own[n].name)
		n++;
	shared |= 1u << HELP;
	/* The commands' tables are fixed: only a new option can overflow,
	 * leaving no room for the { 0 } at the end. */
	if (n + (size_t)__builtin_popcount(shared) >= CLI_MAX_OPTIONS)
		abort();
	for (size_t i = 0; i < n; i++)
		p->table[i] = own[i];
	for (size_t i = 0; i < NSHARED; i++)
		if (shared & (1u << i))
			p->table[n++] = (struct option){
				shared_options[i].name,
				i == HELP || 1u << i == CLI_VERBOSE ?
					no_argument : required_argument, NULL,
				SHARED_VAL + (int)i,
			};
}

int cli_usage(const char *name, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "%s: ", name);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\nTry '%s --help' for more information.\n", name);
	va_end(ap);
	return CLI_USAGE_STATUS;
}

int cli_usage_error(const struct cli_parser *p, const char *what,
		    const char *arg)
{
	return cli_usage(p->name, "%s '%s'", what, arg);
}

const char *cli_output_template(const struct cli_parser *p, const char *file)
{
	static char path[4096];
	size_t n = 0;
	for (const char *c = file; *c && n < sizeof(path); c++) {
		if (*c != '%') {
			path[n++] = *c;
		} else if (c[1] == '%') {
			path[n++] = *++c;
		} else if (c[1] == 'p') {
			c++;
			n += (size_t)snprintf(path + n, sizeof(path) - n, "%ld",
					      (long)getpid());
		} else {
			cli_usage_error(p, "-o takes %p (the pid) and %%, not",
					file);
			return NULL;
		}
	}
	if (n >= sizeof(path)) {
		cli_usage_error(p, "-o: path too long", file);
		return NULL;
	}
	path[n] = '\0';
	return path;
}

/* What getopt_long found wrong with the option it just passed (c '?' or
 * ':'), said as GNU programs say it. */
static int bad_option(const struct cli_parser *p, int c, char **argv)
{
	const char *arg = argv[optind - 1];
	if (strncmp(arg, "--", 2)) /* a short option */
		return cli_usage(p->name, "%s '-%c'", c == ':' ?
				 "option needs an argument:" : "unknown option",
				 optopt);
	size_t len = strcspn(arg + 2, "=");
	size_t matches = 0;
	bool exact = false;
	for (const struct option *o = p->table; o->name; o++)
		if (!strncmp(o->name, arg + 2, len)) {
			matches++;
			exact |= !o->name[len];
		}
	const char *what = c == ':' ? "option needs an argument:"
			   : exact ? "option takes no argument:"
			   : matches > 1 ? "ambiguous option"
			   : "unknown option";
	return cli_usage(p->name, "%s '%.*s'", what, (int)len + 2, arg);
}

/* Shared option i with its argument arg into p->v: -1 to go on, else the
 * exit status. */
static int take(struct cli_parser *p, unsigned i, const char *arg)
{
	struct cli_values *v = &p->v;
	uint64_t interval;
	if (i == HELP) {
		p->usage(stdout);
		return 0;
	}
	if (1u << i == CLI_VERBOSE) {
		v->verbose = true;
		return -1;
	}
	if ((1u << i == CLI_TOP && cli_u64(arg, &v->top_n)) ||
	    (1u << i == CLI_INTERVAL && cli_u64(arg, &interval)))
		return cli_usage_error(p, "bad number", arg);
	/* its name is the first of several: no stdout */
	if (1u << i == CLI_FLAMEGRAPH && (!*arg || !strcmp(arg, "-")))
		return cli_usage_error(p, "--flamegraph needs a file name, not", arg);
	if (1u << i == CLI_FAULTS && cli_faults(arg, &v->faults_mode))
		return cli_usage_error(p, "--faults is off, table or all, not", arg);
	if (1u << i == CLI_GROUP_BY && cli_group_by(arg, &v->group_by_n))
		return cli_usage_error(p, "--group-by is process, command, user "
				       "or cgroup, not", arg);
	*(const char **)((char *)v + shared_options[i].given) = arg;
	return -1;
}

int cli_next(struct cli_parser *p, int argc, char **argv)
{
	int c;
	opterr = 0;
	while (p->status < 0 && (c = getopt_long(argc, argv, p->short_options,
						  p->table, NULL)) != -1) {
		if (c >= SHARED_VAL && c < SHARED_VAL + (int)NSHARED) {
			p->status = take(p, (unsigned)(c - SHARED_VAL), optarg);
		} else if (c == '?' || c == ':') {
			p->status = bad_option(p, c, argv);
		} else {
			return c;
		}
	}
	return -1;
}
