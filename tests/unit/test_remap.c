/* SPDX-License-Identifier: MIT */
/* remap: shrink/grow in place, move (move_page_tables extent by extent),
 * FIXED, DONTUNMAP.  Anonymous mappings: every policy agrees with linux
 * (unshare on remap is in test_share.c). */
#include "scenario.h"

static void remap_shrink_in_place(void **state)
{
	struct sc *s = *state;

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_anon(BASE, MiB(4), P_RW), ALL(0));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_fault(s, 1, BASE + MiB(2), WR, ALL(1));
	sc_remap(s, 1, BASE, MiB(4), BASE, MiB(2), 0, ALL(0));
	sc_vmas(s, W_ALL, 1, { BASE, BASE + MiB(2), P_RW, 0, true });
	sc_tables(s, W_ALL, 1, 1, 1, 1); /* the tail's PTE table freed */
	sc_fault(s, 1, BASE, RD, ALL(0));
}

static void remap_grow_in_place(void **state)
{
	struct sc *s = *state;

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_anon(BASE, MiB(2), P_RW), ALL(0));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_remap(s, 1, BASE, MiB(2), BASE, MiB(4), 0, ALL(0));
	sc_vmas(s, W_ALL, 1, { BASE, BASE + MiB(4), P_RW, 0, true });
	sc_tables(s, W_ALL, 1, 1, 1, 1); /* tables unchanged */
	sc_fault(s, 1, BASE, RD, ALL(0));
	sc_fault(s, 1, BASE + MiB(3), RD, ALL(1));

	/* the space after the VMA is taken: growing in place fails (the
	 * kernel says -ENOMEM; the spec names no errno) */
	sc_map(s, 1, sc_anon(BASE + MiB(6), MiB(2), P_R), ALL(0));
	sc_remap(s, 1, BASE, MiB(4), BASE, MiB(8), 0, ALL(SC_ERR));
}

/* A whole 1 GiB extent aligned on both sides: the PMD page itself moves,
 * nothing is allocated or freed. */
static void remap_move_whole_pmd_page(void **state)
{
	struct sc *s = *state;
	const uint64_t to = BASE + GiB(4);

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_anon(BASE, GiB(1), P_RW), ALL(0));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_fault(s, 1, BASE + MiB(2), WR, ALL(1));
	sc_tables(s, W_ALL, 1, 2, 1, 1);
	sc_remap(s, 1, BASE, GiB(1), to, GiB(1), MM_REMAP_MAYMOVE, ALL(0));
	sc_vmas(s, W_ALL, 1, { to, to + GiB(1), P_RW, 0, true });
	sc_tables(s, W_ALL, 1, 2, 1, 1); /* same PUD page (same 512 GiB) */
	sc_distinct(s, W_ALL, 2, 1, 1);
	sc_fault(s, 1, to, RD, ALL(0));
	sc_fault(s, 1, to + MiB(2), RD, ALL(0));
	sc_fault(s, 1, to + MiB(4), RD, ALL(1));
	sc_tables(s, W_ALL, 1, 3, 1, 1);
}

/* Whole 2 MiB extents aligned on both sides: the PTE tables move into a new
 * PMD page; the old PMD page goes with the old range. */
static void remap_move_aligned_pte_tables(void **state)
{
	struct sc *s = *state;
	const uint64_t to = BASE + GiB(1);

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_anon(BASE, MiB(4), P_RW), ALL(0));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_fault(s, 1, BASE + MiB(2), WR, ALL(1));
	sc_remap(s, 1, BASE, MiB(4), to, MiB(4), MM_REMAP_MAYMOVE, ALL(0));
	sc_vmas(s, W_ALL, 1, { to, to + MiB(4), P_RW, 0, true });
	/* + PMD at `to`, 2 PTE moved, - PMD at BASE */
	sc_tables(s, W_ALL, 1, 2, 1, 1);
	sc_distinct(s, W_ALL, 2, 1, 1);
	sc_fault(s, 1, to, RD, ALL(0));
	sc_fault(s, 1, to + MiB(2), RD, ALL(0));
}

/*
 * Unaligned destination (BASE -> BASE+1G+1M): extents of 1 MiB, entries
 * moved into two new PTE tables.
 *   extent 1: old [BASE, +1M) -> [BASE+1G+1M, BASE+1G+2M): PMD page at
 *             BASE+1G allocated, PTE table of [BASE+1G, +2M) allocated;
 *   extent 2: old [BASE+1M, +1M) -> [BASE+1G+2M, +1M): PTE table of
 *             [BASE+1G+2M, +2M) allocated;
 *   then the old range is unmapped: its PTE table and PMD page are freed.
 */
static void remap_move_unaligned_entries(void **state)
{
	struct sc *s = *state;
	const uint64_t to = BASE + GiB(1) + MiB(1);

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_anon(BASE, MiB(2), P_RW), ALL(0));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_fault(s, 1, BASE + PG, WR, ALL(1));
	sc_fault(s, 1, BASE + MiB(1) + PG, WR, ALL(1));
	sc_tables(s, W_ALL, 1, 1, 1, 1);
	sc_remap(s, 1, BASE, MiB(2), to, MiB(2), MM_REMAP_MAYMOVE, ALL(0));
	sc_vmas(s, W_ALL, 1, { to, to + MiB(2), P_RW, 0, true });
	sc_tables(s, W_ALL, 1, 2, 1, 1); /* 2 PTE + PMD(BASE+1G) + PUD */
	sc_distinct(s, W_ALL, 2, 1, 1);
	sc_fault(s, 1, to, RD, ALL(0));
	sc_fault(s, 1, to + PG, RD, ALL(0));
	sc_fault(s, 1, to + MiB(1) + PG, RD, ALL(0)); /* in the second table */
	sc_fault(s, 1, to + 2 * PG, RD, ALL(1));
	sc_faults(s, W_ALL, 1, 4, 0);
}

/* Moving to a smaller size unmaps the tail first. */
static void remap_move_shrinks_tail_first(void **state)
{
	struct sc *s = *state;
	const uint64_t to = BASE + GiB(1);

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_anon(BASE, MiB(4), P_RW), ALL(0));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_fault(s, 1, BASE + MiB(2), WR, ALL(1));
	sc_remap(s, 1, BASE, MiB(4), to, MiB(2), MM_REMAP_MAYMOVE, ALL(0));
	sc_vmas(s, W_ALL, 1, { to, to + MiB(2), P_RW, 0, true });
	sc_tables(s, W_ALL, 1, 1, 1, 1);
	sc_distinct(s, W_ALL, 1, 1, 1);
	sc_fault(s, 1, to, RD, ALL(0));
}

/* FIXED unmaps the destination first (its tables freed by the unmap rule). */
static void remap_fixed_unmaps_destination(void **state)
{
	struct sc *s = *state;
	const uint64_t to = BASE + GiB(1);

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_anon(BASE, MiB(2), P_RW), ALL(0));
	sc_map(s, 1, sc_anon(to, MiB(2), P_R), ALL(0));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_fault(s, 1, to + 2 * PG, RD, ALL(1));
	sc_tables(s, W_ALL, 1, 2, 2, 1);
	sc_remap(s, 1, BASE, MiB(2), to, MiB(2),
		 MM_REMAP_MAYMOVE | MM_REMAP_FIXED, ALL(0));
	sc_vmas(s, W_ALL, 1, { to, to + MiB(2), P_RW, 0, true });
	sc_tables(s, W_ALL, 1, 1, 1, 1);
	sc_distinct(s, W_ALL, 1, 1, 1);
	sc_fault(s, 1, to, WR, ALL(0));         /* the moved page */
	sc_fault(s, 1, to + 2 * PG, RD, ALL(1)); /* the replaced one is gone */
}

/* DONTUNMAP keeps the old VMA, emptied and without anon pages; its PMD page
 * stays, the (aligned) PTE table moved. */
static void remap_dontunmap(void **state)
{
	struct sc *s = *state;
	const uint64_t to = BASE + GiB(1);

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_anon(BASE, MiB(2), P_RW), ALL(0));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_fault(s, 1, BASE + PG, WR, ALL(1));
	sc_remap(s, 1, BASE, MiB(2), to, MiB(2),
		 MM_REMAP_MAYMOVE | MM_REMAP_DONTUNMAP, ALL(0));
	sc_vmas(s, W_ALL, 1, { BASE, BASE + MiB(2), P_RW, 0, false },
		{ to, to + MiB(2), P_RW, 0, true });
	sc_tables(s, W_ALL, 1, 1, 2, 1); /* PMD at BASE kept, PMD at `to` new */
	sc_fault(s, 1, to + PG, RD, ALL(0));
	sc_fault(s, 1, BASE, RD, ALL(1));
	sc_tables(s, W_ALL, 1, 2, 2, 1);
	sc_vmas(s, W_ALL, 1, { BASE, BASE + MiB(2), P_RW, 0, false },
		{ to, to + MiB(2), P_RW, 0, true });
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SC_TEST(remap_shrink_in_place),
		SC_TEST(remap_grow_in_place),
		SC_TEST(remap_move_whole_pmd_page),
		SC_TEST(remap_move_aligned_pte_tables),
		SC_TEST(remap_move_unaligned_entries),
		SC_TEST(remap_move_shrinks_tail_first),
		SC_TEST(remap_fixed_unmaps_destination),
		SC_TEST(remap_dontunmap),
	};

	return cmocka_run_group_tests_name("unit_remap", tests, NULL, NULL);
}
