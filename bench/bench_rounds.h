/* SPDX-License-Identifier: MIT */
/*
 * What the benchmarks share: the runs in rounds whose order rotates (no
 * variant always runs first, or always after the same one, so a machine
 * that warms up or slows down over the benchmark weighs on each alike),
 * the median over the rounds and their spread, the verdict of a goal line
 * against that spread, and the whole benchmark pinned to some CPUs.
 */
#ifndef PTSHARE_BENCH_ROUNDS_H
#define PTSHARE_BENCH_ROUNDS_H

#include <stdbool.h>

#define BENCH_MAX_ROUNDS 32

/* fn(variant, round, arg) for each of variants in each of rounds, round k
 * starting at variant k (modulo variants). */
void bench_rounds(int rounds, int variants,
		  void (*fn)(int variant, int round, void *arg), void *arg);

/* The median of v[0..n), n at most BENCH_MAX_ROUNDS. */
double bench_median(const double *v, int n);

/* How far the rounds v[0..n) stray from their median: half their range
 * over the median (0.05: +-5%).  A figure closer to its goal than this is
 * not known to be on either side of it. */
double bench_noise(const double *v, int n);

/* The verdict of a goal line: "goal met" or "goal NOT met" when value
 * and goal (at_least: a floor, else a ceiling) differ by more than noise
 * (relative to the goal), else "within noise (N%)".  A static string. */
const char *bench_verdict(double value, double goal, bool at_least,
			  double noise);

/* Pins us, and so everything we start, to the CPUs of list ("0" or
 * "0,1"): 0, or -1 when list is not one or the kernel refuses, with
 * "who: --cpus list: cannot pin" printed. */
int bench_pin(const char *who, const char *list);

#endif
