/* SPDX-License-Identifier: MIT */
/* A reading of a process's /proc as the checkpoint records the daemon
 * makes of it (docs/wire-protocol.md), for the tests that feed an ingest
 * or write a trace by hand. */
#ifndef PTSHARE_TESTS_CK_READING_H
#define PTSHARE_TESTS_CK_READING_H

#include <stddef.h>
#include <stdint.h>

#include "ptshare/wire.h"

/* Where each record goes: pid is its subject, len its size. */
typedef void ck_emit_fn(void *arg, int32_t pid, const void *rec, size_t len);

/* A timer's reading of pid: CK_BEGIN, the nv mappings (at most one
 * record's worth), the nr populated runs (as many), CK_END with VmPTE
 * vmpte_kb, stable. */
void ck_reading(int32_t pid, const struct pts_ck_vma *v, size_t nv,
		const struct pts_ck_run *runs, size_t nr, int64_t vmpte_kb,
		ck_emit_fn *emit, void *arg);

#endif
