/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include "fuzz.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_read.h"
#include "schema_check.h"

bool fuzz_check_schema;

bool fuzz_take(struct fuzz_input *in, void *out, size_t n)
{
	if (in->n < n)
		return false;
	memcpy(out, in->p, n);
	in->p += n;
	in->n -= n;
	return true;
}

void fuzz_fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("fuzz: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	abort();
}

/*
 * Table pages a world may hold: 16 MiB of them, 50 times what the largest
 * seed needs.  The model's work grows with the memory an input claims, and
 * a few bytes can claim terabytes that are not wrong, only slow (as in the
 * kernel: docs/fuzzing.md, Known limits); past this a world stops as out
 * of memory, in a few milliseconds instead of minutes.
 */
#define FUZZ_MAX_TABLES 4096

int fuzz_begin(struct fuzz_run *f)
{
	char err[256];
	if (mm_worlds_init(&f->ws, NULL, err, sizeof(err)))
		return -1;
	for (size_t k = 0; k < f->ws.n; k++)
		mm_world_limit_tables(f->ws.w[k], FUZZ_MAX_TABLES);
	if (!(f->g = ingest_new(&f->ws, NULL, NULL))) {
		mm_worlds_free(&f->ws);
		return -1;
	}
	return 0;
}

/* Both renderings, into memory: the text is only exercised, the JSON must
 * parse (and match the schema: fuzz_check_schema), whatever names and
 * numbers the input brought. */
static void render(const struct report *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return;
	report_text(f, r, r->command, 0, false);
	fclose(f);
	free(buf);
	buf = NULL;
	if (!(f = open_memstream(&buf, &len)))
		return;
	report_json(f, r);
	fclose(f);
	struct jr_error err;
	struct jr_value *doc = jr_parse(buf, len, &err);
	if (!doc && strcmp(err.what, "out of memory"))
		fuzz_fail("the JSON report is invalid at %zu: %s", err.offset,
			  err.what);
	if (doc && fuzz_check_schema && !schema_valid(buf, len, "the JSON report"))
		fuzz_fail("the JSON report is not valid against "
			  "docs/report.schema.json");
	jr_free(doc);
	free(buf);
}

void fuzz_end(struct fuzz_run *f)
{
	render(ingest_report(f->g));
	/* The model must still be consistent, whatever it was told (a world
	 * that reached FUZZ_MAX_TABLES has stopped: -ENOMEM). */
	for (size_t k = 0; k < f->ws.n; k++) {
		int r = mm_check(f->ws.w[k]);
		if (r && r != -ENOMEM)
			fuzz_fail("world %s: %s", f->ws.policy[k].name,
				  mm_world_error(f->ws.w[k]));
	}
	ingest_free(f->g);
	mm_worlds_free(&f->ws);
}
