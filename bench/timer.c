/* SPDX-License-Identifier: MIT */
/*
 * bench/timer: what `ptshare run --interval 1` costs the daemon to read
 * processes that hold still, against the same processes waking up.
 *
 * The workload (this program again, --workload) forks PROCS children; each
 * writes every page of a heap of MIB MiB, then sleeps, or, in the baseline,
 * wakes every 100 ms to write one byte of it: a process that ran since
 * its last reading is read whole (maps, PAGEMAP_SCAN, status twice), as
 * every process was before readings at rest (docs/procfs.md, *At rest*);
 * one asleep since is read from its status alone.  For each, the CPU time
 * (user and system) ptshared used over SECONDS seconds of timer readings,
 * once every child is ready; then the ratio.  Rounds alternate the two.
 * The ptshare it runs should be a release build.
 *
 * usage: timer [--procs N] [--mib N] [--seconds S] [--rounds N]
 *   defaults: 20 processes of 64 MiB, 10 s, 3 rounds
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_rounds.h"

#ifndef PTSHARE_BIN
#error "PTSHARE_BIN must name the ptshare executable"
#endif

#define WAKE_NS 100000000L

static _Noreturn void die(const char *what)
{
	perror(what);
	exit(1);
}

/* A child: its heap written, then asleep until killed, or waking. */
static _Noreturn void child(size_t mib, bool wakes)
{
	size_t len = mib << 20;
	char *heap = mmap(NULL, len, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (heap == MAP_FAILED)
		_exit(1);
	for (size_t i = 0; i < len; i += 4096)
		heap[i] = 1;
	for (size_t i = 0;; i = (i + 4096) % len) {
		if (!wakes)
			pause();
		nanosleep(&(struct timespec){ 0, WAKE_NS }, NULL);
		heap[i]++;
	}
}

/* The workload: procs children, then (ready) a byte on stdout, and
 * the children killed at the end of stdin. */
static int workload(int procs, size_t mib, bool wakes)
{
	pid_t pid[procs];
	for (int i = 0; i < procs; i++) {
		if ((pid[i] = fork()) < 0)
			die("fork");
		if (!pid[i])
			child(mib, wakes);
	}
	/* Every heap written, at about 1 GiB a second. */
	sleep(1 + (unsigned)(mib * (size_t)procs / 1024));
	char c;
	if (write(1, "r", 1) != 1 || read(0, &c, 1) < 0)
		return 1;
	for (int i = 0; i < procs; i++)
		kill(pid[i], SIGKILL);
	while (wait(NULL) > 0)
		;
	return 0;
}

/* CPU seconds of the runner's child ptshared, or -1. */
static double daemon_cpu_s(pid_t runner)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	double s = -1, tick = (double)sysconf(_SC_CLK_TCK);
	while (d && (e = readdir(d))) {
		char path[300], buf[512], *rp;
		int ppid;
		unsigned long ut, st;
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		FILE *f = fopen(path, "r");
		if (f && fgets(buf, sizeof(buf), f) && strstr(buf, "(ptshared)") &&
		    (rp = strrchr(buf, ')')) &&
		    sscanf(rp + 1, " %*c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
			   &ppid, &ut, &st) == 3 && ppid == runner)
			s = (double)(ut + st) / tick;
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	return s;
}

/* One run: the daemon's CPU seconds over `seconds` of timer readings. */
static double run(const char *self, int procs, size_t mib, int seconds,
		  bool wakes)
{
	char n[24], m[24];
	int out[2], in[2];
	snprintf(n, sizeof(n), "%d", procs);
	snprintf(m, sizeof(m), "%zu", mib);
	if (pipe(out) || pipe(in))
		die("pipe");
	pid_t runner = fork();
	if (runner < 0)
		die("fork");
	if (!runner) {
		dup2(out[1], 1);
		dup2(in[0], 0);
		close(out[0]);
		close(out[1]);
		close(in[0]);
		close(in[1]);
		execl(PTSHARE_BIN, PTSHARE_BIN, "run", "--interval", "1",
		      "--no-record", "-o", "/dev/null", "--", self, "--workload",
		      n, m, wakes ? "wakes" : "sleeps", (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	close(in[0]);
	char c;
	if (read(out[0], &c, 1) != 1)
		die("the workload never got ready");
	double a = daemon_cpu_s(runner);
	sleep((unsigned)seconds);
	double b = daemon_cpu_s(runner);
	close(in[1]); /* the workload's end */
	int status;
	waitpid(runner, &status, 0);
	close(out[0]);
	if (a < 0 || b < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
		die("ptshare run failed");
	return b - a;
}

struct plan {
	const char *self;
	int procs, seconds;
	size_t mib;
	double cpu[2][BENCH_MAX_ROUNDS]; /* [waking][round] */
};

static void one_run(int wakes, int round, void *arg)
{
	struct plan *p = arg;
	double s = run(p->self, p->procs, p->mib, p->seconds, wakes);
	p->cpu[wakes][round] = s;
	printf("round %d  %-7s %6.0f ms\n", round + 1,
	       wakes ? "waking" : "asleep", s * 1e3);
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "--workload"))
		return workload(atoi(argv[2]), (size_t)atol(argv[3]),
				!strcmp(argv[4], "wakes"));
	int procs = 20, seconds = 10, rounds = 3;
	size_t mib = 64;
	static const struct option opts[] = {
		{ "procs", required_argument, NULL, 'p' },
		{ "mib", required_argument, NULL, 'm' },
		{ "seconds", required_argument, NULL, 's' },
		{ "rounds", required_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	for (int o; (o = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
		switch (o) {
		case 'p': procs = atoi(optarg); break;
		case 'm': mib = (size_t)atol(optarg); break;
		case 's': seconds = atoi(optarg); break;
		case 'r': rounds = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: timer [--procs N] [--mib N] "
					"[--seconds S] [--rounds N]\n");
			return 2;
		}
	}
	if (procs < 1 || procs > 1000 || !mib || seconds < 1 || rounds < 1 ||
	    rounds > BENCH_MAX_ROUNDS) {
		fprintf(stderr, "timer: bad arguments\n");
		return 2;
	}
	char self[4096];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len < 0)
		die("readlink");
	self[len] = '\0';
	struct plan p = { self, procs, seconds, mib, { { 0 } } };
	printf("%d processes of %zu MiB under ptshare run --interval 1, "
	       "ptshared's CPU over %d s:\n", procs, mib, seconds);
	bench_rounds(rounds, 2, one_run, &p);
	double ratio[BENCH_MAX_ROUNDS];
	for (int r = 0; r < rounds; r++)
		ratio[r] = p.cpu[1][r] > 0 ? p.cpu[0][r] / p.cpu[1][r] : 0;
	printf("medians of %d rounds: asleep %.0f ms, waking %.0f ms "
	       "(each read whole); ratio %.2f\n", rounds,
	       bench_median(p.cpu[0], rounds) * 1e3,
	       bench_median(p.cpu[1], rounds) * 1e3, bench_median(ratio, rounds));
	return 0;
}
