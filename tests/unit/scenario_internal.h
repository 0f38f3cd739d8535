/* SPDX-License-Identifier: MIT */
/*
 * What scenario.c (worlds, operations, snapshots) shares with
 * scenario_expect.c (the expectations).
 */
#ifndef PTSHARE_SCENARIO_INTERNAL_H
#define PTSHARE_SCENARIO_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "scenario.h"

#define SC_MAX_PROCS 16
#define SC_MAX_VMAS 64

/* The model's findings a scenario checks, by index. */
#define SC_NFINDINGS 4
const char *sc_finding_name(unsigned k);
void sc_findings_of(struct mm_world *w, uint64_t out[SC_NFINDINGS]);

/* Up to SC_MAX_VMAS VMAs, collected by sc_collect_vma (mm_proc_vmas). */
struct vma_list {
	size_t n;
	struct mm_vma_info *v;
};
int sc_collect_vma(const struct mm_vma_info *vma, void *arg);

/* The name of world i's policy, for messages. */
const char *sc_world_name(const struct sc *s, unsigned i);

#endif
