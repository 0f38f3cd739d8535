/* SPDX-License-Identifier: MIT */
/*
 * bench/pgbench: what `ptshare run` costs PostgreSQL.  One cluster (the
 * settings of tests/postgres: shared_buffers=512MB unless --shared-buffers
 * says otherwise, huge_pages=off, unix socket only), loaded once with
 * `pgbench -i`; then, in rounds, the server is started plainly and under
 * `ptshare run --interval S` for each S asked, in an order that rotates
 * from one round to the next, and measured with `pgbench -S -c CLIENTS -T
 * SECONDS`, or with --connect `pgbench -S -C ...`, a new connection (and
 * so a new backend, forked by the postmaster) for each transaction (a
 * fresh server each time, so every run starts from the same cold shared
 * buffers).  The plain server runs twice a round: the second ("plain
 * again") is the noise floor, which on a 2-vCPU machine running 8 backends
 * and pgbench is several percent.  Each run waits for a quiet machine
 * first (not with --loaded), and reports the CPU time the machine gave to
 * anything but the postgres user's processes during the run ("others":
 * another session's load shows there; a run it spoiled, more than
 * OTHERS_MAX_S, is done again a few times, not with --loaded).
 * Prints each run, then the medians: TPS, the median over rounds of its
 * ratio to the same round's plain run (goal: --goal, by default >= 0.98,
 * with --connect >= 0.9), pgbench's initial connection time (with
 * --connect its average connection time) and its ratio to plain's (goal <=
 * 1.2: each backend's fork waits for the daemon), others' CPU time and
 * the CPU time the daemon used during the run (its timer's checkpoints,
 * mostly).  Issue 13's configurations: `--shared-buffers 2GB --clients 32
 * --goal 0.95`, and the same with --connect and no --goal.
 *
 * PTSHARE_OPTIONS in our environment reaches the traced server's shim
 * (docs/shim.md).
 *
 * Needs root, the postgres user and PostgreSQL (as tests/postgres); a
 * build the postgres user cannot reach is copied into the cluster's
 * directory.  Figures from a sanitized build are
 * meaningless: build with -DPTSHARE_SANITIZE=OFF.
 *
 * usage: pgbench [--rounds N] [--seconds S] [--clients N] [--scale N]
 *                [--intervals LIST] [--cpus LIST] [--connect]
 *                [--shared-buffers SIZE] [--goal R] [--loaded]
 *   --cpus LIST  pin the whole run (server, ptshare, pgbench) to these CPUs
 *   --connect    pgbench -C: a new connection for each transaction
 *   --shared-buffers SIZE  the server's shared_buffers (512MB, 2GB, ...)
 *   --goal R     the TPS ratio to plain that is the goal, at least
 *   --loaded     a machine others keep busy: no wait for a quiet one, no
 *                run done again (others' CPU time is printed all the same)
 *   defaults: 5 rounds, 15 s (at least 3), 8 clients, scale 10,
 *   intervals 0,1,5, shared_buffers 512MB
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_rounds.h"
#include "pg_cluster.h"

#ifndef PTSHARE_BIN
#error "PTSHARE_BIN must name the ptshare executable"
#endif

#define MAX_VARIANTS 8
#define PGBENCH_S 600 /* bound of one run, whatever -T says */
#define QUIET_WAIT_S 300
/* CPU seconds others may take during a run before it is done again, and
 * how many times it is. */
#define OTHERS_MAX_S 1.0
#define SPOILED_RETRIES 4
#define CONNECT_GOAL 1.2 /* connection time over plain's, at most */

struct opts {
	int rounds, seconds, clients, scale;
	const char *cpus, *shared_buffers;
	bool reconnect; /* --connect: pgbench -C */
	bool loaded;    /* --loaded: no wait for quiet, no run done again */
	double goal;    /* of the TPS ratio, at least */
	char intervals[MAX_VARIANTS][16];
	int nintervals;
};

/* One way of starting the server: plain (interval "") or traced. */
struct variant {
	const char *interval;
	char name[32];
	double tps[BENCH_MAX_ROUNDS], connect_ms[BENCH_MAX_ROUNDS];
	double daemon_s[BENCH_MAX_ROUNDS];
	double ratio[BENCH_MAX_ROUNDS]; /* tps / the same round's plain tps */
	double connect_ratio[BENCH_MAX_ROUNDS]; /* connect_ms / plain's */
	double others_s[BENCH_MAX_ROUNDS];
};

static struct pg_cluster cluster;
/* PTSHARE_BIN, or its copy the postgres user can reach. */
static const char *ptshare;
static char ptshare_copy[PATH_MAX];

static _Noreturn void die(const char *what)
{
	fprintf(stderr, "bench/pgbench: %s\n", what);
	pg_cluster_destroy(&cluster);
	exit(1);
}

static int parse(struct opts *o, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "rounds", required_argument, NULL, 'r' },
		{ "seconds", required_argument, NULL, 't' },
		{ "clients", required_argument, NULL, 'c' },
		{ "scale", required_argument, NULL, 's' },
		{ "intervals", required_argument, NULL, 'i' },
		{ "cpus", required_argument, NULL, 'C' },
		{ "connect", no_argument, NULL, 'x' },
		{ "shared-buffers", required_argument, NULL, 'b' },
		{ "goal", required_argument, NULL, 'g' },
		{ "loaded", no_argument, NULL, 'l' },
		{ 0 },
	};
	*o = (struct opts){ .rounds = 5, .seconds = 15, .clients = 8, .scale = 10,
			    .shared_buffers = "512MB" };
	const char *intervals = "0,1,5";
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		int *n = c == 'r' ? &o->rounds : c == 't' ? &o->seconds
		       : c == 'c' ? &o->clients : c == 's' ? &o->scale : NULL;
		char *end;
		if (c == 'i')
			intervals = optarg;
		else if (c == 'C')
			o->cpus = optarg;
		else if (c == 'x' || c == 'l')
			*(c == 'x' ? &o->reconnect : &o->loaded) = true;
		else if (c == 'b' && strspn(optarg, "0123456789") &&
			 strlen(optarg) < 16)
			o->shared_buffers = optarg;
		else if (c == 'g' && (o->goal = strtod(optarg, &end)) > 0 && !*end)
			continue;
		else if (!n || (*n = atoi(optarg)) <= 0)
			return -1;
	}
	if (optind < argc || o->rounds > BENCH_MAX_ROUNDS || o->seconds < 3)
		return -1;
	if (!o->goal)
		o->goal = o->reconnect ? 0.9 : 0.98;
	for (const char *p = intervals; *p && o->nintervals < MAX_VARIANTS - 2; ) {
		size_t len = strcspn(p, ",");
		if (!len || len >= sizeof(o->intervals[0]))
			return -1;
		snprintf(o->intervals[o->nintervals++], sizeof(o->intervals[0]),
			 "%.*s", (int)len, p);
		p += len + (p[len] == ',');
	}
	return 0;
}

/* The machine's CPU time in ticks: busy (steal included: not ours to use)
 * and in all, from /proc/stat's first line. */
static void machine_ticks(unsigned long long *busy, unsigned long long *all)
{
	unsigned long long v[8] = { 0 };
	FILE *f = fopen("/proc/stat", "r");
	if (!f || fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
			 &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) != 8)
		die("cannot read /proc/stat");
	fclose(f);
	*busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
	*all = *busy + v[3] + v[4];
}

/* CPU seconds (user + system) of the live processes of the postgres user
 * and of their children that ended and were reaped (the backends of
 * pgbench -C, each one transaction long), and of the ptshared among them
 * (the runner's child; -1 when none). */
static void user_cpu_s(pid_t runner, double *user_s, double *daemon_s)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	double tick = (double)sysconf(_SC_CLK_TCK);
	*user_s = 0;
	*daemon_s = -1;
	while (d && (e = readdir(d))) {
		char path[300], buf[512], *rp;
		struct stat st;
		int ppid;
		unsigned long ut, ss;
		long cut, cst;
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		FILE *f = stat(path, &st) || st.st_uid != cluster.uid ? NULL
								     : fopen(path, "r");
		if (f && fgets(buf, sizeof(buf), f) && (rp = strrchr(buf, ')')) &&
		    sscanf(rp + 1, " %*c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu"
			   " %ld %ld", &ppid, &ut, &ss, &cut, &cst) == 5) {
			*user_s += (double)(ut + ss) / tick + (double)(cut + cst) / tick;
			if (ppid == runner && strstr(buf, "(ptshared)"))
				*daemon_s = (double)(ut + ss) / tick;
		}
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
}

/* Other sessions' load spoils the figures: waits (bounded) for a second
 * in which the machine is at least 90% idle. */
static void wait_quiet(void)
{
	for (int s = 0; s < QUIET_WAIT_S; s++) {
		unsigned long long b0, a0, b1, a1;
		machine_ticks(&b0, &a0);
		sleep(1);
		machine_ticks(&b1, &a1);
		if ((b1 - b0) * 10 <= a1 - a0)
			return;
	}
	printf("(the machine was busy for %d s before this run)\n", QUIET_WAIT_S);
}

/* One server, one pgbench -S run: false when another session's load
 * spoiled it. */
static bool measure_once(const struct opts *o, struct variant *v, int round)
{
	char text[PATH_MAX], name[64];
	snprintf(name, sizeof(name), "report-%s-%d.txt", v->interval, round);
	/* --no-record: the cost of tracing, without the trace kept at the end
	 * (in a directory the postgres user may not write). */
	const char *const wrap[] = { ptshare, "run", "--no-record", "--interval",
				     v->interval,
				     "-o", pg_cluster_path(&cluster, name, text,
							   sizeof(text)),
				     "--", NULL };
	struct pg_cmd cmd;
	unsigned long long b0, a0, b1, a1;
	double user0, user1, daemon0;
	if (!o->loaded)
		wait_quiet();
	if (pg_cluster_start(&cluster, *v->interval ? wrap : NULL) ||
	    pg_cluster_wait_ready(&cluster) ||
	    pg_pgbench_select_start(&cluster, &cmd, o->clients, o->seconds,
				    o->reconnect))
		die("cannot start the server and pgbench");
	/* The CPU accounts are read while every process of the run lives
	 * (the plain server's backends end as soon as pgbench does): from
	 * the second second to the one before last. */
	pg_sleep_ms(1000);
	machine_ticks(&b0, &a0);
	user_cpu_s(cluster.runner, &user0, &daemon0);
	pg_sleep_ms(1000 * (o->seconds - 2));
	machine_ticks(&b1, &a1);
	user_cpu_s(cluster.runner, &user1, &v->daemon_s[round]);
	/* CPU the machine gave to anything but the server, its daemon and
	 * pgbench meanwhile. */
	v->others_s[round] = (double)(b1 - b0) / (double)sysconf(_SC_CLK_TCK) -
			     (user1 - user0);
	int r = pg_cmd_finish(&cmd, PGBENCH_S);
	if (r || pg_pgbench_figures(&cmd, &v->tps[round], &v->connect_ms[round])) {
		fprintf(stderr, "%s\n", cmd.out ? cmd.out : "");
		die("pgbench -S failed");
	}
	pg_cmd_free(&cmd);
	if (pg_cluster_stop(&cluster))
		die("the server did not stop cleanly");
	bool clean = o->loaded || v->others_s[round] <= OTHERS_MAX_S;
	printf("round %d  %-14s %9.0f tps  connect %7.1f ms  others %5.2f s CPU",
	       round + 1, v->name, v->tps[round], v->connect_ms[round],
	       v->others_s[round]);
	if (v->daemon_s[round] >= 0)
		printf("  ptshared %5.2f s CPU", v->daemon_s[round]);
	printf("%s\n", v->others_s[round] <= OTHERS_MAX_S ? ""
			: clean ? "  (others were busy)" : "  (spoiled by others)");
	fflush(stdout);
	return clean;
}

/* The rounds' runs, and what they need. */
struct runs {
	const struct opts *o;
	struct variant *v;
};

/* The run again while others spoil it, a few times: the last one counts. */
static void measure(int variant, int round, void *arg)
{
	const struct runs *runs = arg;
	struct variant *v = &runs->v[variant];
	for (int i = 0; i < SPOILED_RETRIES && !measure_once(runs->o, v, round); i++)
		;
}

/* How far plain strays from plain (the ratios of plain again), in the
 * median or from round to round, whichever is more. */
static double noise_floor(const double *again, int rounds)
{
	double off = bench_median(again, rounds) - 1;
	double spread = bench_noise(again, rounds);
	off = off < 0 ? -off : off;
	return spread > off ? spread : off;
}

/* The medians, each variant's ratios to plain and their verdicts. */
static void summarize(const struct opts *o, struct variant *v, int nv)
{
	int n = o->rounds;
	for (int k = 0; k < nv; k++)
		for (int r = 0; r < n; r++) {
			v[k].ratio[r] = v[k].tps[r] / v[0].tps[r];
			v[k].connect_ratio[r] = v[k].connect_ms[r] / v[0].connect_ms[r];
		}
	double noise = noise_floor(v[1].ratio, n);
	double connect_noise = noise_floor(v[1].connect_ratio, n);
	printf("\nmedians of %d rounds          tps   ratio  %s ms  ratio"
	       "  others CPU s  ptshared CPU s\n", n,
	       o->reconnect ? "average connection" : "initial connection");
	for (int k = 0; k < nv; k++) {
		double ratio = bench_median(v[k].ratio, n);
		double connect = bench_median(v[k].connect_ratio, n);
		printf("%-24s %11.0f  %6.3f  %21.2f  %5.2f  %12.2f", v[k].name,
		       bench_median(v[k].tps, n), ratio,
		       bench_median(v[k].connect_ms, n), connect,
		       bench_median(v[k].others_s, n));
		if (*v[k].interval) {
			printf("  %14.2f", bench_median(v[k].daemon_s, n));
			printf("\n%24s tps goal >= %.2f: %s", "", o->goal,
			       bench_verdict(ratio, o->goal, true, noise));
			printf("; connection goal <= %.1f: %s", CONNECT_GOAL,
			       bench_verdict(connect, CONNECT_GOAL, false,
					     connect_noise));
		}
		printf("\n");
	}
	printf("noise floor (plain again against plain): tps %.1f%%, "
	       "connection time %.1f%%\n", 100 * noise, 100 * connect_noise);
}

int main(int argc, char **argv)
{
	struct opts o;
	char why[512];
	if (parse(&o, argc, argv)) {
		fputs("usage: pgbench [--rounds N] [--seconds S] [--clients N] "
		      "[--scale N] [--intervals S,S,...] [--cpus N,N,...] "
		      "[--connect] [--shared-buffers SIZE] [--goal R] [--loaded]\n", stderr);
		return 2;
	}
	/* A wake-up across the vCPUs of a VM costs tens of microseconds
	 * (docs/kernel-facts.md), and where the scheduler puts pgbench and the
	 * backends makes the figures swing by tens of percent from one run to
	 * the next: --cpus pins the server, ptshare and pgbench. */
	if (o.cpus && bench_pin("bench/pgbench", o.cpus))
		return 2;
	if (pg_cluster_find(&cluster, why, sizeof(why))) {
		fprintf(stderr, "bench/pgbench: %s\n", why);
		return 2;
	}
	cluster.shared_buffers = o.shared_buffers;
#ifdef PTSHARE_SANITIZED
	puts("WARNING: a sanitized build: the figures below mean nothing");
#endif
	struct variant v[MAX_VARIANTS] = {
		{ .interval = "", .name = "plain" },
		{ .interval = "", .name = "plain again" },
	};
	int nv = 2;
	for (int i = 0; i < o.nintervals; i++, nv++) {
		v[nv].interval = o.intervals[i];
		snprintf(v[nv].name, sizeof(v[nv].name), "--interval %s", o.intervals[i]);
	}
	if (pg_cluster_create(&cluster) ||
	    !(ptshare = pg_cluster_reach(&cluster, PTSHARE_BIN, ptshare_copy,
					 sizeof(ptshare_copy))) ||
	    pg_cluster_start(&cluster, NULL) ||
	    pg_cluster_wait_ready(&cluster) || pg_pgbench_init(&cluster, o.scale) ||
	    pg_cluster_stop(&cluster))
		die("cannot make the cluster");
	const char *options = getenv("PTSHARE_OPTIONS");
	printf("pgbench -S%s -c %d -T %d, scale %d, shared_buffers=%s, CPUs %s, "
	       "PTSHARE_OPTIONS=%s; %d rounds in %s\n", o.reconnect ? " -C" : "",
	       o.clients, o.seconds, o.scale, o.shared_buffers,
	       o.cpus ? o.cpus : "all", options ? options : "", o.rounds,
	       cluster.dir);
	bench_rounds(o.rounds, nv, measure, &(struct runs){ &o, v });
	summarize(&o, v, nv);
	pg_cluster_destroy(&cluster);
	return 0;
}
