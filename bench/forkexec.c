/* SPDX-License-Identifier: MIT */
/*
 * bench/forkexec: what `ptshare run` costs programs that fork and exec,
 * beside what other tools that follow them cost.  Three workloads:
 *
 *   loop  a shell loop of 200 fork+exec of /bin/true
 *   make  `make -j2` of a small bundled C project (bench/forkexec_project:
 *         20 files, each its own cc), built into a temporary directory,
 *         `make clean` (not timed) before each run
 *   pool  the start-up of a Python multiprocessing.Pool(8): the pool made,
 *         a trivial function mapped over 8 items, the pool closed and joined
 *
 * each run, in rounds whose order rotates, under:
 *
 *   native     nothing
 *   ptshare    `ptshare run --no-record -o FILE --` (this build's ptshare;
 *              PTSHARE_OPTIONS in our environment reaches its shim:
 *              docs/shim.md)
 *   shim only  the build's shim preloaded (LD_PRELOAD) with no daemon: it
 *              does nothing then (docs/shim.md), so this is what loading
 *              it and its libraries into every image costs, the floor of
 *              ptshare run's figure
 *   heaptrack  `heaptrack -o FILE`: a yardstick that does NOT follow forks
 *              (it traces the first process only)
 *   strace     `strace -f -e trace=%memory,%process -o /dev/null`: a
 *              yardstick that does
 *
 * Each run is timed from our fork to its end (the tool's start and its
 * report included), and is the fastest of --repeat runs back to back: on
 * a machine others load, the one they disturbed least; its CPU time (user
 * and system, of every process it started and waited for, ptshared
 * included) is the least of the repeats' too, a figure others' load moves
 * less.  Prints each run, then per workload the medians of the wall times,
 * the CPU times and of their ratios to the same round's native run, with
 * ptshare's wall time against its goal (<= 1.25x native) beyond the
 * spread of the native runs.  A yardstick not installed is left out, said
 * so.  The machine's load average is printed at the start and the end: figures
 * from a loaded machine are ratios more than times.  The ptshare it runs
 * should be a release build.
 *
 * usage: forkexec [--rounds N] [--repeat N] [--workloads LIST]
 *                 [--python PATH] [--cpus LIST]
 *   --repeat N        runs of a variant in a round, the fastest kept
 *   --workloads LIST  some of loop,make,pool (default: all three)
 *   --python PATH     the Python of the pool workload (default
 *                     /usr/bin/python3: a pyenv shim would add processes)
 *   --cpus LIST       pin the whole run to these CPUs
 *   defaults: 5 rounds, 3 repeats
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_rounds.h"
#include "lib/clock.h"

#ifndef PTSHARE_BIN
#error "PTSHARE_BIN must name the ptshare executable"
#endif
#ifndef SHIM_PATH
#error "SHIM_PATH must name libptshare.so"
#endif
#ifndef PROJECT_DIR
#error "PROJECT_DIR must name bench/forkexec_project"
#endif

#define GOAL 1.25 /* ptshare run's wall time over native, at most */
#define MAX_ARGS 32

enum workload { LOOP, MAKE, POOL, WORKLOADS };
static const char *const workload_name[WORKLOADS] = { "loop", "make", "pool" };
static const char *const workload_what[WORKLOADS] = {
	"200 fork+exec of /bin/true", "make -j2, 20 files",
	"multiprocessing.Pool(8)",
};

enum tool { NATIVE, PTSHARE, SHIM_ONLY, HEAPTRACK, STRACE, TOOLS };
static const char *const tool_name[TOOLS] = { "native", "ptshare run",
					      "shim only", "heaptrack",
					      "strace -f" };

static const char loop_script[] =
	"i=0; while [ $i -lt 200 ]; do /bin/true; i=$((i+1)); done";
static const char pool_script[] =
	"import multiprocessing as mp\n"
	"def f(x):\n"
	"    return x * x\n"
	"if __name__ == '__main__':\n"
	"    pool = mp.Pool(8)\n"
	"    pool.map(f, range(8))\n"
	"    pool.close()\n"
	"    pool.join()\n";

struct opts {
	int rounds, repeat;
	bool want[WORKLOADS];
	const char *python, *cpus;
};

/* What a run took: wall time, and CPU time of every process it waited
 * for, in seconds. */
struct took {
	double wall, cpu;
};

/* The benchmark's state: its options, its temporary directory and paths
 * in it, the tools found, the times measured. */
struct bench {
	const struct opts *o;
	enum workload w;
	char tmp[PATH_MAX], log[PATH_MAX + 8], out[PATH_MAX + 8];
	char report[PATH_MAX + 16], heaptrack[PATH_MAX + 16];
	bool missing[TOOLS];
	double wall[WORKLOADS][TOOLS][BENCH_MAX_ROUNDS];
	double cpu[WORKLOADS][TOOLS][BENCH_MAX_ROUNDS];
};

static _Noreturn void die(const char *what)
{
	fprintf(stderr, "bench/forkexec: %s\n", what);
	exit(1);
}

static int parse(struct opts *o, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "rounds", required_argument, NULL, 'r' },
		{ "repeat", required_argument, NULL, 'n' },
		{ "workloads", required_argument, NULL, 'w' },
		{ "python", required_argument, NULL, 'p' },
		{ "cpus", required_argument, NULL, 'C' },
		{ 0 },
	};
	*o = (struct opts){ .rounds = 5, .repeat = 3, .python = "/usr/bin/python3" };
	const char *workloads = "loop,make,pool";
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if ((c == 'r' && (o->rounds = atoi(optarg)) > 0) ||
		    (c == 'n' && (o->repeat = atoi(optarg)) > 0))
			continue;
		if (c == 'w' || c == 'p' || c == 'C')
			*(c == 'w' ? &workloads : c == 'p' ? &o->python
						  : &o->cpus) = optarg;
		else
			return -1;
	}
	if (optind < argc || o->rounds > BENCH_MAX_ROUNDS)
		return -1;
	for (const char *p = workloads; *p; ) {
		size_t len = strcspn(p, ",");
		int w = 0;
		while (w < WORKLOADS && (strlen(workload_name[w]) != len ||
					 strncmp(p, workload_name[w], len)))
			w++;
		if (w == WORKLOADS)
			return -1;
		o->want[w] = true;
		p += len + (p[len] == ',');
	}
	return 0;
}

/* The workload's command line after the tool's into argv. */
static void command(const struct bench *b, enum tool t, const char *argv[])
{
	const char *const tools[TOOLS][9] = {
		[NATIVE] = { NULL },
		[SHIM_ONLY] = { NULL },
		[PTSHARE] = { PTSHARE_BIN, "run", "--no-record", "-o", b->report,
			      "--", NULL },
		[HEAPTRACK] = { "heaptrack", "-o", b->heaptrack, NULL },
		[STRACE] = { "strace", "-f", "-e", "trace=%memory,%process", "-o",
			     "/dev/null", NULL },
	};
	const char *const workloads[WORKLOADS][8] = {
		[LOOP] = { "/bin/sh", "-c", loop_script, NULL },
		[MAKE] = { "make", "-j2", "-s", "-f", PROJECT_DIR "/Makefile",
			   "SRC=" PROJECT_DIR, b->out, NULL },
		[POOL] = { b->o->python, "-c", pool_script, NULL },
	};
	size_t n = 0;
	for (size_t i = 0; tools[t][i]; i++)
		argv[n++] = tools[t][i];
	for (size_t i = 0; workloads[b->w][i]; i++)
		argv[n++] = workloads[b->w][i];
	argv[n] = NULL;
}

/* argv run to its end, its output to the log, preload (or nothing) in its
 * LD_PRELOAD: its exit status (127 when it could not be run), and what it
 * took in *t. */
static int run(const struct bench *b, const char *const argv[],
	       const char *preload, struct took *t)
{
	uint64_t t0 = now_ns();
	pid_t pid = fork();
	if (pid < 0)
		die("fork failed");
	if (!pid) {
		int fd = open(b->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0 || chdir(b->tmp) ||
		    (preload && (setenv("LD_PRELOAD", preload, 1) ||
				 unsetenv("PTSHARE_SOCKET"))))
			_exit(126);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	int status;
	struct rusage ru;
	while (wait4(pid, &status, 0, &ru) < 0)
		if (errno != EINTR)
			die("wait4 failed");
	t->wall = (double)(now_ns() - t0) / 1e9;
	t->cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
		 (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* A run that failed: what it said, and the end. */
static _Noreturn void failed(const struct bench *b, const char *const argv[],
			     int status)
{
	char line[1024];
	FILE *f = fopen(b->log, "r");
	fprintf(stderr, "bench/forkexec: %s ... exited %d; it said:\n", argv[0],
		status);
	while (f && fgets(line, sizeof(line), f))
		fputs(line, stderr);
	exit(1);
}

/* The make workload starts from nothing: its output removed, untimed. */
static void prepare(const struct bench *b)
{
	const char *const clean[] = { "make", "-s", "-f", PROJECT_DIR "/Makefile",
				      "SRC=" PROJECT_DIR, b->out, "clean", NULL };
	struct took t;
	int r;
	if (b->w == MAKE && (r = run(b, clean, NULL, &t)))
		failed(b, clean, r);
}

static void measure(int tool, int round, void *arg)
{
	struct bench *b = arg;
	const char *argv[MAX_ARGS];
	double *wall = &b->wall[b->w][tool][round];
	double *cpu = &b->cpu[b->w][tool][round];
	if (b->missing[tool])
		return;
	command(b, tool, argv);
	for (int i = 0; i < b->o->repeat; i++) {
		struct took once;
		prepare(b);
		int r = run(b, argv, tool == SHIM_ONLY ? SHIM_PATH : NULL, &once);
		if (r == 127 && tool >= HEAPTRACK) {
			printf("%s: not found, left out\n", argv[0]);
			b->missing[tool] = true;
			return;
		}
		if (r)
			failed(b, argv, r);
		*wall = !i || once.wall < *wall ? once.wall : *wall;
		*cpu = !i || once.cpu < *cpu ? once.cpu : *cpu;
	}
	printf("round %d  %-5s %-12s %8.3f s  CPU %8.3f s\n", round + 1,
	       workload_name[b->w], tool_name[tool], *wall, *cpu);
	fflush(stdout);
}

/* The medians of a workload's runs, and their ratios to native. */
static void summarize(const struct bench *b, enum workload w)
{
	int n = b->o->rounds;
	const double *native = b->wall[w][NATIVE];
	double noise = bench_noise(native, n);
	printf("%-5s (%s)\n", workload_name[w], workload_what[w]);
	for (int t = 0; t < TOOLS; t++) {
		double ratio[BENCH_MAX_ROUNDS], cpu_ratio[BENCH_MAX_ROUNDS];
		if (b->missing[t])
			continue;
		for (int r = 0; r < n; r++) {
			ratio[r] = b->wall[w][t][r] / native[r];
			cpu_ratio[r] = b->cpu[w][t][r] / b->cpu[w][NATIVE][r];
		}
		double m = bench_median(ratio, n);
		printf("  %-12s %8.3f s %6.2fx %8.3f s %6.2fx", tool_name[t],
		       bench_median(b->wall[w][t], n), m,
		       bench_median(b->cpu[w][t], n), bench_median(cpu_ratio, n));
		if (t == PTSHARE)
			printf("  goal <= %.2fx: %s", GOAL,
			       bench_verdict(m, GOAL, false, noise));
		if (t == HEAPTRACK)
			printf("  (the first process only: no forks followed)");
		printf("\n");
	}
	printf("  spread of the native runs: +-%.1f%%\n", 100 * noise);
}

static void print_load(const char *when)
{
	char buf[128] = "?";
	FILE *f = fopen("/proc/loadavg", "r");
	if (f && fgets(buf, sizeof(buf), f))
		buf[strcspn(buf, "\n")] = 0;
	if (f)
		fclose(f);
	printf("load average %s: %s\n", when, buf);
}

int main(int argc, char **argv)
{
	struct opts o;
	if (parse(&o, argc, argv)) {
		fputs("usage: forkexec [--rounds N] [--repeat N] "
		      "[--workloads loop,make,pool] [--python PATH] "
		      "[--cpus N,N,...]\n", stderr);
		return 2;
	}
	if (o.cpus && bench_pin("bench/forkexec", o.cpus))
		return 2;
	static struct bench b;
	b.o = &o;
	strcpy(b.tmp, "/tmp/bench-forkexec-XXXXXX");
	if (!mkdtemp(b.tmp))
		die("cannot make a temporary directory");
	snprintf(b.log, sizeof(b.log), "%s/log", b.tmp);
	snprintf(b.out, sizeof(b.out), "OUT=%s/o", b.tmp);
	snprintf(b.report, sizeof(b.report), "%s/report.txt", b.tmp);
	snprintf(b.heaptrack, sizeof(b.heaptrack), "%s/heaptrack", b.tmp);
	const char *options = getenv("PTSHARE_OPTIONS");
	printf("%d rounds of %d repeats in %s, ptshare %s, PTSHARE_OPTIONS=%s, "
	       "CPUs %s\n", o.rounds, o.repeat, b.tmp, PTSHARE_BIN, options ? options : "",
	       o.cpus ? o.cpus : "all");
	print_load("at the start");
	for (b.w = 0; b.w < WORKLOADS; b.w++) {
		const char *argv_native[MAX_ARGS];
		struct took t;
		int r;
		if (!o.want[b.w])
			continue;
		/* One native run untimed first: caches warm for every tool. */
		command(&b, NATIVE, argv_native);
		prepare(&b);
		if ((r = run(&b, argv_native, NULL, &t)))
			failed(&b, argv_native, r);
		bench_rounds(o.rounds, TOOLS, measure, &b);
	}
	print_load("at the end");
	printf("\nmedians of %d rounds: wall time, its ratio to native, CPU time, "
	       "its ratio to native\n", o.rounds);
	for (int w = 0; w < WORKLOADS; w++)
		if (o.want[w])
			summarize(&b, w);
	/* What the runs left: the report, heaptrack's output, the build. */
	const char *const rm[] = { "rm", "-rf", b.tmp, NULL };
	struct took t;
	return run(&b, rm, NULL, &t) ? 1 : 0;
}
