/* SPDX-License-Identifier: MIT */
/* fork (vma_needs_copy, Nick Piggin's rule, DONTFORK/WIPEONFORK), exec and
 * exit.  Mappings here are anonymous, private-writable or smaller than
 * 2 MiB, so no policy shares them: all four must agree with linux.  Sharing
 * at fork is in test_share.c. */
#include "scenario.h"

#define FILE_F 100
#define SHM_S 200

/* A VMA with anon pages is copied: PUD, PMD, PTE where the parent has them,
 * and the presence bits. */
static void fork_copies_anon(void **state)
{
	struct sc *s = *state;

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_anon(BASE, MiB(4), P_RW), ALL(0));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_fault(s, 1, BASE + PG, RD, ALL(1));
	sc_fault(s, 1, BASE + MiB(2) + PG, RD, ALL(1));
	sc_tables(s, W_ALL, 1, 2, 1, 1);

	sc_fork(s, 1, 2, ALL(0));
	sc_tables(s, W_ALL, 2, 2, 1, 1);
	sc_shared(s, W_ALL, 2, 0, 0, 0);
	sc_forkwork(s, W_ALL, 2, 4, 3, 0); /* PUD + PMD + 2 PTE; 3 pages */
	sc_forkwork(s, W_ALL, 1, 0, 0, 0);
	sc_faults(s, W_ALL, 2, 0, 0);
	sc_vmas(s, W_ALL, 2, { BASE, BASE + MiB(4), P_RW, 0, true });
	sc_distinct(s, W_ALL, 4, 2, 2);
	sc_pss(s, W_ALL, 1, 4 * 4096.0);
	sc_pss(s, W_ALL, 2, 4 * 4096.0);

	sc_fault(s, 2, BASE, WR, ALL(0));
	sc_fault(s, 2, BASE + MiB(2) + PG, RD, ALL(0));
	sc_fault(s, 2, BASE + 2 * PG, RD, ALL(1));
	sc_faults(s, W_ALL, 2, 1, 0);
	sc_nprocs(s, W_ALL, 2);
}

/* A read-only-faulted private anonymous VMA has no anon pages: not copied. */
static void fork_skips_anon_without_anon_pages(void **state)
{
	struct sc *s = *state;

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_anon(BASE, MiB(2), P_RW), ALL(0));
	sc_fault(s, 1, BASE, RD, ALL(1));
	sc_fork(s, 1, 2, ALL(0));
	sc_tables(s, W_ALL, 2, 0, 0, 0);
	sc_forkwork(s, W_ALL, 2, 0, 0, 0);
	sc_fault(s, 2, BASE, RD, ALL(1)); /* faulted back in */
	sc_tables(s, W_ALL, 2, 1, 1, 1);
}

/* Without the zero page the same read gives the VMA anon pages: fork
 * copies its tables and the page. */
static void fork_copies_anon_read_without_zero_page(void **state)
{
	struct sc *s = *state;

	sc_zero_page(s, false);
	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_anon(BASE, MiB(2), P_RW), ALL(0));
	sc_fault(s, 1, BASE, RD, ALL(1));
	sc_fork(s, 1, 2, ALL(0));
	sc_tables(s, W_ALL, 2, 1, 1, 1);
	sc_forkwork(s, W_ALL, 2, 3, 1, 0); /* PUD + PMD + PTE; 1 page */
	sc_vmas(s, W_ALL, 2, { BASE, BASE + MiB(2), P_RW, 0, true });
	sc_fault(s, 2, BASE, RD, ALL(0)); /* present: copied */
	sc_faults(s, W_ALL, 2, 0, 0);
}

/* Shared (shmem, file) mappings without anon pages are not copied: the
 * child faults them back.  Both are < 2 MiB, so no policy shares them. */
static void fork_skips_shared(void **state)
{
	struct sc *s = *state;
	const uint64_t g = BASE + GiB(1);

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_obj(MM_OBJ_SHMEM, SHM_S, BASE, MiB(1), 0, P_RW,
			    MM_VMA_SHARED), ALL(0));
	sc_map(s, 1, sc_obj(MM_OBJ_FILE, FILE_F, g, MiB(1), 0, P_R,
			    MM_VMA_SHARED), ALL(0));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_fault(s, 1, BASE + PG, WR, ALL(1));
	sc_fault(s, 1, g, RD, ALL(1));
	sc_tables(s, W_ALL, 1, 2, 2, 1);

	sc_fork(s, 1, 2, ALL(0));
	sc_tables(s, W_ALL, 2, 0, 0, 0);
	sc_forkwork(s, W_ALL, 2, 0, 0, 0);
	sc_vmas(s, W_ALL, 2, { BASE, BASE + MiB(1), P_RW, MM_VMA_SHARED, false },
		{ g, g + MiB(1), P_R, MM_VMA_SHARED, false });
	sc_fault(s, 2, BASE, RD, ALL(1));
	sc_tables(s, W_ALL, 2, 1, 1, 1);
	sc_distinct(s, W_ALL, 3, 3, 2);
}

/* A private file mapping with written (COW) pages is copied; a read-only
 * private one is not. */
static void fork_private_file(void **state)
{
	struct sc *s = *state;
	const uint64_t g = BASE + GiB(1);

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_obj(MM_OBJ_FILE, FILE_F, BASE, MiB(1), 0, P_RW, 0), ALL(0));
	sc_map(s, 1, sc_obj(MM_OBJ_FILE, FILE_F, g, MiB(1), MiB(4), P_R, 0), ALL(0));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_fault(s, 1, BASE + PG, RD, ALL(1));
	sc_fault(s, 1, g, RD, ALL(1));
	sc_tables(s, W_ALL, 1, 2, 2, 1);

	sc_fork(s, 1, 2, ALL(0));
	sc_tables(s, W_ALL, 2, 1, 1, 1);   /* only the written VMA's path */
	sc_forkwork(s, W_ALL, 2, 3, 2, 0); /* PUD + PMD + PTE; BASE, BASE+4K */
	sc_fault(s, 2, BASE + PG, RD, ALL(0));
	sc_fault(s, 2, g, RD, ALL(1));
	sc_tables(s, W_ALL, 2, 2, 2, 1);
}

/* A VM_PFNMAP/VM_MIXEDMAP VMA (a device's, io_uring's rings) is copied
 * without anon pages: its pages cannot be faulted back (vma_needs_copy),
 * here a shared one beside a shared mapping that is not. */
static void fork_copies_pfnmap(void **state)
{
	struct sc *s = *state;
	const uint64_t g = BASE + GiB(1);

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_obj(MM_OBJ_FILE, FILE_F, BASE, MiB(1), 0, P_RW,
			    MM_VMA_SHARED | MM_VMA_PFNMAP), ALL(0));
	sc_map(s, 1, sc_obj(MM_OBJ_FILE, FILE_F + 1, g, MiB(1), 0, P_RW,
			    MM_VMA_SHARED), ALL(0));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_fault(s, 1, BASE + PG, RD, ALL(1));
	sc_fault(s, 1, g, WR, ALL(1));
	sc_tables(s, W_ALL, 1, 2, 2, 1);

	sc_fork(s, 1, 2, ALL(0));
	sc_tables(s, W_ALL, 2, 1, 1, 1);   /* the PFNMAP VMA's path only */
	sc_forkwork(s, W_ALL, 2, 3, 2, 0); /* PUD + PMD + PTE; 2 pages */
	sc_fault(s, 2, BASE + PG, RD, ALL(0));
	sc_fault(s, 2, g, RD, ALL(1));
}

/* An empty PTE table in a copied VMA is still copied. */
static void fork_copies_empty_pte_table(void **state)
{
	struct sc *s = *state;

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_anon(BASE, MiB(4), P_RW), ALL(0));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_fault(s, 1, BASE + MiB(2), WR, ALL(1));
	/* half a span: the page goes, the PTE table stays (empty) */
	sc_advise(s, 1, BASE + MiB(2), MiB(1), MM_ADV_DONTNEED, ALL(0));
	sc_tables(s, W_ALL, 1, 2, 1, 1);

	sc_fork(s, 1, 2, ALL(0));
	sc_tables(s, W_ALL, 2, 2, 1, 1);
	sc_forkwork(s, W_ALL, 2, 4, 1, 0); /* PUD + PMD + 2 PTE (one empty); 1 page */
	sc_distinct(s, W_ALL, 4, 2, 2);
}

/* DONTFORK VMAs are not inherited; WIPEONFORK ones come empty, without anon
 * pages; DOFORK/KEEPONFORK merge the VMAs back. */
static void fork_dontfork_wipeonfork(void **state)
{
	struct sc *s = *state;
	const uint64_t b2 = BASE + MiB(2), b4 = BASE + MiB(4);

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_anon(BASE, MiB(6), P_RW), ALL(0));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_fault(s, 1, b2, WR, ALL(1));
	sc_fault(s, 1, b4, WR, ALL(1));
	sc_advise(s, 1, b2, MiB(2), MM_ADV_DONTFORK, ALL(0));
	sc_advise(s, 1, b4, MiB(2), MM_ADV_WIPEONFORK, ALL(0));
	sc_vmas(s, W_ALL, 1, { BASE, b2, P_RW, 0, true },
		{ b2, b4, P_RW, MM_VMA_DONTFORK, true },
		{ b4, b4 + MiB(2), P_RW, MM_VMA_WIPEONFORK, true });
	sc_tables(s, W_ALL, 1, 3, 1, 1);

	sc_fork(s, 1, 2, ALL(0));
	/* reading: the child's VMA keeps VM_WIPEONFORK, as in the kernel */
	sc_vmas(s, W_ALL, 2, { BASE, b2, P_RW, 0, true },
		{ b4, b4 + MiB(2), P_RW, MM_VMA_WIPEONFORK, false });
	sc_tables(s, W_ALL, 2, 1, 1, 1);
	sc_forkwork(s, W_ALL, 2, 3, 1, 0); /* PUD + PMD + PTE of [BASE, +2M) */
	sc_fault(s, 2, b4, RD, ALL(1));    /* wiped: refaults */
	sc_fault(s, 2, b2, RD, ALL(-EFAULT)); /* not inherited */
	sc_tables(s, W_ALL, 2, 2, 1, 1);

	sc_advise(s, 1, b2, MiB(2), MM_ADV_DOFORK, ALL(0));
	sc_vmas(s, W_ALL, 1, { BASE, b4, P_RW, 0, true },
		{ b4, b4 + MiB(2), P_RW, MM_VMA_WIPEONFORK, true });
	sc_advise(s, 1, b4, MiB(2), MM_ADV_KEEPONFORK, ALL(0));
	sc_vmas(s, W_ALL, 1, { BASE, b4 + MiB(2), P_RW, 0, true });
	sc_tables(s, W_ALL, 1, 3, 1, 1);
	sc_distinct(s, W_ALL, 5, 2, 2);
}

/* exec drops the address space, keeps the pid and its counters. */
static void exec_drops_address_space(void **state)
{
	struct sc *s = *state;

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_anon(BASE, MiB(2), P_RW), ALL(0));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_fault(s, 1, BASE + PG, WR, ALL(1));
	sc_fork(s, 1, 2, ALL(0));
	sc_distinct(s, W_ALL, 2, 2, 2);

	sc_exec(s, 1, ALL(0));
	sc_tables(s, W_ALL, 1, 0, 0, 0);
	sc_no_vmas(s, W_ALL, 1);
	sc_faults(s, W_ALL, 1, 2, 0);
	sc_distinct(s, W_ALL, 1, 1, 1); /* the child's */
	sc_nprocs(s, W_ALL, 2);

	sc_exec(s, 2, ALL(0));
	sc_forkwork(s, W_ALL, 2, 3, 2, 0); /* counters survive exec */
	sc_distinct(s, W_ALL, 0, 0, 0);

	sc_map(s, 1, sc_anon(BASE, MiB(2), P_RW), ALL(0));
	sc_fault(s, 1, BASE, RD, ALL(1));
	sc_faults(s, W_ALL, 1, 3, 0);
	sc_tables(s, W_ALL, 1, 1, 1, 1);
}

/* exit drops the address space and forgets the process. */
static void exit_forgets_process(void **state)
{
	struct sc *s = *state;

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_anon(BASE, MiB(2), P_RW), ALL(0));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_fork(s, 1, 2, ALL(0));
	sc_exit(s, 1, ALL(0));
	sc_nprocs(s, W_ALL, 1);
	sc_gone(s, W_ALL, 1);
	sc_distinct(s, W_ALL, 1, 1, 1);
	sc_fault(s, 2, BASE, RD, ALL(0)); /* the child's copy is intact */
	sc_exit(s, 2, ALL(0));
	sc_nprocs(s, W_ALL, 0);
	sc_distinct(s, W_ALL, 0, 0, 0);
	sc_create(s, 1, ALL(0)); /* the pid can be reused */
	sc_tables(s, W_ALL, 1, 0, 0, 0);
	sc_faults(s, W_ALL, 1, 0, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SC_TEST(fork_copies_anon),
		SC_TEST(fork_skips_anon_without_anon_pages),
		SC_TEST(fork_copies_anon_read_without_zero_page),
		SC_TEST(fork_skips_shared),
		SC_TEST(fork_private_file),
		SC_TEST(fork_copies_pfnmap),
		SC_TEST(fork_copies_empty_pte_table),
		SC_TEST(fork_dontfork_wipeonfork),
		SC_TEST(exec_drops_address_space),
		SC_TEST(exit_forgets_process),
	};

	return cmocka_run_group_tests_name("unit_fork", tests, NULL, NULL);
}
