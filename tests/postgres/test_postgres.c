/* SPDX-License-Identifier: MIT */
/*
 * PostgreSQL under `ptshare run`: the workload ptshare is for.
 *
 * As root, a fresh cluster (shared_buffers=512MB, huge_pages=off, unix
 * socket only, in a private directory) owned by the postgres user; the
 * postmaster started as
 *     ptshare run --faults table --json FILE -o TEXT -- postgres -D DATA ...
 * the whole of it run as the postgres user, which the cluster lets open
 * /dev/userfaultfd meanwhile (docs/run.md), so that table mode sees every
 * process's first fault in each 2 MiB span; then
 * `pgbench -i -s 10` and `pgbench -S -c 8 -T 15`, during which
 * pg_stat_activity names the server's processes; then a fast shutdown
 * (SIGINT to the postmaster), after which `ptshare run` writes its report.
 *
 * From the JSON report (docs/report-json.md):
 * - every process the server had was seen: the postmaster, and as its
 *   children (ppid), the checkpointer, background writer, walwriter,
 *   autovacuum launcher, logical replication launcher and at least 8
 *   pgbench backends; every process seen is the postmaster or its child;
 * - as the README says: at its last checkpoint, and at the peak, every
 *   process's linux model equals the kernel's VmPTE, page for page;
 * - at the peak, mccracken-2005 saves more than half of today's page-table
 *   memory (the backends' tables over the shared buffers, which every one
 *   maps at the same address, inherited through fork);
 * - every process had a userfaultfd (fault mode table), some faults were
 *   seen on them, and mccracken-2005 avoids some of those.
 * The figures are printed, with the text report, for the issue.
 *
 * Then a fresh cluster under `ptshare run` with its defaults, and
 * `pgbench -S -C -c 8 -T 5`, a backend forked for each transaction: it
 * must succeed as without ptshare, every backend in the report.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "json_read.h"
#include "pg_test.h"
#include "schema_check.h"

#ifndef PTSHARE_PATH
#error "PTSHARE_PATH must name the ptshare executable"
#endif

struct pg_test {
	struct pg_cluster c;
	char json[PATH_MAX], text[PATH_MAX], copy[PATH_MAX];
	const char *ptshare; /* PTSHARE_PATH, or a copy the user can reach */
	struct pg_listing l;
	double tps, connect_ms;
};

static struct pg_test the_test;

static int setup(void **state)
{
	struct pg_test *t = &the_test;
	*state = t;
	if (pg_cluster_create(&t->c))
		return -1;
	pg_cluster_path(&t->c, "report.json", t->json, sizeof(t->json));
	pg_cluster_path(&t->c, "report.txt", t->text, sizeof(t->text));
	t->ptshare = pg_cluster_reach(&t->c, PTSHARE_PATH, t->copy, sizeof(t->copy));
	return t->ptshare ? 0 : -1;
}

static int teardown(void **state)
{
	struct pg_test *t = *state;
	pg_cluster_destroy(&t->c);
	return 0;
}

/* The workload, under ptshare run; the report written once it returns. */
static void run_workload(struct pg_test *t, pid_t *postmaster)
{
	const char *const wrap[] = { t->ptshare, "run", "--no-record", "--faults", "table",
				     "--json", t->json, "-o", t->text, "--",
				     NULL };
	assert_int_equal(pg_cluster_start(&t->c, wrap), 0);
	assert_int_equal(pg_cluster_wait_ready(&t->c), 0);
	*postmaster = pg_postmaster_pid(&t->c);
	assert_true(*postmaster > 0);
	assert_int_equal(pg_pgbench_init(&t->c, PG_SCALE), 0);
	struct pg_cmd bench;
	assert_int_equal(pg_pgbench_select_start(&t->c, &bench, PG_CLIENTS, PG_SECONDS, false), 0);
	pg_list_processes(&t->c, &t->l, PG_CLIENTS);
	int r = pg_cmd_finish(&bench, PG_PGBENCH_S);
	if (r || pg_pgbench_figures(&bench, &t->tps, &t->connect_ms)) {
		pg_cluster_print_log(&t->c);
		fail_msg("pgbench -S failed (exit %d):\n%s", r, bench.out);
	}
	pg_cmd_free(&bench);
	int status = pg_cluster_stop(&t->c);
	if (status) {
		pg_cluster_print_log(&t->c);
		fail_msg("ptshare run ended with %d", status);
	}
}

static const struct jr_value *final_of(const struct jr_value *finals, long pid)
{
	for (size_t i = 0; i < jr_len(finals); i++)
		if ((long)jr_path_i64(jr_at(finals, i), "pid", -1) == pid)
			return jr_at(finals, i);
	return NULL;
}

/* Every process seen is the postmaster or its child, ended cleanly with
 * both figures read; every process pg_stat_activity listed was seen. */
static void check_processes(const struct pg_test *t, const struct jr_value *doc,
			    long postmaster)
{
	const struct jr_value *finals = jr_get(doc, "final_checkpoints");
	assert_non_null(final_of(finals, postmaster));
	for (size_t i = 0; i < jr_len(finals); i++) {
		const struct jr_value *f = jr_at(finals, i);
		long pid = (long)jr_path_i64(f, "pid", -1);
		const char *cmd = jr_path_str(f, "command");
		if (pid != postmaster && jr_path_i64(f, "ppid", -1) != postmaster)
			fail_msg("pid %ld: ppid %lld, not the postmaster %ld", pid,
				 (long long)jr_path_i64(f, "ppid", -1), postmaster);
		if (!cmd || strcmp(cmd, "postgres") || jr_bool(jr_get(f, "untraced")) ||
		    jr_path_i64(f, "vmpte_kb", -1) < 0 || jr_path_i64(f, "model_kb", -1) < 0)
			fail_msg("pid %ld: command %s, untraced %d, vmpte_kb %lld, "
				 "model_kb %lld", pid, cmd ? cmd : "(none)",
				 jr_bool(jr_get(f, "untraced")),
				 (long long)jr_path_i64(f, "vmpte_kb", -1),
				 (long long)jr_path_i64(f, "model_kb", -1));
	}
	for (size_t i = 0; i < t->l.n; i++)
		if (!final_of(finals, t->l.p[i].pid))
			fail_msg("pid %ld (%s) was never seen", t->l.p[i].pid,
				 t->l.p[i].type);
	for (size_t i = 0; i < PG_NAUX; i++)
		if (!pg_listing_has_type(&t->l, pg_aux_types[i]))
			fail_msg("pg_stat_activity never listed the %s",
				 pg_aux_types[i]);
	if (pg_listing_pgbench(&t->l) < PG_CLIENTS)
		fail_msg("pg_stat_activity listed %zu pgbench backends, not %d",
			 pg_listing_pgbench(&t->l), PG_CLIENTS);
	if (jr_path_u64(doc, "stream.refused", 1) || jr_path_u64(doc, "stream.malformed", 1))
		fail_msg("records refused %llu, malformed %llu",
			 (unsigned long long)jr_path_u64(doc, "stream.refused", 1),
			 (unsigned long long)jr_path_u64(doc, "stream.malformed", 1));
}

/* The linux model against VmPTE at each process's last checkpoint. */
static void check_model(const struct jr_value *doc)
{
	const struct jr_value *finals = jr_get(doc, "final_checkpoints");
	int64_t vmpte = 0, model = 0;
	size_t exact = 0, n = jr_len(finals);
	for (size_t i = 0; i < n; i++) {
		int64_t v = jr_path_i64(jr_at(finals, i), "vmpte_kb", -1);
		int64_t m = jr_path_i64(jr_at(finals, i), "model_kb", -1);
		vmpte += v;
		model += m;
		exact += v == m;
		if (v != m)
			printf("  pid %lld: VmPTE %lld kB, model %lld kB at its %s "
			       "checkpoint\n",
			       (long long)jr_path_i64(jr_at(finals, i), "pid", -1),
			       (long long)v, (long long)m,
			       jr_path_str(jr_at(finals, i), "checkpoint"));
	}
	printf("last checkpoints: %zu processes, %zu exact; model %lld kB, "
	       "VmPTE %lld kB (%+.2f%%)\n", n, exact, (long long)model,
	       (long long)vmpte, vmpte ? 100.0 * (double)(model - vmpte) / (double)vmpte : 0);
	assert_true(vmpte > 0);
	if (exact != n)
		fail_msg("%zu of %zu processes exact at their last checkpoints",
			 exact, n);
}

/* At the peak, every process modelled is exact: the totals say so, and
 * each process's linux tables add up to its VmPTE. */
static void check_peak(const struct jr_value *doc)
{
	const struct jr_value *procs = jr_get(doc, "processes");
	size_t exact = 0, n = jr_len(procs);
	for (size_t i = 0; i < n; i++) {
		const struct jr_value *p = jr_at(procs, i);
		const struct jr_value *t = jr_path(p, "policies.linux.tables");
		int64_t model = 4 * (jr_path_i64(t, "pte", 0) + jr_path_i64(t, "pmd", 0) +
				     jr_path_i64(t, "pud", 0));
		int64_t vmpte = jr_path_i64(p, "vmpte_kb", -1);
		exact += model == vmpte;
		if (model != vmpte)
			printf("  peak: pid %lld: VmPTE %lld kB, model %lld kB\n",
			       (long long)jr_path_i64(p, "pid", -1),
			       (long long)vmpte, (long long)model);
	}
	assert_true(n > 0);
	assert_int_equal(jr_path_u64(doc, "totals.processes", 0), n);
	assert_int_equal(jr_path_u64(doc, "totals.exact_processes", 0), exact);
	if (exact != n)
		fail_msg("%zu of %zu processes exact at the peak", exact, n);
}

/* The peak's totals, every policy's saving; mccracken-2005 over half. */
static void check_savings(const struct jr_value *doc)
{
	const struct jr_value *pol = jr_path(doc, "totals.policies");
	double today = (double)jr_path_i64(jr_get(pol, "linux"), "bytes", 0);
	printf("peak: %llu processes (%llu exact), VmPTE %llu kB, model %llu kB\n",
	       (unsigned long long)jr_path_u64(doc, "totals.processes", 0),
	       (unsigned long long)jr_path_u64(doc, "totals.exact_processes", 0),
	       (unsigned long long)jr_path_u64(doc, "totals.kernel_vmpte_kb", 0),
	       (unsigned long long)jr_path_u64(doc, "totals.model_kb", 0));
	for (size_t k = 0; k < jr_len(pol); k++) {
		const struct jr_value *p = jr_get(pol, jr_key_at(pol, k));
		double saved = (double)jr_path_i64(p, "saved_bytes", 0);
		printf("  %-16s %9lld bytes, saved %9.0f (%.1f%%)\n", jr_key_at(pol, k),
		       (long long)jr_path_i64(p, "bytes", 0), saved,
		       today > 0 ? 100 * saved / today : 0);
	}
	double saved = (double)jr_path_i64(jr_get(pol, "mccracken-2005"),
					   "saved_bytes", 0);
	assert_true(today > 0);
	if (!(saved > 0.5 * today))
		fail_msg("mccracken-2005 saves %.0f of %.0f bytes: not more than "
			 "half", saved, today);
}

/* Every process in table mode; the faults seen, and those sharing avoids. */
static void check_faults(const struct jr_value *doc)
{
	const struct jr_value *finals = jr_get(doc, "final_checkpoints");
	uint64_t seen = 0, shared = 0, pagemap = 0;
	assert_string_equal(jr_path_str(doc, "stream.fault_mode"), "table");
	for (size_t i = 0; i < jr_len(finals); i++) {
		const struct jr_value *f = jr_at(finals, i);
		const struct jr_value *faults = jr_get(f, "faults");
		const char *mode = jr_path_str(f, "fault_mode");
		if (!mode || strcmp(mode, "table"))
			fail_msg("pid %lld: fault mode %s (errno %lld)",
				 (long long)jr_path_i64(f, "pid", -1),
				 mode ? mode : "(none)",
				 (long long)jr_path_i64(f, "fault_errno", -1));
		seen += jr_path_u64(jr_get(faults, "linux"), "seen", 0);
		pagemap += jr_path_u64(jr_get(faults, "linux"), "pagemap", 0);
		shared += jr_path_u64(jr_get(faults, "mccracken-2005"), "seen", 0);
	}
	printf("faults (table): %llu seen, %llu first touches from pagemap; "
	       "mccracken-2005 avoids %llu of those seen\n",
	       (unsigned long long)seen, (unsigned long long)pagemap,
	       (unsigned long long)(seen - shared));
	assert_true(seen > 0);
	assert_true(shared < seen);
}

static void print_file(const char *path)
{
	char line[1024];
	FILE *f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		fputs(line, stdout);
	if (f)
		fclose(f);
}

static void test_pgbench_under_ptshare_run(void **state)
{
	struct pg_test *t = *state;
	pid_t postmaster;
	run_workload(t, &postmaster);
	printf("pgbench -S -c %d -T %d: %.0f tps, initial connection time %.1f "
	       "ms; pg_stat_activity listed %zu processes, %zu of pgbench\n",
	       PG_CLIENTS, PG_SECONDS, t->tps, t->connect_ms, t->l.n,
	       pg_listing_pgbench(&t->l));
	struct jr_error err;
	struct jr_value *doc = jr_parse_file(t->json, &err);
	if (!doc)
		fail_msg("%s: at byte %zu: %s", t->json, err.offset, err.what);
	if (!schema_valid_file(t->json))
		fail_msg("%s: not valid against docs/report.schema.json", t->json);
	printf("ptshare run's report (%s):\n", t->text);
	print_file(t->text);
	printf("processes seen: %zu; stream: %llu records, %llu lost, %llu resyncs\n",
	       jr_len(jr_get(doc, "final_checkpoints")),
	       (unsigned long long)jr_path_u64(doc, "stream.records", 0),
	       (unsigned long long)jr_path_u64(doc, "stream.lost", 0),
	       (unsigned long long)jr_path_u64(doc, "stream.resyncs", 0));
	check_model(doc);
	check_peak(doc);
	check_savings(doc);
	check_processes(t, doc, (long)postmaster);
	check_faults(doc);
	jr_free(doc);
}

/*
 * pgbench -C under ptshare run (its defaults): a backend forked for every
 * transaction, each traced from its fork to its exit.  The server serves
 * them all as without ptshare: a build in which each backend ran on after
 * its fork, faster than the daemon read them, had them wait in turn at
 * their exits for their last readings, holding their slots, and the server
 * refused connections ("too many clients"; docs/shim.md, fork).  Every
 * backend is in the report, none lost.
 */
static void test_connection_per_transaction(void **state)
{
	struct pg_test *t = *state;
	const char *const wrap[] = { t->ptshare, "run", "--no-record", "--json",
				     t->json, "-o", t->text, "--", NULL };
	struct pg_cmd bench;
	double tps, connect_ms;
	assert_int_equal(pg_cluster_start(&t->c, wrap), 0);
	assert_int_equal(pg_cluster_wait_ready(&t->c), 0);
	assert_int_equal(pg_pgbench_init(&t->c, 1), 0);
	assert_int_equal(pg_pgbench_select_start(&t->c, &bench, PG_CLIENTS, 5,
						 true), 0);
	int r = pg_cmd_finish(&bench, PG_PGBENCH_S);
	if (r || pg_pgbench_figures(&bench, &tps, &connect_ms)) {
		pg_cluster_print_log(&t->c);
		fail_msg("pgbench -S -C failed (exit %d):\n%s", r, bench.out);
	}
	pg_cmd_free(&bench);
	assert_int_equal(pg_cluster_stop(&t->c), 0);
	struct jr_error err;
	struct jr_value *doc = jr_parse_file(t->json, &err);
	if (!doc || !schema_valid_file(t->json))
		fail_msg("%s: not a report", t->json);
	size_t n = jr_len(jr_get(doc, "final_checkpoints"));
	printf("pgbench -S -C -c %d -T 5: %.0f tps, %.1f ms a connection; %zu "
	       "processes in the report\n", PG_CLIENTS, tps, connect_ms, n);
	assert_true(n > PG_NAUX + 1 + (size_t)PG_CLIENTS);
	assert_int_equal(jr_path_u64(doc, "stream.lost", 1), 0);
	jr_free(doc);
}

int main(void)
{
	int unrunnable = pg_test_unrunnable(&the_test.c);
	if (unrunnable >= 0)
		return unrunnable;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_pgbench_under_ptshare_run,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_connection_per_transaction,
						setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
