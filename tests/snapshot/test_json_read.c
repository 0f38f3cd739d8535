/* SPDX-License-Identifier: MIT */
/* The tests' JSON reader (tests/support/json_read.h) on literal text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "json_read.h"
#include "schema_check.h"

static struct jr_value *parse(const char *text)
{
	struct jr_error e = { 0 };
	struct jr_value *v = jr_parse(text, strlen(text), &e);
	if (!v)
		fprintf(stderr, "unexpected rejection of %s: at %zu: %s\n", text,
			e.offset, e.what);
	return v;
}

/* Rejected, stopping at offset. */
static void reject(const char *text, size_t offset)
{
	struct jr_error e = { 0 };
	struct jr_value *v = jr_parse(text, strlen(text), &e);
	if (v || e.offset != offset)
		fprintf(stderr, "%s: %s at %zu (%s), expected rejection at %zu\n",
			text, v ? "accepted" : "rejected", e.offset, e.what, offset);
	assert_null(v);
	assert_int_equal(e.offset, offset);
	assert_true(e.what[0] != '\0');
}

static void test_scalars(void **state)
{
	struct jr_value *v = parse(" true ");
	assert_true(jr_is(v, JR_TRUE) && jr_bool(v));
	jr_free(v);
	v = parse("false");
	assert_true(jr_is(v, JR_FALSE) && !jr_bool(v));
	jr_free(v);
	v = parse("null");
	assert_true(jr_is(v, JR_NULL));
	jr_free(v);
	v = parse("\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\"");
	assert_string_equal(jr_str(v), "a\"b\\c/d\b\f\n\r\t");
	jr_free(v);
	/* \u escapes to UTF-8, a surrogate pair to one code point; raw UTF-8
	 * passes through. */
	v = parse("\"\\u0041\\u00e9\\u20ac\\ud83d\\ude00\xc3\xa9\"");
	assert_string_equal(jr_str(v), "A\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xc3\xa9");
	jr_free(v);
	v = parse("\"a\\u0000b\"");
	assert_int_equal(v->len, 3);
	assert_memory_equal(v->str, "a\0b", 3);
	jr_free(v);
}

static void test_numbers(void **state)
{
	struct jr_value *v = parse("18446744073709551615");
	uint64_t u = 0;
	int64_t i = 0;
	double d = 0;
	assert_true(jr_u64(v, &u));
	assert_true(u == UINT64_MAX);
	assert_false(jr_i64(v, &i));
	jr_free(v);
	v = parse("18446744073709551616");
	assert_false(jr_u64(v, &u));
	assert_true(jr_double(v, &d) && d == 18446744073709551616.0);
	jr_free(v);
	/* Exact where a double is not: 2^53 + 1. */
	v = parse("9007199254740993");
	assert_true(jr_u64(v, &u) && u == 9007199254740993ULL);
	jr_free(v);
	v = parse("-9223372036854775808");
	assert_true(jr_i64(v, &i) && i == INT64_MIN);
	assert_false(jr_u64(v, &u));
	jr_free(v);
	v = parse("-0");
	assert_true(jr_u64(v, &u) && u == 0);
	jr_free(v);
	v = parse("-12.5e-1");
	assert_false(jr_i64(v, &i));
	assert_true(jr_double(v, &d) && d == -1.25);
	assert_string_equal(v->str, "-12.5e-1");
	jr_free(v);
	v = parse("1E+2");
	assert_false(jr_u64(v, &u));
	assert_true(jr_double(v, &d) && d == 100.0);
	jr_free(v);
	/* Not numbers. */
	v = parse("\"5\"");
	assert_false(jr_u64(v, &u));
	assert_false(jr_double(v, &d));
	jr_free(v);
}

static void test_containers(void **state)
{
	const char *text =
		"{\"totals\": {\"policies\": {\"linux\": {\"bytes\": 4096}}},"
		" \"processes\": [{\"pid\": 1, \"name\": \"a\"}, {\"pid\": 2}],"
		" \"empty\": {}, \"none\": [], \"dotted.key\": 7}";
	struct jr_value *v = parse(text);
	assert_non_null(v);
	assert_int_equal(jr_len(v), 5);
	assert_string_equal(jr_key_at(v, 1), "processes");
	assert_null(jr_key_at(v, 5));
	assert_int_equal(jr_path_u64(v, "totals.policies.linux.bytes", 0), 4096);
	assert_int_equal(jr_path_u64(v, "processes[1].pid", 0), 2);
	assert_string_equal(jr_path_str(v, "processes[0].name"), "a");
	assert_int_equal(jr_len(jr_get(v, "processes")), 2);
	assert_int_equal(jr_len(jr_get(v, "empty")), 0);
	assert_true(jr_is(jr_get(v, "none"), JR_ARRAY));
	assert_int_equal(jr_path_u64(jr_get(v, "dotted.key"), "", 0), 7);
	/* Absent steps, wrong types, malformed paths: NULL, or the default. */
	assert_null(jr_path(v, "processes[2].pid"));
	assert_null(jr_path(v, "processes.pid"));
	assert_null(jr_path(v, "totals..policies"));
	assert_null(jr_path(v, "totals."));
	assert_null(jr_path(v, "processes[x]"));
	assert_null(jr_path(v, "processes[1"));
	assert_null(jr_path(v, "nope"));
	assert_int_equal(jr_path_u64(v, "processes[0].name", 42), 42);
	assert_null(jr_path_str(v, "processes[0].pid"));
	assert_null(jr_get(jr_get(v, "nope"), "x"));
	assert_null(jr_at(NULL, 0));
	assert_int_equal(jr_len(NULL), 0);
	jr_free(v);

	v = parse("[[1, [2, [3]]], {\"a\": [true, null]}]");
	assert_int_equal(jr_path_u64(v, "[0][1][1][0]", 0), 3);
	assert_true(jr_is(jr_path(v, "[1].a[1]"), JR_NULL));
	jr_free(v);
}

static void test_malformed(void **state)
{
	reject("", 0);
	reject("   ", 3);
	reject("{", 1);
	reject("[1, 2", 5);
	reject("[1, 2,]", 6);
	reject("{\"a\": 1,}", 8);
	reject("{\"a\" 1}", 5);
	reject("{a: 1}", 1);
	reject("{\"a\": 1, \"a\": 2}", 9);
	reject("[1] [2]", 4);
	reject("tru", 0);
	reject("nul", 0);
	reject("True", 0);
	reject("01", 1);
	reject("-", 1);
	reject("+1", 0);
	reject("1.", 2);
	reject(".5", 0);
	reject("1e", 2);
	reject("NaN", 0);
	reject("\"abc", 0);
	reject("\"a\tb\"", 2);
	reject("\"\\x\"", 1);
	reject("\"\\u12g4\"", 1);
	reject("\"\\ud83d\"", 1);
	reject("\"\\ude00\"", 1);
	reject("\"\xff\"", 1);
	reject("\"\xc0\xaf\"", 1);        /* overlong '/' */
	reject("\"\xed\xa0\x80\"", 1);    /* a surrogate in UTF-8 */
	reject("[1 2]", 3);
	reject("{\"a\":1 \"b\":2}", 7);
	reject("// comment\n1", 0);
	/* Nesting: JR_MAX_DEPTH levels pass, one more does not. */
	char deep[2 * JR_MAX_DEPTH + 4];
	memset(deep, '[', JR_MAX_DEPTH);
	memset(deep + JR_MAX_DEPTH, ']', JR_MAX_DEPTH);
	deep[2 * JR_MAX_DEPTH] = '\0';
	jr_free(parse(deep));
	memset(deep, '[', JR_MAX_DEPTH + 1);
	memset(deep + JR_MAX_DEPTH + 1, ']', JR_MAX_DEPTH + 1);
	deep[2 * JR_MAX_DEPTH + 2] = '\0';
	reject(deep, JR_MAX_DEPTH);
	/* A NUL inside the given length is not whitespace. */
	struct jr_error e;
	assert_null(jr_parse("1\0", 2, &e));
	assert_int_equal(e.offset, 1);
	/* A missing file. */
	assert_null(jr_parse_file("/nonexistent/ptshare.json", &e));
	assert_non_null(strstr(e.what, "/nonexistent/ptshare.json"));
}

/* The schema check the tests' documents go through says no to what is
 * not a ptshare document (test_schema: to each broken copy of one). */
static void test_schema_refuses(void **state)
{
	(void)state;
	static const char *const docs[] = {
		"{}", "[]", "not json", "{\"schema\": \"ptshare.report\"}",
		"{\"schema\": \"ptshare.aslr\", \"version\": 1}",
	};
	for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++)
		assert_false(schema_valid(docs[i], strlen(docs[i]), docs[i]));
	assert_false(schema_valid_file("/nonexistent/ptshare.json"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scalars),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_containers),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_schema_refuses),
	};
	return cmocka_run_group_tests_name("json_read", tests, NULL, NULL);
}
