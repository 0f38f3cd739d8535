/* SPDX-License-Identifier: MIT */
/* What run_subject does, as the tests that check its reports need it. */
#ifndef PTSHARE_TESTS_RUN_SUBJECT_H
#define PTSHARE_TESTS_RUN_SUBJECT_H

/*
 * forktree: 8 workers over 1 GiB of shared anonymous memory.  Its address
 * is pinned, since the tables it needs depend on it: 2 MiB-aligned, so the
 * mapping covers exactly 512 whole PTE-table spans; not 1 GiB-aligned, so
 * it covers no whole PMD-table span (it meets two, [8, 9) and [9, 10) GiB);
 * and below 512 GiB, where nothing else of the process lives (program,
 * heap, libraries and stack are near 128 TiB), so one PUD table serves it
 * alone.
 */
#define FORKTREE_ADDR 0x200200000UL /* 8 GiB + 2 MiB */
#define FORKTREE_BYTES (1UL << 30)
#define FORKTREE_WORKERS 8

#define SYSV_BYTES (64UL << 20)
#define EXEC_MAPS 1000 /* mappings mapped and unmapped before the exec */
#define THREADS 8

#endif
