/* SPDX-License-Identifier: MIT */
/*
 * bench/snapshot: what `ptshare snapshot` costs per process and per GiB.
 * It starts its own population, so the figures do not depend on what the
 * machine happens to run (bench/workload.c): 300 processes, most of them
 * small, plus pre-forked groups over a shared pool and a few big private
 * heaps.  It then times the real binary (`--json /dev/null`) over the whole
 * machine and over one group (`--pid P --tree`), median of 5, against a
 * floor measured in the same run: per process, what any snapshot must read
 * (status, maps, one PAGEMAP_SCAN of the address space) through the procfs
 * library, with nothing modelled.
 * Goal (issue): the whole machine under 1 s for 300 processes on 2 cores.
 *
 * usage: snapshot [--mib M] [--hold]
 *   --mib M   size of each shared pool and private heap (default 1024)
 *   --hold    after the figures, keep the population until stdin ends, to
 *             profile ptshare by hand
 */
#define _GNU_SOURCE /* wait4 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "bench_rounds.h"
#include "ptshare/procfs.h"
#include "workload.h"

#define REPEAT 5
#define GIB (double)(1ULL << 30)

static struct population *live; /* killed at exit, also by die() */

static void stop_live(void)
{
	if (live)
		population_stop(live);
}

static _Noreturn void die(const char *what, int err)
{
	fprintf(stderr, "bench/snapshot: %s: %s\n", what, strerror(-err));
	exit(1);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double median(const double *t)
{
	return bench_median(t, REPEAT);
}

/* What the floor read, for the per-process and per-GiB figures. */
struct extent {
	size_t procs;
	uint64_t mapped, populated; /* bytes, summed over processes */
};

/* All of it, and the part in processes this benchmark did not start: the
 * machine's own, which it cannot control (one under ASan maps ~20 TiB). */
struct extents {
	struct extent all, others;
};

/* The population and the benchmark, sorted: what is not theirs is other. */
static int32_t *ours;
static size_t nours;

static int cmp_pid(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return (x > y) - (x < y);
}

static void set_ours(const struct population *pop)
{
	ours = malloc((pop->n + 1) * sizeof(*ours));
	if (!ours)
		die("pids", -ENOMEM);
	for (size_t i = 0; i < pop->n; i++)
		ours[i] = pop->members[i].pid;
	ours[pop->n] = getpid();
	nours = pop->n + 1;
	qsort(ours, nours, sizeof(*ours), cmp_pid);
}

static void add(struct extent *e, uint64_t mapped, uint64_t populated)
{
	e->procs++;
	e->mapped += mapped;
	e->populated += populated;
}

struct floor_buf {
	struct procfs_maps maps;
	struct procfs_runs runs;
};

/* Status, maps and one scan without FILE: what procfs_image_read
 * cannot skip. */
static void floor_one(int32_t pid, struct floor_buf *b, struct extents *e)
{
	struct procfs_status st;
	if (procfs_status_read(pid, &st) || !st.has_mm ||
	    procfs_maps_read(pid, NULL, 0, &b->maps))
		return;
	int fd = procfs_pagemap_open(pid);
	if (fd < 0)
		return;
	int r = procfs_scan(fd, 0, MM_TASK_SIZE, PROCFS_SCAN_NO_FILE, &b->runs);
	close(fd);
	if (r)
		return;
	uint64_t mapped = 0, populated = 0;
	for (size_t i = 0; i < b->maps.n; i++)
		if (b->maps.vmas[i].end <= MM_TASK_SIZE) /* not [vsyscall] */
			mapped += b->maps.vmas[i].end - b->maps.vmas[i].start;
	for (size_t i = 0; i < b->runs.n; i++)
		populated += b->runs.runs[i].end - b->runs.runs[i].start;
	add(&e->all, mapped, populated);
	if (!bsearch(&pid, ours, nours, sizeof(*ours), cmp_pid))
		add(&e->others, mapped, populated);
}

/* Seconds for the floor over pids, or over all of /proc when pids is NULL
 * (listing it is part of the floor, as it is part of a snapshot). */
static double time_floor(const int32_t *pids, size_t n, struct extents *e)
{
	struct floor_buf b = { 0 };
	struct procfs_pids all = { 0 };
	*e = (struct extents){ 0 };
	double t0 = now();
	if (!pids) {
		int r = procfs_list_pids(&all);
		if (r < 0)
			die("listing /proc", r);
		pids = all.pids;
		n = all.n;
	}
	for (size_t i = 0; i < n; i++)
		floor_one(pids[i], &b, e);
	double t = now() - t0;
	procfs_pids_free(&all);
	procfs_maps_free(&b.maps);
	procfs_runs_free(&b.runs);
	return t;
}

struct run {
	double wall, user, sys, maxrss_mib;
};

/* One run of the real binary, its report thrown away. */
static void run_ptshare(char *const argv[], struct run *out)
{
	fflush(stdout);
	double t0 = now();
	pid_t pid = fork();
	if (pid < 0)
		die("fork", -errno);
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || fd < 0 || dup2(fd, 1) < 0)
			_exit(127);
		execv(PTSHARE_BIN, argv);
		_exit(127);
	}
	int status;
	struct rusage ru;
	if (wait4(pid, &status, 0, &ru) != pid)
		die("wait4", -errno);
	out->wall = now() - t0;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "bench/snapshot: %s %s: %s %d\n", PTSHARE_BIN,
			argv[1], WIFEXITED(status) ? "exit status" : "signal",
			WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		exit(1); /* stop_live kills the population */
	}
	out->user = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6;
	out->sys = ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
	out->maxrss_mib = ru.ru_maxrss / 1024.0;
}

/* Medians of REPEAT runs of ptshare and of the floor, interleaved. */
struct figures {
	struct run ptshare;
	double wall_noise; /* of ptshare's wall times (bench_noise) */
	double floor;
	struct extents extent;
};

static void measure(char *const argv[], const int32_t *pids, size_t n,
		    struct figures *f)
{
	double wall[REPEAT], user[REPEAT], sys[REPEAT], rss[REPEAT], fl[REPEAT];
	for (int i = 0; i < REPEAT; i++) {
		struct run r;
		fl[i] = time_floor(pids, n, &f->extent);
		run_ptshare(argv, &r);
		wall[i] = r.wall;
		user[i] = r.user;
		sys[i] = r.sys;
		rss[i] = r.maxrss_mib;
	}
	f->ptshare = (struct run){ median(wall), median(user), median(sys),
				   median(rss) };
	f->wall_noise = bench_noise(wall, REPEAT);
	f->floor = median(fl);
}

static void report(const char *what, const struct figures *f)
{
	const struct run *p = &f->ptshare;
	const struct extent *e = &f->extent.all, *o = &f->extent.others;
	double mapped = e->mapped / GIB, populated = e->populated / GIB;
	printf("%s (median of %d):\n"
	       "  ptshare snapshot   %8.1f ms  (user %.1f ms, sys %.1f ms, "
	       "max RSS %.0f MiB)\n"
	       "  floor              %8.1f ms  (status, maps, one PAGEMAP_SCAN "
	       "per process)\n"
	       "  ratio to the floor %8.2fx\n"
	       "  per process        %8.3f ms  (floor %.3f ms; %zu processes)\n"
	       "  per GiB mapped     %8.3f ms  (floor %.3f ms; %.1f GiB mapped)\n"
	       "  per GiB populated  %8.3f ms  (floor %.3f ms; %.1f GiB "
	       "populated)\n",
	       what, REPEAT, p->wall * 1e3, p->user * 1e3, p->sys * 1e3,
	       p->maxrss_mib, f->floor * 1e3, p->wall / f->floor,
	       p->wall * 1e3 / e->procs, f->floor * 1e3 / e->procs, e->procs,
	       p->wall * 1e3 / mapped, f->floor * 1e3 / mapped, mapped,
	       p->wall * 1e3 / populated, f->floor * 1e3 / populated, populated);
	if (o->procs)
		printf("  of which not ours  %zu processes, %.1f GiB mapped, %.1f "
		       "GiB populated\n", o->procs, o->mapped / GIB,
		       o->populated / GIB);
}

/* With --hold: until stdin ends (or a line), so ptshare can be profiled. */
static void hold(const struct population *pop, const char *leader)
{
	printf("holding %zu processes (group leader %s); end stdin to stop\n",
	       pop->n, leader);
	fflush(stdout);
	int c;
	while ((c = getchar()) != EOF && c != '\n')
		;
}

int main(int argc, char **argv)
{
	struct workload w = WORKLOAD_DEFAULT;
	bool want_hold = false;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--hold"))
			want_hold = true;
		else if (!strcmp(argv[i], "--mib") && i + 1 < argc)
			w.mib = strtoul(argv[++i], NULL, 0);
		else {
			fprintf(stderr, "usage: snapshot [--mib M] [--hold]\n");
			return 2;
		}
	}

	static struct population pop;
	double t0 = now();
	unsigned long need, avail;
	if (workload_check_memory(&w, &need, &avail)) {
		fprintf(stderr, "bench/snapshot: the population needs about %lu "
			"MiB and %lu are available; try a smaller --mib\n", need,
			avail);
		return 1;
	}
	fflush(stdout);
	int r = population_init(&pop);
	live = &pop;
	atexit(stop_live);
	if (r || (r = workload_start(&pop, &w)) || (r = population_wait(&pop)))
		die("starting the population", r);
	printf("population: %zu processes ready in %.1f s: ", pop.n, now() - t0);
	workload_describe(&w, stdout);
	set_ours(&pop);

	struct figures all, group;
	char *all_argv[] = { "ptshare", "snapshot", "--json", "/dev/null", NULL };
	measure(all_argv, NULL, 0, &all);
	report("whole machine", &all);

	int32_t gpids[WORKLOAD_GROUP_MAX];
	size_t gn = workload_group_pids(&pop, 0, gpids, WORKLOAD_GROUP_MAX);
	char leader[16];
	snprintf(leader, sizeof(leader), "%d", (int)gpids[0]);
	char *group_argv[] = { "ptshare", "snapshot", "--pid", leader, "--tree",
			       "--json", "/dev/null", NULL };
	measure(group_argv, gpids, gn, &group);
	char what[64];
	snprintf(what, sizeof(what), "one group (--pid %s --tree)", leader);
	report(what, &group);

	/* The goal is per process: 1 s for 300. */
	double goal = all.extent.all.procs / 300.0;
	printf("whole machine: %zu processes in %.0f ms +-%.1f%%; goal < %.0f ms "
	       "(1 s for 300): %s\n", all.extent.all.procs,
	       all.ptshare.wall * 1e3, 100 * all.wall_noise, goal * 1e3,
	       bench_verdict(all.ptshare.wall, goal, false, all.wall_noise));
	if (want_hold)
		hold(&pop, leader);
	free(ours);
	return 0; /* stop_live kills the population */
}
