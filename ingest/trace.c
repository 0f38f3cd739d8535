/* SPDX-License-Identifier: MIT */
#include "trace.h"

#include <stdarg.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

/*
 * What a replay may take (docs/wire-protocol.md, Replaying): its peak RSS
 * grows at most MEM_PER_BYTE bytes per byte of the trace (its size, or
 * what was read of one that is no file), and MEM_SLACK.  A record costs
 * what the process it names costs the model, a fork a copy of its
 * parent's tables: the densest trace a run wrote here, the torture suite's
 * fork storm (1,111 processes, 2.7 MB), needs 50 per byte (134 under
 * AddressSanitizer); 2,000 crafted forks of a process of 63 tables, 80 KB,
 * asked for 2.7 GB.
 */
#define MEM_PER_BYTE 256
#define MEM_SLACK (64u << 20)

static uint64_t peak_rss(void)
{
	struct rusage ru;
	return getrusage(RUSAGE_SELF, &ru) ? 0 : (uint64_t)ru.ru_maxrss << 10;
}

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

int ingest_trace_replay(FILE *f, struct ingest *g, bool torn_ok,
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
	struct stat st;
	uint64_t off = 24, size = !fstat(fileno(f), &st) && S_ISREG(st.st_mode)
					 ? (uint64_t)st.st_size : 0;
	uint64_t base = peak_rss() + MEM_SLACK;
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
		uint64_t at = off;
		off += sizeof(frame) + r.h.size;
		size = off > size ? off : size;
		if (peak_rss() > base + MEM_PER_BYTE * size)
			return fail(err, at, "more memory than a trace of %llu bytes "
				    "may take (at most %u bytes per byte of it, and "
				    "%u MiB)", (unsigned long long)size, MEM_PER_BYTE,
				    MEM_SLACK >> 20);
	}
}
