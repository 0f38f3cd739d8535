/* SPDX-License-Identifier: MIT */
/* A strict recursive-descent JSON reader for the tests (json_read.h). */
#include "json_read.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct parser {
	const char *start, *p, *end;
	struct jr_error *err;
	int depth;
};

/* Records the first error (the innermost: callers only propagate). */
static bool fail(struct parser *ps, const char *at, const char *fmt, ...)
{
	if (ps->err) {
		ps->err->offset = (size_t)(at - ps->start);
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(ps->err->what, sizeof(ps->err->what), fmt, ap);
		va_end(ap);
	}
	return false;
}

static bool nomem(struct parser *ps)
{
	return fail(ps, ps->start, "out of memory");
}

static void skip_ws(struct parser *ps)
{
	while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' ||
				   *ps->p == '\n' || *ps->p == '\r'))
		ps->p++;
}

/* A growing byte buffer for decoded strings. */
struct buf {
	char *data;
	size_t len, cap;
};

static bool buf_put(struct buf *b, const void *bytes, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 32;
		while (cap < b->len + n + 1)
			cap *= 2;
		char *d = realloc(b->data, cap);
		if (!d)
			return false;
		b->data = d;
		b->cap = cap;
	}
	memcpy(b->data + b->len, bytes, n);
	b->len += n;
	b->data[b->len] = '\0';
	return true;
}

static size_t utf8_encode(uint32_t cp, char out[4])
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* Length of the well-formed UTF-8 sequence at p (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF), or 0. */
static size_t utf8_valid(const unsigned char *p, const unsigned char *end)
{
	size_t n;
	uint32_t cp, min;
	if (p[0] < 0x80)
		return 1;
	if ((p[0] & 0xe0) == 0xc0)
		n = 2, cp = p[0] & 0x1f, min = 0x80;
	else if ((p[0] & 0xf0) == 0xe0)
		n = 3, cp = p[0] & 0x0f, min = 0x800;
	else if ((p[0] & 0xf8) == 0xf0)
		n = 4, cp = p[0] & 0x07, min = 0x10000;
	else
		return 0;
	if ((size_t)(end - p) < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

static int hex4(const char *p, const char *end, uint32_t *out)
{
	uint32_t v = 0;
	if (end - p < 4)
		return -1;
	for (int i = 0; i < 4; i++) {
		char c = p[i];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (uint32_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (uint32_t)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (uint32_t)(c - 'A' + 10);
		else
			return -1;
	}
	*out = v;
	return 0;
}

/* At the opening quote; leaves ps->p after the closing one. */
static bool parse_string(struct parser *ps, char **out, size_t *outlen)
{
	struct buf b = { 0 };
	const char *open = ps->p++;
	if (!buf_put(&b, "", 0))
		return nomem(ps);
	for (;;) {
		if (ps->p >= ps->end) {
			free(b.data);
			return fail(ps, open, "unterminated string");
		}
		unsigned char c = (unsigned char)*ps->p;
		if (c == '"') {
			ps->p++;
			break;
		}
		if (c < 0x20) {
			free(b.data);
			return fail(ps, ps->p, "control character 0x%02x in a string", c);
		}
		if (c != '\\') {
			size_t n = utf8_valid((const unsigned char *)ps->p,
					      (const unsigned char *)ps->end);
			if (!n) {
				free(b.data);
				return fail(ps, ps->p, "invalid UTF-8");
			}
			if (!buf_put(&b, ps->p, n)) {
				free(b.data);
				return nomem(ps);
			}
			ps->p += n;
			continue;
		}
		const char *esc = ps->p++;
		if (ps->p >= ps->end) {
			free(b.data);
			return fail(ps, open, "unterminated string");
		}
		char e = *ps->p++, ch;
		switch (e) {
		case '"': ch = '"'; break;
		case '\\': ch = '\\'; break;
		case '/': ch = '/'; break;
		case 'b': ch = '\b'; break;
		case 'f': ch = '\f'; break;
		case 'n': ch = '\n'; break;
		case 'r': ch = '\r'; break;
		case 't': ch = '\t'; break;
		case 'u': {
			uint32_t cp, lo;
			if (hex4(ps->p, ps->end, &cp)) {
				free(b.data);
				return fail(ps, esc, "bad \\u escape");
			}
			ps->p += 4;
			if (cp >= 0xdc00 && cp <= 0xdfff) {
				free(b.data);
				return fail(ps, esc, "lone low surrogate");
			}
			if (cp >= 0xd800 && cp <= 0xdbff) {
				if (ps->end - ps->p < 6 || ps->p[0] != '\\' ||
				    ps->p[1] != 'u' || hex4(ps->p + 2, ps->end, &lo) ||
				    lo < 0xdc00 || lo > 0xdfff) {
					free(b.data);
					return fail(ps, esc, "lone high surrogate");
				}
				ps->p += 6;
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			}
			char u[4];
			if (!buf_put(&b, u, utf8_encode(cp, u))) {
				free(b.data);
				return nomem(ps);
			}
			continue;
		}
		default:
			free(b.data);
			return fail(ps, esc, "unknown escape \\%c", e);
		}
		if (!buf_put(&b, &ch, 1)) {
			free(b.data);
			return nomem(ps);
		}
	}
	*out = b.data;
	*outlen = b.len;
	return true;
}

static bool is_digit(const struct parser *ps, const char *p)
{
	return p < ps->end && *p >= '0' && *p <= '9';
}

static bool parse_number(struct parser *ps, struct jr_value *v)
{
	const char *s = ps->p, *p = s;
	if (p < ps->end && *p == '-')
		p++;
	if (!is_digit(ps, p))
		return fail(ps, p, "digit expected");
	if (*p == '0') {
		p++;
		if (is_digit(ps, p))
			return fail(ps, p, "leading zero");
	} else {
		while (is_digit(ps, p))
			p++;
	}
	if (p < ps->end && *p == '.') {
		p++;
		if (!is_digit(ps, p))
			return fail(ps, p, "digit expected after '.'");
		while (is_digit(ps, p))
			p++;
	}
	if (p < ps->end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < ps->end && (*p == '+' || *p == '-'))
			p++;
		if (!is_digit(ps, p))
			return fail(ps, p, "digit expected in exponent");
		while (is_digit(ps, p))
			p++;
	}
	v->type = JR_NUMBER;
	v->len = (size_t)(p - s);
	if (!(v->str = malloc(v->len + 1)))
		return nomem(ps);
	memcpy(v->str, s, v->len);
	v->str[v->len] = '\0';
	v->num = strtod(v->str, NULL);
	ps->p = p;
	return true;
}

static bool parse_value(struct parser *ps, struct jr_value *v);

static bool literal(struct parser *ps, const char *word, enum jr_type t,
		    struct jr_value *v)
{
	size_t n = strlen(word);
	if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n))
		return fail(ps, ps->p, "value expected");
	ps->p += n;
	v->type = t;
	return true;
}

/* Room for one more item (and key). */
static bool grow_items(struct jr_value *v, size_t *cap, bool keys)
{
	if (v->n < *cap)
		return true;
	size_t ncap = *cap ? 2 * *cap : 4;
	struct jr_value *items = realloc(v->items, ncap * sizeof(*items));
	if (!items)
		return false;
	v->items = items;
	if (keys) {
		char **k = realloc(v->keys, ncap * sizeof(*k));
		if (!k)
			return false;
		v->keys = k;
	}
	*cap = ncap;
	return true;
}

static bool parse_array(struct parser *ps, struct jr_value *v)
{
	size_t cap = 0;
	v->type = JR_ARRAY;
	ps->p++; /* '[' */
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == ']') {
		ps->p++;
		return true;
	}
	for (;;) {
		if (!grow_items(v, &cap, false))
			return nomem(ps);
		struct jr_value *item = &v->items[v->n];
		*item = (struct jr_value){ 0 };
		bool ok = parse_value(ps, item);
		v->n++; /* owned now, freed with v even if incomplete */
		if (!ok)
			return false;
		skip_ws(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			continue;
		}
		if (ps->p < ps->end && *ps->p == ']') {
			ps->p++;
			return true;
		}
		return fail(ps, ps->p, "',' or ']' expected");
	}
}

static bool parse_object(struct parser *ps, struct jr_value *v)
{
	size_t cap = 0;
	v->type = JR_OBJECT;
	ps->p++; /* '{' */
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == '}') {
		ps->p++;
		return true;
	}
	for (;;) {
		skip_ws(ps);
		if (ps->p >= ps->end || *ps->p != '"')
			return fail(ps, ps->p, "member name expected");
		const char *at = ps->p;
		char *key;
		size_t klen;
		if (!parse_string(ps, &key, &klen))
			return false;
		if (strlen(key) != klen) {
			free(key);
			return fail(ps, at, "member name holds a NUL");
		}
		if (jr_get(v, key)) {
			fail(ps, at, "duplicate member \"%.60s\"", key);
			free(key);
			return false;
		}
		if (!grow_items(v, &cap, true)) {
			free(key);
			return nomem(ps);
		}
		v->keys[v->n] = key;
		struct jr_value *item = &v->items[v->n];
		*item = (struct jr_value){ 0 };
		v->n++;
		skip_ws(ps);
		if (ps->p >= ps->end || *ps->p != ':')
			return fail(ps, ps->p, "':' expected");
		ps->p++;
		if (!parse_value(ps, item))
			return false;
		skip_ws(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			continue;
		}
		if (ps->p < ps->end && *ps->p == '}') {
			ps->p++;
			return true;
		}
		return fail(ps, ps->p, "',' or '}' expected");
	}
}

static bool parse_value(struct parser *ps, struct jr_value *v)
{
	skip_ws(ps);
	if (ps->p >= ps->end)
		return fail(ps, ps->p, "value expected");
	switch (*ps->p) {
	case '{':
	case '[': {
		if (ps->depth >= JR_MAX_DEPTH)
			return fail(ps, ps->p, "nested deeper than %d", JR_MAX_DEPTH);
		ps->depth++;
		bool ok = *ps->p == '{' ? parse_object(ps, v) : parse_array(ps, v);
		ps->depth--;
		return ok;
	}
	case '"':
		v->type = JR_STRING;
		return parse_string(ps, &v->str, &v->len);
	case 't':
		return literal(ps, "true", JR_TRUE, v);
	case 'f':
		return literal(ps, "false", JR_FALSE, v);
	case 'n':
		return literal(ps, "null", JR_NULL, v);
	default:
		if (*ps->p == '-' || (*ps->p >= '0' && *ps->p <= '9'))
			return parse_number(ps, v);
		return fail(ps, ps->p, "value expected");
	}
}

static void free_contents(struct jr_value *v)
{
	for (size_t i = 0; i < v->n; i++) {
		free_contents(&v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->str);
}

void jr_free(struct jr_value *v)
{
	if (!v)
		return;
	free_contents(v);
	free(v);
}

struct jr_value *jr_parse(const char *text, size_t len, struct jr_error *err)
{
	struct parser ps = { text, text, text + len, err, 0 };
	struct jr_value *v = calloc(1, sizeof(*v));
	if (!v) {
		nomem(&ps);
		return NULL;
	}
	if (!parse_value(&ps, v)) {
		jr_free(v);
		return NULL;
	}
	skip_ws(&ps);
	if (ps.p != ps.end) {
		fail(&ps, ps.p, "end of text expected");
		jr_free(v);
		return NULL;
	}
	return v;
}

struct jr_value *jr_parse_file(const char *path, struct jr_error *err)
{
	FILE *f = fopen(path, "rb");
	struct buf b = { 0 };
	char chunk[65536];
	size_t n;
	bool full = false;
	if (!f)
		goto sys_error;
	while (!full && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		full = !buf_put(&b, chunk, n);
	if (full || ferror(f)) {
		fclose(f);
		free(b.data);
		errno = full ? ENOMEM : EIO;
		goto sys_error;
	}
	fclose(f);
	struct jr_value *v = jr_parse(b.data ? b.data : "", b.len, err);
	free(b.data);
	return v;
sys_error:
	if (err) {
		err->offset = 0;
		snprintf(err->what, sizeof(err->what), "%s: %s", path,
			 strerror(errno));
	}
	return NULL;
}

const char *jr_type_name(enum jr_type t)
{
	static const char *const names[] = {
		[JR_NULL] = "null", [JR_FALSE] = "false", [JR_TRUE] = "true",
		[JR_NUMBER] = "number", [JR_STRING] = "string",
		[JR_ARRAY] = "array", [JR_OBJECT] = "object",
	};
	return (unsigned)t <= JR_OBJECT ? names[t] : "?";
}

const struct jr_value *jr_get(const struct jr_value *v, const char *key)
{
	if (!v || v->type != JR_OBJECT || !key)
		return NULL;
	for (size_t i = 0; i < v->n; i++)
		if (!strcmp(v->keys[i], key))
			return &v->items[i];
	return NULL;
}

const struct jr_value *jr_at(const struct jr_value *v, size_t i)
{
	if (!v || v->type != JR_ARRAY || i >= v->n)
		return NULL;
	return &v->items[i];
}

size_t jr_len(const struct jr_value *v)
{
	return v && (v->type == JR_ARRAY || v->type == JR_OBJECT) ? v->n : 0;
}

const char *jr_key_at(const struct jr_value *v, size_t i)
{
	if (!v || v->type != JR_OBJECT || i >= v->n)
		return NULL;
	return v->keys[i];
}

const struct jr_value *jr_path(const struct jr_value *v, const char *path)
{
	const char *p = path;
	char key[256];
	if (!path)
		return NULL;
	while (v && *p) {
		if (*p == '[') {
			char *end;
			if (p[1] < '0' || p[1] > '9')
				return NULL;
			errno = 0;
			unsigned long long i = strtoull(p + 1, &end, 10);
			if (errno || *end != ']')
				return NULL;
			v = jr_at(v, (size_t)i);
			p = end + 1;
		} else {
			size_t n = strcspn(p, ".[");
			if (!n || n >= sizeof(key))
				return NULL;
			memcpy(key, p, n);
			key[n] = '\0';
			v = jr_get(v, key);
			p += n;
		}
		/* A '.' separates steps and must be followed by a name. */
		if (*p == '.') {
			p++;
			if (!*p || *p == '.' || *p == '[')
				return NULL;
		}
	}
	return v;
}

bool jr_is(const struct jr_value *v, enum jr_type t)
{
	return v && v->type == t;
}

const char *jr_str(const struct jr_value *v)
{
	return jr_is(v, JR_STRING) ? v->str : NULL;
}

bool jr_bool(const struct jr_value *v)
{
	return jr_is(v, JR_TRUE);
}

/* The magnitude of an integer literal (no fraction, no exponent). */
static bool integer_literal(const struct jr_value *v, bool *neg, uint64_t *mag)
{
	if (!jr_is(v, JR_NUMBER) || strpbrk(v->str, ".eE"))
		return false;
	const char *p = v->str;
	*neg = *p == '-';
	p += *neg;
	uint64_t m = 0;
	for (; *p; p++) {
		unsigned d = (unsigned)(*p - '0');
		if (m > (UINT64_MAX - d) / 10)
			return false;
		m = m * 10 + d;
	}
	*mag = m;
	return true;
}

bool jr_u64(const struct jr_value *v, uint64_t *out)
{
	bool neg;
	uint64_t m;
	if (!integer_literal(v, &neg, &m) || (neg && m))
		return false;
	*out = m;
	return true;
}

bool jr_i64(const struct jr_value *v, int64_t *out)
{
	bool neg;
	uint64_t m;
	if (!integer_literal(v, &neg, &m))
		return false;
	if (neg) {
		if (m > (uint64_t)INT64_MAX + 1)
			return false;
		*out = m == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)m;
	} else {
		if (m > (uint64_t)INT64_MAX)
			return false;
		*out = (int64_t)m;
	}
	return true;
}

bool jr_double(const struct jr_value *v, double *out)
{
	if (!jr_is(v, JR_NUMBER))
		return false;
	*out = v->num;
	return true;
}

uint64_t jr_path_u64(const struct jr_value *v, const char *path, uint64_t dflt)
{
	uint64_t x;
	return jr_u64(jr_path(v, path), &x) ? x : dflt;
}

int64_t jr_path_i64(const struct jr_value *v, const char *path, int64_t dflt)
{
	int64_t x;
	return jr_i64(jr_path(v, path), &x) ? x : dflt;
}

double jr_path_double(const struct jr_value *v, const char *path, double dflt)
{
	double x;
	return jr_double(jr_path(v, path), &x) ? x : dflt;
}

const char *jr_path_str(const struct jr_value *v, const char *path)
{
	return jr_str(jr_path(v, path));
}
