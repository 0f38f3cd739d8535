/* SPDX-License-Identifier: MIT */
/*
 * Processes for the benchmarks to read from /proc.  Each member is forked,
 * runs a setup function (which may fork members of its own, so a population
 * can be a tree), reports, and then sleeps until it is killed: the benchmark
 * times readings of processes that hold still, as idle daemons do.
 *
 * Nothing outlives the benchmark: every member dies with its parent
 * (PR_SET_PDEATHSIG), even when the benchmark itself is killed, and
 * population_stop kills the members by pid and reaps them all (the caller
 * becomes a child subreaper, so orphaned members come back to it).
 */
#ifndef PTSHARE_BENCH_POPULATION_H
#define PTSHARE_BENCH_POPULATION_H

#include <stddef.h>
#include <sys/types.h>

struct population_member {
	pid_t pid, ppid;
	int tag; /* the caller's, from population_start */
};

struct population {
	struct population_member *members; /* in the order they got ready */
	size_t n, cap;
	int ready_fd[2]; /* members report on it while they start */
	int started;     /* members this process started */
};

/* Zeroes p and opens its report pipe; 0 or -errno. */
int population_init(struct population *p);
/*
 * Forks a member that runs setup(p, arg) (arg is the caller's memory, which
 * the child sees as it was at the fork) and then sleeps.  Called by the
 * benchmark or, inside a setup function, by a member.  Returns 0 or -errno.
 */
int population_start(struct population *p,
		     int (*setup)(struct population *p, void *arg), void *arg,
		     int tag);
/*
 * The benchmark waits until every member started so far, and every member
 * those started, is ready; then nothing more can be started.  Returns 0, or
 * the first setup's error (-errno), or -ECHILD when a member died first.
 */
int population_wait(struct population *p);
/* Kills every member and reaps them; may be called again, or after a
 * failed population_wait. */
void population_stop(struct population *p);

#endif
