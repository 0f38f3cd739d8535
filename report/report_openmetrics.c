/* SPDX-License-Identifier: MIT */
/*
 * The report's totals in the OpenMetrics text format (docs/fleet.md), which
 * the Prometheus text format reads too: node_exporter's textfile collector
 * and promtool take it.  Every family is a gauge (a report is a state, not
 * a count that only grows), labelled by policy and table level, and with
 * --group-by by group: no per-process series unless asked for, so that a
 * fleet's series stay few.
 */
#include <inttypes.h>
#include <math.h>

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

/* A sample's labels; NULL: not there. */
struct labels {
	const char *policy, *level, *group;
};

/* name{policy="...",level="...",group="..."} value, the labels there. */
static void sample(FILE *f, const char *name, struct labels l, int64_t value)
{
	const char *const key[] = { "policy", "level", "group" };
	const char *const val[] = { l.policy, l.level, l.group };
	bool open = false;
	fputs(name, f);
	for (size_t i = 0; i < sizeof(key) / sizeof(key[0]); i++) {
		if (!val[i])
			continue;
		fprintf(f, "%s%s=\"", open ? "," : "{", key[i]);
		label_value(f, val[i]);
		fputc('"', f);
		open = true;
	}
	fprintf(f, "%s %" PRId64 "\n", open ? "}" : "", value);
}

/* A figure of the whole report, or with --group-by one per group (their
 * sum is the whole's): fn(r, g, arg) gives it for group g, or the whole
 * when g is NULL. */
static void per_group(FILE *f, const char *name, const struct report *r,
		      struct labels l,
		      int64_t (*fn)(const struct report *r,
				    const struct report_group *g, size_t k),
		      size_t k)
{
	if (!r->ngroups)
		sample(f, name, l, fn(r, NULL, k));
	for (size_t i = 0; i < r->ngroups; i++) {
		l.group = r->groups[i].key;
		sample(f, name, l, fn(r, &r->groups[i], k));
	}
}

static int64_t processes(const struct report *r, const struct report_group *g,
			 size_t k)
{
	(void)k;
	return (int64_t)(g ? g->nprocs : r->nrows);
}

static int64_t exact(const struct report *r, const struct report_group *g,
		     size_t k)
{
	(void)k;
	return (int64_t)(g ? g->exact : r->exact);
}

static int64_t kernel_bytes(const struct report *r,
			    const struct report_group *g, size_t k)
{
	(void)k;
	return (int64_t)(g ? g->kernel_kb : r->kernel_kb) * 1024;
}

/* A group's figure is its share (pss): the groups' sum to the whole's. */
static int64_t table_bytes(const struct report *r,
			   const struct report_group *g, size_t k)
{
	if (g)
		return llround(g->pss[k]);
	return (int64_t)(report_sum3(r->totals[k].distinct) * MM_PAGE_SIZE);
}

static int64_t saved_bytes(const struct report *r,
			   const struct report_group *g, size_t k)
{
	if (g)
		return (int64_t)g->model_kb * 1024 - llround(g->pss[k]);
	return table_bytes(r, NULL, 0) - table_bytes(r, NULL, k);
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
		per_group(f, "ptshare_page_table_bytes", r,
			  (struct labels){ .policy = r->pol[k].label }, table_bytes, k);
	family(f, "ptshare_page_tables", NULL, "Page-table pages of the "
	       "processes under each policy, by level.");
	for (size_t k = 0; k < r->npol; k++)
		for (unsigned l = 0; l < PT_NR_LEVELS; l++)
			sample(f, "ptshare_page_tables",
			       (struct labels){ r->pol[k].label, level_name[l], NULL },
			       (int64_t)r->totals[k].distinct[l]);
	family(f, "ptshare_saved_bytes", "bytes", "Page-table memory each "
	       "policy saves against today's kernel (negative: costs).");
	for (size_t i = 0; i < nh; i++)
		per_group(f, "ptshare_saved_bytes", r,
			  (struct labels){ .policy = r->pol[h[i].k].label },
			  saved_bytes, h[i].k);
	family(f, "ptshare_faults_avoided", NULL, "First touches (page faults) "
	       "each policy avoids against today's kernel: over the run, or at "
	       "the snapshot.");
	for (size_t i = 0; i < nh; i++)
		sample(f, "ptshare_faults_avoided",
		       (struct labels){ .policy = r->pol[h[i].k].label },
		       h[i].faults_avoided);
}

void report_openmetrics(FILE *f, const struct report *r)
{
	family(f, "ptshare_processes", NULL, "Processes modelled.");
	per_group(f, "ptshare_processes", r, (struct labels){ 0 }, processes, 0);
	family(f, "ptshare_exact_processes", NULL, "Processes modelled whose "
	       "model of today's tables equals the kernel's VmPTE.");
	per_group(f, "ptshare_exact_processes", r, (struct labels){ 0 }, exact, 0);
	family(f, "ptshare_unmodelled_processes", NULL, "Processes that could "
	       "not be read or modelled.");
	sample(f, "ptshare_unmodelled_processes", (struct labels){ 0 },
	       (int64_t)r->nskips);
	family(f, "ptshare_kernel_page_table_bytes", "bytes", "The kernel's "
	       "VmPTE, summed over the processes modelled.");
	per_group(f, "ptshare_kernel_page_table_bytes", r, (struct labels){ 0 },
		  kernel_bytes, 0);
	policies(f, r);
	fputs("# EOF\n", f);
}
