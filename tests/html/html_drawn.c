/* SPDX-License-Identifier: MIT */
/* What the HTML report's script drew, against the JSON (html_drawn.h). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "html_drawn.h"

static void want(const char *dom, const char *what)
{
	if (!strstr(dom, what))
		fail_msg("the page has no '%s'", what);
}

/* Occurrences of what in dom between from and the first end after it. */
static size_t count_in(const char *dom, const char *from, const char *end,
		       const char *what)
{
	const char *p = strstr(dom, from), *stop = p ? strstr(p, end) : NULL;
	size_t n = 0;
	if (!p || !stop)
		fail_msg("the page has no '%s' ... '%s'", from, end);
	for (; (p = strstr(p, what)) && p < stop; p += strlen(what))
		n++;
	return n;
}

void assert_timeline(const char *dom, const struct jr_value *doc)
{
	char s[512];
	const struct jr_value *series = jr_get(doc, "series");
	const struct jr_value *pts = jr_get(series, "points");
	const struct jr_value *pols = jr_get(doc, "policies");
	size_t n = jr_len(pts);
	assert_true(n > 0);
	for (size_t i = 0; i < jr_len(pols); i++) {
		snprintf(s, sizeof(s),
			 "class=\"series-line\" data-points=\"%zu\" data-policy=\"%s\"",
			 n, jr_path_str(jr_at(pols, i), "label"));
		want(dom, s);
	}
	uint64_t peak = jr_path_u64(series, "peak", ~0ULL);
	const char *today = jr_path_str(jr_at(pols, 0), "label");
	uint64_t bytes = jr_path_u64(jr_get(jr_path(jr_at(pts, peak), "policies"),
					    today), "bytes", ~0ULL);
	snprintf(s, sizeof(s), "class=\"peak-mark\" data-index=\"%llu\" "
		 "data-bytes=\"%llu\"", (unsigned long long)peak,
		 (unsigned long long)bytes);
	want(dom, s);
	assert_int_equal(count_in(dom, "id=\"timeline-chart\"", "</svg>",
				  "class=\"series-line\""), jr_len(pols));
	/* two axes of a few ticks each */
	assert_true(count_in(dom, "id=\"timeline-chart\"", "</svg>",
			     "class=\"tick\"") >= 6);
}

static uint64_t faults_of(const struct jr_value *doc, const char *label,
			  const char *which)
{
	const struct jr_value *f = jr_get(doc, "final_checkpoints");
	uint64_t sum = 0;
	for (size_t i = 0; i < jr_len(f); i++)
		sum += jr_path_u64(jr_get(jr_path(jr_at(f, i), "faults"), label),
				   which, 0);
	return sum;
}

/* ptshare run: the stream's figures and each policy's faults. */
static void assert_health(const char *dom, const struct jr_value *doc)
{
	char s[512];
	static const char *const fields[] = { "records", "lost", "malformed",
					      "resyncs", "connections" };
	for (size_t i = 0; i < sizeof(fields) / sizeof(*fields); i++) {
		char path[64];
		snprintf(path, sizeof(path), "stream.%s", fields[i]);
		snprintf(s, sizeof(s), "data-field=\"%s\" data-value=\"%llu\"",
			 fields[i], (unsigned long long)jr_path_u64(doc, path, ~0ULL));
		want(dom, s);
	}
	assert_true(jr_path_u64(doc, "stream.records", 0) > 0);
	const struct jr_value *pols = jr_get(doc, "policies");
	for (size_t i = 0; i < jr_len(pols); i++) {
		const char *label = jr_path_str(jr_at(pols, i), "label");
		snprintf(s, sizeof(s), "data-field=\"faults-%s\" data-value=\"%llu\"",
			 label, (unsigned long long)faults_of(doc, label, "seen"));
		want(dom, s);
		snprintf(s, sizeof(s), "data-field=\"pagemap-%s\" data-value=\"%llu\"",
			 label, (unsigned long long)faults_of(doc, label, "pagemap"));
		want(dom, s);
	}
	snprintf(s, sizeof(s), "<dd data-field=\"command line\">%s</dd>",
		 jr_path_str(doc, "run.command_line"));
	want(dom, s);
}

void assert_sections(const char *dom, const struct jr_value *doc)
{
	char s[512];
	const struct jr_value *pols = jr_get(doc, "policies");
	for (size_t i = 1; i < jr_len(pols); i++) {
		const char *label = jr_path_str(jr_at(pols, i), "label");
		snprintf(s, sizeof(s),
			 "class=\"saving-bar\" data-policy=\"%s\" data-saved=\"%lld\"",
			 label, (long long)jr_path_i64(jr_get(jr_path(doc,
				 "totals.policies"), label), "saved_bytes", -1));
		want(dom, s);
	}
	const struct jr_value *procs = jr_get(doc, "processes");
	for (size_t i = 0; i < jr_len(procs); i++) {
		const struct jr_value *p = jr_at(procs, i);
		snprintf(s, sizeof(s),
			 "class=\"process-row\" data-pid=\"%llu\" data-vmpte=\"%lld\"",
			 (unsigned long long)jr_path_u64(p, "pid", 0),
			 (long long)jr_path_i64(p, "vmpte_kb", -1));
		want(dom, s);
	}
	assert_true(count_in(dom, "id=\"strip-scale\"", "</svg>",
			     "class=\"tick\"") >= 2);
	if (jr_is(jr_get(doc, "stream"), JR_OBJECT))
		assert_health(dom, doc);
	else
		want(dom, "data-field=\"faults-linux\"");
}

void assert_rows_sorted(const char *dom, const char *cls, const char *attr,
			bool descending, size_t n)
{
	char c[128], a[128];
	snprintf(c, sizeof(c), "class=\"%s\"", cls);
	snprintf(a, sizeof(a), " %s=\"", attr);
	size_t rows = 0;
	long long last = 0;
	for (const char *p = dom; (p = strstr(p, c)); p += strlen(c), rows++) {
		const char *v = strstr(p, a), *close = strchr(p, '>');
		if (!v || v > close)
			fail_msg("a %s has no %s", cls, attr);
		long long x = strtoll(v + strlen(a), NULL, 10);
		if (rows && (descending ? x > last : x < last))
			fail_msg("%s rows not sorted by %s %s: %lld after %lld", cls,
				 attr, descending ? "descending" : "ascending", x, last);
		last = x;
	}
	assert_int_equal(rows, n);
}
