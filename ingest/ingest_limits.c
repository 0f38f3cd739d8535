/* SPDX-License-Identifier: MIT */
/*
 * What one process's records may cost the daemon (docs/daemon.md, Hostile
 * clients).  A record is a claim: the model takes it as told, and the
 * process's /proc, read at its checkpoints, is the truth the model is
 * reconciled with.  So what a process's records make the model hold
 * beyond the truth is bounded by the work they ask for between two
 * readings of it, and a reading is owed once that is CLAIMS_MAX.  A
 * reading is also owed for what a process's records did wrong (refused,
 * malformed, lost), and done at once, but at most once every RESYNC_GAP of
 * its packets: sending packets cannot have /proc read for each.  The
 * ingest reads nothing itself: a reading owed is handed to the caller
 * (readings_owed.c), which makes it between two packets, never inside
 * another, and feeds it in.
 */
#include <sys/mman.h>

#include "ingest_internal.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#define MADV_POPULATE_WRITE 23
#endif

#define RESYNC_GAP 64         /* packets between two readings owed */
#define CLAIMS_MAX 4096       /* model work between two readings */
#define CLAIM_REMAP 16        /* an mremap may move tables: 16 records' worth */
#define POPULATE_MAX 16384    /* pages a record may populate (64 MiB) */
#define PAGES_PER_CLAIM 64    /* populated pages per unit of work */

void ingest_reading_owed(struct session *s)
{
	if (s->in_model && !s->in_checkpoint)
		s->reading_due = true;
}

void ingest_reading_done(struct session *s)
{
	s->reading_due = false;
	s->claims = 0;
	s->first_read_ns = 0;
}

/* The work a record asks of the model: a record, an mremap more, and a
 * populate by its pages (populate_allowed bounds them). */
static uint64_t work_of(const struct pts_hdr *h)
{
	uint64_t pages = 0;
	if (h->flags & PTS_F_FAILED)
		return 1;
	if (h->type == PTS_MREMAP)
		return CLAIM_REMAP;
	if (h->type == PTS_MMAP) {
		const struct pts_mmap *m = (const struct pts_mmap *)h;
		if (m->flags & (MAP_POPULATE | MAP_LOCKED))
			pages = m->len / MM_PAGE_SIZE;
	} else if (h->type == PTS_MADVISE) {
		const struct pts_range *m = (const struct pts_range *)h;
		if (m->arg == MADV_POPULATE_READ || m->arg == MADV_POPULATE_WRITE)
			pages = m->len / MM_PAGE_SIZE;
	}
	pages = pages < POPULATE_MAX ? pages : POPULATE_MAX;
	return 1 + pages / PAGES_PER_CLAIM;
}

void ingest_claims_add(struct session *s, const struct pts_hdr *h)
{
	s->claims += work_of(h);
	if (s->claims > CLAIMS_MAX)
		ingest_reading_owed(s);
}

void ingest_readings_tick(struct session *s)
{
	if (s->resync_wait)
		s->resync_wait--;
}

bool ingest_reading_may(struct session *s)
{
	if (!s->reading_due || s->resync_wait || !s->in_model)
		return false;
	s->resync_wait = RESYNC_GAP;
	return true;
}

bool ingest_populate_allowed(struct session *s, uint64_t pages)
{
	if (pages <= POPULATE_MAX)
		return true;
	ingest_reading_owed(s);
	return false;
}
