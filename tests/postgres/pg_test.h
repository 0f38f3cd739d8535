/* SPDX-License-Identifier: MIT */
/* What the PostgreSQL tests share: their load, and main's check that the
 * machine can run them. */
#ifndef PTSHARE_TESTS_PG_TEST_H
#define PTSHARE_TESTS_PG_TEST_H

#include <stdio.h>

#include "pg_cluster.h"
#include "skip.h"

/* pgbench -i -s PG_SCALE, then pgbench -S -c PG_CLIENTS -T PG_SECONDS,
 * waited for at most PG_PGBENCH_S seconds. */
#define PG_CLIENTS 8
#define PG_SCALE 10
#define PG_SECONDS 15
#define PG_PGBENCH_S 300

/*
 * -1 when c's prerequisites are there; else main's exit status, with why
 * said: a skip, or under CI (which installs PostgreSQL: scripts/test.sh) a
 * failure.
 */
static inline int pg_test_unrunnable(struct pg_cluster *c)
{
	char why[512];
	if (!pg_cluster_find(c, why, sizeof(why)))
		return -1;
	printf("%s: %s\n", test_under_ci() ? "failed" : "skipped", why);
	return test_under_ci() ? 1 : TEST_SKIPPED;
}

#endif
