/* SPDX-License-Identifier: MIT */
/*
 * cow-pte (docs/model.md, "cow-pte"): fork shares the PTE tables it would
 * copy; a process copies a shared one when it first changes it.  The
 * issue's case worked by hand, then each rule, as SC_EXTRA beside the
 * four built-in worlds (mm_check() after every operation).
 */
#include "scenario.h"

static int setup_cow(void **state) { return sc_setup_extra(state, "cow-pte"); }

static void check(struct mm_world *w)
{
	if (mm_check(w))
		fail_msg("%s", mm_world_error(w));
}

/*
 * 1 GiB of private anonymous memory at BASE (a 512 GiB boundary), every
 * page written: 512 PTE tables, a PMD page, a PUD page.  Four children
 * forked; each writes the first 10% of it (26,214 pages: 51 whole spans
 * and 102 pages of the 52nd).
 *   linux: each fork copies 514 tables (PUD, PMD, 512 PTE) and 262,144
 *     pages' entries; the writes copy nothing more.
 *   cow-pte: each fork allocates the child's PUD and PMD pages (2 tables
 *     copied) and links the parent's 512 PTE tables, no entry copied; each
 *     child's writes copy the 52 tables they meet: 4 x 52 = 208 copies
 *     deferred.  Distinct PTE tables: 512 + 208 = 720 (linux: 5 x 512).
 *   Then the parent writes a page of span 100, which no child wrote: that
 *   table is still shared by five, the parent copies it (1); and a page
 *   of span 0, whose table every child left: the parent's alone now,
 *   reused (0 more).
 */
static void issue_case(void **state)
{
	(void)state;
	const struct mm_policy *pols[] = { &mm_policy_linux, &mm_policy_cow_pte };
	const uint64_t ten = 26214 * PG;
	for (int k = 0; k < 2; k++) {
		bool cow = k == 1;
		struct mm_world *w = mm_world_new(pols[k]);
		assert_non_null(w);
		assert_int_equal(mm_create(w, 1), 0);
		struct mm_mapping m = sc_anon(BASE, GiB(1), P_RW);
		assert_int_equal(mm_map(w, 1, &m), 0);
		assert_int_equal(mm_fault_range(w, 1, BASE, GiB(1), true), 262144);
		check(w);
		for (uint32_t c = 2; c <= 5; c++) {
			struct mm_proc_stats s;
			assert_int_equal(mm_fork(w, 1, c), 0);
			check(w);
			assert_int_equal(mm_proc_stats(w, c, &s), 0);
			assert_int_equal(s.fork_tables_copied, cow ? 2 : 514);
			assert_int_equal(s.fork_pages_copied, cow ? 0 : 262144);
			assert_int_equal(s.fork_tables_linked, cow ? 512 : 0);
			assert_int_equal(s.tables[PT_PTE], 512);
		}
		for (uint32_t c = 2; c <= 5; c++) {
			struct mm_proc_stats s;
			assert_int_equal(mm_fault_range(w, c, BASE, ten, true), 0);
			check(w);
			assert_int_equal(mm_proc_stats(w, c, &s), 0);
			assert_int_equal(s.cow_copies, cow ? 52 : 0);
		}
		uint64_t t[PT_NR_LEVELS];
		mm_world_tables(w, t);
		assert_int_equal(t[PT_PTE], cow ? 720 : 5 * 512);
		assert_int_equal(mm_fault(w, 1, BASE + 100 * MiB(2), true), 0);
		assert_int_equal(mm_fault(w, 1, BASE, true), 0);
		check(w);
		struct mm_proc_stats s;
		assert_int_equal(mm_proc_stats(w, 1, &s), 0);
		assert_int_equal(s.cow_copies, cow ? 1 : 0);
		mm_world_tables(w, t);
		assert_int_equal(t[PT_PTE], cow ? 721 : 5 * 512);
		mm_world_free(w);
	}
}

/* Reads of present pages share; a page added, a partial unmap, an
 * mprotect break; a whole span unmapped only detaches. */
static void breaks(void **state)
{
	struct sc *s = *state;

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_anon(BASE, MiB(8), P_RW), ALL(0));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_fault(s, 1, BASE + MiB(2), WR, ALL(1));
	sc_fault(s, 1, BASE + MiB(4), WR, ALL(1));
	sc_fault(s, 1, BASE + MiB(6), WR, ALL(1));
	sc_fork(s, 1, 2, ALL(0));
	sc_forkwork(s, W_LINUX, 2, 6, 4, 0);   /* PUD, PMD, 4 PTE; 4 pages */
	sc_forkwork(s, W_EXTRA, 2, 2, 0, 4);
	sc_distinct(s, W_EXTRA, 4, 2, 2);
	sc_shared(s, W_EXTRA, 2, 4, 0, 0);
	sc_fault(s, 2, BASE, RD, ALL(0));        /* present: shared still */
	sc_distinct(s, W_EXTRA, 4, 2, 2);
	sc_fault(s, 2, BASE + PG, RD, ALL(1));   /* a page added: a copy */
	sc_distinct(s, W_EXTRA, 5, 2, 2);
	sc_protect(s, 2, BASE + MiB(2), MiB(2), P_R, ALL(0)); /* a copy */
	sc_distinct(s, W_EXTRA, 6, 2, 2);
	sc_unmap(s, 2, BASE + MiB(4), PG, ALL(0)); /* partial: a copy */
	sc_distinct(s, W_EXTRA, 7, 2, 2);
	sc_unmap(s, 2, BASE + MiB(6), MiB(2), ALL(0)); /* whole: detached */
	sc_distinct(s, W_EXTRA, 7, 2, 2);
	sc_tables(s, W_EXTRA, 2, 3, 1, 1);
	sc_shared(s, W_EXTRA, 1, 0, 0, 0); /* P1 alone in every table now */
	sc_shared(s, W_EXTRA, 2, 0, 0, 0);
	sc_exit(s, 2, ALL(0));
	sc_distinct(s, W_EXTRA, 4, 1, 1);
}

/* A VMA fork does not give the child as it is (MADV_DONTFORK) makes
 * its table's span copied as linux copies it. */
static void dontfork_copies(void **state)
{
	struct sc *s = *state;

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_anon(BASE, MiB(1), P_RW), ALL(0));
	sc_map(s, 1, sc_anon(BASE + MiB(1), MiB(1), P_R), ALL(0));
	sc_map(s, 1, sc_anon(BASE + MiB(2), MiB(2), P_RW), ALL(0));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_fault(s, 1, BASE + MiB(1), RD, ALL(1));
	sc_fault(s, 1, BASE + MiB(2), WR, ALL(1));
	sc_advise(s, 1, BASE + MiB(1), MiB(1), MM_ADV_DONTFORK, ALL(0));
	sc_fork(s, 1, 2, ALL(0));
	/* span 0 has a DONTFORK VMA: copied; span 2 MiB: linked. */
	sc_forkwork(s, W_EXTRA, 2, 3, 1, 1);
	sc_forkwork(s, W_LINUX, 2, 4, 2, 0);
	sc_distinct(s, W_EXTRA, 3, 2, 2);
}

/* A cow-pte world where process 1 wrote 8 MiB of private anonymous
 * memory, then forked 2. */
static struct mm_world *written_forked(void)
{
	struct mm_world *w = mm_world_new(&mm_policy_cow_pte);
	assert_non_null(w);
	assert_int_equal(mm_create(w, 1), 0);
	struct mm_mapping m = sc_anon(BASE, MiB(8), P_RW);
	assert_int_equal(mm_map(w, 1, &m), 0);
	assert_int_equal(mm_fault_range(w, 1, BASE, MiB(8), true), 2048);
	assert_int_equal(mm_fork(w, 1, 2), 0);
	return w;
}

/*
 * Writes seen only at checkpoints: 8 MiB of private anonymous memory, all
 * written, forked.  A page present before and after shows no change, but
 * pagemap says which pages a process maps alone since (mm_run.written):
 * the child's scan showing one in span 1 copies that table (1); a scan
 * showing none copies nothing; the parent's scan showing its original of
 * that page alone too (both sides' pages turn exclusive when one writes)
 * finds the table its own already, reused (0): one copy in all, as the
 * write fault itself would have made.
 */
static void written_observed(void **state)
{
	(void)state;
	struct mm_world *w = written_forked();
	const uint64_t p = BASE + MiB(2) + 5 * PG;
	const struct mm_run plain[] = {
		{ BASE, BASE + MiB(8), false, true, false },
	};
	const struct mm_run wrote[] = {
		{ BASE, p, false, true, false },
		{ p, p + PG, false, true, true },
		{ p + PG, BASE + MiB(8), false, true, false },
	};
	struct mm_proc_stats st;
	for (uint32_t pid = 1; pid <= 2; pid++) {
		assert_int_equal(mm_observe(w, pid, BASE, BASE + MiB(8), plain, 1), 0);
		check(w);
		assert_int_equal(mm_proc_stats(w, pid, &st), 0);
		assert_int_equal(st.cow_copies, 0);
	}
	assert_int_equal(mm_observe(w, 2, BASE, BASE + MiB(8), wrote, 3), 0);
	check(w);
	assert_int_equal(mm_proc_stats(w, 2, &st), 0);
	assert_int_equal(st.cow_copies, 1);
	assert_int_equal(mm_observe(w, 2, BASE, BASE + MiB(8), plain, 1), 0);
	assert_int_equal(mm_observe(w, 1, BASE, BASE + MiB(8), wrote, 3), 0);
	check(w);
	assert_int_equal(mm_proc_stats(w, 2, &st), 0);
	assert_int_equal(st.cow_copies, 1);
	assert_int_equal(mm_proc_stats(w, 1, &st), 0);
	assert_int_equal(st.cow_copies, 0);
	uint64_t t[PT_NR_LEVELS];
	mm_world_tables(w, t);
	assert_int_equal(t[PT_PTE], 5);
	mm_world_free(w);
}

/* The runs of [BASE, BASE + 8 MiB), all present, written exactly at the
 * pages alone[0..n) (sorted): into out, their number. */
static size_t runs_alone(struct mm_run *out, const uint64_t *alone, size_t n)
{
	size_t k = 0;
	uint64_t at = BASE;
	for (size_t i = 0; i < n; at = alone[i++] + PG) {
		if (at < alone[i])
			out[k++] = (struct mm_run){ at, alone[i], false, true, false };
		out[k++] = (struct mm_run){ alone[i], alone[i] + PG, false, true,
					    true };
	}
	if (at < BASE + MiB(8))
		out[k++] = (struct mm_run){ at, BASE + MiB(8), false, true, false };
	return k;
}

/* What pid's scan showing the pages alone[0..n) alone copies. */
#define ALONE_MAX 2
static uint64_t copies_seen(struct mm_world *w, uint32_t pid,
			    const uint64_t *alone, size_t n)
{
	struct mm_run runs[2 * ALONE_MAX + 1];
	assert_true(n <= ALONE_MAX);
	struct mm_proc_stats st;
	assert_int_equal(mm_proc_stats(w, pid, &st), 0);
	uint64_t before = st.cow_copies;
	assert_int_equal(mm_observe(w, pid, BASE, BASE + MiB(8), runs,
				    runs_alone(runs, alone, n)), 0);
	check(w);
	assert_int_equal(mm_proc_stats(w, pid, &st), 0);
	return st.cow_copies - before;
}

/*
 * A sharer's exit is not a write (mm_exiting): 8 MiB of private anonymous
 * memory (spans 0-3), all written, forked to 2 and 3.  The kernel's pages
 * turn exclusive as they do; each write costs one copy, whichever side is
 * read first, and the exits none.
 *   2 writes page p of span 1: its scan shows p alone, it copies (1).
 *   3 makes its last reading (nothing alone) and exits: the original of p
 *   is the parent's alone now; its scan shows it, in a table shared with
 *   3 alone: no copy (0; the kernel dropped 3's link, reuse).
 *   2 writes page q of span 0: the parent's original of q is alone, the
 *   parent read first copies span 0's table, shared with 2, which runs
 *   (1); 2's scan then shows q and p alone, its span 0 table shared with
 *   exiting 3 alone: reuse (0).
 *   2 exits: every page of the parent's is alone; spans 1-3 shared with
 *   exiting 2 and 3 only: none (0).
 * Two writes, two copies; distinct PTE tables: 4 + 2, and the parent's 4
 * once 2 and 3 leave the model.
 */
static void exit_not_written(void **state)
{
	(void)state;
	struct mm_world *w = written_forked();
	assert_int_equal(mm_fork(w, 1, 3), 0);
	const uint64_t q = BASE + 7 * PG, p = BASE + MiB(2) + 5 * PG;
	const uint64_t p_only[] = { p }, both[] = { q, p };
	assert_int_equal(copies_seen(w, 2, p_only, 1), 1);
	assert_int_equal(copies_seen(w, 3, NULL, 0), 0);
	assert_int_equal(mm_exiting(w, 3), 0);
	check(w);
	assert_int_equal(copies_seen(w, 1, p_only, 1), 0);
	assert_int_equal(copies_seen(w, 1, both, 2), 1);
	assert_int_equal(copies_seen(w, 2, both, 2), 0);
	assert_int_equal(mm_exiting(w, 2), 0);
	check(w);
	struct mm_run all = { BASE, BASE + MiB(8), false, true, true };
	struct mm_proc_stats st;
	assert_int_equal(mm_observe(w, 1, BASE, BASE + MiB(8), &all, 1), 0);
	check(w);
	assert_int_equal(mm_proc_stats(w, 1, &st), 0);
	assert_int_equal(st.cow_copies, 1);
	uint64_t t[PT_NR_LEVELS];
	mm_world_tables(w, t);
	assert_int_equal(t[PT_PTE], 6);
	assert_int_equal(mm_exit(w, 2), 0);
	assert_int_equal(mm_exit(w, 3), 0);
	check(w);
	mm_world_tables(w, t);
	assert_int_equal(t[PT_PTE], 4);
	mm_world_free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(issue_case),
		cmocka_unit_test(written_observed),
		cmocka_unit_test(exit_not_written),
		cmocka_unit_test_setup_teardown(breaks, setup_cow, sc_teardown),
		cmocka_unit_test_setup_teardown(dontfork_copies, setup_cow,
						sc_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
