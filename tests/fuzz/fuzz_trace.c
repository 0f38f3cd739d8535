/* SPDX-License-Identifier: MIT */
/* fuzz_trace: the input as a trace file, read by trace_replay as
 * `ptshare replay` reads one, or (odd sizes) as `ptshare run` reads the
 * trace of a daemon it had to end.  Beyond the sanitizers, the error must
 * be true: its offset inside the input, and "truncated" (or a torn end)
 * only when the input ends inside the frame there. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "fuzz.h"
#include "ingest/trace.h"

#define FRAME 8 /* pid, conn */

static bool ends_inside_frame(const uint8_t *data, size_t size, uint64_t off)
{
	uint16_t len;
	if (off == 16) /* the header's version */
		return size < 24;
	if (size - off < FRAME + sizeof(struct pts_hdr))
		return true;
	memcpy(&len, data + off + FRAME + offsetof(struct pts_hdr, size),
	       sizeof(len));
	return size - off < FRAME + (size_t)len;
}

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
		/* Half the inputs read as `ptshare run` reads the trace of a
		 * daemon it ended: a frame cut at the end is no error. */
		bool torn_ok = size & 1;
		int r = ingest_trace_replay(in, f.g, torn_ok, &err);
		if (r == 1 && !torn_ok)
			fuzz_fail("a torn end where none may be");
		if (r) {
			if (err.offset > size)
				fuzz_fail("an error at offset %llu of %zu bytes",
					  (unsigned long long)err.offset, size);
			if ((r == 1 || !strncmp(err.what, "truncated", 9)) &&
			    !ends_inside_frame(data, size, err.offset))
				fuzz_fail("'%s' at offset %llu of %zu bytes",
					  err.what, (unsigned long long)err.offset,
					  size);
		}
		fclose(in);
	}
	fuzz_end(&f);
	return 0;
}
