/* SPDX-License-Identifier: MIT */
/*
 * While `ptshare run` runs, a line on stderr (a terminal's; not with
 * --quiet) says how far it is: the processes modelled, the records
 * received, today's page tables now, as the daemon last wrote them in its
 * heartbeat page.  Redrawn in place about once a second, erased before the
 * report.
 */
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

#include "lib/clock.h"
#include "run.h"

#define PROGRESS_MS 1000

void progress_init(struct progress *p, const char *who,
		   const struct pts_heartbeat *hb, bool on)
{
	int64_t now = now_ms();
	*p = (struct progress){ .who = who, .start_ms = now,
				.next_ms = now + PROGRESS_MS };
	if (on && hb && isatty(STDERR_FILENO))
		p->hb = hb;
}

int progress_wait_ms(const struct progress *p)
{
	if (!p->hb)
		return -1;
	int64_t left = p->next_ms - now_ms();
	return left > 0 ? (int)left : 0;
}

void progress_tick(struct progress *p)
{
	int64_t now = now_ms();
	if (!p->hb || now < p->next_ms)
		return;
	p->next_ms = now + PROGRESS_MS;
	uint64_t procs = __atomic_load_n(&p->hb->processes, __ATOMIC_RELAXED);
	uint64_t records = __atomic_load_n(&p->hb->records, __ATOMIC_RELAXED);
	uint64_t tables = __atomic_load_n(&p->hb->tables, __ATOMIC_RELAXED);
	char size[16];
	/* \r and erase to the end: the line replaces itself, and whatever
	 * the program wrote after it stays. */
	fprintf(stderr, "\r%s: %" PRId64 " s, %" PRIu64 " processes, %" PRIu64
		" records, %" PRIu64 " page tables (%s) now\033[K", p->who,
		(now - p->start_ms) / 1000, procs, records, tables,
		report_human(tables * MM_PAGE_SIZE, size, sizeof(size)));
	fflush(stderr);
	p->shown = true;
}

void progress_end(struct progress *p)
{
	if (p->shown) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
	}
	*p = (struct progress){ 0 };
}
