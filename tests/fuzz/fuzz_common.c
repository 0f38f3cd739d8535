/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include "fuzz.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_read.h"

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

int fuzz_begin(struct fuzz_run *f)
{
	char err[256];
	if (worlds_init(&f->ws, NULL, err, sizeof(err)))
		return -1;
	if (!(f->g = ingest_new(&f->ws, false, NULL))) {
		worlds_free(&f->ws);
		return -1;
	}
	return 0;
}

/* Both renderings, into memory: the text is only exercised, the JSON must
 * parse, whatever names and numbers the input brought. */
static void render(const struct report *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return;
	report_text(f, r, 0);
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
	jr_free(doc);
	free(buf);
}

void fuzz_end(struct fuzz_run *f)
{
	render(ingest_report(f->g));
	/* The model must still be consistent, whatever it was told. */
	for (size_t k = 0; k < f->ws.n; k++)
		if (mm_check(f->ws.w[k]))
			fuzz_fail("world %s: %s", f->ws.policy[k].name,
				  mm_world_error(f->ws.w[k]));
	ingest_free(f->g);
	worlds_free(&f->ws);
}
