/* SPDX-License-Identifier: MIT */
/*
 * A strict reader of the OpenMetrics text format, for the tests of what
 * ptshare writes for Prometheus (docs/fleet.md).
 *
 * Strict means: every line ends with '\n'; the last is "# EOF" and nothing
 * follows it; a family's "# TYPE" comes first, then its "# UNIT" (the name
 * ends with "_" and the unit) and "# HELP", then its samples, and a family
 * is declared once; no other comment; names and label names as the format
 * spells them; label values and help escaped only as \\, \" and \n; a
 * sample belongs to the family declared last (its name, or the name and
 * "_total" for a counter), is not repeated (same name and labels), and has
 * an integer value and no timestamp (ptshare writes no other).
 */
#ifndef PTSHARE_TESTS_OM_READ_H
#define PTSHARE_TESTS_OM_READ_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

struct om_family {
	char *name, *type, *unit, *help; /* unit, help: NULL when absent */
	size_t samples;
};

struct om_sample {
	char *series;  /* name{labels} as written: `a_bytes{policy="linux"}` */
	size_t family; /* an index of om_doc.fam */
	int64_t value;
};

struct om_doc {
	struct om_family *fam;
	size_t nfam;
	struct om_sample *s;
	size_t n;
};

/* 0, or -1 with the line and what was wrong in err (and d empty). */
int om_parse(const char *text, size_t len, struct om_doc *d, char *err,
	     size_t cap);
/* The same on a whole file; one that cannot be read gives -1 with the
 * system's message. */
int om_parse_file(const char *path, struct om_doc *d, char *err, size_t cap);
void om_free(struct om_doc *d);
/* The value of series (as om_sample.series spells it): false when absent. */
bool om_value(const struct om_doc *d, const char *series, int64_t *out);

#endif
