/* SPDX-License-Identifier: MIT */
/*
 * The series: the run's page tables over time, a point per reading of
 * every process, in bounded memory (report.h, struct report_series), and
 * printed in the JSON (docs/report-json.md, "series") and the text.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "lib/json.h"

/* Text: at most this many rows, picked evenly, the peak among them. */
#define TEXT_ROWS 12

void report_point_tables(struct report_point *pt, const struct mm_worlds *ws)
{
	for (size_t k = 0; k < ws->n; k++) {
		uint64_t t[PT_NR_LEVELS];
		mm_world_tables(ws->w[k], t);
		pt->tables[k] = report_sum3(t);
	}
}

/* Of two readings, the one a merged point keeps: the later of equals. */
static const struct report_point *higher(const struct report_point *a,
					 const struct report_point *b)
{
	return a->tables[0] > b->tables[0] ? a : b;
}

static void halve(struct report_series *s)
{
	for (size_t i = 0; i < s->n / 2; i++)
		s->p[i] = *higher(&s->p[2 * i], &s->p[2 * i + 1]);
	s->n /= 2;
	s->per_point *= 2;
	s->in_last = s->per_point;
}

int report_series_add(struct report_series *s, const struct report_point *pt)
{
	if (!s->p && !(s->p = calloc(REPORT_SERIES_MAX, sizeof(*s->p))))
		return -ENOMEM;
	if (!s->readings)
		s->per_point = 1;
	s->readings++;
	if (s->n && s->in_last < s->per_point) {
		s->p[s->n - 1] = *higher(&s->p[s->n - 1], pt);
		s->in_last++;
		return 0;
	}
	if (s->n == REPORT_SERIES_MAX)
		halve(s);
	s->p[s->n++] = *pt;
	s->in_last = 1;
	return 0;
}

size_t report_series_peak(const struct report_series *s)
{
	size_t peak = 0;
	for (size_t i = 1; i < s->n; i++)
		if (s->p[i].tables[0] > s->p[peak].tables[0])
			peak = i;
	return peak;
}

void report_series_free(struct report_series *s)
{
	free(s->p);
	*s = (struct report_series){ 0 };
}

int report_set_series(struct report *r, const struct report_series *s)
{
	struct report_point *p = NULL;
	if (s->n && !(p = malloc(s->n * sizeof(*p))))
		return -ENOMEM;
	if (s->n)
		memcpy(p, s->p, s->n * sizeof(*p));
	report_series_free(&r->series);
	r->series = *s;
	r->series.p = p;
	return 0;
}

static void point_policy(struct json *j, size_t k, const void *arg)
{
	const struct report_point *pt = arg;
	json_member_u64(j, "tables", pt->tables[k]);
	json_member_u64(j, "bytes", pt->tables[k] * MM_PAGE_SIZE);
	json_member_i64(j, "saved_bytes",
			((int64_t)pt->tables[0] - (int64_t)pt->tables[k]) *
				MM_PAGE_SIZE);
}

void report_series_json(struct json *j, const struct report *r)
{
	const struct report_series *s = &r->series;
	json_key(j, "series");
	json_object(j);
	json_member_u64(j, "readings", s->readings);
	json_member_u64(j, "readings_per_point", s->per_point);
	json_key(j, "peak");
	if (s->n)
		json_u64(j, report_series_peak(s));
	else
		json_null(j);
	json_key(j, "points");
	json_array(j);
	for (size_t i = 0; i < s->n; i++) {
		const struct report_point *pt = &s->p[i];
		json_object(j);
		json_member_double(j, "t_s", (double)pt->t_ns / 1e9);
		json_member_u64(j, "processes", pt->processes);
		json_member_u64(j, "vmpte_bytes", pt->vmpte_kb * 1024);
		report_json_by_policy(j, "policies", r, point_policy, pt);
		json_end_object(j);
	}
	json_end_array(j);
	json_end_object(j);
}

static void text_row(FILE *f, const struct report *r,
		     const struct report_point *pt, bool peak)
{
	char b[16];
	fprintf(f, "%c%9.1fs %6" PRIu32 " %10s", peak ? '*' : ' ',
		(double)pt->t_ns / 1e9, pt->processes,
		report_human(pt->vmpte_kb * 1024, b, sizeof(b)));
	for (size_t k = 0; k < r->npol; k++)
		fprintf(f, " %14s",
			report_human(pt->tables[k] * MM_PAGE_SIZE, b, sizeof(b)));
	fputc('\n', f);
}

static size_t distance(size_t a, size_t b)
{
	return a > b ? a - b : b - a;
}

/* Whether two points say the same in every column but the time: a
 * process's exit reading, taken while it is still modelled, repeats the
 * round before it, and the demo's end printed the same row eight times. */
static bool same_figures(const struct report *r, const struct report_point *a,
			 const struct report_point *b)
{
	if (a->processes != b->processes || a->vmpte_kb != b->vmpte_kb)
		return false;
	for (size_t k = 0; k < r->npol; k++)
		if (a->tables[k] != b->tables[k])
			return false;
	return true;
}

/* "Over time": a small table of the series (at most TEXT_ROWS rows, the
 * peak marked '*'), each policy's distinct table memory.  A point equal
 * to the one before it is left out (the first of equals is the peak). */
void report_series_text(FILE *f, const struct report *r)
{
	const struct report_series *s = &r->series;
	if (s->n < 2)
		return;
	size_t peak = report_series_peak(s);
	size_t keep[REPORT_SERIES_MAX], nkeep = 0;
	for (size_t i = 0; i < s->n; i++)
		if (!i || !same_figures(r, &s->p[i], &s->p[i - 1]))
			keep[nkeep++] = i;
	fprintf(f, "over time: %" PRIu64 " readings", s->readings);
	if (s->per_point > 1)
		fprintf(f, ", %zu points (each the highest of up to %" PRIu32 ")",
			s->n, s->per_point);
	if (nkeep < s->n)
		fprintf(f, ", %zu unlike the one before", nkeep);
	if (nkeep > TEXT_ROWS)
		fprintf(f, ", %d of them shown", TEXT_ROWS);
	fprintf(f, "; * the peak\n%11s %6s %10s", "time", "procs", "VmPTE");
	for (size_t k = 0; k < r->npol; k++)
		fprintf(f, " %14.14s", r->pol[k].label);
	fputc('\n', f);
	size_t rows = nkeep < TEXT_ROWS ? nkeep : TEXT_ROWS, near = 0;
	size_t at[TEXT_ROWS];
	for (size_t i = 0; i < rows; i++) {
		at[i] = keep[rows > 1 ? i * (nkeep - 1) / (rows - 1) : 0];
		if (distance(at[i], peak) < distance(at[near], peak))
			near = i;
	}
	at[near] = peak; /* the row nearest the peak shows it */
	for (size_t i = 0; i < rows; i++)
		text_row(f, r, &s->p[at[i]], at[i] == peak);
	fputc('\n', f);
}
