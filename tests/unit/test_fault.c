/* SPDX-License-Identifier: MIT */
/* Faults: tables allocated on the path, first touches, anon pages, hugetlb
 * leaves (docs/model.md, "fault").  Single-process scenarios: every policy
 * must agree with linux. */
#include "scenario.h"

#define FILE_F 100
#define HUGE_H 300

/* First touch in a new 512 GiB / 1 GiB / 2 MiB span; a touch of a present
 * page is no fault. */
static void fault_allocates_path(void **state)
{
	struct sc *s = *state;

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_anon(BASE, MiB(4), P_RW), ALL(0));
	sc_tables(s, W_ALL, 1, 0, 0, 0); /* map allocates nothing */

	sc_fault(s, 1, BASE, RD, ALL(1));
	sc_tables(s, W_ALL, 1, 1, 1, 1); /* PUD + PMD + PTE: VmPTE 12 kB */
	sc_fault(s, 1, BASE, RD, ALL(0)); /* present: no fault */
	sc_fault(s, 1, BASE + PG, WR, ALL(1));
	sc_fault(s, 1, BASE, WR, ALL(0)); /* COW of the zero page: present */
	sc_tables(s, W_ALL, 1, 1, 1, 1);

	sc_fault(s, 1, BASE + MiB(2), RD, ALL(1)); /* new 2 MiB span: + PTE */
	sc_tables(s, W_ALL, 1, 2, 1, 1);
	sc_shared(s, W_ALL, 1, 0, 0, 0);
	sc_faults(s, W_ALL, 1, 3, 0); /* BASE, BASE+4K, BASE+2M */
	sc_distinct(s, W_ALL, 2, 1, 1);
	sc_pss(s, W_ALL, 1, 4 * 4096.0); /* 4 unshared tables */
	sc_forkwork(s, W_ALL, 1, 0, 0, 0);
}

static void fault_new_gib_and_pud_spans(void **state)
{
	struct sc *s = *state;

	sc_create(s, 1, ALL(0));
	/* [BASE+1G-2M, BASE+1G+2M): crosses a 1 GiB boundary */
	sc_map(s, 1, sc_anon(BASE + GiB(1) - MiB(2), MiB(4), P_RW), ALL(0));
	sc_map(s, 1, sc_anon(BASE + GiB(512), MiB(2), P_RW), ALL(0));

	sc_fault(s, 1, BASE + GiB(1) - PG, WR, ALL(1));
	sc_tables(s, W_ALL, 1, 1, 1, 1);
	sc_fault(s, 1, BASE + GiB(1), WR, ALL(1));
	sc_tables(s, W_ALL, 1, 2, 2, 1); /* new 1 GiB span: + PMD + PTE (8 kB) */
	sc_fault(s, 1, BASE + GiB(512), WR, ALL(1));
	sc_tables(s, W_ALL, 1, 3, 3, 2); /* new 512 GiB: + PUD + PMD + PTE (12 kB) */
	sc_distinct(s, W_ALL, 3, 3, 2);
	sc_faults(s, W_ALL, 1, 3, 0);
	sc_pss(s, W_ALL, 1, 8 * 4096.0);
}

/* A write fault in a private mapping gives it anon pages (also on a present
 * page: COW); a read fault does not. */
static void fault_anon_pages(void **state)
{
	struct sc *s = *state;
	const uint64_t f = BASE + GiB(1);

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_anon(BASE, MiB(2), P_RW), ALL(0));
	sc_map(s, 1, sc_obj(MM_OBJ_FILE, FILE_F, f, MiB(2), 0, P_RW, 0), ALL(0));

	sc_fault(s, 1, BASE, RD, ALL(1)); /* zero page */
	sc_fault(s, 1, f, RD, ALL(1));    /* page cache */
	sc_vmas(s, W_ALL, 1, { BASE, BASE + MiB(2), P_RW, 0, false },
		{ f, f + MiB(2), P_RW, 0, false });

	sc_fault(s, 1, f, WR, ALL(0)); /* COW of a present page: no fault */
	sc_vmas(s, W_ALL, 1, { BASE, BASE + MiB(2), P_RW, 0, false },
		{ f, f + MiB(2), P_RW, 0, true });

	sc_fault(s, 1, BASE + PG, WR, ALL(1));
	sc_vmas(s, W_ALL, 1, { BASE, BASE + MiB(2), P_RW, 0, true },
		{ f, f + MiB(2), P_RW, 0, true });
	sc_tables(s, W_ALL, 1, 2, 2, 1); /* one PTE + PMD per GiB, one PUD */
	sc_faults(s, W_ALL, 1, 3, 0);
}

/* On a kernel without the zero page a read fault in private anonymous
 * memory allocates an anonymous page: the VMA gets anon pages, as on a
 * write.  A read of a private file mapping (page cache) or of shared
 * memory does not give any. */
static void fault_read_without_zero_page(void **state)
{
	struct sc *s = *state;
	const uint64_t f = BASE + GiB(1), m = BASE + GiB(2);

	sc_zero_page(s, false);
	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_anon(BASE, MiB(2), P_RW), ALL(0));
	sc_map(s, 1, sc_obj(MM_OBJ_FILE, FILE_F, f, MiB(2), 0, P_RW, 0), ALL(0));
	sc_map(s, 1, sc_obj(MM_OBJ_SHMEM, 7, m, MiB(1), 0, P_RW, MM_VMA_SHARED),
	       ALL(0));

	sc_fault(s, 1, BASE, RD, ALL(1));
	sc_fault(s, 1, f, RD, ALL(1));
	sc_fault(s, 1, m, RD, ALL(1));
	sc_vmas(s, W_ALL, 1, { BASE, BASE + MiB(2), P_RW, 0, true },
		{ f, f + MiB(2), P_RW, 0, false },
		{ m, m + MiB(1), P_RW, MM_VMA_SHARED, false });
	sc_tables(s, W_ALL, 1, 3, 3, 1); /* a PTE + PMD per GiB, one PUD */
	sc_faults(s, W_ALL, 1, 3, 0);
}

/* A shared mapping never gets anon pages, even on write. */
static void fault_shared_write_no_anon_pages(void **state)
{
	struct sc *s = *state;

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_obj(MM_OBJ_SHMEM, 7, BASE, MiB(1), 0, P_RW, MM_VMA_SHARED),
	       ALL(0));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_vmas(s, W_ALL, 1, { BASE, BASE + MiB(1), P_RW, MM_VMA_SHARED, false });
}

/* 2 MiB hugetlb pages: a PMD leaf, no PTE table. */
static void fault_hugetlb_2m(void **state)
{
	struct sc *s = *state;

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_hugetlb(HUGE_H, BASE, MiB(4), 0, 21, MM_VMA_SHARED), ALL(0));
	sc_fault(s, 1, BASE, RD, ALL(1));
	sc_tables(s, W_ALL, 1, 0, 1, 1); /* PUD + PMD, leaf in the PMD page */
	sc_fault(s, 1, BASE + PG, WR, ALL(0)); /* inside the same 2 MiB page */
	sc_fault(s, 1, BASE + MiB(2) + 2 * PG, WR, ALL(1));
	sc_tables(s, W_ALL, 1, 0, 1, 1);
	sc_faults(s, W_ALL, 1, 2, 0);
	sc_distinct(s, W_ALL, 0, 1, 1);
}

/* 1 GiB hugetlb pages: a PUD leaf, no PMD page. */
static void fault_hugetlb_1g(void **state)
{
	struct sc *s = *state;

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_hugetlb(HUGE_H, BASE, GiB(1), 0, 30, MM_VMA_SHARED), ALL(0));
	sc_fault(s, 1, BASE + 12345 * PG, RD, ALL(1));
	sc_tables(s, W_ALL, 1, 0, 0, 1); /* PUD page only */
	sc_fault(s, 1, BASE, WR, ALL(0));
	sc_fault(s, 1, BASE + GiB(1) - PG, RD, ALL(0));
	sc_faults(s, W_ALL, 1, 1, 0);
	sc_distinct(s, W_ALL, 0, 0, 1);
	sc_pss(s, W_ALL, 1, 4096.0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SC_TEST(fault_allocates_path),
		SC_TEST(fault_new_gib_and_pud_spans),
		SC_TEST(fault_anon_pages),
		SC_TEST(fault_read_without_zero_page),
		SC_TEST(fault_shared_write_no_anon_pages),
		SC_TEST(fault_hugetlb_2m),
		SC_TEST(fault_hugetlb_1g),
	};

	return cmocka_run_group_tests_name("unit_fault", tests, NULL, NULL);
}
