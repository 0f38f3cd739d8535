/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE /* fopencookie */
#include "trace_file.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zstd.h>

#define CHUNK (64u << 10)

static const uint8_t zstd_magic[4] = { 0x28, 0xb5, 0x2f, 0xfd };

/* A trace read through a buffer: its first bytes (read to tell what it
 * is) served first, then the rest, decompressed when d is set. */
struct reader {
	FILE *src;
	ZSTD_DCtx *d;
	size_t frame_left; /* ZSTD_decompressStream's last answer: 0 at a frame's end */
	ZSTD_inBuffer in;
	uint8_t buf[CHUNK];
};

/* More of the source into the buffer: its length, 0 at its end, -1. */
static ssize_t refill(struct reader *r)
{
	size_t n = fread(r->buf, 1, sizeof(r->buf), r->src);
	if (!n && ferror(r->src))
		return -1;
	r->in = (ZSTD_inBuffer){ r->buf, n, 0 };
	return (ssize_t)n;
}

static ssize_t reader_read(void *cookie, char *out, size_t size)
{
	struct reader *r = cookie;
	ZSTD_outBuffer o = { out, size, 0 };
	while (!o.pos) {
		if (r->in.pos == r->in.size) {
			ssize_t n = refill(r);
			/* A stream cut inside a frame reads as a fault, not
			 * as the end of a whole trace. */
			bool cut = n == 0 && r->d && r->frame_left;
			if (n < 0 || cut) {
				errno = EIO;
				return -1;
			}
			if (!n)
				return 0;
		}
		if (!r->d) {
			size_t n = r->in.size - r->in.pos < size ? r->in.size - r->in.pos
								  : size;
			memcpy(out, (const uint8_t *)r->in.src + r->in.pos, n);
			r->in.pos += n;
			return (ssize_t)n;
		}
		r->frame_left = ZSTD_decompressStream(r->d, &o, &r->in);
		if (ZSTD_isError(r->frame_left)) {
			errno = EIO;
			return -1;
		}
	}
	return (ssize_t)o.pos;
}

static int reader_close(void *cookie)
{
	struct reader *r = cookie;
	int err = r->src == stdin ? 0 : fclose(r->src);
	ZSTD_freeDCtx(r->d);
	free(r);
	return err;
}

/* A plain regular file is read as it is, so that a replay knows its size
 * (its memory bound: docs/wire-protocol.md). */
static bool plain_file(FILE *f, const struct reader *r)
{
	struct stat st;
	return r->in.size >= sizeof(zstd_magic) &&
	       memcmp(r->buf, zstd_magic, sizeof(zstd_magic)) &&
	       !fstat(fileno(f), &st) && S_ISREG(st.st_mode) && !fseek(f, 0, SEEK_SET);
}

FILE *trace_file_open(const char *path)
{
	bool in = !strcmp(path, "-");
	FILE *src = in ? stdin : fopen(path, "rbe");
	struct reader *r = src ? calloc(1, sizeof(*r)) : NULL;
	if (!r) {
		if (src && !in)
			fclose(src);
		return NULL;
	}
	r->src = src;
	/* The first bytes of a pipe cannot be read again: kept in buf. */
	r->in = (ZSTD_inBuffer){ r->buf, fread(r->buf, 1, sizeof(zstd_magic), src), 0 };
	if (plain_file(src, r)) {
		free(r);
		return src;
	}
	bool zst = r->in.size == sizeof(zstd_magic) &&
		   !memcmp(r->buf, zstd_magic, sizeof(zstd_magic));
	FILE *f = NULL;
	if ((!zst || (r->d = ZSTD_createDCtx())) &&
	    !(f = fopencookie(r, "rb", (cookie_io_functions_t){
				.read = reader_read, .close = reader_close })))
		errno = ENOMEM;
	if (!f)
		reader_close(r);
	return f;
}

bool trace_file_compressed(const char *path)
{
	size_t n = strlen(path);
	return n >= 4 && !strcmp(path + n - 4, ".zst");
}

/* src's bytes into dst, compressed by c. */
static int compress_into(FILE *src, FILE *dst, ZSTD_CCtx *c, uint8_t *in, uint8_t *out)
{
	size_t n, left;
	do {
		n = fread(in, 1, CHUNK, src);
		if (!n && ferror(src))
			return errno ? errno : EIO;
		ZSTD_EndDirective end = n ? ZSTD_e_continue : ZSTD_e_end;
		ZSTD_inBuffer ib = { in, n, 0 };
		do {
			ZSTD_outBuffer ob = { out, ZSTD_CStreamOutSize(), 0 };
			left = ZSTD_compressStream2(c, &ob, &ib, end);
			if (ZSTD_isError(left))
				return EIO;
			if (fwrite(out, 1, ob.pos, dst) != ob.pos)
				return errno ? errno : EIO;
		} while (end == ZSTD_e_end ? left != 0 : ib.pos < ib.size);
	} while (n);
	return 0;
}

int trace_file_save(const char *src, FILE *dst)
{
	FILE *f = fopen(src, "rbe");
	if (!f)
		return errno;
	uint8_t *in = malloc(CHUNK), *out = malloc(ZSTD_CStreamOutSize());
	ZSTD_CCtx *c = ZSTD_createCCtx();
	struct stat st;
	int err = in && out && c ? 0 : ENOMEM;
	if (!err && !fstat(fileno(f), &st))
		ZSTD_CCtx_setPledgedSrcSize(c, (unsigned long long)st.st_size);
	if (!err)
		err = compress_into(f, dst, c, in, out);
	ZSTD_freeCCtx(c);
	free(in);
	free(out);
	fclose(f);
	return err;
}
