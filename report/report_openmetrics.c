/* SPDX-License-Identifier: MIT */
/*
 * The report's totals in the OpenMetrics text format (docs/fleet.md), which
 * the Prometheus text format reads too: node_exporter's textfile collector
 * and promtool take it.  Every family is a gauge (a report is a state, not
 * a count that only grows), labelled by policy and table level at most:
 * no per-process series, so that a fleet's series stay few.
 */
#include <inttypes.h>

#include "report.h"

static const char *const level_name[PT_NR_LEVELS] = { "pte", "pmd", "pud" };

/* A family's metadata: its type (always gauge), unit and help. */
static void family(FILE *f, const char *name, const char *unit,
		   const char *help)
{
	fprintf(f, "# TYPE %s gauge\n", name);
	if (unit)
		fprintf(f, "# UNIT %s %s\n", name, unit);
	fprintf(f, "# HELP %s %s\n", name, help);
}

/* A label value, escaped as both formats want (\\, \", \n). */
static void label_value(FILE *f, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fputc('\\', f);
		if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
}

/* name{policy="label"[,level="level"]} value */
static void sample(FILE *f, const char *name, const char *policy,
		   const char *level, int64_t value)
{
	fputs(name, f);
	if (policy) {
		fputs("{policy=\"", f);
		label_value(f, policy);
		if (level)
			fprintf(f, "\",level=\"%s", level);
		fputs("\"}", f);
	}
	fprintf(f, " %" PRId64 "\n", value);
}

/* The figures of every policy: its tables, and beside today's kernel
 * (every policy but linux, as "what would help" ranks them) what it saves. */
static void policies(FILE *f, const struct report *r)
{
	struct report_help h[MM_WORLDS_MAX];
	size_t nh = report_help(r, h);
	family(f, "ptshare_page_table_bytes", "bytes", "Page-table memory of the "
	       "processes under each policy (linux: today's kernel, modelled).");
	for (size_t k = 0; k < r->npol; k++)
		sample(f, "ptshare_page_table_bytes", r->pol[k].label, NULL,
		       (int64_t)(report_sum3(r->totals[k].distinct) * MM_PAGE_SIZE));
	family(f, "ptshare_page_tables", NULL, "Page-table pages of the "
	       "processes under each policy, by level.");
	for (size_t k = 0; k < r->npol; k++)
		for (unsigned l = 0; l < PT_NR_LEVELS; l++)
			sample(f, "ptshare_page_tables", r->pol[k].label,
			       level_name[l], (int64_t)r->totals[k].distinct[l]);
	family(f, "ptshare_saved_bytes", "bytes", "Page-table memory each "
	       "policy saves against today's kernel (negative: costs).");
	for (size_t i = 0; i < nh; i++)
		sample(f, "ptshare_saved_bytes", r->pol[h[i].k].label, NULL,
		       h[i].saved_bytes);
	family(f, "ptshare_faults_avoided", NULL, "First touches (page faults) "
	       "each policy avoids against today's kernel: over the run, or at "
	       "the snapshot.");
	for (size_t i = 0; i < nh; i++)
		sample(f, "ptshare_faults_avoided", r->pol[h[i].k].label, NULL,
		       h[i].faults_avoided);
}

void report_openmetrics(FILE *f, const struct report *r)
{
	family(f, "ptshare_processes", NULL, "Processes modelled.");
	sample(f, "ptshare_processes", NULL, NULL, (int64_t)r->nrows);
	family(f, "ptshare_exact_processes", NULL, "Processes modelled whose "
	       "model of today's tables equals the kernel's VmPTE.");
	sample(f, "ptshare_exact_processes", NULL, NULL, (int64_t)r->exact);
	family(f, "ptshare_unmodelled_processes", NULL, "Processes that could "
	       "not be read or modelled.");
	sample(f, "ptshare_unmodelled_processes", NULL, NULL, (int64_t)r->nskips);
	family(f, "ptshare_kernel_page_table_bytes", "bytes", "The kernel's "
	       "VmPTE, summed over the processes modelled.");
	sample(f, "ptshare_kernel_page_table_bytes", NULL, NULL,
	       (int64_t)r->kernel_kb * 1024);
	policies(f, r);
	fputs("# EOF\n", f);
}
