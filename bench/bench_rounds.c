/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_rounds.h"

void bench_rounds(int rounds, int variants,
		  void (*fn)(int variant, int round, void *arg), void *arg)
{
	for (int round = 0; round < rounds; round++)
		for (int k = 0; k < variants; k++)
			fn((k + round) % variants, round, arg);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double bench_median(const double *v, int n)
{
	double s[BENCH_MAX_ROUNDS];
	memcpy(s, v, (size_t)n * sizeof(*s));
	qsort(s, (size_t)n, sizeof(*s), cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

int bench_pin(const char *who, const char *list)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	for (const char *p = list; *p; p += *p == ',') {
		char *end;
		long cpu = strtol(p, &end, 10);
		if (end == p || cpu < 0 || cpu >= CPU_SETSIZE)
			goto bad;
		CPU_SET((int)cpu, &set);
		p = end;
	}
	if (!sched_setaffinity(0, sizeof(set), &set))
		return 0;
bad:
	fprintf(stderr, "%s: --cpus %s: cannot pin\n", who, list);
	return -1;
}
