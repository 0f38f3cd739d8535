/* SPDX-License-Identifier: MIT */
/*
 * The four findings of mccracken-2005 (docs/model.md, "Findings"): each
 * triggered once by a scenario where the posted patch would diverge, and
 * counted exactly once; the other policies count nothing.  The model's own
 * counts stay correct (the patch's behaviour is only reported).
 */
#include "scenario.h"

#define FILE_F 100
#define SHM_S 200

static struct mm_mapping shm(uint64_t addr, uint64_t len, uint32_t prot)
{
	return sc_obj(MM_OBJ_SHMEM, SHM_S, addr, len, 0, prot, MM_VMA_SHARED);
}

/*
 * fault-search-extra-links: P1 and P2 each hold their own populated PTE
 * table for the same range (P2 faulted while its protection differed, then
 * made it match).  P3's fault links the first sharer's table (P1's); the
 * patch's loop goes on and links P2's as well: one leaked reference.
 */
static void finding_fault_search_extra_links(void **state)
{
	struct sc *s = *state;

	for (uint32_t pid = 1; pid <= 3; pid++)
		sc_create(s, pid, ALL(0));
	sc_map(s, 1, shm(BASE, MiB(2), P_RW), ALL(0));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_map(s, 2, shm(BASE, MiB(2), P_R), ALL(0));
	sc_fault(s, 2, BASE, RD, ALL(1)); /* protection differs: no sharer */
	sc_protect(s, 2, BASE, MiB(2), P_RW, ALL(0));
	sc_findings(s, W_ALL, 0, 0, 0, 0);

	sc_map(s, 3, shm(BASE, MiB(2), P_RW), ALL(0));
	sc_fault(s, 3, BASE, RD, RC(1, 0, 0, 1));
	sc_findings(s, W_MCC, 1, 0, 0, 0);
	sc_findings(s, W_LINUX | W_ASLR | W_HPMD, 0, 0, 0, 0);

	for (uint32_t pid = 1; pid <= 3; pid++)
		sc_tables(s, W_ALL, pid, 1, 1, 1);
	sc_shared(s, W_FSHARE, 1, 1, 0, 0);
	sc_shared(s, W_FSHARE, 2, 0, 0, 0);
	sc_shared(s, W_FSHARE, 3, 1, 0, 0);
	sc_shared(s, W_NOFSHARE, 3, 0, 0, 0);
	sc_distinct(s, W_NOFSHARE, 3, 3, 3);
	sc_distinct(s, W_FSHARE, 2, 3, 3); /* P1's table (x2), P2's */
	sc_pss(s, W_MCC, 2, 3 * 4096.0);
	sc_pss(s, W_MCC, 3, 2 * 4096.0 + 2048.0);
}

/*
 * unshare-past-end: P1 and P2 share the PTE tables of [BASE, BASE+4M).
 * P2 protects [BASE, BASE+2M): the model detaches that table only; the
 * patch's `address <= end` loop (end = BASE+2M, aligned) also detaches the
 * table of [BASE+2M, BASE+4M).
 */
static void finding_unshare_past_end(void **state)
{
	struct sc *s = *state;

	sc_create(s, 1, ALL(0));
	sc_create(s, 2, ALL(0));
	sc_map(s, 1, shm(BASE, MiB(4), P_RW), ALL(0));
	sc_map(s, 2, shm(BASE, MiB(4), P_RW), ALL(0));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_fault(s, 1, BASE + MiB(2), WR, ALL(1));
	sc_fault(s, 2, BASE, RD, RC(1, 0, 0, 1));
	sc_fault(s, 2, BASE + MiB(2), RD, RC(1, 0, 0, 1));
	sc_findings(s, W_ALL, 0, 0, 0, 0);

	sc_protect(s, 2, BASE, MiB(2), P_R, ALL(0));
	sc_findings(s, W_MCC, 0, 1, 0, 0);
	sc_findings(s, W_LINUX | W_ASLR | W_HPMD, 0, 0, 0, 0);

	sc_tables(s, W_NOFSHARE, 2, 2, 1, 1);
	sc_tables(s, W_FSHARE, 2, 1, 1, 1); /* the table after the range stays */
	sc_shared(s, W_FSHARE, 2, 1, 0, 0);
	sc_shared(s, W_FSHARE, 1, 1, 0, 0);
	sc_fault(s, 2, BASE + MiB(2), RD, ALL(0));
	sc_fault(s, 2, BASE, RD, RC(0, 1, 1, 0)); /* own table now */
	sc_distinct(s, W_NOFSHARE, 4, 2, 2);
	sc_distinct(s, W_FSHARE, 3, 2, 2);
	sc_findings(s, W_MCC, 0, 1, 0, 0);
}

/*
 * unshare-misses-table: P1 and P2 share the PTE tables of three spans.  P2
 * protects [BASE+2M-4K, BASE+4M+4K), which meets all three.  The patch's
 * pt_unshare_pmd steps the unaligned start by 2 MiB while address <= end:
 * BASE+2M-4K (span 0), BASE+4M-4K (span 1), then BASE+6M-4K > end: span 2
 * stays linked, and the protection change would reach P1 through it.  The
 * model detaches all three.
 */
static void finding_unshare_misses_table(void **state)
{
	struct sc *s = *state;

	sc_create(s, 1, ALL(0));
	sc_create(s, 2, ALL(0));
	sc_map(s, 1, shm(BASE, MiB(8), P_RW), ALL(0));
	sc_map(s, 2, shm(BASE, MiB(8), P_RW), ALL(0));
	for (uint64_t span = 0; span < 3; span++) {
		sc_fault(s, 1, BASE + span * MiB(2), WR, ALL(1));
		sc_fault(s, 2, BASE + span * MiB(2), RD, RC(1, 0, 0, 1));
	}
	sc_shared(s, W_FSHARE, 2, 3, 0, 0);

	sc_protect(s, 2, BASE + MiB(2) - PG, MiB(2) + 2 * PG, P_R, ALL(0));
	sc_findings(s, W_MCC, 0, 0, 1, 0);
	sc_findings(s, W_LINUX | W_ASLR | W_HPMD, 0, 0, 0, 0);

	sc_tables(s, W_NOFSHARE, 2, 3, 1, 1);
	sc_tables(s, W_FSHARE, 2, 0, 1, 1); /* all three detached */
	sc_shared(s, W_FSHARE, 1, 0, 0, 0);
	sc_distinct(s, W_NOFSHARE, 6, 2, 2);
	sc_distinct(s, W_FSHARE, 3, 2, 2);
}

/*
 * private-anon-pages-shared: a private file mapping, written (COW pages),
 * then made read-only.  pt_shareable_vma accepts it, so the patch's fork
 * would link its PTE table; the model copies it like linux.
 */
static void finding_private_anon_pages_shared(void **state)
{
	struct sc *s = *state;

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_obj(MM_OBJ_FILE, FILE_F, BASE, MiB(2), 0, P_RW, 0), ALL(0));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_fault(s, 1, BASE + PG, RD, ALL(1));
	sc_protect(s, 1, BASE, MiB(2), P_R, ALL(0));
	sc_findings(s, W_ALL, 0, 0, 0, 0);

	sc_fork(s, 1, 2, ALL(0));
	sc_findings(s, W_MCC, 0, 0, 0, 1);
	sc_findings(s, W_LINUX | W_ASLR | W_HPMD, 0, 0, 0, 0);
	sc_forkwork(s, W_ALL, 2, 3, 2, 0); /* PUD + PMD + PTE; 2 pages */
	sc_tables(s, W_ALL, 2, 1, 1, 1);
	sc_shared(s, W_ALL, 2, 0, 0, 0);
	sc_shared(s, W_ALL, 1, 0, 0, 0);
	sc_distinct(s, W_ALL, 2, 2, 2);
	sc_vmas(s, W_ALL, 2, { BASE, BASE + MiB(2), P_R, 0, true });
	sc_reason(s, W_FSHARE, 2, BASE, MM_REASON_PRIVATE_ANON_PAGES);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SC_TEST(finding_fault_search_extra_links),
		SC_TEST(finding_unshare_past_end),
		SC_TEST(finding_unshare_misses_table),
		SC_TEST(finding_private_anon_pages_shared),
	};

	return cmocka_run_group_tests_name("unit_findings", tests, NULL, NULL);
}
