/* SPDX-License-Identifier: MIT */
/* The workload's layout, shared by snap_subject.c and the tests. */
#ifndef PTSHARE_TESTS_SNAP_PROTO_H
#define PTSHARE_TESTS_SNAP_PROTO_H

#define SNAP_KiB (1ULL << 10)
#define SNAP_MiB (1ULL << 20)
#define SNAP_GiB (1ULL << 30)

/* A 512 GiB PGD slot of its own (one PUD page), far below the mmap area
 * and away from kc_subject's 0x200000000000. */
#define SLOT_BASE 0x300000000000ULL
#define SLOT_SIZE (512 * SNAP_GiB)

/* Each mapping in a 1 GiB span (a PMD page) of its own. */
#define A_OFF (0 * SNAP_GiB)                 /* MAP_SHARED|MAP_ANONYMOUS */
#define A_LEN (64 * SNAP_MiB)
#define B_OFF (1 * SNAP_GiB)                 /* SysV segment */
#define B_LEN (8 * SNAP_MiB)
#define C_OFF (2 * SNAP_GiB)                 /* memfd, MAP_SHARED */
#define C_LEN (16 * SNAP_MiB)
#define D_OFF (3 * SNAP_GiB + 4 * SNAP_KiB)  /* file, PROT_READ MAP_PRIVATE */
#define D_LEN (32 * SNAP_MiB)
#define E_OFF (4 * SNAP_GiB)                 /* private anonymous */
#define E_LEN (8 * SNAP_MiB)

#define C_MEMFD_NAME "ptshare-snap"
#define WORKERS 3

#endif
