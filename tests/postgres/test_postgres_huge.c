/* SPDX-License-Identifier: MIT */
/*
 * hugetlb-2m against the kernel, on PostgreSQL: the policy's prediction
 * from a run with huge_pages=off equals the VmPTE of a run with
 * huge_pages=on, at the same point of the same load.
 *
 * One cluster (tests/postgres's settings: shared_buffers=512MB, unix
 * socket only), run twice under `ptshare run --no-record --json FILE`
 * (fault mode off: pagemap at the checkpoints, as by default), each time
 * the same load: `pgbench -i -s 10`, then `pgbench -S -c 8 -T 15`, during
 * which pg_stat_activity names the server's processes.  First with
 * huge_pages=off; then vm.nr_hugepages is raised by what the server asks
 * for (`postgres -C shared_memory_size_in_huge_pages`) and the second run
 * has huge_pages=on.  The pool is restored after the test, on failure too
 * (cmocka's teardown; an alarm and a SIGABRT handler restore it).
 *
 * The point compared is each process's last checkpoint (the report's
 * `final_checkpoints`): for a pgbench backend its exit, once the fixed
 * select-only run is over; for the postmaster and its auxiliary processes
 * their exit at the fast shutdown.  (Not the peak: the peak is the
 * moment all processes together held the most tables, and with huge
 * pages on, the psql backend that lists the processes can make an early
 * moment of the run the peak: measured, the backends at 104 kB there
 * against 116 kB at their exits.)  Summed over the same processes in
 * both: the postmaster, its five auxiliary processes and the pgbench
 * backends, by pid from pg_stat_activity (an autovacuum worker or a psql
 * backend comes and goes at random, and is left out of both sums).  The
 * first run's prediction is each process's tables under hugetlb-2m as
 * VmPTE counts them (each sharer's view) at that checkpoint; the second
 * run's figure is the kernel's VmPTE.  They must agree within 1%.
 * hugetlb-2m puts the mappings it maps by 2 MiB pages where the kernel
 * would put a hugetlb mapping, aligned and rounded up, and the small
 * mappings made after them where the kernel would put those then: in the
 * part of the gap the aligned segment left free, beside the mapping above
 * it, while they fit (docs/model.md, "Huge pages"; docs/postgres.md).
 *
 * Both servers run under `setarch -R`, with the same address layout: with
 * randomisation, two huge_pages=on runs of this load differed by 6% in
 * their sum of VmPTE (docs/postgres.md), more than the check can tell.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "json_read.h"
#include "pg_test.h"

#ifndef PTSHARE_PATH
#error "PTSHARE_PATH must name the ptshare executable"
#endif

#define TEST_S 840        /* the alarm: under ctest's 900 */
#define TOLERANCE 0.01
#define SETARCH "/usr/bin/setarch"
#define NR_HUGEPAGES "/proc/sys/vm/nr_hugepages"
#define FREE_HUGEPAGES "/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages"

/* One run of the load: its report, and who was who. */
struct pg_run {
	char json[PATH_MAX];
	struct pg_listing l;
	long postmaster;
};

struct huge_test {
	struct pg_cluster c;
	char copy[PATH_MAX];
	const char *ptshare;
	struct pg_run off, on;
};

static struct huge_test the_test;
static volatile long nr_before = -1; /* vm.nr_hugepages to restore */

static long read_long(const char *path)
{
	char s[32] = "";
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, s, sizeof(s) - 1);
	if (fd >= 0)
		close(fd);
	return n > 0 ? atol(s) : -1;
}

/* Without allocating: also from a signal handler. */
static void put_long(const char *path, long v)
{
	char s[32];
	int len = snprintf(s, sizeof(s), "%ld\n", v);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, s, (size_t)len) != len)
		fprintf(stderr, "test_postgres_huge: cannot write %s\n", path);
	if (fd >= 0)
		close(fd);
}

static void restore_pool(void)
{
	if (nr_before >= 0) {
		put_long(NR_HUGEPAGES, nr_before);
		nr_before = -1;
	}
}

static void on_signal(int sig)
{
	restore_pool();
	signal(sig, SIG_DFL);
	raise(sig);
}

static int setup(void **state)
{
	struct huge_test *t = &the_test;
	*state = t;
	signal(SIGALRM, on_signal);
	signal(SIGABRT, on_signal);
	alarm(TEST_S);
	if (pg_cluster_create(&t->c))
		return -1;
	pg_cluster_path(&t->c, "off.json", t->off.json, sizeof(t->off.json));
	pg_cluster_path(&t->c, "on.json", t->on.json, sizeof(t->on.json));
	t->ptshare = pg_cluster_reach(&t->c, PTSHARE_PATH, t->copy, sizeof(t->copy));
	return t->ptshare ? 0 : -1;
}

static int teardown(void **state)
{
	struct huge_test *t = *state;
	pg_cluster_destroy(&t->c); /* the server first: it holds the pages */
	restore_pool();
	alarm(0);
	return 0;
}

/* The load under ptshare run, the report written once it returns. */
static void run_load(struct huge_test *t, struct pg_run *run)
{
	const char *const wrap[] = { SETARCH, "x86_64", "-R", t->ptshare, "run",
				     "--no-record", "--json", run->json, "--",
				     NULL };
	if (pg_cluster_start(&t->c, wrap) || pg_cluster_wait_ready(&t->c)) {
		pg_cluster_print_log(&t->c);
		fail_msg("the server (huge_pages=%s) did not start",
			 t->c.huge_pages ? "on" : "off");
	}
	run->postmaster = pg_postmaster_pid(&t->c);
	assert_true(run->postmaster > 0);
	assert_int_equal(pg_pgbench_init(&t->c, PG_SCALE), 0);
	struct pg_cmd bench;
	double tps, connect_ms;
	assert_int_equal(pg_pgbench_select_start(&t->c, &bench, PG_CLIENTS, PG_SECONDS, false), 0);
	pg_list_processes(&t->c, &run->l, PG_CLIENTS);
	int r = pg_cmd_finish(&bench, PG_PGBENCH_S);
	if (r || pg_pgbench_figures(&bench, &tps, &connect_ms)) {
		pg_cluster_print_log(&t->c);
		fail_msg("pgbench -S failed (exit %d):\n%s", r, bench.out);
	}
	pg_cmd_free(&bench);
	printf("huge_pages=%s: pgbench -S -c %d -T %d: %.0f tps\n",
	       t->c.huge_pages ? "on" : "off", PG_CLIENTS, PG_SECONDS, tps);
	if ((r = pg_cluster_stop(&t->c))) {
		pg_cluster_print_log(&t->c);
		fail_msg("ptshare run ended with %d", r);
	}
}

/* The huge pages the server asks for with these settings: postgres -C,
 * on the stopped cluster. */
static long pages_wanted(const struct huge_test *t)
{
	const char *const argv[] = { "postgres", "-D", t->c.data, "-c",
				     "shared_buffers=512MB", "-C",
				     "shared_memory_size_in_huge_pages", NULL };
	struct pg_cmd cmd;
	long n = pg_run(&t->c, &cmd, argv, 60) ? -1 : atol(cmd.out);
	pg_cmd_free(&cmd);
	return n;
}

/* A process of the compared set: the postmaster, an auxiliary process or
 * a pgbench backend. */
static bool compared(const struct pg_run *run, long pid)
{
	const struct pg_listed *p = pg_listing_find(&run->l, pid);
	if (pid == run->postmaster || (p && p->pgbench))
		return true;
	for (size_t i = 0; p && i < PG_NAUX; i++)
		if (!strcmp(p->type, pg_aux_types[i]))
			return true;
	return false;
}

/* A process's tables under a policy at its last checkpoint (kB). */
static int64_t tables_kb(const struct jr_value *final, const char *label)
{
	return jr_path_i64(jr_get(jr_get(final, "models"), label), "tables_kb", -1);
}

/* Over the compared processes at their last checkpoints: VmPTE, and the
 * tables of the linux model and of hugetlb-2m (kB); the pgbench backends
 * among them. */
struct sums {
	int64_t vmpte, linux_kb, huge_kb;
	size_t procs, backends;
};

static struct jr_value *sums_of(const struct pg_run *run, struct sums *s)
{
	struct jr_error err;
	struct jr_value *doc = jr_parse_file(run->json, &err);
	if (!doc)
		fail_msg("%s: at byte %zu: %s", run->json, err.offset, err.what);
	const struct jr_value *finals = jr_get(doc, "final_checkpoints");
	*s = (struct sums){ 0 };
	for (size_t i = 0; i < jr_len(finals); i++) {
		const struct jr_value *f = jr_at(finals, i);
		long pid = (long)jr_path_i64(f, "pid", -1);
		if (!compared(run, pid))
			continue;
		const struct pg_listed *l = pg_listing_find(&run->l, pid);
		s->vmpte += jr_path_i64(f, "vmpte_kb", 0);
		s->linux_kb += tables_kb(f, "linux");
		s->huge_kb += tables_kb(f, "hugetlb-2m");
		s->procs++;
		s->backends += l && l->pgbench;
		printf("  pid %6ld %-28s at %-5s VmPTE %5lld kB, linux %5lld, "
		       "hugetlb-2m %5lld\n", pid, l ? l->type : "postmaster",
		       jr_path_str(f, "checkpoint"),
		       (long long)jr_path_i64(f, "vmpte_kb", 0),
		       (long long)tables_kb(f, "linux"),
		       (long long)tables_kb(f, "hugetlb-2m"));
	}
	return doc;
}

/* The second run's server had its buffers in hugetlb pages. */
static void check_hugetlb_mapped(const struct jr_value *doc)
{
	const struct jr_value *maps = jr_get(doc, "mappings");
	for (size_t i = 0; i < jr_len(maps); i++) {
		const struct jr_value *m = jr_at(maps, i);
		const char *kind = jr_path_str(m, "kind");
		if (kind && !strcmp(kind, "hugetlb") &&
		    jr_path_u64(m, "end", 0) - jr_path_u64(m, "start", 0) >= 512 << 20)
			return;
	}
	fail_msg("huge_pages=on: no hugetlb mapping of 512 MiB or more at the peak");
}

static void test_prediction_equals_huge_pages_on(void **state)
{
	struct huge_test *t = *state;
	run_load(t, &t->off);
	long want = pages_wanted(t), before = read_long(NR_HUGEPAGES);
	if (want <= 0 || before < 0)
		fail_msg("huge pages: the server asks for %ld, %s says %ld", want,
			 NR_HUGEPAGES, before);
	nr_before = before;
	put_long(NR_HUGEPAGES, before + want);
	if (read_long(FREE_HUGEPAGES) < want)
		fail_msg("cannot reserve %ld huge pages (%ld free)", want,
			 read_long(FREE_HUGEPAGES));
	printf("vm.nr_hugepages %ld -> %ld for the server's %ld\n", before,
	       before + want, want);
	t->c.huge_pages = true;
	run_load(t, &t->on);

	struct sums off, on;
	printf("last checkpoints, huge_pages=off:\n");
	struct jr_value *doc_off = sums_of(&t->off, &off);
	printf("last checkpoints, huge_pages=on:\n");
	struct jr_value *doc_on = sums_of(&t->on, &on);
	check_hugetlb_mapped(doc_on);
	double diff = (double)(off.huge_kb - on.vmpte) / (double)on.vmpte;
	double lo = (double)on.vmpte * (1 - TOLERANCE);
	double hi = (double)on.vmpte * (1 + TOLERANCE);
	printf("huge_pages=off: %zu processes, VmPTE %lld kB (linux model %lld); "
	       "hugetlb-2m predicts %lld kB\n", off.procs, (long long)off.vmpte,
	       (long long)off.linux_kb, (long long)off.huge_kb);
	printf("huge_pages=on: %zu processes, VmPTE %lld kB (linux model %lld); "
	       "prediction %+.2f%%\n", on.procs, (long long)on.vmpte,
	       (long long)on.linux_kb, 100 * diff);
	jr_free(doc_off);
	jr_free(doc_on);
	assert_int_equal(off.backends, PG_CLIENTS);
	assert_int_equal(on.backends, PG_CLIENTS);
	assert_int_equal(off.procs, on.procs);
	if ((double)off.huge_kb < lo || (double)off.huge_kb > hi)
		fail_msg("hugetlb-2m predicts %lld kB, huge_pages=on has %lld kB: "
			 "outside [%.0f, %.0f] (%.0f%%)",
			 (long long)off.huge_kb, (long long)on.vmpte, lo, hi,
			 100 * TOLERANCE);
}

int main(void)
{
	int unrunnable = pg_test_unrunnable(&the_test.c);
	if (unrunnable >= 0)
		return unrunnable;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_prediction_equals_huge_pages_on,
						setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
