/* SPDX-License-Identifier: MIT */
/*
 * What the harnesses share: an ingest of a replay (no /proc is read) over
 * every built-in policy, each world limited in table pages, and its end,
 * where the report is built and rendered and the results are checked
 * beyond what the sanitizers see.
 */
#ifndef PTSHARE_FUZZ_H
#define PTSHARE_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ingest/ingest.h"

struct fuzz_run {
	struct mm_worlds ws;
	struct ingest *g;
};

/* libFuzzer's entry point; driver.c calls it too. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Whether fuzz_end checks the JSON report against docs/report.schema.json
 * as well (a process per input: the driver's replay of the inputs, not
 * libFuzzer's exploration). */
extern bool fuzz_check_schema;

/* 0, or -1 when memory ran out (the input is then skipped). */
int fuzz_begin(struct fuzz_run *f);
/* Builds the report, renders it as text and JSON, checks that the JSON is
 * valid and every world's invariants hold (aborting when not), frees all. */
void fuzz_end(struct fuzz_run *f);
/* What is left of an input, read from the front. */
struct fuzz_input {
	const uint8_t *p;
	size_t n;
};

/* n bytes of the input into out; false (and *out untouched) when it ends
 * first. */
bool fuzz_take(struct fuzz_input *in, void *out, size_t n);

/* Stops the run with a message: a finding the sanitizers cannot see. */
_Noreturn void fuzz_fail(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

#endif
