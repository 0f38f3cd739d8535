/* SPDX-License-Identifier: MIT */
#include "trace.h"

#include <stdarg.h>
#include <string.h>

static int fail(struct trace_error *err, uint64_t offset, const char *fmt, ...)
{
	va_list ap;
	err->offset = offset;
	va_start(ap, fmt);
	vsnprintf(err->what, sizeof(err->what), fmt, ap);
	va_end(ap);
	return -1;
}

/* A frame cut short: at the end of the file, torn when that may be. */
static int cut(FILE *f, bool torn_ok, struct trace_error *err, uint64_t offset,
	       const char *what)
{
	if (torn_ok && feof(f) && !ferror(f)) {
		fail(err, offset, "%s", "a frame cut short at the end");
		return 1;
	}
	return fail(err, offset, "%s", what);
}

int trace_replay(FILE *f, struct ingest *g, bool torn_ok,
		 struct trace_error *err)
{
	char magic[16];
	uint32_t version[2];
	if (fread(magic, sizeof(magic), 1, f) != 1 ||
	    memcmp(magic, TRACE_MAGIC, sizeof(TRACE_MAGIC)))
		return fail(err, 0, "not a ptshare trace");
	if (fread(version, sizeof(version), 1, f) != 1)
		return fail(err, 16, "truncated header");
	if (version[0] != PTS_WIRE_VERSION)
		return fail(err, 16, "trace version %u, this ptshare reads %u",
			    version[0], PTS_WIRE_VERSION);
	uint64_t off = 24;
	for (;;) {
		uint32_t frame[2];
		union {
			struct pts_hdr h;
			uint64_t align;
			uint8_t b[PTS_REC_MAX];
		} r;
		size_t n = fread(frame, 1, sizeof(frame), f);
		if (!n && feof(f))
			return 0;
		if (n != sizeof(frame) || fread(&r.h, sizeof(r.h), 1, f) != 1)
			return cut(f, torn_ok, err, off, "truncated frame");
		if (r.h.size < sizeof(r.h) || r.h.size > PTS_REC_MAX)
			return fail(err, off, "a record of %u bytes", r.h.size);
		/* A bare header is a whole record, if not a valid one: fread
		 * of nothing would call it truncated. */
		if (r.h.size > sizeof(r.h) &&
		    fread(r.b + sizeof(r.h), r.h.size - sizeof(r.h), 1, f) != 1) {
			char what[64];
			snprintf(what, sizeof(what), "truncated record of %u bytes",
				 r.h.size);
			return cut(f, torn_ok, err, off, what);
		}
		if (ingest_replay(g, (int32_t)frame[0], frame[1], &r, r.h.size))
			return fail(err, off, "corrupt record (type %u, %u bytes)",
				    r.h.type, r.h.size);
		off += sizeof(frame) + r.h.size;
	}
}
