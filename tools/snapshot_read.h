/* SPDX-License-Identifier: MIT */
/* The processes of a snapshot, read from /proc into one world per policy
 * (snapshot_read.c): ptshare snapshot reads them once, ptshare top at
 * every refresh. */
#ifndef PTSHARE_SNAPSHOT_READ_H
#define PTSHARE_SNAPSHOT_READ_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/ptr_map.h"
#include "procfs/image.h"
#include "report/report.h"

/* What ptshare top keeps from one view to the next: the last whole
 * reading of each process that rested then, by pid, to be taken again
 * while the process still rests (docs/procfs.md, *At rest*). */
struct snapshot_cache {
	struct ptr_map procs; /* pid -> its reading (snapshot_read.c) */
	uint32_t views;       /* snapshots read with it */
};
void snapshot_cache_free(struct snapshot_cache *c);

struct snapshot {
	struct mm_worlds ws;
	size_t at_rest;       /* processes read at rest (status alone) */
	struct report_proc *procs;
	size_t nprocs, cap_procs;
	struct report_skip *skips;
	size_t nskips, cap_skips;
	struct report_object *objects;
	size_t nobjects, cap_objects;
	struct procfs_fs_cache fs;
};

/* The worlds of policies (NULL: all) fed every process the caller may
 * read, or pid (not 0) and with tree its descendants; a process that
 * could not be read or modelled is a skip.  With a cache (else NULL), a
 * process asleep since the cache's last snapshot is taken from it.  0, or
 * a negative errno with why in err: -EINVAL (the policies), -ESRCH (no
 * process pid), -ENOMEM.  Free s with snapshot_free() either way. */
int snapshot_read(struct snapshot *s, const char *policies, int pid,
		  bool tree, struct snapshot_cache *cache, char *err,
		  size_t errlen);
/* The report of s (s outlives it), its processes grouped by by: 0, or
 * -ENOMEM. */
int snapshot_report(const struct snapshot *s, enum report_group_by by,
		    uint64_t min_mapping, struct report *out);
void snapshot_free(struct snapshot *s);

#endif
