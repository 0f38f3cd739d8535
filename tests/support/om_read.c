/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE /* strndup */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "om_read.h"

/* One parse: where it is, and the first error. */
struct om_parser {
	struct om_doc *d;
	size_t line;
	char *err;
	size_t cap;
};

static int bad(struct om_parser *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int bad(struct om_parser *p, const char *fmt, ...)
{
	int n = snprintf(p->err, p->cap, "line %zu: ", p->line);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->err + n, p->cap - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

/* The length of the metric or label name at s (0: none). */
static size_t name_len(const char *s, bool metric)
{
	size_t n = 0;
	for (; s[n]; n++) {
		char c = s[n];
		bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			      c == '_' || (metric && c == ':');
		if (!letter && !(n && c >= '0' && c <= '9'))
			break;
	}
	return n;
}

/* The length of escaped text at s up to the end or a '"' (quoted). */
static int escaped_len(struct om_parser *p, const char *s, bool quoted,
		       size_t *len)
{
	size_t n = 0;
	for (; s[n] && !(quoted && s[n] == '"'); n++)
		if (s[n] == '\\' && (!s[n + 1] || !strchr("\\\"n", s[++n])))
			return bad(p, "bad escape '\\%c'", s[n]);
	if (quoted && s[n] != '"')
		return bad(p, "unterminated label value");
	*len = n;
	return 0;
}

static struct om_family *current(struct om_doc *d)
{
	return d->nfam ? &d->fam[d->nfam - 1] : NULL;
}

/* "# TYPE name type", "# UNIT name unit", "# HELP name text". */
static int metadata(struct om_parser *p, const char *l)
{
	static const char *const types[] = { "gauge", "counter", "info",
		"stateset", "unknown", "histogram", "gaugehistogram", "summary" };
	struct om_family *f = current(p->d);
	if (strlen(l) < 8 || (strncmp(l, "# TYPE ", 7) && strncmp(l, "# UNIT ", 7) &&
			      strncmp(l, "# HELP ", 7)))
		return bad(p, "a comment not TYPE, UNIT, HELP nor EOF");
	size_t n = name_len(l + 7, true);
	const char *arg = l + 7 + n;
	if (!n || *arg != ' ' || !arg[1])
		return bad(p, "malformed metadata");
	arg++;
	if (!strncmp(l, "# TYPE ", 7)) {
		for (size_t i = 0; i < p->d->nfam; i++)
			if (strlen(p->d->fam[i].name) == n &&
			    !strncmp(p->d->fam[i].name, l + 7, n))
				return bad(p, "family declared twice");
		size_t t = 0;
		while (t < sizeof(types) / sizeof(types[0]) && strcmp(arg, types[t]))
			t++;
		if (t == sizeof(types) / sizeof(types[0]))
			return bad(p, "unknown type '%s'", arg);
		struct om_family *fam = realloc(p->d->fam, (p->d->nfam + 1) *
						sizeof(*fam));
		if (!fam)
			return bad(p, "out of memory");
		p->d->fam = fam;
		p->d->fam[p->d->nfam++] = (struct om_family){
			strndup(l + 7, n), strdup(arg), NULL, NULL, 0 };
		return 0;
	}
	if (!f || strlen(f->name) != n || strncmp(f->name, l + 7, n) || f->samples)
		return bad(p, "metadata of no family declared just before");
	size_t len;
	if (!strncmp(l, "# UNIT ", 7)) {
		size_t u = strlen(arg);
		if (f->unit || f->help || n <= u || strcmp(f->name + n - u, arg) ||
		    f->name[n - u - 1] != '_')
			return bad(p, "unit '%s' misplaced or not the name's suffix", arg);
		f->unit = strdup(arg);
		return 0;
	}
	if (f->help)
		return bad(p, "a second HELP");
	if (escaped_len(p, arg, false, &len))
		return -1;
	f->help = strdup(arg);
	return 0;
}

/* {name="value",...}: the length of the labels at s. */
static int labels(struct om_parser *p, const char *s, size_t *len)
{
	size_t i = 1;
	while (s[i] != '}') {
		size_t n = name_len(s + i, false), v;
		if (!n || strncmp(s + i + n, "=\"", 2))
			return bad(p, "malformed label");
		i += n + 2;
		if (escaped_len(p, s + i, true, &v))
			return -1;
		i += v + 1;
		if (s[i] == ',' && s[i + 1] != '}')
			i++;
		else if (s[i] != '}')
			return bad(p, "malformed labels");
	}
	*len = i + 1;
	return 0;
}

static int sample(struct om_parser *p, const char *l)
{
	struct om_family *f = current(p->d);
	size_t n = name_len(l, true), lab = 0;
	if (!n || (l[n] == '{' && labels(p, l + n, &lab)))
		return n ? -1 : bad(p, "no metric name");
	bool counter = f && !strcmp(f->type, "counter");
	if (!f || !((strlen(f->name) == n && !strncmp(l, f->name, n)) ||
		    (counter && strlen(f->name) + 6 == n &&
		     !strncmp(l, f->name, n - 6) && !strncmp(l + n - 6, "_total", 6))))
		return bad(p, "a sample of no family declared before it");
	const char *v = l + n + lab;
	char *end;
	errno = 0;
	bool digits = *v == ' ' && (v[1] == '-' || (v[1] >= '0' && v[1] <= '9'));
	long long value = digits ? strtoll(v + 1, &end, 10) : 0;
	if (!digits || end == v + 1 || *end || errno)
		return bad(p, "not one integer value after the series");
	for (size_t i = 0; i < p->d->n; i++)
		if (strlen(p->d->s[i].series) == n + lab &&
		    !strncmp(p->d->s[i].series, l, n + lab))
			return bad(p, "series repeated");
	struct om_sample *s = realloc(p->d->s, (p->d->n + 1) * sizeof(*s));
	if (!s)
		return bad(p, "out of memory");
	p->d->s = s;
	s[p->d->n++] = (struct om_sample){ strndup(l, n + lab), p->d->nfam - 1,
					    value };
	f->samples++;
	return 0;
}

/* The lines of text into p->d: 0, or -1 said. */
static int lines(struct om_parser *p, const char *text, size_t len)
{
	size_t at = 0;
	bool eof = false;
	while (at < len) {
		const char *nl = memchr(text + at, '\n', len - at);
		p->line++;
		if (eof)
			return bad(p, "text after # EOF");
		if (!nl)
			return bad(p, "no newline at the end");
		char *l = strndup(text + at, (size_t)(nl - (text + at)));
		if (!l)
			return bad(p, "out of memory");
		eof = !strcmp(l, "# EOF");
		int r = eof ? 0 : *l == '#' ? metadata(p, l) : sample(p, l);
		free(l);
		if (r)
			return -1;
		at = (size_t)(nl - text) + 1;
	}
	return eof ? 0 : bad(p, "no # EOF at the end");
}

int om_parse(const char *text, size_t len, struct om_doc *d, char *err,
	     size_t cap)
{
	struct om_parser p = { d, 0, err, cap };
	*d = (struct om_doc){ 0 };
	int r = lines(&p, text, len);
	if (r)
		om_free(d);
	return r;
}

int om_parse_file(const char *path, struct om_doc *d, char *err, size_t cap)
{
	*d = (struct om_doc){ 0 };
	FILE *f = fopen(path, "re");
	char *text = NULL;
	size_t len = 0, cap_text = 0, n;
	do {
		char *more = f ? realloc(text, cap_text += 65536) : NULL;
		if (!more) {
			snprintf(err, cap, "%s: %s", path, strerror(f ? ENOMEM : errno));
			free(text);
			if (f)
				fclose(f);
			return -1;
		}
		text = more;
		n = fread(text + len, 1, cap_text - len, f);
		len += n;
	} while (n);
	fclose(f);
	int r = om_parse(text, len, d, err, cap);
	free(text);
	return r;
}

void om_free(struct om_doc *d)
{
	for (size_t i = 0; i < d->nfam; i++) {
		free(d->fam[i].name);
		free(d->fam[i].type);
		free(d->fam[i].unit);
		free(d->fam[i].help);
	}
	for (size_t i = 0; i < d->n; i++)
		free(d->s[i].series);
	free(d->fam);
	free(d->s);
	*d = (struct om_doc){ 0 };
}

bool om_value(const struct om_doc *d, const char *series, int64_t *out)
{
	for (size_t i = 0; i < d->n; i++)
		if (!strcmp(d->s[i].series, series)) {
			*out = d->s[i].value;
			return true;
		}
	return false;
}
