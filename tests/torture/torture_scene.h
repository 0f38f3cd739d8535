/* SPDX-License-Identifier: MIT */
/*
 * What torture_subject.c's scenarios share with torture_daemon_scenes.c's:
 * checksums of patterned memory, children that sum and exit with it, and
 * the path to run the subject again.
 */
#ifndef PTSHARE_TESTS_TORTURE_SCENE_H
#define PTSHARE_TESTS_TORTURE_SCENE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PAGE 4096UL
#define MIB (1UL << 20)

extern char **environ;

/* argv[0]: the subject, to exec or spawn again. */
extern const char *self;

/* FNV-1a over len bytes, continuing from h (FNV_START to begin). */
#define FNV_START 0xcbf29ce484222325ULL
uint64_t fnv(uint64_t h, const void *p, size_t len);
/* Memory filled with the pattern of seed, and the checksum of what reads
 * back. */
uint64_t fill_sum(unsigned char *p, size_t len, uint64_t seed);
/* A mapping of len filled and summed, then unmapped. */
uint64_t scratch_sum(size_t len, uint64_t seed);
/* A child that fills and sums a MiB of its own, and exits with a status
 * made of the sum: its parent tells it went right. */
pid_t fork_summing_child(uint64_t seed);
/* "exit N" or "signal N", for the output. */
const char *status_text(int status);

/* torture_daemon_scenes.c */
int mix(void);
int late(void);
int killgroup(void);
int stalled(void);

#endif
