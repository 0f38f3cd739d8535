/* SPDX-License-Identifier: MIT */
/* The one clock of ptshare: CLOCK_MONOTONIC, which no change of the
 * system's time moves, for deadlines, intervals and what things cost.
 * Inline, so that the shim, which links nothing of ours, reads it too
 * (clock_gettime is the vDSO's: no allocation, no stdio). */
#ifndef PTSHARE_LIB_CLOCK_H
#define PTSHARE_LIB_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Signed: deadlines are compared by difference. */
static inline int64_t now_ms(void)
{
	return (int64_t)(now_ns() / 1000000u);
}

#endif
