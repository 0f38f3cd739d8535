/* SPDX-License-Identifier: MIT */
/* What the HTML report's script drew, read from the DOM headless Chromium
 * dumped and checked against the JSON the page embeds (tests/html). */
#ifndef PTSHARE_TESTS_HTML_DRAWN_H
#define PTSHARE_TESTS_HTML_DRAWN_H
#include <stdbool.h>

#include "json_read.h"

/* The timeline: a line per policy with every point, the peak circled at
 * the series' peak with today's bytes then, axes with ticks. */
void assert_timeline(const char *dom, const struct jr_value *doc);
/* The savings' bars, the processes' table, the strips' scale, the run's
 * details, the record health and faults (ptshare run). */
void assert_sections(const char *dom, const struct jr_value *doc);
/* The elements of class cls in the DOM's order have the numeric attribute
 * attr sorted (descending or not), and are n. */
void assert_rows_sorted(const char *dom, const char *cls, const char *attr,
			bool descending, size_t n);
#endif
