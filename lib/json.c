/* SPDX-License-Identifier: MIT */
#include "lib/json.h"

#include <inttypes.h>
#include <math.h>

void json_init(struct json *j, FILE *f)
{
	*j = (struct json){ .f = f };
	j->first[0] = true;
}

/* Before any value: a comma unless it is the first of its container. */
static void value(struct json *j)
{
	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (!j->first[j->depth])
		fputc(',', j->f);
	j->first[j->depth] = false;
	if (j->depth)
		fprintf(j->f, "\n%*s", 2 * j->depth, "");
}

static void open_container(struct json *j, char c)
{
	value(j);
	fputc(c, j->f);
	if (j->depth + 1 < JSON_MAX_DEPTH)
		j->depth++;
	j->first[j->depth] = true;
}

static void close_container(struct json *j, char c)
{
	bool empty = j->first[j->depth];
	if (j->depth)
		j->depth--;
	if (!empty)
		fprintf(j->f, "\n%*s", 2 * j->depth, "");
	fputc(c, j->f);
	if (!j->depth)
		fputc('\n', j->f);
}

void json_object(struct json *j) { open_container(j, '{'); }
void json_array(struct json *j) { open_container(j, '['); }
void json_end_object(struct json *j) { close_container(j, '}'); }
void json_end_array(struct json *j) { close_container(j, ']'); }

/* Length of the valid UTF-8 sequence at p (RFC 3629), or 0. */
static int utf8_len(const unsigned char *p)
{
	unsigned lo = 0x80, hi = 0xbf; /* range of the second byte */
	int n;
	if (*p >= 0xc2 && *p <= 0xdf)
		n = 2;
	else if (*p >= 0xe0 && *p <= 0xef)
		n = 3, lo = *p == 0xe0 ? 0xa0 : 0x80, hi = *p == 0xed ? 0x9f : 0xbf;
	else if (*p >= 0xf0 && *p <= 0xf4)
		n = 4, lo = *p == 0xf0 ? 0x90 : 0x80, hi = *p == 0xf4 ? 0x8f : 0xbf;
	else
		return 0;
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (int i = 2; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

/* Paths and process names are bytes: what is not UTF-8 becomes U+FFFD so
 * that the document stays valid JSON. */
static void quoted(struct json *j, const char *s)
{
	fputc('"', j->f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\') {
			fprintf(j->f, "\\%c", *p);
		} else if (*p < 0x20 || *p == 0x7f) {
			fprintf(j->f, "\\u%04x", *p);
		} else if (*p < 0x80) {
			fputc(*p, j->f);
		} else {
			int n = utf8_len(p);
			if (!n) {
				fputs("\\ufffd", j->f);
				continue;
			}
			fwrite(p, 1, n, j->f);
			p += n - 1;
		}
	}
	fputc('"', j->f);
}

void json_key(struct json *j, const char *key)
{
	value(j);
	quoted(j, key);
	fputs(": ", j->f);
	j->after_key = true;
}

void json_string(struct json *j, const char *s)
{
	value(j);
	quoted(j, s);
}

void json_u64(struct json *j, uint64_t v)
{
	value(j);
	fprintf(j->f, "%" PRIu64, v);
}

void json_i64(struct json *j, int64_t v)
{
	value(j);
	fprintf(j->f, "%" PRId64, v);
}

void json_double(struct json *j, double v)
{
	value(j);
	if (isfinite(v))
		fprintf(j->f, "%.17g", v);
	else
		fputs("null", j->f);
}

void json_bool(struct json *j, bool v)
{
	value(j);
	fputs(v ? "true" : "false", j->f);
}

void json_null(struct json *j)
{
	value(j);
	fputs("null", j->f);
}

void json_member_u64(struct json *j, const char *key, uint64_t v)
{
	json_key(j, key);
	json_u64(j, v);
}

void json_member_i64(struct json *j, const char *key, int64_t v)
{
	json_key(j, key);
	json_i64(j, v);
}

void json_member_double(struct json *j, const char *key, double v)
{
	json_key(j, key);
	json_double(j, v);
}

void json_member_bool(struct json *j, const char *key, bool v)
{
	json_key(j, key);
	json_bool(j, v);
}

void json_member_string(struct json *j, const char *key, const char *v)
{
	json_key(j, key);
	json_string(j, v);
}
