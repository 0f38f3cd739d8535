/* SPDX-License-Identifier: MIT */
/* What `ptshare top` shows of a report: each policy's tables and saving,
 * then the processes (or groups) with the most page-table memory. */
#define _GNU_SOURCE /* qsort_r */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "top.h"

const char *top_sort_name(enum top_sort s)
{
	static const char *const names[TOP_SORT_NR] = {
		[TOP_SORT_TABLES] = "tables", [TOP_SORT_SAVED] = "saved",
		[TOP_SORT_VMPTE] = "VmPTE", [TOP_SORT_NAME] = "name",
	};
	return s < TOP_SORT_NR ? names[s] : "?";
}

/* A row of the view: a process or a group, its figures in bytes. */
struct line {
	char id[24];           /* the pid, or the number of processes */
	const char *name;      /* the command, or the group's key */
	int64_t vmpte;         /* -1: unknown */
	uint64_t model;
	double pss;            /* under the view's policy */
};

static int cmp_lines(const void *x, const void *y, void *arg)
{
	const struct line *a = x, *b = y;
	double ka = 0, kb = 0;
	switch (*(const enum top_sort *)arg) {
	case TOP_SORT_NAME:
		return strcmp(a->name, b->name);
	case TOP_SORT_SAVED:
		ka = (double)a->model - a->pss;
		kb = (double)b->model - b->pss;
		break;
	case TOP_SORT_VMPTE:
		ka = (double)a->vmpte;
		kb = (double)b->vmpte;
		break;
	default:
		ka = (double)a->model;
		kb = (double)b->model;
	}
	if (ka != kb)
		return ka < kb ? 1 : -1;
	return strcmp(a->name, b->name);
}

/* The rows of r (its groups, when it has them), sorted as v says. */
static struct line *lines_of(const struct report *r, const struct top_view *v,
			     size_t *n)
{
	*n = r->group_by ? r->ngroups : r->nrows;
	struct line *l = calloc(*n + 1, sizeof(*l));
	if (!l)
		return NULL;
	for (size_t i = 0; i < *n; i++) {
		if (r->group_by) {
			const struct report_group *g = &r->groups[i];
			l[i] = (struct line){ .name = g->key,
					      .vmpte = (int64_t)g->kernel_kb * 1024,
					      .model = g->model_kb * 1024,
					      .pss = g->pss[v->policy] };
			snprintf(l[i].id, sizeof(l[i].id), "%zu", g->nprocs);
			continue;
		}
		const struct report_row *row = &r->rows[i];
		l[i] = (struct line){
			.name = row->proc->name,
			.vmpte = row->proc->vmpte_kb < 0 ? -1
				 : row->proc->vmpte_kb * 1024,
			.model = report_sum3(row->s[0].tables) * MM_PAGE_SIZE,
			.pss = row->s[v->policy].pss_bytes,
		};
		snprintf(l[i].id, sizeof(l[i].id), "%" PRIu32, row->proc->pid);
	}
	qsort_r(l, *n, sizeof(*l), cmp_lines, (void *)&v->sort);
	return l;
}

/* Each policy's tables and what it saves against today's; the view's
 * policy marked. */
static void policies(FILE *f, const struct report *r, const struct top_view *v)
{
	char a[16], b[16];
	uint64_t today = report_sum3(r->totals[0].distinct) * MM_PAGE_SIZE;
	fprintf(f, "  %-24s %10s %10s\n", "policy", "tables", "saved");
	for (size_t k = 0; k < r->npol; k++) {
		uint64_t bytes = report_sum3(r->totals[k].distinct) * MM_PAGE_SIZE;
		int64_t saved = (int64_t)today - (int64_t)bytes;
		fprintf(f, "%c %-24s %10s", k == v->policy ? '>' : ' ',
			k ? r->pol[k].label : "linux (today)",
			report_human(bytes, a, sizeof(a)));
		if (k)
			fprintf(f, " %s%9s %6.1f%%", saved < 0 ? "-" : " ",
				report_human((uint64_t)llabs(saved), b, sizeof(b)),
				today ? 100.0 * (double)saved / (double)today : 0.0);
		fputc('\n', f);
	}
}

static void header(FILE *f, const struct report *r, const struct top_view *v)
{
	char now[16], a[16];
	time_t t = time(NULL);
	struct tm tm;
	strftime(now, sizeof(now), "%H:%M:%S", localtime_r(&t, &tm));
	fprintf(f, "ptshare top - %s, every %u s: %zu processes", now,
		v->every_s, r->nrows);
	if (r->nskips)
		fprintf(f, " (%zu not readable)", r->nskips);
	if (v->at_rest)
		fprintf(f, ", %zu idle since the last refresh", v->at_rest);
	fprintf(f, ", VmPTE %s\n", report_human(r->kernel_kb * 1024, a, sizeof(a)));
	if (v->keys)
		fprintf(f, "keys: s sort (%s), p policy (%s), g group (%s), q quit\n",
			top_sort_name(v->sort), r->pol[v->policy].label,
			r->group_by ? report_group_by_name(r->group_by) : "none");
	fputc('\n', f);
}

int top_view_print(FILE *f, const struct report *r, const struct top_view *v)
{
	size_t n;
	struct line *l = lines_of(r, v, &n);
	if (!l)
		return -ENOMEM;
	header(f, r, v);
	policies(f, r, v);
	fprintf(f, "\n%7s %-24s %9s %9s %9s %9s %6s\n",
		r->group_by ? "procs" : "pid",
		r->group_by ? report_group_by_name(r->group_by) : "command",
		"VmPTE kB", "model kB", "pss kB", "saved kB", "saved");
	size_t shown = v->rows && v->rows < n ? v->rows : n;
	for (size_t i = 0; i < shown; i++) {
		double saved = (double)l[i].model - l[i].pss;
		fprintf(f, "%7s %-24.24s ", l[i].id, l[i].name);
		if (l[i].vmpte >= 0)
			fprintf(f, "%9" PRId64, l[i].vmpte / 1024);
		else
			fprintf(f, "%9s", "?");
		fprintf(f, " %9" PRIu64 " %9.0f %9.0f %5.1f%%\n", l[i].model / 1024,
			l[i].pss / 1024, saved / 1024,
			l[i].model ? 100.0 * saved / (double)l[i].model : 0.0);
	}
	if (shown < n)
		fprintf(f, "... %zu more\n", n - shown);
	free(l);
	return 0;
}
