/* SPDX-License-Identifier: MIT */
/*
 * What reading /proc costs on this machine: maps against smaps for every
 * process, VmPTE, a whole reading (maps as text, and through PROCMAP_QUERY
 * as the daemon reads them), a reading at rest (the process asleep since
 * the one before: status alone), and PAGEMAP_SCAN against 8-byte pagemap entries on a
 * child with 1 GiB populated.  The figures in docs/procfs.md come from it
 * (built without sanitizers).  Baselines: maps for smaps, and for the
 * child's readings its maps read in the same run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>

#include "population.h"
#include "procfs/image.h"
#include "ptshare/procfs.h"

#define REPEAT 9

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median time of REPEAT calls of one reading, or a negative errno. */
struct reading {
	int (*fn)(const struct reading *r);
	int pid;
	int fd;
	unsigned flags;
	uint64_t start, end;
	struct procfs_maps *maps;
	struct procfs_runs *runs;
	const struct procfs_fs_table *fs; /* the image's: its mounts */
	struct procfs_names *names;       /* the image's maps: NULL, text */
	uint64_t rest;                    /* the image's mark to compare with */
};

static double median_us(const struct reading *r, int *err)
{
	double t[REPEAT];

	for (int i = 0; i < REPEAT; i++) {
		double t0 = now_us();
		*err = r->fn(r);
		t[i] = now_us() - t0;
		if (*err)
			return 0;
	}
	qsort(t, REPEAT, sizeof(t[0]), cmp_double);
	return t[REPEAT / 2];
}

static int read_maps(const struct reading *r)
{
	return procfs_maps_read(r->pid, NULL, r->flags, r->maps);
}

static int read_vmpte(const struct reading *r)
{
	uint64_t kb;

	return procfs_vmpte_kb(r->pid, &kb);
}

/* What the daemon reads of a process at a checkpoint: its maps as text,
 * or through PROCMAP_QUERY with the paths of the objects met kept
 * (r->names). */
static int read_image(const struct reading *r)
{
	struct procfs_image img = { .names = r->names, .rest = r->rest };
	int err = procfs_image_read(r->pid, r->fs, &img);

	procfs_image_free(&img);
	return err;
}

/* The mark a whole reading of the process gives (0: it does not rest). */
static uint64_t rest_mark(const struct reading *r)
{
	struct procfs_image img = { 0 };
	uint64_t mark = procfs_image_read(r->pid, r->fs, &img) ? 0 : img.rest;

	procfs_image_free(&img);
	return mark;
}

static int scan(const struct reading *r)
{
	return procfs_scan(r->fd, r->start, r->end, r->flags, r->runs);
}

static void all_processes(void)
{
	struct procfs_pids pids = { 0 };
	struct procfs_maps m = { 0 };
	double sum_maps = 0, sum_smaps = 0, sum_vmpte = 0, sum_image = 0;
	double sum_query = 0, sum_rest = 0;
	int n = 0, nrest = 0, err;
	struct procfs_names *names = procfs_names_new();

	if (!names || procfs_list_pids(&pids) < 0) {
		procfs_names_free(names);
		return;
	}
	printf("%8s %6s %10s %10s %10s %6s %10s %10s %10s\n", "pid", "vmas",
	       "maps_us", "smaps_us", "vmpte_us", "ratio", "image_us",
	       "query_us", "rest_us");
	for (size_t i = 0; i < pids.n; i++) {
		struct reading r = { read_maps, pids.pids[i], -1, 0, 0, 0, &m, NULL, NULL, NULL, 0 };
		double tm = median_us(&r, &err);
		size_t vmas = m.n;
		if (err || !vmas)
			continue;
		r.flags = PROCFS_MAPS_SMAPS;
		double ts = median_us(&r, &err);
		if (err)
			continue;
		r.fn = read_vmpte;
		double tv = median_us(&r, &err);
		struct procfs_fs_table fs = { 0 };
		if (procfs_fs_table_read(pids.pids[i], &fs) < 0)
			continue;
		r.fs = &fs;
		r.fn = read_image;
		double ti = median_us(&r, &err);
		r.names = names;
		double tq = err ? 0 : median_us(&r, &err);
		r.names = NULL;
		double tr = 0;
		if (!err && (r.rest = rest_mark(&r)))
			tr = median_us(&r, &err);
		procfs_fs_table_free(&fs);
		if (err)
			continue;
		printf("%8d %6zu %10.1f %10.1f %10.1f %6.1f %10.1f %10.1f ",
		       pids.pids[i], vmas, tm, ts, tv, ts / tm, ti, tq);
		if (r.rest)
			printf("%10.1f\n", tr);
		else
			printf("%10s\n", "-");
		sum_maps += tm;
		sum_smaps += ts;
		sum_vmpte += tv;
		sum_image += ti;
		sum_query += tq;
		sum_rest += tr;
		nrest += r.rest != 0;
		n++;
	}
	printf("%d processes: maps %.0f us, smaps %.0f us (x%.1f), VmPTE %.1f us "
	       "each; a whole reading (procfs_image_read) %.1f us each with "
	       "maps as text, %.1f through PROCMAP_QUERY (query_us); "
	       "%d at rest, read again at rest %.1f us each (rest_us)\n",
	       n, sum_maps, sum_smaps, sum_smaps / sum_maps, sum_vmpte / n,
	       sum_image / n, sum_query / n, nrest, nrest ? sum_rest / nrest : 0);
	procfs_maps_free(&m);
	procfs_pids_free(&pids);
	procfs_names_free(names);
}

#define BIG_BASE 0x300000000000UL
#define BIG_SIZE (1UL << 30)

/* A population of one child, set up by setup; its pid, or 0. */
static pid_t start_child(struct population *pop,
			 int (*setup)(struct population *p, void *arg))
{
	if (population_init(pop) || population_start(pop, setup, NULL, 0) ||
	    population_wait(pop) || pop->n != 1) {
		population_stop(pop);
		return 0;
	}
	return pop->members[0].pid;
}

static int populate_big(struct population *pop, void *arg)
{
	void *p = mmap((void *)BIG_BASE, BIG_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	if (p == MAP_FAILED)
		return -errno;
	/* Small pages: the PTE tables exist, as without THP. */
	if (madvise(p, BIG_SIZE, MADV_NOHUGEPAGE) ||
	    madvise(p, BIG_SIZE, MADV_POPULATE_WRITE))
		return -errno;
	return 0;
}

static void big_child(void)
{
	struct population pop;
	struct procfs_maps m = { 0 };
	struct procfs_runs runs = { 0 };
	int err;
	pid_t pid = start_child(&pop, populate_big);

	if (!pid) {
		printf("no child with 1 GiB\n");
		return;
	}
	int fd = procfs_pagemap_open(pid);
	struct reading r = { read_maps, pid, fd, 0, 0, 0, &m, &runs, NULL, NULL, 0 };
	double maps = median_us(&r, &err);
	printf("child with 1 GiB populated in 4 KiB pages (median of %d; "
	       "ratio to its maps):\n", REPEAT);
	static const struct {
		const char *what;
		unsigned flags;
		uint64_t start, end;
	} scans[] = {
		{ "PAGEMAP_SCAN of the 1 GiB", 0, BIG_BASE, BIG_BASE + BIG_SIZE },
		{ "  the same, PROCFS_SCAN_NO_FILE", PROCFS_SCAN_NO_FILE, BIG_BASE,
		  BIG_BASE + BIG_SIZE },
		{ "pagemap entries of the 1 GiB", PROCFS_SCAN_PAGEMAP_ENTRIES, BIG_BASE,
		  BIG_BASE + BIG_SIZE },
		{ "PAGEMAP_SCAN of 64 GiB empty", 0, 0x100000000000UL,
		  0x100000000000UL + (64UL << 30) },
		{ "PAGEMAP_SCAN of all 128 TiB", 0, MM_PAGE_SIZE, MM_TASK_SIZE },
		{ "  the same, PROCFS_SCAN_NO_FILE", PROCFS_SCAN_NO_FILE, MM_PAGE_SIZE,
		  MM_TASK_SIZE },
	};
	r.fn = scan;
	for (size_t i = 0; i < sizeof(scans) / sizeof(scans[0]); i++) {
		r.flags = scans[i].flags;
		r.start = scans[i].start;
		r.end = scans[i].end;
		double us = median_us(&r, &err);
		printf("  %-34s %10.1f us x%8.1f (%zu runs)\n", scans[i].what, us,
		       us / maps, runs.n);
	}
	printf("  %-34s %10.1f us x%8.1f\n", "maps", maps, 1.0);
	r.fn = read_maps;
	r.flags = PROCFS_MAPS_SMAPS;
	double smaps = median_us(&r, &err);
	printf("  %-34s %10.1f us x%8.1f\n", "smaps", smaps, smaps / maps);
	r.fn = read_vmpte;
	double vmpte = median_us(&r, &err);
	printf("  %-34s %10.1f us x%8.1f\n", "VmPTE", vmpte, vmpte / maps);
	close(fd);
	procfs_runs_free(&runs);
	procfs_maps_free(&m);
	population_stop(&pop);
}

#define MANY_PAGES 60000UL

/* One mapping per page: alternate protections keep them apart. */
static int map_many(struct population *pop, void *arg)
{
	char *p = mmap((void *)BIG_BASE, MANY_PAGES * MM_PAGE_SIZE, PROT_READ,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	if (p == MAP_FAILED)
		return -errno;
	for (unsigned long i = 1; i < MANY_PAGES; i += 2)
		if (mprotect(p + i * MM_PAGE_SIZE, MM_PAGE_SIZE, PROT_NONE))
			return -errno;
	return 0;
}

static void many_child(void)
{
	struct population pop;
	struct procfs_maps m = { 0 };
	int err;
	pid_t pid = start_child(&pop, map_many);

	if (!pid) {
		printf("no child with %lu mappings\n", MANY_PAGES);
		return;
	}
	struct reading r = { read_maps, pid, -1, 0, 0, 0, &m, NULL, NULL, NULL, 0 };
	double maps = median_us(&r, &err);
	printf("child with %zu mappings: maps %.0f us (%zu bytes)", m.n, maps,
	       m.text.len);
	r.flags = PROCFS_MAPS_SMAPS;
	double smaps = median_us(&r, &err);
	printf(", smaps %.0f us (%zu bytes), ratio x%.1f\n", smaps, m.text.len,
	       smaps / maps);
	procfs_maps_free(&m);
	population_stop(&pop);
}

int main(void)
{
	all_processes();
	big_child();
	many_child();
	return 0;
}
