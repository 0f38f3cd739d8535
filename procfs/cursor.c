/* SPDX-License-Identifier: MIT */
/* A small lexer for the line formats of /proc. */
#include <string.h>

#include "procfs_internal.h"

static int hex_digit(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

static bool parse_base(struct procfs_cursor *c, unsigned base, uint64_t *out)
{
	const char *p = c->p;
	uint64_t v = 0;
	int d;

	while (p < c->end && (d = hex_digit(*p)) >= 0 && (unsigned)d < base) {
		if (v > (UINT64_MAX - (unsigned)d) / base)
			return false;
		v = v * base + (unsigned)d;
		p++;
	}
	if (p == c->p)
		return false;
	c->p = p;
	*out = v;
	return true;
}

bool procfs_parse_hex(struct procfs_cursor *c, uint64_t *out)
{
	return parse_base(c, 16, out);
}

bool procfs_parse_dec(struct procfs_cursor *c, uint64_t *out)
{
	return parse_base(c, 10, out);
}

bool procfs_parse_char(struct procfs_cursor *c, char ch)
{
	if (c->p == c->end || *c->p != ch)
		return false;
	c->p++;
	return true;
}

void procfs_skip_blanks(struct procfs_cursor *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t'))
		c->p++;
}

bool procfs_next_line(const char **pos, const char *end,
		      struct procfs_cursor *line)
{
	if (*pos >= end)
		return false;
	const char *nl = memchr(*pos, '\n', (size_t)(end - *pos));
	line->p = *pos;
	line->end = nl ? nl : end;
	*pos = nl ? nl + 1 : end;
	return true;
}

bool procfs_parse_key(struct procfs_cursor *line, const char *key)
{
	size_t n = strlen(key);

	if ((size_t)(line->end - line->p) <= n || memcmp(line->p, key, n) ||
	    line->p[n] != ':')
		return false;
	line->p += n + 1;
	procfs_skip_blanks(line);
	return true;
}
