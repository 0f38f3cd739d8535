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

double bench_noise(const double *v, int n)
{
	double lo = v[0], hi = v[0], m = bench_median(v, n);
	for (int i = 1; i < n; i++) {
		lo = v[i] < lo ? v[i] : lo;
		hi = v[i] > hi ? v[i] : hi;
	}
	return m ? (hi - lo) / 2 / m : 0;
}

const char *bench_verdict(double value, double goal, bool at_least,
			  double noise)
{
	static char buf[64];
	double off = (value - goal) / goal;
	if ((off < 0 ? -off : off) <= noise)
		snprintf(buf, sizeof(buf), "within noise (%.1f%%)", 100 * noise);
	else
		snprintf(buf, sizeof(buf), "%s", (off > 0) == at_least
			 ? "goal met" : "goal NOT met");
	return buf;
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
