/* SPDX-License-Identifier: MIT */
/* observe: reconciling presence with a pagemap scan.  Single process:
 * every policy agrees with linux (observing through a shared table is in
 * test_share.c). */
#include "scenario.h"

#define FILE_F 100
#define HUGE_H 300

/* Pages the model lacks are added as faults would (faults_observed); pages
 * the scan lacks are cleared; no table is ever freed. */
static void observe_adds_and_clears(void **state)
{
	struct sc *s = *state;

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_anon(BASE, MiB(4), P_RW), ALL(0));
	sc_observe(s, 1, BASE, BASE + MiB(4),
		   RUNS({ BASE, BASE + 2 * PG, false, false },
			{ BASE + MiB(2), BASE + MiB(2) + PG, false, false }),
		   ALL(3));
	sc_tables(s, W_ALL, 1, 2, 1, 1);
	sc_faults(s, W_ALL, 1, 0, 3);
	sc_fault(s, 1, BASE + PG, RD, ALL(0));
	sc_fault(s, 1, BASE + MiB(2), RD, ALL(0));

	/* same pages again: nothing new */
	sc_observe(s, 1, BASE, BASE + MiB(4),
		   RUNS({ BASE, BASE + 2 * PG, false, false },
			{ BASE + MiB(2), BASE + MiB(2) + PG, false, false }),
		   ALL(0));
	sc_faults(s, W_ALL, 1, 0, 3);

	/* a scan of [BASE+2M, BASE+4M) with nothing: clears BASE+2M only;
	 * the emptied table stays */
	sc_observe(s, 1, BASE + MiB(2), BASE + MiB(4), NO_RUNS, ALL(0));
	sc_tables(s, W_ALL, 1, 2, 1, 1);
	sc_fault(s, 1, BASE, RD, ALL(0));
	sc_fault(s, 1, BASE + MiB(2), RD, ALL(1));

	/* the whole range, only BASE present: BASE+4K and BASE+2M cleared */
	sc_observe(s, 1, BASE, BASE + MiB(4), RUNS({ BASE, BASE + PG, false, false }),
		   ALL(0));
	sc_tables(s, W_ALL, 1, 2, 1, 1);
	sc_fault(s, 1, BASE + PG, RD, ALL(1));
	sc_fault(s, 1, BASE + MiB(2), RD, ALL(1));
	sc_fault(s, 1, BASE, RD, ALL(0));
	sc_faults(s, W_ALL, 1, 3, 3);
}

/* Pages of the scanned range outside every VMA are ignored. */
static void observe_ignores_unmapped(void **state)
{
	struct sc *s = *state;

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_anon(BASE, MiB(2), P_RW), ALL(0));
	sc_observe(s, 1, BASE, BASE + GiB(1), RUNS({ BASE, BASE + PG, false, false }),
		   ALL(1));
	sc_tables(s, W_ALL, 1, 1, 1, 1);
	sc_faults(s, W_ALL, 1, 0, 1);
}

/* Huge runs in a private anonymous VMA are THPs: a deposited PTE table
 * (an existing PTE table becomes it); a scan by small pages splits it. */
static void observe_anon_thp(void **state)
{
	struct sc *s = *state;

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_anon(BASE, MiB(4), P_RW), ALL(0));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_observe(s, 1, BASE, BASE + MiB(4),
		   RUNS({ BASE, BASE + MiB(2), true, false },
			{ BASE + MiB(2), BASE + MiB(4), true, false }),
		   ALL(1023)); /* 511 + 512 */
	sc_tables(s, W_ALL, 1, 2, 1, 1); /* two deposits */
	sc_faults(s, W_ALL, 1, 1, 1023);
	sc_fault(s, 1, BASE + 2 * PG, WR, ALL(0));

	/* second span now by small pages, only its first half: split (the
	 * deposit becomes its table, all present), then the rest cleared */
	sc_observe(s, 1, BASE, BASE + MiB(4),
		   RUNS({ BASE, BASE + MiB(2), true, false },
			{ BASE + MiB(2), BASE + MiB(3), false, false }),
		   ALL(0));
	sc_tables(s, W_ALL, 1, 2, 1, 1);
	sc_fault(s, 1, BASE + MiB(2) + PG, RD, ALL(0));
	sc_fault(s, 1, BASE + MiB(3), RD, ALL(1));
	sc_fault(s, 1, BASE + MiB(2) - PG, RD, ALL(0)); /* still the THP */
	sc_faults(s, W_ALL, 1, 2, 1023);
}

/* Huge runs elsewhere are file THPs: the PTE table there is dropped; a
 * scan without the leaf clears it. */
static void observe_file_leaf(void **state)
{
	struct sc *s = *state;

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_obj(MM_OBJ_FILE, FILE_F, BASE, MiB(4), 0, P_R,
			    MM_VMA_SHARED), ALL(0));
	sc_fault(s, 1, BASE, RD, ALL(1));
	sc_tables(s, W_ALL, 1, 1, 1, 1);
	sc_observe(s, 1, BASE, BASE + MiB(4), RUNS({ BASE, BASE + MiB(2), true, false }),
		   ALL(511));
	sc_tables(s, W_ALL, 1, 0, 1, 1); /* collapsed: no PTE table */
	sc_distinct(s, W_ALL, 0, 1, 1);
	sc_fault(s, 1, BASE + PG, RD, ALL(0));

	sc_observe(s, 1, BASE, BASE + MiB(4), NO_RUNS, ALL(0));
	sc_tables(s, W_ALL, 1, 0, 1, 1); /* leaf cleared */
	sc_fault(s, 1, BASE, RD, ALL(1));
	sc_tables(s, W_ALL, 1, 1, 1, 1);
	sc_faults(s, W_ALL, 1, 2, 511);
}

/*
 * A VMA of terabytes (a sanitizer's shadow, a reserved heap): the runs at
 * its far ends are added, the page the scan no longer sees is cleared, and
 * the tables in between are never allocated.  1 TiB from BASE spans two
 * 512 GiB PUD pages; each end has a PMD page and a PTE table.
 */
static void observe_huge_vma(void **state)
{
	struct sc *s = *state;
	const uint64_t len = GiB(1024);

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_anon(BASE, len, P_RW), ALL(0));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_observe(s, 1, BASE, BASE + len,
		   RUNS({ BASE + len - PG, BASE + len, false, true }), ALL(1));
	/* PUD pages of both 512 GiB halves, a PMD page and PTE table at each
	 * end; the page at BASE was cleared, its table kept. */
	sc_tables(s, W_ALL, 1, 2, 2, 2);
	sc_fault(s, 1, BASE, RD, ALL(1));
	sc_fault(s, 1, BASE + len - PG, RD, ALL(0));
	sc_faults(s, W_ALL, 1, 2, 1);
}

/*
 * An anon run (anonymous pages, not page cache) in a private file mapping
 * proves it was written: the VMA gets anon pages, so fork copies its tables
 * (3: PUD + PMD + PTE; 1 page) and the sharing policies no longer share it.
 * In a shared mapping an anon run changes nothing.
 */
static void observe_anon_pages(void **state)
{
	struct sc *s = *state;

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_obj(MM_OBJ_FILE, FILE_F, BASE, MiB(2), 0, P_R, 0), ALL(0));
	sc_map(s, 1, sc_obj(MM_OBJ_FILE, FILE_F + 1, BASE + GiB(1), MiB(2), 0,
			    P_R, MM_VMA_SHARED), ALL(0));
	sc_observe(s, 1, BASE, BASE + GiB(2),
		   RUNS({ BASE, BASE + PG, false, true },
			{ BASE + GiB(1), BASE + GiB(1) + PG, false, true }),
		   ALL(2));
	sc_vmas(s, W_ALL, 1, { BASE, BASE + MiB(2), P_R, 0, true },
		{ BASE + GiB(1), BASE + GiB(1) + MiB(2), P_R, MM_VMA_SHARED, false });
	sc_reason(s, W_FSHARE, 1, BASE, MM_REASON_PRIVATE_ANON_PAGES);
	sc_fork(s, 1, 2, ALL(0));
	sc_forkwork(s, W_NOFSHARE, 2, 3, 1, 0);
	sc_tables(s, W_NOFSHARE, 2, 1, 1, 1);
	/* ...and the sharing policies link the shared mapping's PTE table, in
	 * a PMD page of the child's own: 4 allocated, 1 linked. */
	sc_forkwork(s, W_FSHARE, 2, 4, 1, 1);
	sc_tables(s, W_FSHARE, 2, 2, 2, 1);
}

/* 1 GiB hugetlb: a huge run is a PUD leaf (no PMD page).
 * Reading: "pages" returned and counted in faults_observed are 4 KiB pages
 * (pagemap entries), for huge leaves too, as for THPs above. */
static void observe_hugetlb_1g(void **state)
{
	struct sc *s = *state;

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_hugetlb(HUGE_H, BASE, GiB(1), 0, 30, MM_VMA_SHARED), ALL(0));
	sc_observe(s, 1, BASE, BASE + GiB(1), RUNS({ BASE, BASE + GiB(1), true, false }),
		   ALL(262144));
	sc_tables(s, W_ALL, 1, 0, 0, 1);
	sc_faults(s, W_ALL, 1, 0, 262144);
	sc_fault(s, 1, BASE + MiB(300), WR, ALL(0));
}

/* 2 MiB hugetlb: a huge run is a PMD leaf per 2 MiB (no PTE table). */
static void observe_hugetlb_2m(void **state)
{
	struct sc *s = *state;

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_hugetlb(HUGE_H, BASE, MiB(4), 0, 21, MM_VMA_SHARED), ALL(0));
	sc_observe(s, 1, BASE, BASE + MiB(4), RUNS({ BASE, BASE + MiB(4), true, false }),
		   ALL(1024));
	sc_tables(s, W_ALL, 1, 0, 1, 1);
	sc_fault(s, 1, BASE + MiB(3), RD, ALL(0));
	sc_faults(s, W_ALL, 1, 0, 1024);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SC_TEST(observe_adds_and_clears),
		SC_TEST(observe_ignores_unmapped),
		SC_TEST(observe_anon_thp),
		SC_TEST(observe_file_leaf),
		SC_TEST(observe_anon_pages),
		SC_TEST(observe_huge_vma),
		SC_TEST(observe_hugetlb_1g),
		SC_TEST(observe_hugetlb_2m),
	};

	return cmocka_run_group_tests_name("unit_observe", tests, NULL, NULL);
}
