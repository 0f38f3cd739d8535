/* SPDX-License-Identifier: MIT */
/*
 * What the daemon says: lines on stderr, each "ptshared: " first.  Under
 * `ptshare run` that stderr is the traced program's, so what a run may
 * meet again and again (refusals, a failing accept, a user without
 * userfaultfd) is said once.
 */
#ifndef PTSHARE_DAEMON_LOG_H
#define PTSHARE_DAEMON_LOG_H

#include <stdbool.h>

/* One message, which may hold several lines ('\n' between them). */
void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The message, unless one of the same format was said already (since the
 * start, or since say_again(fmt)): once per kind of event, whatever its
 * numbers.  True when it was said. */
bool say_once(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* What fmt told is over: its next say_once is said. */
void say_again(const char *fmt);

#endif
