/* SPDX-License-Identifier: MIT */
/* map (MAP_FIXED, overlap, merging) and unmap (zap, free_pgtables rule).
 * Anonymous or small mappings: every policy must agree with linux. */
#include "scenario.h"

#define FILE_F 100
#define SYSV_S 7
#define HUGE_H 300

/* MAP_FIXED unmaps the overlap first, freeing the tables the unmap rule
 * frees; the new VMA gets no table. */
static void map_fixed_replaces(void **state)
{
	struct sc *s = *state;

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_anon(BASE, MiB(4), P_RW), ALL(0));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_fault(s, 1, BASE + MiB(2), WR, ALL(1));
	sc_tables(s, W_ALL, 1, 2, 1, 1);

	sc_map(s, 1, sc_fixed(sc_obj(MM_OBJ_FILE, FILE_F, BASE + MiB(2), MiB(2),
				     0, P_R, 0)), ALL(0));
	/* PTE of [BASE+2M, +2M) freed: no VMA left in its span once the old
	 * range is unmapped (the new VMA comes after); PMD keeps [BASE, +2M). */
	sc_tables(s, W_ALL, 1, 1, 1, 1);
	sc_vmas(s, W_ALL, 1, { BASE, BASE + MiB(2), P_RW, 0, true },
		{ BASE + MiB(2), BASE + MiB(4), P_R, 0, false });
	sc_fault(s, 1, BASE + MiB(2), RD, ALL(1)); /* the old page is gone */
	sc_tables(s, W_ALL, 1, 2, 1, 1);
	sc_fault(s, 1, BASE, RD, ALL(0));         /* untouched part kept */
	sc_distinct(s, W_ALL, 2, 1, 1);
	sc_faults(s, W_ALL, 1, 3, 0);
}

/* MAP_FIXED in the middle of a VMA splits it. */
static void map_fixed_splits(void **state)
{
	struct sc *s = *state;

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_anon(BASE, MiB(6), P_RW), ALL(0));
	sc_fault(s, 1, BASE + MiB(3), WR, ALL(1));
	sc_map(s, 1, sc_fixed(sc_anon(BASE + MiB(2), MiB(2), P_R)), ALL(0));
	sc_vmas(s, W_ALL, 1, { BASE, BASE + MiB(2), P_RW, 0, true },
		{ BASE + MiB(2), BASE + MiB(4), P_R, 0, false },
		{ BASE + MiB(4), BASE + MiB(6), P_RW, 0, true });
	sc_tables(s, W_ALL, 1, 0, 1, 1); /* the only PTE table's span emptied */
	sc_fault(s, 1, BASE + MiB(3), RD, ALL(1));
	sc_tables(s, W_ALL, 1, 1, 1, 1);
}

/* Without MAP_FIXED an overlap is -EEXIST and nothing changes (the harness
 * compares the whole world before and after). */
static void map_overlap_eexist(void **state)
{
	struct sc *s = *state;

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_anon(BASE, MiB(4), P_RW), ALL(0));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_map(s, 1, sc_anon(BASE + MiB(2), MiB(4), P_RW), ALL(-EEXIST));
	sc_map(s, 1, sc_anon(BASE, MiB(4), P_RW), ALL(-EEXIST));
	sc_map(s, 1, sc_anon(BASE - PG, 2 * PG, P_RW), ALL(-EEXIST));
	sc_map(s, 1, sc_obj(MM_OBJ_FILE, FILE_F, BASE + MiB(3), PG, 0, P_R, 0),
	       ALL(-EEXIST));
	/* adjacent, different protection: accepted, not merged */
	sc_map(s, 1, sc_anon(BASE + MiB(4), MiB(2), P_R), ALL(0));
	sc_vmas(s, W_ALL, 1, { BASE, BASE + MiB(4), P_RW, 0, true },
		{ BASE + MiB(4), BASE + MiB(6), P_R, 0, false });
	sc_tables(s, W_ALL, 1, 1, 1, 1);
}

/* Adjacent anonymous maps merge; the merged VMA has anon pages, so fork
 * copies the whole merged range. */
static void map_merge_anon_propagates_anon_pages(void **state)
{
	struct sc *s = *state;

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_anon(BASE, MiB(2), P_RW), ALL(0));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_map(s, 1, sc_anon(BASE + MiB(2), MiB(2), P_RW), ALL(0));
	sc_vmas(s, W_ALL, 1, { BASE, BASE + MiB(4), P_RW, 0, true });
	sc_fault(s, 1, BASE + MiB(2), RD, ALL(1)); /* zero page in the new part */
	sc_tables(s, W_ALL, 1, 2, 1, 1);

	sc_fork(s, 1, 2, ALL(0));
	sc_tables(s, W_ALL, 2, 2, 1, 1);
	sc_forkwork(s, W_ALL, 2, 4, 2, 0); /* PUD + PMD + 2 PTE; pages BASE, BASE+2M */
	sc_fault(s, 2, BASE + MiB(2), RD, ALL(0));
	sc_distinct(s, W_ALL, 4, 2, 2);
}

/* A map between two VMAs merges with the one before, then the one after. */
static void map_merge_both_sides(void **state)
{
	struct sc *s = *state;

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_anon(BASE, MiB(2), P_RW), ALL(0));
	sc_map(s, 1, sc_anon(BASE + MiB(4), MiB(2), P_RW), ALL(0));
	sc_map(s, 1, sc_anon(BASE + MiB(2), MiB(2), P_RW), ALL(0));
	sc_vmas(s, W_ALL, 1, { BASE, BASE + MiB(6), P_RW, 0, false });
}

/* Both neighbours hold anon pages of different anon_vmas: the new VMA
 * merges with the one before only. */
static void map_merge_incompatible_anon(void **state)
{
	struct sc *s = *state;

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_anon(BASE, MiB(2), P_RW), ALL(0));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_map(s, 1, sc_anon(BASE + MiB(4), MiB(2), P_RW), ALL(0));
	sc_fault(s, 1, BASE + MiB(4), WR, ALL(1));
	sc_map(s, 1, sc_anon(BASE + MiB(2), MiB(2), P_RW), ALL(0));
	sc_vmas(s, W_ALL, 1, { BASE, BASE + MiB(4), P_RW, 0, true },
		{ BASE + MiB(4), BASE + MiB(6), P_RW, 0, true });
}

/* File maps merge with a contiguous offset only; SysV and hugetlb never. */
static void map_merge_objects(void **state)
{
	struct sc *s = *state;
	const uint64_t g = BASE + GiB(1), h = BASE + GiB(2);

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_obj(MM_OBJ_FILE, FILE_F, BASE, MiB(2), 0, P_R, 0), ALL(0));
	sc_map(s, 1, sc_obj(MM_OBJ_FILE, FILE_F, BASE + MiB(2), MiB(2), MiB(2),
			    P_R, 0), ALL(0));
	sc_map(s, 1, sc_obj(MM_OBJ_FILE, FILE_F, BASE + MiB(4), MiB(2), MiB(8),
			    P_R, 0), ALL(0)); /* offset not contiguous */
	sc_vmas(s, W_ALL, 1, { BASE, BASE + MiB(4), P_R, 0, false },
		{ BASE + MiB(4), BASE + MiB(6), P_R, 0, false });

	sc_map(s, 1, sc_obj(MM_OBJ_SYSV, SYSV_S, g, MiB(2), 0, P_RW,
			    MM_VMA_SHARED), ALL(0));
	sc_map(s, 1, sc_obj(MM_OBJ_SYSV, SYSV_S, g + MiB(2), MiB(2), MiB(2),
			    P_RW, MM_VMA_SHARED), ALL(0));
	sc_map(s, 1, sc_hugetlb(HUGE_H, h, MiB(2), 0, 21, MM_VMA_SHARED), ALL(0));
	sc_map(s, 1, sc_hugetlb(HUGE_H, h + MiB(2), MiB(2), MiB(2), 21,
				MM_VMA_SHARED), ALL(0));
	sc_vmas(s, W_ALL, 1, { BASE, BASE + MiB(4), P_R, 0, false },
		{ BASE + MiB(4), BASE + MiB(6), P_R, 0, false },
		{ g, g + MiB(2), P_RW, MM_VMA_SHARED, false },
		{ g + MiB(2), g + MiB(4), P_RW, MM_VMA_SHARED, false },
		{ h, h + MiB(2), P_RW, MM_VMA_SHARED, false },
		{ h + MiB(2), h + MiB(4), P_RW, MM_VMA_SHARED, false });
	sc_tables(s, W_ALL, 1, 0, 0, 0);
}

/* A table survives while some VMA remains in its span; zap clears the
 * presence of the unmapped pages only. */
static void unmap_partial_span_keeps_table(void **state)
{
	struct sc *s = *state;

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_anon(BASE, MiB(4), P_RW), ALL(0));
	sc_fault(s, 1, BASE, RD, ALL(1));
	sc_fault(s, 1, BASE + MiB(1), RD, ALL(1));
	sc_fault(s, 1, BASE + MiB(2), RD, ALL(1));
	sc_tables(s, W_ALL, 1, 2, 1, 1);

	sc_unmap(s, 1, BASE + MiB(2), PG, ALL(0));
	sc_tables(s, W_ALL, 1, 2, 1, 1); /* [BASE+2M+4K, BASE+4M) is in the span */
	sc_map(s, 1, sc_anon(BASE + MiB(2), PG, P_RW), ALL(0));
	sc_vmas(s, W_ALL, 1, { BASE, BASE + MiB(4), P_RW, 0, false });
	sc_fault(s, 1, BASE + MiB(2), RD, ALL(1)); /* it was zapped */

	sc_unmap(s, 1, BASE, MiB(1), ALL(0));
	sc_tables(s, W_ALL, 1, 2, 1, 1); /* [BASE+1M, BASE+2M) still mapped */
	sc_fault(s, 1, BASE + MiB(1), RD, ALL(0));
	sc_unmap(s, 1, BASE + MiB(1), MiB(1), ALL(0));
	sc_tables(s, W_ALL, 1, 1, 1, 1); /* span [BASE, +2M) holds no VMA */
	sc_vmas(s, W_ALL, 1, { BASE + MiB(2), BASE + MiB(4), P_RW, 0, false });
	sc_distinct(s, W_ALL, 1, 1, 1);
	sc_faults(s, W_ALL, 1, 4, 0);
}

/* PMD and PUD pages go when no VMA remains in their 1 GiB / 512 GiB. */
static void unmap_frees_pmd_and_pud(void **state)
{
	struct sc *s = *state;
	const uint64_t g = BASE + GiB(1), t = BASE + GiB(512);

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_anon(BASE, MiB(2), P_RW), ALL(0));
	sc_map(s, 1, sc_anon(g, MiB(2), P_RW), ALL(0));
	sc_map(s, 1, sc_anon(t, MiB(2), P_RW), ALL(0));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_fault(s, 1, g, WR, ALL(1));
	sc_fault(s, 1, t, WR, ALL(1));
	sc_tables(s, W_ALL, 1, 3, 3, 2);

	sc_unmap(s, 1, g, MiB(2), ALL(0));
	sc_tables(s, W_ALL, 1, 2, 2, 2); /* - PTE - PMD; the PUD holds BASE */
	sc_unmap(s, 1, t, MiB(2), ALL(0));
	sc_tables(s, W_ALL, 1, 1, 1, 1); /* - PTE - PMD - PUD */
	sc_unmap(s, 1, BASE, MiB(2), ALL(0));
	sc_tables(s, W_ALL, 1, 0, 0, 0);
	sc_distinct(s, W_ALL, 0, 0, 0);
	sc_no_vmas(s, W_ALL, 1);
}

/* One unmap across several VMAs: split at the edges, free the middle. */
static void unmap_across_vmas(void **state)
{
	struct sc *s = *state;

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_anon(BASE, MiB(2), P_RW), ALL(0));
	sc_map(s, 1, sc_obj(MM_OBJ_FILE, FILE_F, BASE + MiB(2), MiB(2), 0, P_R, 0),
	       ALL(0));
	sc_map(s, 1, sc_anon(BASE + MiB(4), MiB(2), P_R), ALL(0));
	sc_fault(s, 1, BASE + PG, WR, ALL(1));
	sc_fault(s, 1, BASE + MiB(3), RD, ALL(1));
	sc_fault(s, 1, BASE + MiB(5), RD, ALL(1));
	sc_tables(s, W_ALL, 1, 3, 1, 1);

	sc_unmap(s, 1, BASE + MiB(1), MiB(4), ALL(0));
	sc_vmas(s, W_ALL, 1, { BASE, BASE + MiB(1), P_RW, 0, true },
		{ BASE + MiB(5), BASE + MiB(6), P_R, 0, false });
	/* [BASE+2M, +2M) holds no VMA: freed; the other two spans keep one */
	sc_tables(s, W_ALL, 1, 2, 1, 1);
	sc_fault(s, 1, BASE + PG, RD, ALL(0));
	sc_fault(s, 1, BASE + MiB(5), RD, ALL(0));
}

/* Unmapping where nothing is mapped is accepted and changes nothing. */
static void unmap_nothing_mapped(void **state)
{
	struct sc *s = *state;

	sc_create(s, 1, ALL(0));
	sc_unmap(s, 1, BASE, MiB(4), ALL(0)); /* empty process */
	sc_map(s, 1, sc_anon(BASE, MiB(2), P_RW), ALL(0));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_unmap(s, 1, BASE + MiB(2), MiB(2), ALL(0)); /* just after the VMA */
	sc_unmap(s, 1, BASE + GiB(3), GiB(1), ALL(0));
	sc_tables(s, W_ALL, 1, 1, 1, 1);
	sc_vmas(s, W_ALL, 1, { BASE, BASE + MiB(2), P_RW, 0, true });
	sc_fault(s, 1, BASE, RD, ALL(0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SC_TEST(map_fixed_replaces),
		SC_TEST(map_fixed_splits),
		SC_TEST(map_overlap_eexist),
		SC_TEST(map_merge_anon_propagates_anon_pages),
		SC_TEST(map_merge_both_sides),
		SC_TEST(map_merge_incompatible_anon),
		SC_TEST(map_merge_objects),
		SC_TEST(unmap_partial_span_keeps_table),
		SC_TEST(unmap_frees_pmd_and_pud),
		SC_TEST(unmap_across_vmas),
		SC_TEST(unmap_nothing_mapped),
	};

	return cmocka_run_group_tests_name("unit_map", tests, NULL, NULL);
}
