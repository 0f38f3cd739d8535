/* SPDX-License-Identifier: MIT */
/*
 * A small, strict JSON reader for the tests: RFC 8259 text into a DOM.
 *
 * Strict means: one value and nothing after it but whitespace; no trailing
 * commas, comments, single quotes, NaN/Infinity, leading zeros or '+'; only
 * the escapes JSON defines, with \u surrogate pairs combined and lone
 * surrogates rejected; no raw control characters in strings; the input must
 * be valid UTF-8; an object may not name a key twice (the report's writer
 * never does, so a duplicate is a bug worth seeing); nesting deeper than
 * JR_MAX_DEPTH is rejected.  A rejection gives the byte offset where the
 * reader stopped and what it expected.
 *
 * Numbers keep their literal text beside the double, so that 64-bit
 * integers (table counts, addresses, device numbers) are read exactly.
 *
 * Every accessor takes NULL and answers "absent" (NULL, 0, false), so that
 * chains such as jr_get(jr_at(jr_get(doc, "processes"), 0), "pid") need no
 * checks in between; the test then asserts on the final result.
 */
#ifndef PTSHARE_TESTS_JSON_READ_H
#define PTSHARE_TESTS_JSON_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JR_MAX_DEPTH 64

enum jr_type {
	JR_NULL,
	JR_FALSE,
	JR_TRUE,
	JR_NUMBER,
	JR_STRING,
	JR_ARRAY,
	JR_OBJECT,
};

struct jr_value {
	enum jr_type type;
	/* JR_NUMBER: the value; exact only up to 2^53, see jr_u64. */
	double num;
	/* JR_STRING: the decoded text, NUL-terminated (len excludes the NUL;
	 * a "\u0000" in the input makes len the only reliable length).
	 * JR_NUMBER: the literal as written. */
	char *str;
	size_t len;
	/* JR_ARRAY: the elements; JR_OBJECT: the members' values, in the
	 * order written, with keys[i] naming items[i]. */
	struct jr_value *items;
	char **keys;
	size_t n;
};

struct jr_error {
	size_t offset;  /* byte offset into the input */
	char what[96];  /* what the reader expected there */
};

/*
 * Parses len bytes of text.  Returns the document (free it with jr_free),
 * or NULL with *err filled (err may be NULL) when the text is not valid
 * JSON or memory ran out (offset 0, "out of memory").
 */
struct jr_value *jr_parse(const char *text, size_t len, struct jr_error *err);
/* The same on a whole file; a file that cannot be read gives NULL with
 * offset 0 and the system's message. */
struct jr_value *jr_parse_file(const char *path, struct jr_error *err);
void jr_free(struct jr_value *v);

/* The type's name, for messages: "null", "false", ..., "object". */
const char *jr_type_name(enum jr_type t);

/* Member key of an object, or NULL (absent, or v is not an object). */
const struct jr_value *jr_get(const struct jr_value *v, const char *key);
/* Element i of an array, or NULL. */
const struct jr_value *jr_at(const struct jr_value *v, size_t i);
/* Elements of an array or members of an object; 0 for anything else. */
size_t jr_len(const struct jr_value *v);
/* Key of member i of an object, or NULL. */
const char *jr_key_at(const struct jr_value *v, size_t i);

/*
 * A path of member names separated by '.', with [N] for array elements:
 * "totals.policies.linux.bytes", "processes[2].pid", "[0].name".  A key
 * that holds '.' or '[' cannot be named in a path: use jr_get.  NULL when
 * any step is absent or the path is malformed.
 */
const struct jr_value *jr_path(const struct jr_value *v, const char *path);

bool jr_is(const struct jr_value *v, enum jr_type t);
/* The string, or NULL when v is not a string. */
const char *jr_str(const struct jr_value *v);
/* true/false; false as well when v is not a boolean (see jr_is). */
bool jr_bool(const struct jr_value *v);

/*
 * Exact integers from the literal: false (and *out untouched) when v is not
 * a number, not written as an integer (a fraction or exponent), or out of
 * range.  "-0" is 0.
 */
bool jr_u64(const struct jr_value *v, uint64_t *out);
bool jr_i64(const struct jr_value *v, int64_t *out);
/* Any number as a double (false when v is not a number). */
bool jr_double(const struct jr_value *v, double *out);

/*
 * Shorthands for tests: the number at path (jr_path) as an integer, or
 * dflt when it is absent or not an exact integer of that type.
 */
uint64_t jr_path_u64(const struct jr_value *v, const char *path, uint64_t dflt);
int64_t jr_path_i64(const struct jr_value *v, const char *path, int64_t dflt);
double jr_path_double(const struct jr_value *v, const char *path, double dflt);
/* The string at path, or NULL. */
const char *jr_path_str(const struct jr_value *v, const char *path);

#endif
