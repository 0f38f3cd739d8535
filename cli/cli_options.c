/* SPDX-License-Identifier: MIT */
#include <stddef.h>
#include <stdlib.h>

#include "cli.h"
#include "cli_options.h"
#include "ptshare/wire.h"

/* The shared options, in the order of enum cli_shared's bits, then --help,
 * and where each one's argument goes; getopt_long gives SHARED_VAL + their
 * index. */
#define SHARED_VAL 0x100
#define GIVEN(field) offsetof(struct cli_values, field)
static const struct {
	const char *name;
	size_t given;
} shared_options[] = {
	{ "policy", GIVEN(policies) }, { "json", GIVEN(json) },
	{ "html", GIVEN(html) }, { "record", GIVEN(record) },
	{ "top", GIVEN(top) }, { "interval", GIVEN(interval) },
	{ "faults", GIVEN(faults) }, { "help", 0 },
};
#define NSHARED (sizeof(shared_options) / sizeof(shared_options[0]))
#define HELP (NSHARED - 1)

void cli_parser_init(struct cli_parser *p, const char *name,
		     void (*usage)(FILE *f), unsigned shared,
		     const struct option *own, const char *short_options)
{
	*p = (struct cli_parser){
		.name = name, .usage = usage, .status = -1,
		.short_options = short_options,
		.v = { .top_n = 20, .faults_mode = PTS_FAULTS_OFF },
	};
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
				i == HELP ? no_argument : required_argument, NULL,
				SHARED_VAL + (int)i,
			};
}

int cli_usage_error(const struct cli_parser *p, const char *what,
		    const char *arg)
{
	fprintf(stderr, "%s: %s '%s'\n", p->name, what, arg);
	p->usage(stderr);
	return 2;
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
	if ((1u << i == CLI_TOP && cli_u64(arg, &v->top_n)) ||
	    (1u << i == CLI_INTERVAL && cli_u64(arg, &interval)))
		return cli_usage_error(p, "bad number", arg);
	if (1u << i == CLI_FAULTS && cli_faults(arg, &v->faults_mode))
		return cli_usage_error(p, "--faults is off, table or all, not", arg);
	*(const char **)((char *)v + shared_options[i].given) = arg;
	return -1;
}

int cli_next(struct cli_parser *p, int argc, char **argv)
{
	int c;
	while (p->status < 0 && (c = getopt_long(argc, argv, p->short_options,
						  p->table, NULL)) != -1) {
		if (c >= SHARED_VAL && c < SHARED_VAL + (int)NSHARED) {
			p->status = take(p, (unsigned)(c - SHARED_VAL), optarg);
		} else if (c == '?') {
			p->usage(stderr);
			p->status = 2;
		} else {
			return c;
		}
	}
	return -1;
}
