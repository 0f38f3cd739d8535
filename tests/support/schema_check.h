/* SPDX-License-Identifier: MIT */
/*
 * Every JSON document the tests see checked against docs/report.schema.json
 * (tests/support/schema_check.py, python3-jsonschema).  A check that cannot
 * run (no python3, no jsonschema, the schema broken) is a failed check,
 * never a skipped one.
 */
#ifndef PTSHARE_TESTS_SCHEMA_CHECK_H
#define PTSHARE_TESTS_SCHEMA_CHECK_H

#include <stdbool.h>
#include <stddef.h>

/* Whether the len bytes of text are a valid document; what is wrong goes
 * to stderr, each line prefixed with name. */
bool schema_valid(const char *text, size_t len, const char *name);
/* The same for the file at path (checked once while it is unchanged). */
bool schema_valid_file(const char *path);

#endif
