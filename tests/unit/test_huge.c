/* SPDX-License-Identifier: MIT */
/*
 * Huge pages as a user could turn them on today (docs/model.md, "Huge
 * pages"): hugetlb-2m (the big MAP_SHARED shmem and SysV mappings as if
 * backed by 2 MiB hugetlb pages, with mainline's PMD sharing) and
 * thp-shmem (shmem THP always: PMD leaves, no sharing), each as SC_EXTRA
 * beside the four built-in worlds.  Expected values are worked by hand.
 */
#include "scenario.h"

#define SHM_S 200
#define SYSV_V 7

static const uint32_t SH = MM_VMA_SHARED;

static int setup_h2m(void **state) { return sc_setup_extra(state, "hugetlb-2m"); }
static int setup_thp(void **state) { return sc_setup_extra(state, "thp-shmem"); }

/* A segment at an address the program chose: every world keeps it, so
 * the rules of its spans and edges show.  (One the kernel placed moves
 * under hugetlb-2m: layout_h2m.) */
static struct mm_mapping shm(uint64_t addr, uint64_t len)
{
	return sc_obj(MM_OBJ_SHMEM, SHM_S, addr, len, 0, P_RW, SH);
}

/*
 * e: what a page of an edge span (one the mapping does not cover wholly)
 * costs the extra world, in faults and PTE tables: 0 under hugetlb-2m,
 * whose huge mappings need no PTE table anywhere (the kernel would have
 * aligned them and rounded them up: hugetlb_get_unmapped_area); 1 under
 * thp-shmem, which maps edges by small pages.
 */
#define E_H2M 0
#define E_THP 1

/*
 * 6 MiB of shmem at BASE + 1 MiB: the spans at BASE + 2 MiB and + 4 MiB
 * are whole and mapped by PMD leaves; the two edge spans (1 MiB each in
 * the VMA) cost e each.  A touch anywhere in a whole span maps all of it:
 * one fault instead of 512.
 */
static void whole_spans_are_leaves(struct sc *s, int e)
{
	sc_create(s, 1, ALL(0));
	sc_map(s, 1, shm(BASE + MiB(1), MiB(6)), ALL(0));
	sc_fault(s, 1, BASE + MiB(1), WR, RC5(1, 1, 1, 1, e)); /* edge span */
	sc_fault(s, 1, BASE + MiB(2), WR, ALL(1));             /* leaf */
	sc_fault(s, 1, BASE + MiB(2) + PG, RD, RC5(1, 1, 1, 1, 0));
	sc_fault(s, 1, BASE + MiB(4) - PG, RD, RC5(1, 1, 1, 1, 0));
	sc_fault(s, 1, BASE + MiB(4) + 8 * PG, RD, ALL(1));    /* leaf */
	sc_fault(s, 1, BASE + MiB(6), RD, RC5(1, 1, 1, 1, e)); /* edge span */
	sc_tables(s, W_LINUX, 1, 4, 1, 1);
	sc_tables(s, W_EXTRA, 1, 2 * e, 1, 1);
	sc_faults(s, W_LINUX, 1, 6, 0);
	sc_faults(s, W_EXTRA, 1, 2 + 2 * e, 0);
	sc_distinct(s, W_EXTRA, 2 * e, 1, 1);
	/* Half of a leaf's span unmapped: the leaf goes (a file leaf is
	 * split by clearing it), the span is an edge now. */
	sc_unmap(s, 1, BASE + MiB(5), MiB(2), ALL(0));
	sc_tables(s, W_LINUX, 1, 3, 1, 1);
	sc_tables(s, W_EXTRA, 1, e, 1, 1); /* the last span's table freed */
	sc_fault(s, 1, BASE + MiB(4) + 8 * PG, RD, RC5(0, 0, 0, 0, e));
	sc_tables(s, W_EXTRA, 1, 2 * e, 1, 1);
	sc_fault(s, 1, BASE + MiB(4), RD, RC5(1, 1, 1, 1, e));
}

static void whole_spans_h2m(void **state) { whole_spans_are_leaves(*state, E_H2M); }
static void whole_spans_thp(void **state) { whole_spans_are_leaves(*state, E_THP); }

/*
 * PostgreSQL's shared segment with huge_pages=off (docs/postgres.md): it
 * starts 40 KiB before a span boundary, in a span it shares with a small
 * anonymous mapping, and ends 100 KiB into its last span.  P1 maps both
 * and touches the small mapping and the segment's edges, P2 maps the
 * segment alone, at the same address, and touches its edges.  An edge
 * span is no whole table span of the segment, so no policy shares its
 * table.  Each process keeps the PMD page its touches walked to.
 */
#define SEG_START (BASE + MiB(2) - KiB(40))
#define SEG_END (BASE + MiB(6) + KiB(100))

static void edges_beside_small(struct sc *s, int e)
{
	struct mm_mapping seg = shm(SEG_START, SEG_END - SEG_START);
	sc_create(s, 1, ALL(0));
	sc_create(s, 2, ALL(0));
	sc_map(s, 1, sc_anon(BASE + MiB(1), MiB(1) - KiB(40), P_RW), ALL(0));
	sc_map(s, 1, seg, ALL(0));
	sc_map(s, 2, seg, ALL(0));
	sc_fault(s, 1, BASE + MiB(1), WR, ALL(1));
	sc_fault(s, 1, SEG_START, WR, RC5(1, 1, 1, 1, e));
	sc_fault(s, 1, SEG_END - PG, WR, RC5(1, 1, 1, 1, e));
	sc_fault(s, 2, SEG_START + PG, RD, RC5(1, 1, 1, 1, e));
	sc_fault(s, 2, SEG_END - PG, RD, RC5(1, 1, 1, 1, e));
	/* P1: the small mapping's table, and the tail's under thp-shmem. */
	sc_tables(s, W_ALL & ~W_EXTRA, 1, 2, 1, 1);
	sc_tables(s, W_EXTRA, 1, 1 + e, 1, 1);
	sc_tables(s, W_ALL & ~W_EXTRA, 2, 2, 1, 1);
	sc_tables(s, W_EXTRA, 2, 2 * e, 1, 1);
	sc_faults(s, W_EXTRA, 1, 1 + 2 * e, 0);
	sc_faults(s, W_EXTRA, 2, 2 * e, 0);
	sc_distinct(s, W_EXTRA, 1 + 3 * e, 2, 2);
	sc_reason(s, W_EXTRA, 2, SEG_START, MM_REASON_HUGE_PAGES);
	/* A checkpoint of P2 seeing a new page in the head edge. */
	sc_observe(s, 2, SEG_START, SEG_END,
		   RUNS({ SEG_START, SEG_START + 2 * PG, false, false },
			{ SEG_END - PG, SEG_END, false, false }),
		   RC5(1, 1, 1, 1, e));
	sc_tables(s, W_EXTRA, 2, 2 * e, 1, 1);
	sc_faults(s, W_EXTRA, 2, 2 * e, e);
	/* P1's segment moved, 2 GiB up at the same alignment: its head's
	 * extent met a PTE table (the small mapping's), which the move makes
	 * again at the new place (move_ptes) for the segment's pages, unless
	 * they need none.  Both sides need a PMD page. */
	sc_remap(s, 1, SEG_START, SEG_END - SEG_START, SEG_START + GiB(2),
		 SEG_END - SEG_START, MM_REMAP_MAYMOVE | MM_REMAP_FIXED, ALL(0));
	sc_tables(s, W_ALL & ~W_EXTRA, 1, 3, 2, 1);
	sc_tables(s, W_EXTRA, 1, 1 + 2 * e, 2, 1);
}

static void edges_h2m(void **state) { edges_beside_small(*state, E_H2M); }
static void edges_thp(void **state) { edges_beside_small(*state, E_THP); }

/*
 * A segment ending 64 KiB past a 1 GiB boundary: a touch of that tail,
 * alone in its GiB, makes a PMD page (and the PUD page above) as a 2 MiB
 * page's PMD entry would need, and no PTE table under hugetlb-2m.  (The
 * program placed it: the kernel placing it would align it and round it
 * up, layout_h2m.)
 */
static void edge_alone_in_its_gib(struct sc *s, int e)
{
	sc_create(s, 1, ALL(0));
	sc_map(s, 1, shm(BASE + GiB(1) - MiB(4), MiB(4) + KiB(64)), ALL(0));
	sc_fault(s, 1, BASE + GiB(1), RD, RC5(1, 1, 1, 1, e));
	sc_tables(s, W_LINUX, 1, 1, 1, 1);
	sc_tables(s, W_EXTRA, 1, e, 1, 1);
	sc_fault(s, 1, BASE + GiB(1) - MiB(2), RD, ALL(1)); /* a leaf */
	sc_tables(s, W_LINUX, 1, 2, 2, 1);
	sc_tables(s, W_EXTRA, 1, e, 2, 1);
	/* The tail unmapped: its GiB holds no mapping, its tables go. */
	sc_unmap(s, 1, BASE + GiB(1), KiB(64), ALL(0));
	sc_tables(s, W_LINUX, 1, 1, 1, 1);
	sc_tables(s, W_EXTRA, 1, 0, 1, 1);
}

static void gib_h2m(void **state) { edge_alone_in_its_gib(*state, E_H2M); }
static void gib_thp(void **state) { edge_alone_in_its_gib(*state, E_THP); }

/* Private shmem, private anonymous memory and SysV shared: only the last
 * is huge. */
static void scope(void **state)
{
	struct sc *s = *state;

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_obj(MM_OBJ_SHMEM, SHM_S, BASE, MiB(2), 0, P_R, 0), ALL(0));
	sc_map(s, 1, sc_anon(BASE + MiB(2), MiB(2), P_RW), ALL(0));
	sc_map(s, 1, sc_obj(MM_OBJ_SYSV, SYSV_V, BASE + MiB(4), MiB(2), 0, P_RW,
			    SH), ALL(0));
	sc_fault(s, 1, BASE, RD, ALL(1));
	sc_fault(s, 1, BASE + MiB(2), WR, ALL(1));
	sc_fault(s, 1, BASE + MiB(4), WR, ALL(1));
	sc_fault(s, 1, BASE + MiB(4) + PG, WR, RC5(1, 1, 1, 1, 0));
	sc_tables(s, W_LINUX, 1, 3, 1, 1);
	sc_tables(s, W_EXTRA, 1, 2, 1, 1);
	sc_reason(s, W_HPMD, 1, BASE + MiB(4), MM_REASON_NOT_HUGETLB_SHARED);
}

static void scope_h2m_reasons(void **state)
{
	struct sc *s = *state;

	scope(state);
	/* No whole 1 GiB span, so no PMD page to share: huge pages only. */
	sc_reason(s, W_EXTRA, 1, BASE + MiB(4), MM_REASON_HUGE_PAGES);
	sc_reason(s, W_EXTRA, 1, BASE, MM_REASON_NOT_SHARED_SHMEM);
	sc_reason(s, W_EXTRA, 1, BASE + MiB(2), MM_REASON_NOT_SHARED_SHMEM);
}

static void scope_thp_reasons(void **state)
{
	struct sc *s = *state;

	scope(state);
	sc_reason(s, W_EXTRA, 1, BASE + MiB(4), MM_REASON_HUGE_PAGES);
	sc_reason(s, W_EXTRA, 1, BASE, MM_REASON_POLICY_SHARES_NOTHING);
}

/*
 * Two processes map the same 2 GiB of shmem 1 GiB-aligned at different
 * addresses (BASE and BASE + 8 GiB): under hugetlb-2m the second one's
 * fault links the first one's PMD page, whose leaves it then sees
 * (huge_pmd_share: same pmd_index for the same object offset, the whole
 * 1 GiB in both VMAs); under thp-shmem it maps its own.
 */
static void two_procs_pmd(struct sc *s)
{
	sc_create(s, 1, ALL(0));
	sc_create(s, 2, ALL(0));
	sc_map(s, 1, shm(BASE, GiB(2)), ALL(0));
	sc_map(s, 2, shm(BASE + GiB(8), GiB(2)), ALL(0));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_fault(s, 1, BASE + MiB(2), WR, ALL(1));
}

static void pmd_shared_h2m(void **state)
{
	struct sc *s = *state;

	two_procs_pmd(s);
	/* linux, mccracken (another address), hugetlb-pmd (not hugetlb):
	 * a fault; aslr-tolerant links the PMD page (object slot) too. */
	sc_fault(s, 2, BASE + GiB(8), RD, RC5(1, 1, 0, 1, 0));
	sc_fault(s, 2, BASE + GiB(8) + MiB(2), RD, RC5(1, 1, 0, 1, 0));
	sc_fault(s, 2, BASE + GiB(8) + MiB(4), RD, ALL(1)); /* new everywhere */
	sc_fault(s, 1, BASE + MiB(4), RD, RC5(1, 1, 0, 1, 0));
	sc_tables(s, W_EXTRA, 1, 0, 1, 1);
	sc_tables(s, W_EXTRA, 2, 0, 1, 1); /* VmPTE charges the sharer */
	sc_shared(s, W_EXTRA, 2, 0, 1, 0);
	sc_distinct(s, W_EXTRA, 0, 1, 2);
	sc_distinct(s, W_LINUX, 6, 2, 2);
	sc_pss(s, W_EXTRA, 2, 4096.0 + 2048.0);
	sc_reason(s, W_EXTRA, 2, BASE + GiB(8), MM_REASON_SHAREABLE);
	/* mprotect of 2 MiB of P2 unshares its whole PMD page (the 1 GiB):
	 * hugetlb_change_protection()'s huge_pmd_unshare(). */
	sc_protect(s, 2, BASE + GiB(8), MiB(2), P_R, ALL(0));
	sc_tables(s, W_EXTRA, 2, 0, 0, 1);
	sc_distinct(s, W_EXTRA, 0, 1, 2);
	/* Its next touch in that GiB: a PMD page of its own (the split VMAs
	 * no longer cover the GiB), and a fault; aslr-tolerant links P1's
	 * PTE table there again, which holds the page. */
	sc_fault(s, 2, BASE + GiB(8) + MiB(4), RD, RC5(0, 0, 0, 0, 1));
	sc_tables(s, W_EXTRA, 2, 0, 1, 1);
	sc_shared(s, W_EXTRA, 2, 0, 0, 0);
	sc_distinct(s, W_EXTRA, 0, 2, 2);
	/* P1 exits: its PMD page is freed with it. */
	sc_exit(s, 1, ALL(0));
	sc_distinct(s, W_EXTRA, 0, 1, 1);
}

static void pmd_not_shared_thp(void **state)
{
	struct sc *s = *state;

	two_procs_pmd(s);
	sc_fault(s, 2, BASE + GiB(8), RD, RC5(1, 1, 0, 1, 1));
	sc_tables(s, W_EXTRA, 2, 0, 1, 1);
	sc_shared(s, W_EXTRA, 2, 0, 0, 0);
	sc_distinct(s, W_EXTRA, 0, 2, 2);
	/* fork copies no shared mapping's tables (vma_needs_copy). */
	sc_fork(s, 1, 3, ALL(0));
	sc_forkwork(s, W_EXTRA, 3, 0, 0, 0);
	sc_tables(s, W_EXTRA, 3, 0, 0, 0);
	sc_fault(s, 3, BASE, RD, RC5(1, 0, 0, 1, 1));
}

/* A checkpoint's pages: any page seen in a whole span is its one leaf
 * (one first touch); a whole span seen empty was zapped. */
static void observe_spans(void **state)
{
	struct sc *s = *state;

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, shm(BASE, MiB(4)), ALL(0));
	sc_observe(s, 1, BASE, BASE + MiB(4),
		   RUNS({ BASE + PG, BASE + 4 * PG, false, false },
			{ BASE + MiB(2), BASE + MiB(2) + PG, false, false }),
		   RC5(4, 4, 4, 4, 2));
	sc_tables(s, W_LINUX, 1, 2, 1, 1);
	sc_tables(s, W_EXTRA, 1, 0, 1, 1);
	sc_faults(s, W_EXTRA, 1, 0, 2);
	sc_observe(s, 1, BASE, BASE + MiB(4),
		   RUNS({ BASE + MiB(2), BASE + MiB(2) + PG, false, false }),
		   ALL(0));
	sc_fault(s, 1, BASE + 8 * PG, RD, ALL(1));
	sc_fault(s, 1, BASE + MiB(2) + 8 * PG, RD, RC5(1, 1, 1, 1, 0));
}

/*
 * PostgreSQL's layout with huge_pages=off (docs/postgres.md): a small
 * mapping T at X + 1 MiB (X a span boundary), the segment, 8 MiB + 40 KiB,
 * placed by the kernel top-down right below it at A (sc_placed: the
 * kernel chose every address here), then three small
 * mappings below that, each placed top-down: M1 (132 KiB), M2 (a 1 MiB
 * shmem file) and M3 (260 KiB).  Under hugetlb-2m the kernel rounds the
 * segment up to 10 MiB and aligns it below X + 1 MiB: at X - 10 MiB,
 * leaving [X, X + 1 MiB) free, where M1 goes (top-down), then M3 (M2, 1
 * MiB, no longer fits the 892 KiB left: below the segment, at X - 11
 * MiB).  Touching them all: linux has the PTE tables of spans X (T, the
 * segment's tail), X - 8 MiB (the segment's head, M1) and X - 10 MiB (M2,
 * M3); hugetlb-2m those of X (T, M1, M3) and X - 12 MiB (M2), the segment
 * in PMD leaves.  Every address below is the program's.
 */
#define LX (BASE + MiB(64))
#define SEG (MiB(8) + KiB(40))
#define LA (LX + MiB(1) - SEG)
#define M1 (LA - KiB(132))
#define M2 (M1 - MiB(1))
#define M3 (M2 - KiB(260))

static void layout_h2m(void **state)
{
	struct sc *s = *state;

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_placed(sc_anon(LX + MiB(1), KiB(132), P_RW)), ALL(0));
	sc_map(s, 1, sc_placed(sc_obj(MM_OBJ_SHMEM, SHM_S, LA, SEG, 0, P_RW, SH)),
	       ALL(0));
	sc_map(s, 1, sc_placed(sc_anon(M1, KiB(132), P_RW)), ALL(0));
	sc_map(s, 1, sc_placed(sc_obj(MM_OBJ_SHMEM, SHM_S + 1, M2, MiB(1), 0,
				      P_RW, SH)), ALL(0));
	sc_map(s, 1, sc_placed(sc_anon(M3, KiB(260), P_RW)), ALL(0));
	/* Not MAP_FIXED over what the program has: refused everywhere. */
	sc_map(s, 1, sc_placed(sc_anon(M1, PG, P_RW)), ALL(SC_ERR));
	/* A checkpoint seeing a page of T: one first touch; not one in the
	 * tail the segment was rounded up by (T's pages are T's). */
	sc_observe(s, 1, LA, LX + MiB(1) + KiB(132),
		   RUNS({ LX + MiB(1) + PG, LX + MiB(1) + 2 * PG, false, true }),
		   ALL(1));
	const uint64_t touch[] = { LX + MiB(1), LA, LA + SEG - PG, M1, M2, M3 };
	for (size_t i = 0; i < sizeof(touch) / sizeof(touch[0]); i++)
		sc_fault(s, 1, touch[i], WR, ALL(1));
	/* A second page of the segment's head span: a leaf under hugetlb-2m
	 * (its world address, X - 10 MiB + 4 KiB, is in the first leaf). */
	sc_fault(s, 1, LA + PG, WR, RC5(1, 1, 1, 1, 0));
	sc_tables(s, W_LINUX, 1, 3, 1, 1);
	sc_tables(s, W_EXTRA, 1, 2, 1, 1);
	sc_reason(s, W_EXTRA, 1, LA, MM_REASON_HUGE_PAGES);
	sc_reason(s, W_EXTRA, 1, M1, MM_REASON_NOT_SHARED_SHMEM);
	/* A checkpoint, in the program's addresses: M3 empty now. */
	sc_observe(s, 1, M3, M3 + KiB(260), NO_RUNS, ALL(0));
	/* A fork takes the layout: the child's touch of M2 is M2's. */
	sc_fork(s, 1, 2, ALL(0));
	sc_fault(s, 2, M2, RD, ALL(1));
	sc_reason(s, W_EXTRA, 2, LA, MM_REASON_HUGE_PAGES);
	/* M1 and M3 unmapped: span X keeps T; the segment goes too, and with
	 * it every PMD leaf. */
	sc_unmap(s, 1, M3, LA - M3, ALL(0));
	sc_unmap(s, 1, LA, SEG, ALL(0));
	sc_tables(s, W_LINUX, 1, 1, 1, 1);
	sc_tables(s, W_EXTRA, 1, 1, 1, 1);
	sc_fault(s, 1, M1, RD, ALL(SC_ERR));
}

int main(void)
{
	const struct CMUnitTest h2m[] = {
		cmocka_unit_test_setup_teardown(whole_spans_h2m, setup_h2m,
						sc_teardown),
		cmocka_unit_test_setup_teardown(edges_h2m, setup_h2m,
						sc_teardown),
		cmocka_unit_test_setup_teardown(gib_h2m, setup_h2m, sc_teardown),
		cmocka_unit_test_setup_teardown(scope_h2m_reasons, setup_h2m,
						sc_teardown),
		cmocka_unit_test_setup_teardown(pmd_shared_h2m, setup_h2m,
						sc_teardown),
		cmocka_unit_test_setup_teardown(observe_spans, setup_h2m,
						sc_teardown),
		cmocka_unit_test_setup_teardown(layout_h2m, setup_h2m,
						sc_teardown),
	};
	const struct CMUnitTest thp[] = {
		cmocka_unit_test_setup_teardown(whole_spans_thp, setup_thp,
						sc_teardown),
		cmocka_unit_test_setup_teardown(edges_thp, setup_thp,
						sc_teardown),
		cmocka_unit_test_setup_teardown(gib_thp, setup_thp, sc_teardown),
		cmocka_unit_test_setup_teardown(scope_thp_reasons, setup_thp,
						sc_teardown),
		cmocka_unit_test_setup_teardown(pmd_not_shared_thp, setup_thp,
						sc_teardown),
		cmocka_unit_test_setup_teardown(observe_spans, setup_thp,
						sc_teardown),
	};
	return cmocka_run_group_tests_name("hugetlb-2m", h2m, NULL, NULL) |
	       cmocka_run_group_tests_name("thp-shmem", thp, NULL, NULL);
}
