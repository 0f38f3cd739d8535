/* SPDX-License-Identifier: MIT */
/*
 * Programs traced by `ptshare run --json FILE`, the shim preloaded, and
 * their reports (docs/report-json.md): every process's last checkpoint has
 * the model equal to the kernel's VmPTE, and the peak shows what sharing
 * would have done.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "run_subject.h"
#include "run_util.h"

#define PAGE 4096u
#define PTE_SPAN (2u << 20)
#define MCC "mccracken-2005"

struct traced {
	char dir[64];
	struct cmd c;
	struct jr_value *doc;
	bool timer;
};

/*
 * ptshare run --json DIR/report.json --record DIR/trace OPTS -- PROGRAM
 * ARGS (program NULL: run_subject).  Without opts, --interval 0: the timer
 * reads /proc at moments of its own, and a process may have mapped memory
 * and not yet sent its record then; the record, when it comes, is refused
 * (and the process read again), which the tests without a timer can rule
 * out.
 */
static void traced_start(struct traced *t, const char *const opts[],
			 const char *program, const char *const args[])
{
	static const char *const no_timer[] = { "--interval", "0", NULL };
	const char *argv[24] = { PTSHARE_PATH, "run", "--json", NULL, "--record" };
	size_t n = 5;
	tmp_make(t->dir, sizeof(t->dir));
	argv[3] = tmp_path(t->dir, "report.json");
	argv[n++] = tmp_path(t->dir, "trace");
	const char *const *extra = opts ? opts : no_timer;
	t->timer = opts != NULL;
	for (size_t i = 0; extra[i]; i++)
		argv[n++] = extra[i];
	argv[n++] = "--";
	argv[n++] = program ? program : RUN_SUBJECT_PATH;
	for (size_t i = 0; args[i]; i++)
		argv[n++] = args[i];
	cmd_start(&t->c, argv, NULL);
	t->doc = NULL;
}

/* To its end: exit status 0, nothing left behind, the report read. */
static void traced_finish(struct traced *t)
{
	int status = cmd_finish(&t->c);
	if (status)
		fail_msg("ptshare run: status %d; stderr:\n%s", status, t->c.text[1]);
	assert_no_sanitizer_report(&t->c);
	assert_int_equal(dir_entries(run_tmpdir), 0);
	t->doc = report_read(tmp_path(t->dir, "report.json"));
	/* Nothing the shims sent was lost or malformed, or refused. */
	assert_int_equal(jr_path_u64(t->doc, "stream.malformed", 1), 0);
	assert_int_equal(jr_path_u64(t->doc, "stream.lost", 1), 0);
	if (!t->timer)
		assert_int_equal(jr_path_u64(t->doc, "stream.refused", 1), 0);
}

static void traced_run(struct traced *t, const char *const args[])
{
	traced_start(t, NULL, NULL, args);
	traced_finish(t);
}

static void traced_free(struct traced *t)
{
	static const char *const files[] = { "report.json", "trace", NULL };
	jr_free(t->doc);
	cmd_free(&t->c);
	tmp_remove(t->dir, files);
}

/* The numbers after key on the line, into pids (at most max): how many. */
static size_t pids_of(const char *line, const char *key, long *pids, size_t max)
{
	size_t n = 0;
	assert_non_null(line);
	assert_true(!strncmp(line, key, strlen(key)));
	for (char *p = (char *)line + strlen(key), *end; n < max; p = end) {
		long v = strtol(p, &end, 10);
		if (end == p)
			break;
		pids[n++] = v;
	}
	return n;
}

static const struct jr_value *mcc(const struct jr_value *proc)
{
	return jr_get(jr_get(proc, "policies"), MCC);
}

/* Timer checkpoints of the workers in the trace, against a count each. */
struct workers_read {
	const char *trace;
	const long *pids;
	const size_t *want;
};

static bool workers_read(const void *arg)
{
	const struct workers_read *w = arg;
	for (int i = 1; i <= FORKTREE_WORKERS; i++)
		if (trace_timer_checkpoints(w->trace, (int32_t)w->pids[i]) < w->want[i])
			return false;
	return true;
}

/*
 * 8 workers forked from a parent that mapped 1 GiB MAP_SHARED|MAP_ANONYMOUS
 * at FORKTREE_ADDR (run_subject.h), each touching every page.  The numbers
 * under mccracken-2005, by hand:
 *
 * - The mapping is shmem, shared, not writable-private, >= 2 MiB: shareable.
 *   Inherited by fork, it has the same start, end, offset and flags in all
 *   9 processes: the fault-time search matches it.
 * - It is 2 MiB-aligned and 1 GiB long: it covers 512 whole PTE-table spans,
 *   every one shareable.  It covers no whole 1 GiB span (it starts at
 *   8 GiB + 2 MiB): no PMD table is shareable; PUD is off by default.
 * - The parent never touches it: no tables there.  The first worker whose
 *   pages the model observes allocates the 512 PTE tables; every other
 *   worker's faults find them and link them.  So each worker's view has 512
 *   PTE tables shared by the 8 workers, and there are 512 distinct PTE
 *   tables where linux has 8 x 512 = 4096.
 * - Saved system-wide: (4096 - 512) x 4 KiB = 3584 pages = 14,680,064 bytes.
 *   Per worker (PSS-style, 4 KiB / users): 512 x 4096 x (1 - 1/8) =
 *   1,835,008 bytes.  Every other table (program, libraries, stack) is
 *   private or too small under both policies: the same count in both.
 *
 * The workers' pages reach the model at checkpoints; the timer's take the
 * peak.  The test holds the workers until two timer checkpoints of each
 * are in the trace after they all touched (the second surely read /proc
 * after the touching), so the peak has every worker whole.
 */
static void test_forktree(void **state)
{
	static const char *const every_second[] = { "--interval", "1", NULL };
	const char *args[] = { "forktree", NULL };
	struct traced t;
	long pids[1 + FORKTREE_WORKERS];
	size_t want[1 + FORKTREE_WORKERS];
	char trace[128];

	traced_start(&t, every_second, NULL, args);
	snprintf(trace, sizeof(trace), "%s", tmp_path(t.dir, "trace"));
	assert_int_equal(pids_of(cmd_line(&t.c), "@ready", pids, 9), 9);
	for (int i = 1; i <= FORKTREE_WORKERS; i++)
		want[i] = trace_timer_checkpoints(trace, (int32_t)pids[i]) + 2;
	const struct workers_read read_by = { trace, pids, want };
	assert_true(eventually(workers_read, &read_by));
	assert_int_equal(write(t.c.in, "go\n", 3), 3);
	traced_finish(&t);
	assert_string_equal(cmd_line(&t.c), "forktree done");

	const struct jr_value *doc = t.doc;
	assert_finals_exact(doc, 1 + FORKTREE_WORKERS);
	assert_int_equal(jr_path_u64(doc, "totals.processes", 0), 1 + FORKTREE_WORKERS);
	assert_int_equal(jr_path_u64(doc, "totals.exact_processes", 0),
			 1 + FORKTREE_WORKERS);

	const uint64_t span_tables = FORKTREE_BYTES / PTE_SPAN;         /* 512 */
	const uint64_t linux_ptes = FORKTREE_WORKERS * span_tables;     /* 4096 */
	const uint64_t saved = (linux_ptes - span_tables) * PAGE;       /* 14 MiB */
	const double saved_each = (double)span_tables * PAGE *
				  (1.0 - 1.0 / FORKTREE_WORKERS); /* 1,835,008 */
	const struct jr_value *pol = jr_path(doc, "totals.policies");
	const struct jr_value *lin = jr_get(pol, "linux"), *m = jr_get(pol, MCC);
	assert_int_equal(jr_path_u64(m, "shared.pte", 0), linux_ptes);
	assert_int_equal(jr_path_u64(m, "shared.pmd", 1), 0);
	assert_int_equal(jr_path_u64(lin, "distinct.pte", 0) -
			 jr_path_u64(m, "distinct.pte", 0), linux_ptes - span_tables);
	assert_int_equal(jr_path_u64(lin, "distinct.pmd", 0),
			 jr_path_u64(m, "distinct.pmd", 1));
	assert_int_equal(jr_path_u64(lin, "distinct.pud", 0),
			 jr_path_u64(m, "distinct.pud", 1));
	assert_int_equal(jr_path_u64(m, "saved_bytes", 0), saved);

	const struct jr_value *parent = report_process(doc, pids[0]);
	assert_int_equal(jr_path_u64(mcc(parent), "shared.pte", 1), 0);
	assert_true(jr_path_double(mcc(parent), "saved_bytes", 1) == 0);
	for (int i = 1; i <= FORKTREE_WORKERS; i++) {
		const struct jr_value *w = report_process(doc, pids[i]);
		const struct jr_value *wl = jr_get(jr_get(w, "policies"), "linux");
		assert_non_null(w);
		assert_int_equal(jr_path_u64(mcc(w), "shared.pte", 0), span_tables);
		assert_int_equal(jr_path_u64(mcc(w), "shared.pmd", 1), 0);
		assert_int_equal(jr_path_u64(mcc(w), "tables.pte", 0),
				 jr_path_u64(wl, "tables.pte", 1));
		assert_true(jr_path_u64(wl, "tables.pte", 0) >= span_tables);
		assert_true(jr_path_double(mcc(w), "saved_bytes", 0) == saved_each);
	}

	/* The mapping, as the report lists it. */
	const struct jr_value *maps = jr_get(doc, "mappings"), *pool = NULL;
	for (size_t i = 0; i < jr_len(maps); i++)
		if (jr_path_u64(jr_at(maps, i), "start", 0) == FORKTREE_ADDR)
			pool = jr_at(maps, i);
	assert_non_null(pool);
	assert_string_equal(jr_path_str(pool, "kind"), "shmem");
	assert_int_equal(jr_path_u64(pool, "end", 0), FORKTREE_ADDR + FORKTREE_BYTES);
	assert_int_equal(jr_path_u64(pool, "processes", 0), 1 + FORKTREE_WORKERS);
	assert_int_equal(jr_path_u64(mcc(pool), "pte_tables", 0), linux_ptes);
	assert_int_equal(jr_path_u64(mcc(pool), "shared_tables", 0), linux_ptes);
	assert_string_equal(jr_path_str(mcc(pool), "why"), "shared");
	traced_free(&t);
}

/* The last checkpoint of every process of a scenario is exact. */
static void exact_scenario(const char *scenario, size_t processes,
			   const char *says)
{
	const char *args[] = { scenario, NULL };
	struct traced t;
	traced_run(&t, args);
	assert_string_equal(t.c.text[0], says);
	assert_finals_exact(t.doc, processes);
	traced_free(&t);
}

/* A SysV segment of a parent and its child (the segment is gone after). */
static void test_sysv(void **state)
{
	const char *args[] = { "sysv", NULL };
	struct traced t;
	traced_run(&t, args);
	assert_string_equal(t.c.text[0], "sysv done\n");
	assert_finals_exact(t.doc, 2);
	const struct jr_value *maps = jr_get(t.doc, "mappings");
	bool seen = false;
	for (size_t i = 0; i < jr_len(maps); i++)
		seen |= !strcmp(jr_path_str(jr_at(maps, i), "kind"), "sysv") &&
			jr_path_u64(jr_at(maps, i), "end", 0) -
			jr_path_u64(jr_at(maps, i), "start", 0) == SYSV_BYTES;
	assert_true(seen);
	traced_free(&t);
}

static void test_remap(void **state)
{
	exact_scenario("remap", 1, "remap done\n");
}

/* The program closes the shim's socket: it runs on untraced, and its last
 * checkpoint (the one at connect) is still exact. */
static void test_closefds(void **state)
{
	const char *args[] = { "closefds", NULL };
	struct traced t;
	traced_run(&t, args);
	assert_string_equal(t.c.text[0], "closefds start\nclosefds done\n");
	assert_finals_exact(t.doc, 1);
	assert_true(jr_bool(jr_path(t.doc, "final_checkpoints[0].untraced")));
	traced_free(&t);
}

static void test_threads(void **state)
{
	const char *args[] = { "threads", NULL };
	struct traced t;
	traced_run(&t, args);
	assert_string_equal(t.c.text[0], "threads done\n");
	assert_finals_exact(t.doc, 1);
	/* HELLO, per thread its stack's map and per round three maps-or-
	 * unmaps and a protect, EXIT. */
	assert_int_equal(jr_path_u64(t.doc, "final_checkpoints[0].records", 0),
			 2 + THREADS * (1 + 20 * 4));
	traced_free(&t);
}

/* What no reading can show (docs/procfs.md): a thread's malloc arena
 * trimmed by the C library's own madvise leaves page tables with no page
 * present.  The model comes out short of a steady VmPTE by whole tables,
 * and the report says why. */
static void test_arena(void **state)
{
	const char *args[] = { "arena", NULL };
	struct traced t;
	long pid;
	traced_run(&t, args);
	assert_int_equal(pids_of(cmd_line(&t.c), "@arena", &pid, 1), 1);
	assert_string_equal(cmd_line(&t.c), "arena done");
	const struct jr_value *f = report_final(t.doc, pid);
	assert_non_null(f);
	int64_t model = jr_path_i64(f, "model_kb", -1),
		vmpte = jr_path_i64(f, "vmpte_kb", -1);
	if (model < 0 || model >= vmpte || (vmpte - model) % 4 ||
	    !jr_bool(jr_path(f, "stable")))
		fail_msg("model %lld kB, VmPTE %lld kB", (long long)model,
			 (long long)vmpte);
	if (!strstr(t.c.text[1], "tables with no page present"))
		fail_msg("not said:\n%s", t.c.text[1]);
	traced_free(&t);
}

/* vfork + exec and posix_spawn: each new image connects on its own. */
static void test_spawn(void **state)
{
	exact_scenario("spawn", 3, "spawn start\nleaf\nleaf\nspawn done\n");
}

/* An exec: the old image's records (its mapping, PTS_EXEC) and the new
 * image's, on two connections of one process, all applied in order. */
static void test_exec(void **state)
{
	const char *args[] = { "exec", NULL };
	struct traced t;
	traced_run(&t, args);
	assert_string_equal(t.c.text[0], "exec start\nleaf\n");
	assert_finals_exact(t.doc, 1);
	/* HELLO, EXEC_MAPS maps and unmaps, MMAP, EXEC; HELLO, MMAP, EXIT. */
	assert_int_equal(jr_path_u64(t.doc, "final_checkpoints[0].records", 0),
			 6 + 2 * EXEC_MAPS);
	traced_free(&t);
}

/*
 * A shell running /bin/true 20 times (dash: vfork, then exec).  Each image
 * says HELLO, and its EXIT follows at once, often before the daemon has
 * read either: the EXIT's ack goes out once its /proc is read, not before
 * (the image then exits, and no reading of it could be made), and every
 * last checkpoint is exact.
 */
static void test_short_lived(void **state)
{
	const char *args[] = { "-c", "i=0; while [ $i -lt 20 ]; do /bin/true; "
			       "i=$((i+1)); done", NULL };
	struct traced t;
	traced_start(&t, NULL, "/bin/sh", args);
	traced_finish(&t);
	assert_finals_exact(t.doc, 21);
	const struct jr_value *finals = jr_get(t.doc, "final_checkpoints");
	for (size_t i = 0; i < jr_len(finals); i++)
		assert_string_equal(jr_path_str(jr_at(finals, i), "checkpoint"),
				    "exit");
	traced_free(&t);
}

/* The bundled demo as it comes (the timer on), named through a path with
 * "..". */
static void test_prefork_demo(void **state)
{
	static const char *const defaults[] = { NULL };
	const char *args[] = { "--hold", "0", NULL };
	struct traced t;
	long pid = 0;
	traced_start(&t, defaults, PREFORK_POOL_PATH, args);
	traced_finish(&t);
	assert_int_equal(pids_of(cmd_line(&t.c), "ready", &pid, 1), 1);
	assert_finals_exact(t.doc, 9);
	assert_non_null(report_final(t.doc, pid));
	traced_free(&t);
}

/*
 * Root's run starts a child as nobody (runuser, su): nobody cannot reach
 * the daemon's socket (0600, in a 0700 directory), so the child runs
 * untraced.  The report says so as it is: nobody's uid, another user the
 * daemon does not serve, counted with the connections refused for their
 * user; a replay tells it the same.  (sudo -u clears the environment
 * besides: the same.)  The child lives 2 s, past a timer's reading.
 */
static void test_another_user(void **state)
{
	static const char *const every_second[] = { "--interval", "1", NULL };
	static const char *const runuser[] = { "-u", "nobody", "--", "/bin/sleep",
					       "2", NULL };
	static const char *const su[] = { "-s", "/bin/sh", "nobody", "-c",
					  "/bin/sleep 2", NULL };
	const struct {
		const char *program;
		const char *const *args;
	} cases[] = { { "runuser", runuser }, { "su", su } };
	require_root();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct traced t;
		char trace[128], again[128];
		traced_start(&t, every_second, cases[i].program, cases[i].args);
		traced_finish(&t);
		const struct jr_value *finals = jr_get(t.doc, "final_checkpoints");
		size_t nobody = 0;
		for (size_t k = 0; k < jr_len(finals); k++) {
			const struct jr_value *f = jr_at(finals, k);
			bool theirs = jr_path_u64(f, "uid", 0) == 65534;
			nobody += theirs;
			const char *why = jr_path_str(f, "untraced_why");
			assert_true((why && !strcmp(why, "another user")) == theirs);
			assert_true(!theirs || jr_bool(jr_get(f, "untraced")));
		}
		assert_int_equal(nobody, 1);
		assert_int_equal(jr_path_u64(t.doc, "stream.connections_refused_user",
					     0), 1);
		if (!strstr(t.c.text[1], "1 ran as another user"))
			fail_msg("%s: not said:\n%s", cases[i].program, t.c.text[1]);
		snprintf(trace, sizeof(trace), "%s", tmp_path(t.dir, "trace"));
		snprintf(again, sizeof(again), "%s", tmp_path(t.dir, "again.json"));
		assert_replay_same(PTSHARE_PATH, trace, "--json",
				   tmp_path(t.dir, "report.json"), again);
		unlink(again);
		traced_free(&t);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_forktree, run_tmpdir_setup, run_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_sysv, run_tmpdir_setup, run_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_remap, run_tmpdir_setup, run_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_closefds, run_tmpdir_setup, run_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_threads, run_tmpdir_setup, run_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_arena, run_tmpdir_setup, run_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_spawn, run_tmpdir_setup, run_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_exec, run_tmpdir_setup, run_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_short_lived, run_tmpdir_setup, run_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_prefork_demo, run_tmpdir_setup, run_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_another_user, run_tmpdir_setup, run_tmpdir_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
