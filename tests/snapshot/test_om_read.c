/* SPDX-License-Identifier: MIT */
/* The tests' OpenMetrics reader (tests/support/om_read.h) on literal text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "om_read.h"

#define FAMILY "# TYPE a_bytes gauge\n# UNIT a_bytes bytes\n# HELP a_bytes A \\\\ \\n.\n"

static void test_accepted(void **state)
{
	static const char text[] = FAMILY
		"a_bytes{policy=\"x\\\"y\",level=\"pte\"} -3\n"
		"a_bytes{policy=\"z\"} 4\n"
		"# TYPE b counter\nb_total 5\nb 6\n"
		"# TYPE c gauge\nc 7\n# EOF\n";
	struct om_doc d;
	char err[128] = "";
	if (om_parse(text, strlen(text), &d, err, sizeof(err)))
		fail_msg("rejected: %s", err);
	assert_int_equal(d.nfam, 3);
	assert_string_equal(d.fam[0].unit, "bytes");
	assert_string_equal(d.fam[0].help, "A \\\\ \\n.");
	assert_null(d.fam[1].help);
	assert_int_equal(d.n, 5);
	int64_t v;
	assert_true(om_value(&d, "a_bytes{policy=\"x\\\"y\",level=\"pte\"}", &v));
	assert_int_equal(v, -3);
	assert_true(om_value(&d, "b_total", &v));
	assert_int_equal(v, 5);
	assert_int_equal(d.s[4].family, 2);
	assert_false(om_value(&d, "a_bytes", &v));
	om_free(&d);
}

/* Rejected at line, saying says. */
static void reject(const char *text, const char *says)
{
	struct om_doc d;
	char err[128] = "";
	int r = om_parse(text, strlen(text), &d, err, sizeof(err));
	if (!r || !strstr(err, says))
		fail_msg("%s: %s, not '%s'", text, r ? err : "accepted", says);
	assert_int_equal(d.n + d.nfam, 0);
}

static void test_rejected(void **state)
{
	reject("# TYPE c gauge\nc 1\n", "no # EOF at the end");
	reject("# TYPE c gauge\nc 1\n# EOF", "line 3: no newline");
	reject("# EOF\nc 1\n", "line 2: text after # EOF");
	reject("c 1\n# EOF\n", "line 1: a sample of no family");
	reject("# TYPE c gauge\nd 1\n# EOF\n", "line 2: a sample of no family");
	reject("# TYPE c gauge\nc_total 1\n# EOF\n", "a sample of no family");
	reject("# TYPE c gauge\n# TYPE c gauge\n# EOF\n", "declared twice");
	reject("# TYPE c gauge\nc 1\n# TYPE d gauge\n# TYPE c gauge\n# EOF\n",
	       "line 4: family declared twice");
	reject("# TYPE c gauge\n# UNIT c bytes\n# EOF\n", "not the name's suffix");
	reject("# TYPE cbytes gauge\n# UNIT cbytes bytes\n# EOF\n", "suffix");
	reject("# TYPE c gauge\nc 1\n# HELP c late\n# EOF\n", "no family declared");
	reject("# TYPE c gauge\n# HELP c a \\t\n# EOF\n", "bad escape");
	reject("# TYPE c gauge\n# HELP c a\n# HELP c b\n# EOF\n", "a second HELP");
	reject("# TYPE c nonsense\n# EOF\n", "unknown type");
	reject("# a comment\n# EOF\n", "not TYPE, UNIT, HELP");
	reject("# TYPE c gauge\nc{l=\"v\\x\"} 1\n# EOF\n", "bad escape");
	reject("# TYPE c gauge\nc{l=\"v} 1\n# EOF\n", "unterminated");
	reject("# TYPE c gauge\nc{1l=\"v\"} 1\n# EOF\n", "malformed label");
	reject("# TYPE c gauge\nc{l=\"v\" m=\"w\"} 1\n# EOF\n", "malformed labels");
	reject("# TYPE c gauge\nc 1.5\n# EOF\n", "integer value");
	reject("# TYPE c gauge\nc  1\n# EOF\n", "integer value");
	reject("# TYPE c gauge\nc 1 1700000000\n# EOF\n", "integer value");
	reject("# TYPE c gauge\nc{l=\"v\"} 1\nc{l=\"v\"} 2\n# EOF\n",
	       "line 3: series repeated");
	struct om_doc d;
	char err[128];
	assert_int_equal(om_parse_file("/nonexistent/ptshare.prom", &d, err,
				       sizeof(err)), -1);
	assert_non_null(strstr(err, "/nonexistent/ptshare.prom"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accepted),
		cmocka_unit_test(test_rejected),
	};
	return cmocka_run_group_tests_name("om_read", tests, NULL, NULL);
}
