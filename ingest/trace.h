/* SPDX-License-Identifier: MIT */
/* Trace files (docs/wire-protocol.md): the records a daemon applied, in
 * order, for `ptshare replay`. */
#ifndef PTSHARE_TRACE_H
#define PTSHARE_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ingest.h"

#define TRACE_MAGIC "PTSHARE-TRACE\n"

struct trace_error {
	uint64_t offset;  /* where the trace stopped making sense */
	char what[128];
};

/*
 * Feeds every frame of f to the ingest.  0 when the whole trace was read;
 * -1 when it ends early, a frame is corrupt, or the replay needs more
 * memory than the trace's size allows (docs/wire-protocol.md, Replaying),
 * with where and why in err (what came before it was applied: the report
 * shows what was readable).
 * With torn_ok, a trace that ends in the middle of its last frame (the
 * daemon was killed while it wrote: `ptshare run` reads its trace then) is
 * read to there: 1, with where in err.
 */
int ingest_trace_replay(FILE *f, struct ingest *g, bool torn_ok,
			struct trace_error *err);

#endif
