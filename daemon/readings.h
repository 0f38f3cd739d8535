/* SPDX-License-Identifier: MIT */
/*
 * The daemon's readings of /proc, inputs to the ingest (docs/architecture.md):
 * the ingest says which processes it owes a reading (ingest_reading_next),
 * and each is read here and fed in as checkpoint records, the records a
 * trace keeps and a replay feeds the same way.  Also what the ingest asks
 * of the live system (struct ingest_host): whether a process still runs,
 * whose child it is, what the files of a device are.
 */
#ifndef PTSHARED_READINGS_H
#define PTSHARED_READINGS_H

#include "ingest/ingest.h"
#include "procfs/image.h"

/* What keeps a process's traced calls from running while its /proc is
 * read (the loop does, through its record ring), so that the reading
 * shows what the records applied before it say.  hold: false when it
 * cannot (no ring: the reading is made as it comes); else let_go follows
 * the reading of /proc, before the models take it (the process may go
 * on, and a process waiting for this reading's ack gets it then), and
 * says whether no call ran meanwhile.  busy: after each reading (a long
 * batch keeps the loop from everything else: behind.h), or NULL. */
struct readings_gate {
	bool (*hold)(void *arg, int32_t pid, uint32_t *mark);
	bool (*let_go)(void *arg, int32_t pid, uint32_t mark);
	void (*busy)(void *arg);
	void *arg;
};

struct readings {
	struct procfs_fs_cache fs;  /* the mounts, per mount namespace */
	struct procfs_names *names; /* the objects' paths (NULL: maps text) */
	struct readings_gate gate;  /* none: every reading as it comes */
};

void readings_init(struct readings *rd);
/* The host the ingest asks, over /proc (rd must outlive the ingest). */
struct ingest_host readings_host(struct readings *rd);
/* Every reading the ingest owes, made and fed in, until it owes none. */
void readings_make(struct readings *rd, struct ingest *g);
void readings_free(struct readings *rd);

#endif
