/* SPDX-License-Identifier: MIT */
/* The parts of `ptshare top` (docs/top.md): the view of a report
 * (top_view.c), the terminal it draws in (top_term.c) and the /metrics
 * endpoint it serves (top_http.c). */
#ifndef PTSHARE_TOP_H
#define PTSHARE_TOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "report/report.h"

/* top_view.c */

/* What the rows are sorted by: the key 's' goes to the next. */
enum top_sort { TOP_SORT_TABLES, TOP_SORT_SAVED, TOP_SORT_VMPTE,
		TOP_SORT_NAME, TOP_SORT_NR };

/* How the view shows a report: the policy whose share and saving the rows
 * give (an index of r->pol, 1 or more), their order, and how many. */
struct top_view {
	size_t policy;
	enum top_sort sort;
	size_t rows;     /* 0: all */
	unsigned every_s; /* the refresh, as the header says it */
	size_t at_rest;  /* processes asleep since the refresh before */
	bool keys;       /* the header says the keys */
};

/* The view of r into f: the totals under each policy, then the processes
 * or, with groups, the groups, the most first by v->sort.  0, or -ENOMEM. */
int top_view_print(FILE *f, const struct report *r, const struct top_view *v);
const char *top_sort_name(enum top_sort s);

/* top_term.c: a terminal in raw mode, redrawn whole at each refresh. */

struct top_term {
	bool raw;     /* stdin's settings changed: restore them */
	int rows, cols;
};

/* Keys read one at a time, no echo, the screen an alternate one: 0, or -1
 * when stdin is not a terminal (the view is then drawn, no keys taken). */
int top_term_open(struct top_term *t);
/* The terminal's size now (after a SIGWINCH). */
void top_term_size(struct top_term *t);
/* Draws text (lines ended by '\n') from the top left, each line cleared
 * to its end, and the rest of the screen cleared. */
void top_term_draw(const struct top_term *t, const char *text, size_t len);
/* Back as it was: the screen, the cursor and stdin's settings. */
void top_term_close(struct top_term *t);
/* The next key typed, or -1 when none is waiting. */
int top_term_key(void);

/* top_http.c: GET /metrics, the report's OpenMetrics text. */

struct top_http {
	int fd;        /* listening, non-blocking; -1: none */
	char url[1100]; /* http://HOST:PORT/metrics, the port bound */
};

/* Listens on addr (HOST:PORT, [V6]:PORT, or PORT on 127.0.0.1; port 0:
 * any free one): 0, or -1 with why. */
int top_http_listen(struct top_http *h, const char *addr, char *why,
		    size_t cap);
/* Answers every connection waiting, with r's figures. */
void top_http_serve(struct top_http *h, const struct report *r);
void top_http_close(struct top_http *h);

#endif
