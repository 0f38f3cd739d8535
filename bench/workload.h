/* SPDX-License-Identifier: MIT */
/*
 * The population bench/snapshot reads: a machine's worth of processes, so
 * that its figures do not depend on what the machine happens to run.
 *   - small: forked trees of a small program with a few MiB of heap and
 *     stack written, as shells and idle daemons;
 *   - groups: pre-forked servers, a leader and its workers, each process
 *     with every page of one MAP_SHARED|MAP_ANONYMOUS pool mapped (a
 *     database's buffer pool) and a little private memory;
 *   - big: processes with a large private anonymous heap, all written.
 */
#ifndef PTSHARE_BENCH_WORKLOAD_H
#define PTSHARE_BENCH_WORKLOAD_H

#include <stdint.h>
#include <stdio.h>

#include "population.h"

struct workload {
	unsigned small, trees;        /* processes, in this many trees */
	unsigned groups, group_size;  /* group_size counts the leader */
	unsigned big;
	unsigned long mib;            /* each pool, each big heap */
};

/* 300 processes: 264 small in 8 trees, 4 groups of 8, 4 big; 1 GiB each. */
#define WORKLOAD_DEFAULT { 264, 8, 4, 8, 4, 1024 }
#define WORKLOAD_GROUP_MAX 64

/* -ENOMEM when MemAvailable cannot hold it with a margin; else 0.  Both
 * figures in MiB. */
int workload_check_memory(const struct workload *w, unsigned long *need,
			  unsigned long *available);
/* Starts every process; the caller then waits with population_wait. */
int workload_start(struct population *p, const struct workload *w);
void workload_describe(const struct workload *w, FILE *f);
/* Group g's pids once ready, its leader first; how many. */
size_t workload_group_pids(const struct population *p, unsigned g,
			   int32_t *out, size_t max);

#endif
