/* SPDX-License-Identifier: MIT */
/* protect: no table change, split/merge, -ENOMEM on holes, split of partly
 * covered huge leaves.  Single process: every policy agrees with linux
 * (unshare on protect is in test_share.c). */
#include "scenario.h"

#define FILE_F 100

static void protect_keeps_tables_splits_merges(void **state)
{
	struct sc *s = *state;
	const uint64_t m1 = BASE + MiB(1), m2 = BASE + MiB(2);

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_anon(BASE, MiB(4), P_RW), ALL(0));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_fault(s, 1, m1, WR, ALL(1));
	sc_fault(s, 1, m2, WR, ALL(1));
	sc_tables(s, W_ALL, 1, 2, 1, 1);

	/* same protection: nothing is touched, no split */
	sc_protect(s, 1, m1, MiB(1), P_RW, ALL(0));
	sc_vmas(s, W_ALL, 1, { BASE, BASE + MiB(4), P_RW, 0, true });

	sc_protect(s, 1, m1, MiB(1), P_R, ALL(0));
	sc_vmas(s, W_ALL, 1, { BASE, m1, P_RW, 0, true }, { m1, m2, P_R, 0, true },
		{ m2, BASE + MiB(4), P_RW, 0, true });
	sc_tables(s, W_ALL, 1, 2, 1, 1);
	sc_fault(s, 1, m1, RD, ALL(0)); /* still present */
	sc_fault(s, 1, m1, WR, ALL(-EACCES));

	sc_protect(s, 1, m1, MiB(1), P_RW, ALL(0));
	sc_vmas(s, W_ALL, 1, { BASE, BASE + MiB(4), P_RW, 0, true });
	sc_fault(s, 1, m1, WR, ALL(0));
	sc_tables(s, W_ALL, 1, 2, 1, 1);
	sc_faults(s, W_ALL, 1, 3, 0);
	sc_distinct(s, W_ALL, 2, 1, 1);
}

/*
 * The whole range must be mapped: -ENOMEM and no change at all.
 * Reading: the kernel's mprotect applies the change to the VMAs before the
 * hole and then returns -ENOMEM; the model rejects the whole call (mm.h: a
 * rejected operation leaves the world unchanged).  Tables are the same
 * either way under linux.
 */
static void protect_hole_enomem(void **state)
{
	struct sc *s = *state;

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_anon(BASE, MiB(2), P_RW), ALL(0));
	sc_map(s, 1, sc_anon(BASE + MiB(4), MiB(2), P_RW), ALL(0));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_protect(s, 1, BASE, MiB(6), P_R, ALL(-ENOMEM));
	sc_protect(s, 1, BASE + MiB(2), MiB(2), P_R, ALL(-ENOMEM));
	sc_protect(s, 1, BASE - PG, 2 * PG, P_R, ALL(-ENOMEM));
	sc_vmas(s, W_ALL, 1, { BASE, BASE + MiB(2), P_RW, 0, true },
		{ BASE + MiB(4), BASE + MiB(6), P_RW, 0, false });
	sc_fault(s, 1, BASE + PG, WR, ALL(1));
}

/* An anonymous THP partly inside the range is split: its deposit becomes
 * the PTE table, all 512 pages present. */
static void protect_splits_anon_thp(void **state)
{
	struct sc *s = *state;

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_anon(BASE, MiB(4), P_RW), ALL(0));
	sc_fault(s, 1, BASE, WR, ALL(1));
	/* khugepaged: the existing PTE table becomes the deposit; 511 pages new */
	sc_observe(s, 1, BASE, BASE + MiB(4), RUNS({ BASE, BASE + MiB(2), true, false }),
		   ALL(511));
	sc_tables(s, W_ALL, 1, 1, 1, 1); /* deposit counted as a PTE table */
	sc_faults(s, W_ALL, 1, 1, 511);

	sc_protect(s, 1, BASE, MiB(1), P_R, ALL(0));
	sc_tables(s, W_ALL, 1, 1, 1, 1);
	sc_fault(s, 1, BASE + MiB(1) + PG, WR, ALL(0)); /* all 512 present */
	sc_fault(s, 1, BASE + PG, RD, ALL(0));
	sc_fault(s, 1, BASE + MiB(2), WR, ALL(1));
	sc_tables(s, W_ALL, 1, 2, 1, 1);
	sc_faults(s, W_ALL, 1, 2, 511);
}

/* A file huge leaf partly inside the range is cleared; it has no PTE
 * table.  (The 4 MiB shared file mapping is shareable under mccracken-2005
 * and aslr-tolerant, but there is no other process.) */
static void protect_splits_file_leaf(void **state)
{
	struct sc *s = *state;

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_obj(MM_OBJ_FILE, FILE_F, BASE, MiB(4), 0, P_R,
			    MM_VMA_SHARED), ALL(0));
	sc_observe(s, 1, BASE, BASE + MiB(4), RUNS({ BASE, BASE + MiB(2), true, false }),
		   ALL(512));
	sc_tables(s, W_ALL, 1, 0, 1, 1); /* a file leaf: no PTE table */

	sc_protect(s, 1, BASE + MiB(1), MiB(2), P_RW, ALL(0));
	sc_vmas(s, W_ALL, 1, { BASE, BASE + MiB(1), P_R, MM_VMA_SHARED, false },
		{ BASE + MiB(1), BASE + MiB(3), P_RW, MM_VMA_SHARED, false },
		{ BASE + MiB(3), BASE + MiB(4), P_R, MM_VMA_SHARED, false });
	sc_tables(s, W_ALL, 1, 0, 1, 1);
	sc_fault(s, 1, BASE, RD, ALL(1)); /* the leaf was cleared */
	sc_tables(s, W_ALL, 1, 1, 1, 1);
	sc_faults(s, W_ALL, 1, 1, 512);
	sc_findings(s, W_ALL, 0, 0, 0, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SC_TEST(protect_keeps_tables_splits_merges),
		SC_TEST(protect_hole_enomem),
		SC_TEST(protect_splits_anon_thp),
		SC_TEST(protect_splits_file_leaf),
	};

	return cmocka_run_group_tests_name("unit_protect", tests, NULL, NULL);
}
