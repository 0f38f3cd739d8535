/* SPDX-License-Identifier: MIT */
/*
 * ptshare top: the processes (or groups) with the most page-table memory,
 * read from /proc as ptshare snapshot reads them, again every S seconds;
 * today's tables and each policy's saving (docs/top.md).  In a terminal a
 * live view with keys; elsewhere one table, once.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/cli_options.h"
#include "commands.h"
#include "lib/clock.h"
#include "snapshot_read.h"
#include "top.h"

#define TOP_DELAY_MAX 86400

static void usage(FILE *f)
{
	fputs("usage: ptshare top [-d S] [-n N] [--pid PID [--tree]] [--policy LIST]\n"
	      "                   [--group-by process|command|user|cgroup] [--top N]\n"
	      "                   [--listen ADDR]\n"
	      "\n"
	      "Shows the processes, or the groups of them, with the most page-table\n"
	      "memory, read from /proc as `ptshare snapshot` reads them, again every\n"
	      "S seconds: today's tables (the kernel's VmPTE and the model's) and\n"
	      "each policy's tables and saving.  In a terminal, keys: s sorts by the\n"
	      "next column (tables, saved, VmPTE, name), p shows the next policy's\n"
	      "share and saving per row, g groups by the next of none, command, user\n"
	      "and cgroup, q quits.  When stdout is not a terminal, prints the table\n"
	      "once and exits, unless it serves /metrics.\n"
	      "\n"
	      "  -d S               seconds between refreshes (default 2)\n"
	      "  -n N               refresh N times, then exit (default: until q)\n"
	      "  --pid PID          only this process\n"
	      "  --tree             with --pid: and its descendants\n"
	      "  --policy LIST      comma-separated policies (default: all)\n"
	      "  --group-by G       rows of groups: by process, command, user or\n"
	      "                     cgroup (a container, a systemd service)\n"
	      "  --top N            rows to show (default: as many as fit; 20 when\n"
	      "                     stdout is not a terminal; 0: all)\n"
	      "  --listen ADDR      serve the figures for Prometheus at\n"
	      "                     http://ADDR/metrics (OpenMetrics), refreshed as\n"
	      "                     the view is; ADDR is HOST:PORT, or PORT on\n"
	      "                     127.0.0.1 (port 0: any free one, said on stderr)\n"
	      "\n"
	      "Exit status: 0, 1 when /proc could not be read or ADDR listened on,\n"
	      "2 usage error.\n",
	      f);
}

struct top {
	const char *policies;
	int pid;
	bool tree;
	uint64_t delay_s, count;
	bool rows_given;
	enum report_group_by by;
	struct report rep;
	bool have;           /* rep holds a report */
	struct top_view view;
	const char *listen;  /* --listen ADDR, or NULL */
	struct top_http http;
	/* The idle processes' readings, taken again while they rest: an
	 * idle process costs a refresh its status, not its maps and pages. */
	struct snapshot_cache cache;
};

static volatile sig_atomic_t ended, resized;

static void on_signal(int sig)
{
	if (sig == SIGWINCH)
		resized = 1;
	else
		ended = 1;
}

/* SIGINT, SIGTERM and SIGHUP end the loop (the terminal restored);
 * SIGWINCH redraws.  No SA_RESTART: poll() returns to say so. */
static void catch_signals(void)
{
	const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGWINCH };
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &(struct sigaction){ .sa_handler = on_signal },
			  NULL);
}

/* /proc read again into t->rep: 0, or 1 with the reason said. */
static int refresh(struct top *t)
{
	struct snapshot s;
	struct report rep;
	char err[256];
	int r = snapshot_read(&s, t->policies, t->pid, t->tree, &t->cache, err,
			      sizeof(err));
	t->view.at_rest = s.at_rest;
	if (!r && snapshot_report(&s, t->by, MM_SPAN(PT_PTE), &rep)) {
		r = -ENOMEM;
		snprintf(err, sizeof(err), "out of memory");
	}
	snapshot_free(&s);
	if (r) {
		fprintf(stderr, "ptshare top: %s\n", err);
		return 1;
	}
	if (t->have)
		report_free(&t->rep);
	t->rep = rep;
	t->have = true;
	if (!t->view.policy || t->view.policy >= rep.npol)
		t->view.policy = rep.npol > 1; /* the first beside linux */
	return 0;
}

/* The view, drawn whole. */
static void draw(struct top *t, struct top_term *term)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	if (!m)
		return;
	if (!t->rows_given) /* the header, the policies, the columns */
		t->view.rows = term->rows > (int)t->rep.npol + 8 ?
			       (size_t)term->rows - t->rep.npol - 8 : 1;
	int err = top_view_print(m, &t->rep, &t->view);
	if (!fclose(m) && !err)
		top_term_draw(term, text, len);
	free(text);
}

/* A key: the view changed (true), or nothing to redraw; q ends. */
static bool key(struct top *t, int c)
{
	static const enum report_group_by next_group[REPORT_GROUP_NR] = {
		[REPORT_GROUP_NONE] = REPORT_GROUP_COMMAND,
		[REPORT_GROUP_PROCESS] = REPORT_GROUP_COMMAND,
		[REPORT_GROUP_COMMAND] = REPORT_GROUP_USER,
		[REPORT_GROUP_USER] = REPORT_GROUP_CGROUP,
		[REPORT_GROUP_CGROUP] = REPORT_GROUP_NONE,
	};
	switch (c) {
	case 'q':
		ended = 1;
		return false;
	case 's':
		t->view.sort = (t->view.sort + 1) % TOP_SORT_NR;
		return true;
	case 'p':
		if (t->rep.npol > 1)
			t->view.policy = t->view.policy % (t->rep.npol - 1) + 1;
		return true;
	case 'g':
		t->by = t->rep.group_by = next_group[t->by];
		return report_group(&t->rep) == 0;
	default:
		return false;
	}
}

/* Refreshes every delay until q, a signal or the count's last; the view
 * drawn in term (NULL: none) and keys taken there, /metrics served. */
static int loop(struct top *t, struct top_term *term)
{
	int status = 0;
	int64_t next = now_ms() + (int64_t)t->delay_s * 1000;
	for (uint64_t shown = 1; !ended && (!t->count || shown < t->count);) {
		struct pollfd p[2] = {
			{ .fd = term && t->view.keys ? STDIN_FILENO : -1,
			  .events = POLLIN },
			{ .fd = t->http.fd, .events = POLLIN },
		};
		int64_t wait = next - now_ms();
		int n = poll(p, 2, wait > 0 ? (int)wait : 0);
		bool redraw = false;
		if (resized && term) {
			resized = 0;
			top_term_size(term);
			redraw = true;
		}
		for (int c; n > 0 && p[0].revents && (c = top_term_key()) >= 0;)
			redraw |= key(t, c);
		if (n > 0 && p[1].revents)
			top_http_serve(&t->http, &t->rep);
		if (!ended && now_ms() >= next) {
			if ((status = refresh(t)))
				break;
			next += (int64_t)t->delay_s * 1000;
			shown++;
			redraw = true;
		}
		if (redraw && term && !ended)
			draw(t, term);
	}
	return status;
}

/* The live view, in a terminal. */
static int live(struct top *t)
{
	struct top_term term;
	t->view.keys = top_term_open(&term) == 0;
	draw(t, &term);
	int status = loop(t, &term);
	top_term_close(&term);
	return status;
}

/* Once, into a file or a pipe. */
static int once(struct top *t)
{
	errno = 0;
	int r = top_view_print(stdout, &t->rep, &t->view) ? 1 : 0;
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "ptshare top: stdout: %s\n",
			strerror(errno ? errno : EIO));
		r = 1;
	}
	return r;
}

/* The options into t: -1 to go on, else the exit status. */
static int options(struct top *t, struct cli_parser *p, int argc, char **argv)
{
	static const struct option own[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "tree", no_argument, NULL, 't' },
		{ "listen", required_argument, NULL, 'l' },
		{ 0 },
	};
	cli_parser_init(p, "ptshare top", usage, CLI_POLICY | CLI_TOP |
			CLI_GROUP_BY, own, "d:n:");
	*t = (struct top){ .delay_s = 2, .http = { .fd = -1 } };
	uint64_t pid = 0;
	int c;
	while ((c = cli_next(p, argc, argv)) != -1) {
		if (c == 'p' && (cli_u64(optarg, &pid) || !pid || pid > INT_MAX))
			return cli_usage_error(p, "bad pid", optarg);
		if (c == 'd' && (cli_u64(optarg, &t->delay_s) || !t->delay_s ||
				 t->delay_s > TOP_DELAY_MAX))
			return cli_usage_error(p, "bad -d (seconds, 1 to a day)",
					       optarg);
		if (c == 'n' && cli_u64(optarg, &t->count))
			return cli_usage_error(p, "bad -n", optarg);
		t->tree |= c == 't';
		if (c == 'l')
			t->listen = optarg;
	}
	if (p->status >= 0)
		return p->status;
	if (optind < argc)
		return cli_usage_error(p, "unexpected argument", argv[optind]);
	if (t->tree && !pid)
		return cli_usage(p->name, "--tree needs --pid");
	t->pid = (int)pid;
	t->policies = p->v.policies;
	t->by = p->v.group_by_n;
	t->rows_given = p->v.top != NULL;
	t->view = (struct top_view){ .rows = (size_t)p->v.top_n,
				     .every_s = (unsigned)t->delay_s };
	return -1;
}

int cmd_top(int argc, char **argv)
{
	struct top t;
	struct cli_parser p;
	int r = options(&t, &p, argc, argv);
	if (r >= 0)
		return r;
	char err[256];
	struct mm_worlds ws;
	if (mm_worlds_init(&ws, t.policies, err, sizeof(err)))
		return cli_usage(p.name, "%s", err);
	mm_worlds_free(&ws);
	if (t.listen && top_http_listen(&t.http, t.listen, err, sizeof(err))) {
		fprintf(stderr, "ptshare top: --listen %s: %s\n", t.listen, err);
		return 1;
	}
	if (t.listen)
		fprintf(stderr, "ptshare top: serving %s\n", t.http.url);
	catch_signals();
	if (!(r = refresh(&t)))
		r = isatty(STDOUT_FILENO) ? live(&t)
		    : t.listen ? loop(&t, NULL) : once(&t);
	top_http_close(&t.http);
	snapshot_cache_free(&t.cache);
	if (t.have)
		report_free(&t.rep);
	return r;
}
