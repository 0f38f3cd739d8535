/* SPDX-License-Identifier: MIT */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define SAID_MAX 16 /* kinds of event said once; the daemon has a few */
#define LINE_MAX_BYTES 1024

static const char *said[SAID_MAX]; /* by format, compared as text */
static size_t nsaid;

static void say_v(const char *fmt, va_list ap)
{
	char msg[LINE_MAX_BYTES], out[2 * LINE_MAX_BYTES];
	size_t n = 0;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	/* Every line prefixed, and the whole written at once: stderr is
	 * unbuffered, and another process may write to it too. */
	for (const char *line = msg; line && n < sizeof(out);) {
		const char *end = strchr(line, '\n');
		int len = end ? (int)(end - line) : (int)strlen(line);
		int w = snprintf(out + n, sizeof(out) - n, "ptshared: %.*s\n",
				 len, line);
		n += w > 0 ? (size_t)w : 0;
		line = end ? end + 1 : NULL;
	}
	fputs(out, stderr);
}

void say(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say_v(fmt, ap);
	va_end(ap);
}

static size_t said_index(const char *fmt)
{
	size_t i = 0;
	while (i < nsaid && strcmp(said[i], fmt))
		i++;
	return i;
}

bool say_once(const char *fmt, ...)
{
	size_t i = said_index(fmt);
	if (i < nsaid)
		return false;
	if (nsaid < SAID_MAX) /* past that, said each time: never lost */
		said[nsaid++] = fmt;
	va_list ap;
	va_start(ap, fmt);
	say_v(fmt, ap);
	va_end(ap);
	return true;
}

void say_again(const char *fmt)
{
	size_t i = said_index(fmt);
	if (i < nsaid)
		said[i] = said[--nsaid];
}
