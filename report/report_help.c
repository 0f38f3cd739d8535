/* SPDX-License-Identifier: MIT */
/*
 * "What would help": each policy beside today's kernel, what it saves and
 * what it takes, ranked (the top of every form of the report).
 */
#include <stdlib.h>

#include "report.h"

/* First touches under policy k: faults seen and touches pagemap showed,
 * over every process's life in a run; at the snapshot otherwise. */
static uint64_t touches(const struct report *r, size_t k)
{
	uint64_t n = 0, pagemap;
	if (report_finals_seen(r)) {
		report_finals_faults(r, k, &n, &pagemap);
		return n + pagemap;
	}
	for (size_t i = 0; i < r->nrows; i++)
		n += r->rows[i].s[k].faults + r->rows[i].s[k].faults_observed;
	return n;
}

static int by_saving(const void *x, const void *y)
{
	const struct report_help *a = x, *b = y;
	if (a->saved_bytes != b->saved_bytes)
		return a->saved_bytes < b->saved_bytes ? 1 : -1;
	if (a->faults_avoided != b->faults_avoided)
		return a->faults_avoided < b->faults_avoided ? 1 : -1;
	return (a->k > b->k) - (a->k < b->k);
}

size_t report_help(const struct report *r, struct report_help *out)
{
	uint64_t today = report_sum3(r->totals[0].distinct) * MM_PAGE_SIZE;
	uint64_t today_touches = touches(r, 0);
	uint64_t ft0 = 0, fp0 = 0;
	for (size_t i = 0; i < r->nrows; i++) {
		ft0 += r->rows[i].s[0].fork_tables_copied;
		fp0 += r->rows[i].s[0].fork_pages_copied;
	}
	size_t n = 0;
	for (size_t k = 1; k < r->npol; k++) {
		struct report_help *h = &out[n++];
		uint64_t bytes = report_sum3(r->totals[k].distinct) * MM_PAGE_SIZE;
		uint64_t ft = 0, fp = 0, later = 0;
		for (size_t i = 0; i < r->nrows; i++) {
			ft += r->rows[i].s[k].fork_tables_copied;
			fp += r->rows[i].s[k].fork_pages_copied;
			later += r->rows[i].s[k].cow_copies;
		}
		*h = (struct report_help){
			.k = k,
			.saved_bytes = (int64_t)today - (int64_t)bytes,
			.saved_pct = today ? 100.0 * ((double)today - (double)bytes) /
						     (double)today
					   : 0,
			.faults_avoided = (int64_t)today_touches -
					  (int64_t)touches(r, k),
			.fork_tables_avoided = (int64_t)ft0 - (int64_t)ft,
			.fork_pages_avoided = (int64_t)fp0 - (int64_t)fp,
			.deferred_copies = later,
			.assumption = r->pol[k].p.assumption
					      ? r->pol[k].p.assumption : "",
		};
	}
	qsort(out, n, sizeof(*out), by_saving);
	return n;
}

void report_mshare_cover(const struct report *r, size_t k,
			 struct report_mshare *out)
{
	*out = (struct report_mshare){ 0 };
	for (unsigned l = 0; l < PT_NR_LEVELS; l++) {
		out->host_tables += r->totals[k].host[l];
		out->process_tables += r->totals[k].linked[l];
	}
	for (size_t i = 0; i < r->nrows; i++)
		out->private_pte_tables += r->rows[i].s[k].private_pte_tables;
}
