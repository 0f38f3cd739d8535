/* SPDX-License-Identifier: MIT */
/* ptshare aslr (aslr.c) and its output (aslr_report.c). */
#ifndef PTSHARE_ASLR_H
#define PTSHARE_ASLR_H

#include <stdio.h>

#include "report/report_compare.h"
#include "run.h"

/* The two runs, randomised first, and what they are compared with. */
struct aslr_runs {
	int va_space; /* kernel.randomize_va_space; -1: unknown */
	const struct run_result *run[COMPARE_RUNS];
	const struct report_compare *cmp;
};

extern const char *const aslr_run_name[COMPARE_RUNS]; /* "randomised"... */

/* top: changed mappings to list, 0 for all. */
void aslr_text(FILE *f, const struct aslr_runs *a, size_t top);
void aslr_json(FILE *f, const struct aslr_runs *a);

#endif
