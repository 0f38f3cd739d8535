/* SPDX-License-Identifier: MIT */
/* fuzz_trace: the input as a trace file, read by trace_replay as
 * `ptshare replay` reads one. */
#define _GNU_SOURCE
#include <stdio.h>

#include "fuzz.h"
#include "trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_run f;
	if (fuzz_begin(&f))
		return 0;
	/* The stream only reads; an empty one is /dev/null (fmemopen may
	 * refuse a size of 0). */
	FILE *in = size ? fmemopen((void *)data, size, "rb")
			: fopen("/dev/null", "rb");
	if (in) {
		struct trace_error err = { 0 };
		if (trace_replay(in, f.g, &err) && err.offset > size)
			fuzz_fail("an error at offset %llu of %zu bytes",
				  (unsigned long long)err.offset, size);
		fclose(in);
	}
	fuzz_end(&f);
	return 0;
}
