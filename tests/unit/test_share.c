/* SPDX-License-Identifier: MIT */
/*
 * Sharing policies (docs/model.md, "Sharing policies"): linking at fault and
 * at fork, scope, detach, unshare, the PUD level option, aslr-tolerant
 * matching by object slot, hugetlb-pmd.
 *
 * Masks: W_FSHARE = mccracken-2005 + aslr-tolerant (they share file-backed
 * tables), W_NOFSHARE = linux + hugetlb-pmd (they do not share them).
 *
 * Reading used for fork_tables_copied when fork links: the upper table the
 * child allocates to hold the link (its own PUD page for a PMD-level link,
 * its PUD and PMD pages for a PTE-level link) counts as copied, as
 * copy_p4d_range/copy_pud_range allocate it.
 */
#include "scenario.h"

#define FILE_F 100
#define SHM_S 200
#define HUGE_H 300

static const uint32_t SH = MM_VMA_SHARED;

static struct mm_mapping shm(uint64_t addr, uint64_t len)
{
	return sc_obj(MM_OBJ_SHMEM, SHM_S, addr, len, 0, P_RW, SH);
}

static void two_procs_map(struct sc *s, struct mm_mapping m)
{
	sc_create(s, 1, ALL(0));
	sc_create(s, 2, ALL(0));
	sc_map(s, 1, m, ALL(0));
	sc_map(s, 2, m, ALL(0));
}

/* mccracken-2005 and aslr-tolerant link at fault: a second process with the
 * same shmem mapping at the same address takes no fault on pages the first
 * touched, and both see the pages either adds. */
static void share_at_fault_same_range(void **state)
{
	struct sc *s = *state;

	two_procs_map(s, shm(BASE, MiB(4)));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_fault(s, 1, BASE + PG, WR, ALL(1));
	sc_fault(s, 2, BASE, RD, RC(1, 0, 0, 1));
	sc_fault(s, 2, BASE + PG, RD, RC(1, 0, 0, 1));
	sc_fault(s, 2, BASE + 2 * PG, WR, ALL(1)); /* into the shared table */
	sc_fault(s, 1, BASE + 2 * PG, RD, RC(1, 0, 0, 1));

	/* P2 owns its PUD and PMD pages (the PMD page spans more than the
	 * VMA; PUD is not a level of these policies) and links P1's PTE. */
	sc_tables(s, W_ALL, 1, 1, 1, 1);
	sc_tables(s, W_ALL, 2, 1, 1, 1);
	sc_shared(s, W_NOFSHARE, 1, 0, 0, 0);
	sc_shared(s, W_NOFSHARE, 2, 0, 0, 0);
	sc_shared(s, W_FSHARE, 1, 1, 0, 0);
	sc_shared(s, W_FSHARE, 2, 1, 0, 0);
	sc_faults(s, W_NOFSHARE, 1, 3, 0);
	sc_faults(s, W_FSHARE, 1, 2, 0);
	sc_faults(s, W_NOFSHARE, 2, 3, 0);
	sc_faults(s, W_FSHARE, 2, 1, 0);
	sc_distinct(s, W_NOFSHARE, 2, 2, 2);
	sc_distinct(s, W_FSHARE, 1, 2, 2);
	sc_pss(s, W_NOFSHARE, 1, 3 * 4096.0);
	sc_pss(s, W_FSHARE, 1, 2 * 4096.0 + 2048.0); /* PUD + PMD + PTE/2 */
	sc_pss(s, W_FSHARE, 2, 2 * 4096.0 + 2048.0);
	sc_reason(s, W_LINUX, 1, BASE, MM_REASON_POLICY_SHARES_NOTHING);
	sc_reason(s, W_FSHARE, 1, BASE, MM_REASON_SHAREABLE);
	sc_reason(s, W_HPMD, 1, BASE, MM_REASON_NOT_HUGETLB_SHARED);
	sc_findings(s, W_ALL, 0, 0, 0, 0);
}

/* fork links at the highest level the VMA covers: a whole aligned 1 GiB,
 * so the PMD page.  linux and hugetlb-pmd do not copy a shared mapping. */
static void share_at_fork_pmd(void **state)
{
	struct sc *s = *state;

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, shm(BASE, GiB(1)), ALL(0));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_fault(s, 1, BASE + MiB(2), WR, ALL(1));
	sc_fork(s, 1, 2, ALL(0));

	sc_tables(s, W_NOFSHARE, 2, 0, 0, 0);
	sc_tables(s, W_FSHARE, 2, 2, 1, 1); /* own PUD, shared PMD, 2 PTE under it */
	sc_shared(s, W_FSHARE, 2, 2, 1, 0);
	sc_shared(s, W_FSHARE, 1, 2, 1, 0);
	sc_shared(s, W_NOFSHARE, 1, 0, 0, 0);
	sc_forkwork(s, W_NOFSHARE, 2, 0, 0, 0);
	sc_forkwork(s, W_FSHARE, 2, 1, 0, 1); /* PUD page copied, PMD page linked */
	sc_distinct(s, W_NOFSHARE, 2, 1, 1);
	sc_distinct(s, W_FSHARE, 2, 1, 2);
	sc_pss(s, W_NOFSHARE, 1, 4 * 4096.0);
	sc_pss(s, W_NOFSHARE, 2, 0.0);
	sc_pss(s, W_FSHARE, 1, 4096.0 + 2048.0 + 2 * 2048.0);
	sc_pss(s, W_FSHARE, 2, 4096.0 + 2048.0 + 2 * 2048.0);

	sc_fault(s, 2, BASE, RD, RC(1, 0, 0, 1));
	/* a new PTE table in the shared PMD page: both processes use it */
	sc_fault(s, 2, BASE + MiB(4), WR, ALL(1));
	sc_fault(s, 1, BASE + MiB(4), RD, RC(1, 0, 0, 1));
	sc_tables(s, W_NOFSHARE, 1, 3, 1, 1);
	sc_tables(s, W_NOFSHARE, 2, 2, 1, 1);
	sc_tables(s, W_FSHARE, 1, 3, 1, 1);
	sc_tables(s, W_FSHARE, 2, 3, 1, 1);
	sc_shared(s, W_FSHARE, 1, 3, 1, 0);
	sc_shared(s, W_FSHARE, 2, 3, 1, 0);
	sc_distinct(s, W_NOFSHARE, 5, 2, 2);
	sc_distinct(s, W_FSHARE, 3, 1, 2);
	sc_pss(s, W_FSHARE, 2, 4096.0 + 2048.0 + 3 * 2048.0);
	sc_faults(s, W_NOFSHARE, 1, 3, 0);
	sc_faults(s, W_FSHARE, 1, 2, 0);
	sc_faults(s, W_NOFSHARE, 2, 2, 0);
	sc_faults(s, W_FSHARE, 2, 1, 0);
	sc_findings(s, W_ALL, 0, 0, 0, 0);
}

/* A VMA covering whole 2 MiB spans but no whole 1 GiB links PTE tables;
 * its partial span follows the copy rule (no anon pages: not copied). */
static void share_at_fork_pte_partial_span(void **state)
{
	struct sc *s = *state;

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, shm(BASE, MiB(5)), ALL(0));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_fault(s, 1, BASE + MiB(2), WR, ALL(1));
	sc_fault(s, 1, BASE + MiB(4), WR, ALL(1));
	sc_fork(s, 1, 2, ALL(0));

	sc_tables(s, W_NOFSHARE, 2, 0, 0, 0);
	sc_tables(s, W_FSHARE, 2, 2, 1, 1);
	sc_shared(s, W_FSHARE, 2, 2, 0, 0);
	sc_shared(s, W_FSHARE, 1, 2, 0, 0);
	sc_forkwork(s, W_NOFSHARE, 2, 0, 0, 0);
	sc_forkwork(s, W_FSHARE, 2, 2, 0, 2); /* PUD + PMD copied, 2 PTE linked */
	sc_distinct(s, W_NOFSHARE, 3, 1, 1);
	sc_distinct(s, W_FSHARE, 3, 2, 2);

	sc_fault(s, 2, BASE + MiB(4), RD, ALL(1)); /* partial span: own table */
	sc_fault(s, 2, BASE, RD, RC(1, 0, 0, 1));
	sc_tables(s, W_NOFSHARE, 2, 2, 1, 1);
	sc_tables(s, W_FSHARE, 2, 3, 1, 1);
	sc_shared(s, W_FSHARE, 2, 2, 0, 0);
	sc_distinct(s, W_NOFSHARE, 5, 2, 2);
	sc_distinct(s, W_FSHARE, 4, 2, 2);
	sc_findings(s, W_ALL, 0, 0, 0, 0);
}

/* A private read-only file mapping without anon pages is shareable. */
static void share_private_readonly_file(void **state)
{
	struct sc *s = *state;

	two_procs_map(s, sc_obj(MM_OBJ_FILE, FILE_F, BASE, MiB(2), 0, P_R, 0));
	sc_fault(s, 1, BASE, RD, ALL(1));
	sc_fault(s, 2, BASE, RD, RC(1, 0, 0, 1));
	sc_shared(s, W_FSHARE, 1, 1, 0, 0);
	sc_shared(s, W_NOFSHARE, 1, 0, 0, 0);
	sc_reason(s, W_FSHARE, 1, BASE, MM_REASON_SHAREABLE);

	sc_fork(s, 1, 3, ALL(0));
	sc_forkwork(s, W_FSHARE, 3, 2, 0, 1); /* PUD + PMD copied, PTE linked */
	sc_forkwork(s, W_NOFSHARE, 3, 0, 0, 0);
	sc_tables(s, W_FSHARE, 3, 1, 1, 1);
	sc_tables(s, W_NOFSHARE, 3, 0, 0, 0);
	sc_shared(s, W_FSHARE, 3, 1, 0, 0);
	sc_distinct(s, W_FSHARE, 1, 3, 3);
	sc_distinct(s, W_NOFSHARE, 2, 2, 2);
	sc_fault(s, 3, BASE, RD, RC(1, 0, 0, 1));
	sc_findings(s, W_ALL, 0, 0, 0, 0);
}

/* ------------------------------------------------------------- scope */

struct scope_case {
	struct mm_mapping m;   /* P1's mapping */
	struct mm_mapping m2;  /* P2's, when it differs (len != 0) */
	bool write;            /* P1's first touch is a write */
	bool protect_ro;       /* then P1 makes it read-only */
	enum mm_reason reason; /* P1's VMA under mccracken-2005/aslr-tolerant */
	enum mm_reason reason_hpmd; /* MM_REASON_NR: not checked */
	bool fork;             /* fork P1 -> P3: nothing linked */
	uint64_t fork_copied, fork_pages;
};

/* Two processes map the same thing at the same address and touch the same
 * page: no policy shares. */
static void scope_not_shared(struct sc *s, const struct scope_case *c)
{
	const uint64_t a = c->m.addr;

	sc_create(s, 1, ALL(0));
	sc_create(s, 2, ALL(0));
	sc_map(s, 1, c->m, ALL(0));
	sc_fault(s, 1, a, c->write, ALL(1));
	if (c->protect_ro)
		sc_protect(s, 1, a, c->m.len, P_R, ALL(0));
	sc_map(s, 2, c->m2.len ? c->m2 : c->m, ALL(0));
	sc_fault(s, 2, a, RD, ALL(1));
	sc_tables(s, W_ALL, 1, 1, 1, 1);
	sc_tables(s, W_ALL, 2, 1, 1, 1);
	sc_shared(s, W_ALL, 1, 0, 0, 0);
	sc_shared(s, W_ALL, 2, 0, 0, 0);
	sc_distinct(s, W_ALL, 2, 2, 2);
	sc_reason(s, W_LINUX, 1, a, MM_REASON_POLICY_SHARES_NOTHING);
	sc_reason(s, W_FSHARE, 1, a, c->reason);
	if (c->reason_hpmd != MM_REASON_NR)
		sc_reason(s, W_HPMD, 1, a, c->reason_hpmd);
	if (c->fork) {
		sc_fork(s, 1, 3, ALL(0));
		sc_forkwork(s, W_ALL, 3, c->fork_copied, c->fork_pages, 0);
	}
}

static void scope_anon_private(void **state)
{
	const struct scope_case c = {
		.m = sc_anon(BASE, MiB(2), P_RW), .write = true,
		.reason = MM_REASON_ANON_PRIVATE, .reason_hpmd = MM_REASON_NR,
		.fork = true, .fork_copied = 3, .fork_pages = 1,
	};

	scope_not_shared(*state, &c);
}

static void scope_private_writable(void **state)
{
	const struct scope_case c = {
		.m = sc_obj(MM_OBJ_FILE, FILE_F, BASE, MiB(2), 0, P_RW, 0),
		.write = false, /* no anon pages: still not shareable */
		.reason = MM_REASON_PRIVATE_WRITABLE, .reason_hpmd = MM_REASON_NR,
		.fork = true, .fork_copied = 0, .fork_pages = 0,
	};

	scope_not_shared(*state, &c);
}

static void scope_small(void **state)
{
	const struct scope_case c = {
		.m = shm(BASE, MiB(2) - PG), .write = true,
		.reason = MM_REASON_SMALL, .reason_hpmd = MM_REASON_NR,
		.fork = true, .fork_copied = 0, .fork_pages = 0,
	};

	scope_not_shared(*state, &c);
}

/* Private read-only with COW pages: not shared (the model's correction of
 * the patch; the finding is counted in test_findings.c). */
static void scope_private_ro_with_anon_pages(void **state)
{
	const struct scope_case c = {
		.m = sc_obj(MM_OBJ_FILE, FILE_F, BASE, MiB(2), 0, P_RW, 0),
		.m2 = sc_obj(MM_OBJ_FILE, FILE_F, BASE, MiB(2), 0, P_R, 0),
		.write = true, .protect_ro = true,
		.reason = MM_REASON_PRIVATE_ANON_PAGES,
		.reason_hpmd = MM_REASON_NR,
		.fork = true, .fork_copied = 3, .fork_pages = 1,
	};

	scope_not_shared(*state, &c);
}

/* Flags differ (LOCKED): no match for mccracken-2005 nor aslr-tolerant. */
static void scope_flags_differ(void **state)
{
	const struct scope_case c = {
		.m = sc_obj(MM_OBJ_SHMEM, SHM_S, BASE, MiB(2), 0, P_RW,
			    SH | MM_VMA_LOCKED),
		.m2 = shm(BASE, MiB(2)), .write = true,
		.reason = MM_REASON_SHAREABLE,
		.reason_hpmd = MM_REASON_NOT_HUGETLB_SHARED,
	};

	scope_not_shared(*state, &c);
}

/* 2.5 MiB at an odd MiB: covers no whole aligned 2 MiB span. */
static void scope_no_whole_span(void **state)
{
	const struct scope_case c = {
		.m = shm(BASE + MiB(1), MiB(2) + KiB(512)), .write = true,
		.reason = MM_REASON_NO_WHOLE_SPAN, .reason_hpmd = MM_REASON_NR,
		.fork = true, .fork_copied = 0, .fork_pages = 0,
	};

	scope_not_shared(*state, &c);
}

/* ------------------------------------------------------ detach, unshare */

/* DONTNEED and unmap of a shared table detach it; the other sharer keeps
 * every page, including those the detaching process added. */
static void share_detach_dontneed_unmap(void **state)
{
	struct sc *s = *state;

	two_procs_map(s, shm(BASE, MiB(4)));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_fault(s, 1, BASE + PG, WR, ALL(1));
	sc_fault(s, 2, BASE + 2 * PG, WR, ALL(1));
	sc_fault(s, 2, BASE, RD, RC(1, 0, 0, 1));
	sc_shared(s, W_FSHARE, 1, 1, 0, 0);

	/* linux: P2's own table zapped and freed (whole span); sharing
	 * policies: detached (share count - 1) */
	sc_advise(s, 2, BASE, MiB(2), MM_ADV_DONTNEED, ALL(0));
	sc_tables(s, W_ALL, 2, 0, 1, 1);
	sc_tables(s, W_ALL, 1, 1, 1, 1);
	sc_shared(s, W_ALL, 1, 0, 0, 0);
	sc_fault(s, 1, BASE + 2 * PG, RD, RC(1, 0, 0, 1)); /* P2's page stayed */
	sc_fault(s, 1, BASE, RD, ALL(0));
	sc_fault(s, 2, BASE, RD, RC(1, 0, 0, 1)); /* links P1's table again */
	sc_tables(s, W_ALL, 2, 1, 1, 1);
	sc_shared(s, W_FSHARE, 2, 1, 0, 0);

	sc_unmap(s, 2, BASE, MiB(4), ALL(0));
	sc_tables(s, W_ALL, 2, 0, 0, 0);
	sc_tables(s, W_ALL, 1, 1, 1, 1);
	sc_shared(s, W_ALL, 1, 0, 0, 0);
	sc_fault(s, 1, BASE + PG, RD, ALL(0));
	sc_distinct(s, W_ALL, 1, 1, 1);
	sc_faults(s, W_NOFSHARE, 1, 3, 0);
	sc_faults(s, W_FSHARE, 1, 2, 0);
	sc_faults(s, W_NOFSHARE, 2, 3, 0);
	sc_faults(s, W_FSHARE, 2, 1, 0);
	sc_findings(s, W_ALL, 0, 0, 0, 0);
}

/* exit detaches; the child keeps the parent's pages in the PMD page it
 * linked at fork. */
static void share_detach_exit(void **state)
{
	struct sc *s = *state;

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, shm(BASE, GiB(1)), ALL(0));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_fork(s, 1, 2, ALL(0));
	sc_fault(s, 2, BASE + PG, WR, ALL(1));
	sc_exit(s, 1, ALL(0));
	sc_tables(s, W_ALL, 2, 1, 1, 1);
	sc_shared(s, W_ALL, 2, 0, 0, 0);
	sc_distinct(s, W_ALL, 1, 1, 1);
	sc_pss(s, W_ALL, 2, 3 * 4096.0);
	sc_fault(s, 2, BASE, RD, RC(1, 0, 0, 1));
	sc_fault(s, 2, BASE + PG, RD, ALL(0));
	sc_findings(s, W_ALL, 0, 0, 0, 0);
}

/* protect of a shareable VMA detaches its shared tables first; with the
 * protection back, the VMA matches again and faults relink. */
static void share_unshare_on_protect(void **state)
{
	struct sc *s = *state;

	two_procs_map(s, shm(BASE, MiB(4)));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_fault(s, 1, BASE + MiB(2), WR, ALL(1));
	sc_fault(s, 2, BASE, RD, RC(1, 0, 0, 1));
	sc_fault(s, 2, BASE + MiB(2), RD, RC(1, 0, 0, 1));
	sc_shared(s, W_FSHARE, 2, 2, 0, 0);

	sc_protect(s, 2, BASE, MiB(4), P_R, ALL(0));
	sc_tables(s, W_NOFSHARE, 2, 2, 1, 1);
	sc_tables(s, W_FSHARE, 2, 0, 1, 1);
	sc_tables(s, W_ALL, 1, 2, 1, 1);
	sc_shared(s, W_ALL, 1, 0, 0, 0);
	sc_distinct(s, W_NOFSHARE, 4, 2, 2);
	sc_distinct(s, W_FSHARE, 2, 2, 2);
	/* protection differs from P1's now: no sharer, a private table */
	sc_fault(s, 2, BASE, RD, RC(0, 1, 1, 0));
	sc_tables(s, W_FSHARE, 2, 1, 1, 1);
	sc_tables(s, W_NOFSHARE, 2, 2, 1, 1);
	sc_shared(s, W_ALL, 2, 0, 0, 0);

	sc_protect(s, 2, BASE, MiB(4), P_RW, ALL(0));
	sc_fault(s, 2, BASE + MiB(2), RD, ALL(0)); /* relinked to P1's */
	sc_tables(s, W_ALL, 2, 2, 1, 1);
	sc_shared(s, W_FSHARE, 2, 1, 0, 0);
	sc_shared(s, W_FSHARE, 1, 1, 0, 0);
	sc_distinct(s, W_NOFSHARE, 4, 2, 2);
	sc_distinct(s, W_FSHARE, 3, 2, 2);
	sc_faults(s, W_NOFSHARE, 2, 2, 0);
	sc_faults(s, W_FSHARE, 2, 1, 0);
	sc_findings(s, W_ALL, 0, 0, 0, 0);
}

/*
 * A moving remap of a shareable VMA detaches its shared tables first, so
 * there is nothing left to move (no PTE table at the old address: no PMD
 * page at the new one).  At the new address mccracken-2005 finds no sharer
 * (different start); aslr-tolerant finds P1's table by object slot.
 */
static void share_unshare_on_remap_move(void **state)
{
	struct sc *s = *state;
	const uint64_t to = BASE + GiB(1);

	two_procs_map(s, shm(BASE, MiB(4)));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_fault(s, 1, BASE + MiB(2), WR, ALL(1));
	sc_fault(s, 2, BASE, RD, RC(1, 0, 0, 1));
	sc_fault(s, 2, BASE + MiB(2), RD, RC(1, 0, 0, 1));

	sc_remap(s, 2, BASE, MiB(4), to, MiB(4), MM_REMAP_MAYMOVE, ALL(0));
	sc_vmas(s, W_ALL, 2, { to, to + MiB(4), P_RW, SH, false });
	/* linux: PMD at `to` + 2 moved PTE, PMD at BASE freed */
	sc_tables(s, W_NOFSHARE, 2, 2, 1, 1);
	sc_tables(s, W_FSHARE, 2, 0, 0, 1); /* only the PUD page remains */
	sc_tables(s, W_ALL, 1, 2, 1, 1);
	sc_shared(s, W_ALL, 1, 0, 0, 0);
	sc_distinct(s, W_NOFSHARE, 4, 2, 2);
	sc_distinct(s, W_FSHARE, 2, 1, 2);

	sc_fault(s, 2, to, RD, RC(0, 1, 0, 0));
	sc_tables(s, W_FSHARE, 2, 1, 1, 1);
	sc_tables(s, W_NOFSHARE, 2, 2, 1, 1);
	sc_shared(s, W_LINUX | W_MCC | W_HPMD, 2, 0, 0, 0);
	sc_shared(s, W_ASLR, 2, 1, 0, 0);
	sc_shared(s, W_ASLR, 1, 1, 0, 0);
	sc_distinct(s, W_NOFSHARE, 4, 2, 2);
	sc_distinct(s, W_MCC, 3, 2, 2);
	sc_distinct(s, W_ASLR, 2, 2, 2);
	sc_findings(s, W_ALL, 0, 0, 0, 0);
}

/*
 * Reading (spec ambiguity, see the report): "protect and remap of a
 * shareable VMA first detach ... as the patch's pt_unshare_range" is taken
 * to mean the remaps that move tables: the patch calls pt_unshare_range
 * from move_page_tables only, and docs/model.md says an in-place grow "just
 * extends the VMA (tables unchanged)".  So growing in place keeps the link.
 * (The literal alternative, detaching on every remap, would give P2
 * tables[PTE] = 0 here and a fault at BASE under mccracken-2005.)
 */
static void share_remap_grow_in_place_keeps_links(void **state)
{
	struct sc *s = *state;

	two_procs_map(s, shm(BASE, MiB(4)));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_fault(s, 2, BASE, RD, RC(1, 0, 0, 1));
	sc_remap(s, 2, BASE, MiB(4), BASE, MiB(6), 0, ALL(0));
	sc_vmas(s, W_ALL, 2, { BASE, BASE + MiB(6), P_RW, SH, false });
	sc_tables(s, W_ALL, 2, 1, 1, 1);
	sc_shared(s, W_FSHARE, 2, 1, 0, 0);
	sc_shared(s, W_FSHARE, 1, 1, 0, 0);
	sc_shared(s, W_NOFSHARE, 2, 0, 0, 0);
	sc_fault(s, 2, BASE, RD, ALL(0));
	sc_fault(s, 2, BASE + MiB(4), RD, ALL(1)); /* the new part: own table */
	sc_tables(s, W_ALL, 2, 2, 1, 1);
	sc_distinct(s, W_NOFSHARE, 3, 2, 2);
	sc_distinct(s, W_FSHARE, 2, 2, 2);
	sc_findings(s, W_ALL, 0, 0, 0, 0);
}

/* An observation links like a fault; a scan of one process does not clear
 * pages in a shared table. */
static void share_observe(void **state)
{
	struct sc *s = *state;

	two_procs_map(s, shm(BASE, MiB(4)));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_fault(s, 1, BASE + PG, WR, ALL(1));
	sc_observe(s, 2, BASE, BASE + MiB(2), RUNS({ BASE, BASE + 2 * PG, false, false }),
		   RC(2, 0, 0, 2));
	sc_faults(s, W_NOFSHARE, 2, 0, 2);
	sc_faults(s, W_FSHARE, 2, 0, 0);
	sc_tables(s, W_ALL, 2, 1, 1, 1);
	sc_shared(s, W_FSHARE, 2, 1, 0, 0);

	sc_observe(s, 2, BASE, BASE + MiB(2), NO_RUNS, ALL(0));
	sc_tables(s, W_ALL, 2, 1, 1, 1);
	sc_fault(s, 1, BASE + PG, RD, ALL(0));
	sc_fault(s, 2, BASE, RD, RC(1, 0, 0, 1)); /* cleared only if private */
	sc_findings(s, W_ALL, 0, 0, 0, 0);
}

/* ------------------------------------------------------------ PUD level */

/*
 * "mccracken-2005:pte+pmd+pud" (SC_EXTRA) links the PUD page of a VMA that
 * covers a whole aligned 512 GiB; the default mccracken-2005 links the PMD
 * page.  A PMD page allocated under the shared PUD page is seen by both.
 */
static void share_pud_level(void **state)
{
	struct sc *s = *state;
	const uint64_t p = GiB(512), g = GiB(513);

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, shm(p, GiB(512)), ALL(0));
	sc_fault(s, 1, p, WR, ALL(1));
	sc_fork(s, 1, 2, ALL(0));
	sc_tables(s, W_NOFSHARE, 2, 0, 0, 0);
	sc_tables(s, W_FSHARE | W_EXTRA, 2, 1, 1, 1);
	sc_shared(s, W_FSHARE, 2, 1, 1, 0);
	sc_shared(s, W_EXTRA, 2, 1, 1, 1);
	sc_shared(s, W_EXTRA, 1, 1, 1, 1);
	sc_forkwork(s, W_NOFSHARE, 2, 0, 0, 0);
	sc_forkwork(s, W_FSHARE, 2, 1, 0, 1); /* own PUD, linked PMD */
	sc_forkwork(s, W_EXTRA, 2, 0, 0, 1);  /* linked PUD; the PGD is not counted */
	sc_distinct(s, W_NOFSHARE, 1, 1, 1);
	sc_distinct(s, W_FSHARE, 1, 1, 2);
	sc_distinct(s, W_EXTRA, 1, 1, 1);
	sc_pss(s, W_FSHARE, 2, 4096.0 + 2048.0 + 2048.0);
	sc_pss(s, W_EXTRA, 2, 3 * 2048.0);
	sc_pss(s, W_EXTRA, 1, 3 * 2048.0);

	/* a new 1 GiB span, touched by the child first */
	sc_fault(s, 2, g, WR, ALL(1));
	sc_tables(s, W_NOFSHARE, 2, 1, 1, 1);
	sc_tables(s, W_FSHARE | W_EXTRA, 2, 2, 2, 1);
	sc_tables(s, W_NOFSHARE | W_FSHARE, 1, 1, 1, 1);
	sc_tables(s, W_EXTRA, 1, 2, 2, 1); /* under the shared PUD page */
	sc_distinct(s, W_NOFSHARE | W_FSHARE, 2, 2, 2);
	sc_distinct(s, W_EXTRA, 2, 2, 1);

	/* mccracken-2005 default: P1 finds P2's PMD page at fault */
	sc_fault(s, 1, g + PG, RD, ALL(1));
	sc_fault(s, 2, g + PG, RD, RC5(1, 0, 0, 1, 0));
	sc_fault(s, 1, g, RD, RC5(1, 0, 0, 1, 0));
	sc_tables(s, W_NOFSHARE, 1, 2, 2, 1);
	sc_tables(s, W_NOFSHARE, 2, 1, 1, 1);
	sc_tables(s, W_FSHARE | W_EXTRA, 1, 2, 2, 1);
	sc_tables(s, W_FSHARE | W_EXTRA, 2, 2, 2, 1);
	sc_shared(s, W_NOFSHARE, 1, 0, 0, 0);
	sc_shared(s, W_FSHARE, 1, 2, 2, 0);
	sc_shared(s, W_FSHARE, 2, 2, 2, 0);
	sc_shared(s, W_EXTRA, 1, 2, 2, 1);
	sc_shared(s, W_EXTRA, 2, 2, 2, 1);
	sc_distinct(s, W_NOFSHARE, 3, 3, 2);
	sc_distinct(s, W_FSHARE, 2, 2, 2);
	sc_distinct(s, W_EXTRA, 2, 2, 1);
	sc_faults(s, W_NOFSHARE, 1, 3, 0);
	sc_faults(s, W_FSHARE | W_EXTRA, 1, 2, 0);
	sc_faults(s, W_NOFSHARE, 2, 2, 0);
	sc_faults(s, W_FSHARE | W_EXTRA, 2, 1, 0);
	sc_findings(s, W_ALL, 0, 0, 0, 0);
}

/* -------------------------------------------------------- aslr-tolerant */

/*
 * The same file at different addresses: aslr-tolerant shares when the
 * object offset at the table's base lands on an aligned address in the
 * sharer (same offset modulo 2 MiB), not otherwise; mccracken-2005 shares
 * only the identical range.
 */
static void aslr_object_slot(void **state)
{
	struct sc *s = *state;
	const uint64_t c = BASE + GiB(64) + MiB(6), d = BASE + GiB(128);

	for (uint32_t pid = 1; pid <= 4; pid++)
		sc_create(s, pid, ALL(0));
	sc_map(s, 1, sc_obj(MM_OBJ_FILE, FILE_F, BASE, MiB(4), 0, P_R, SH), ALL(0));
	sc_fault(s, 1, BASE, RD, ALL(1));
	sc_fault(s, 1, BASE + MiB(2), RD, ALL(1));
	/* object [2M, 4M) at c: P1 has object offset 2M at BASE+2M, aligned */
	sc_map(s, 2, sc_obj(MM_OBJ_FILE, FILE_F, c, MiB(2), MiB(2), P_R, SH), ALL(0));
	sc_fault(s, 2, c, RD, RC(1, 1, 0, 1));
	/* object [1M, 3M) at d: P1 has object offset 1M at BASE+1M, unaligned */
	sc_map(s, 3, sc_obj(MM_OBJ_FILE, FILE_F, d, MiB(2), MiB(1), P_R, SH), ALL(0));
	sc_fault(s, 3, d, RD, ALL(1));
	/* P1's exact range */
	sc_map(s, 4, sc_obj(MM_OBJ_FILE, FILE_F, BASE, MiB(4), 0, P_R, SH), ALL(0));
	sc_fault(s, 4, BASE + MiB(2), RD, RC(1, 0, 0, 1));

	sc_tables(s, W_ALL, 1, 2, 1, 1);
	for (uint32_t pid = 2; pid <= 4; pid++)
		sc_tables(s, W_ALL, pid, 1, 1, 1);
	sc_shared(s, W_NOFSHARE, 1, 0, 0, 0);
	sc_shared(s, W_FSHARE, 1, 1, 0, 0);
	sc_shared(s, W_LINUX | W_MCC | W_HPMD, 2, 0, 0, 0);
	sc_shared(s, W_ASLR, 2, 1, 0, 0);
	sc_shared(s, W_ALL, 3, 0, 0, 0);
	sc_shared(s, W_NOFSHARE, 4, 0, 0, 0);
	sc_shared(s, W_FSHARE, 4, 1, 0, 0);
	sc_distinct(s, W_NOFSHARE, 5, 4, 4);
	sc_distinct(s, W_MCC, 4, 4, 4);
	sc_distinct(s, W_ASLR, 3, 4, 4);
	sc_pss(s, W_MCC, 1, 3 * 4096.0 + 2048.0);
	sc_pss(s, W_MCC, 4, 2 * 4096.0 + 2048.0);
	sc_findings(s, W_ALL, 0, 0, 0, 0);
}

/* ---------------------------------------------------------- hugetlb-pmd */

/*
 * MAP_SHARED hugetlb (2 MiB pages) covering a whole aligned 1 GiB: the PMD
 * page is shared at fault (hugetlb is a file object for mccracken-2005 and
 * aslr-tolerant too); every sharer still counts it in tables[]; distinct[]
 * counts it once.  Offset by 2 MiB it covers no aligned 1 GiB: no sharing.
 */
static void hugetlb_pmd_share(void **state)
{
	struct sc *s = *state;
	const uint64_t c = BASE + GiB(4), e = BASE + GiB(8);

	for (uint32_t pid = 1; pid <= 4; pid++)
		sc_create(s, pid, ALL(0));
	sc_map(s, 1, sc_hugetlb(HUGE_H, BASE, GiB(1), 0, 21, SH), ALL(0));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_map(s, 2, sc_hugetlb(HUGE_H, BASE, GiB(1), 0, 21, SH), ALL(0));
	sc_fault(s, 2, BASE, RD, RC(1, 0, 0, 0));
	sc_map(s, 3, sc_hugetlb(HUGE_H, c + MiB(2), GiB(1), 0, 21, SH), ALL(0));
	sc_fault(s, 3, c + MiB(2), RD, ALL(1));
	sc_map(s, 4, sc_hugetlb(HUGE_H, e, GiB(1), 0, 21, SH), ALL(0));
	sc_fault(s, 4, e, RD, RC(1, 1, 0, 0)); /* other address, same slots */

	for (uint32_t pid = 1; pid <= 4; pid++)
		sc_tables(s, W_ALL, pid, 0, 1, 1); /* VmPTE charges every sharer */
	sc_shared(s, W_LINUX, 1, 0, 0, 0);
	sc_shared(s, W_MCC | W_ASLR | W_HPMD, 1, 0, 1, 0);
	sc_shared(s, W_MCC | W_ASLR | W_HPMD, 2, 0, 1, 0);
	sc_shared(s, W_ALL, 3, 0, 0, 0);
	sc_shared(s, W_LINUX | W_MCC, 4, 0, 0, 0);
	sc_shared(s, W_ASLR | W_HPMD, 4, 0, 1, 0);
	sc_distinct(s, W_LINUX, 0, 4, 4);
	sc_distinct(s, W_MCC, 0, 3, 4);
	sc_distinct(s, W_ASLR | W_HPMD, 0, 2, 4);
	sc_pss(s, W_MCC, 1, 4096.0 + 2048.0);
	sc_reason(s, W_HPMD, 1, BASE, MM_REASON_SHAREABLE);

	/* a huge page added through the shared PMD page is seen by all */
	sc_fault(s, 2, BASE + MiB(2), WR, ALL(1));
	sc_fault(s, 1, BASE + MiB(2) + PG, RD, RC(1, 0, 0, 0));
	sc_fault(s, 4, e + MiB(2), RD, RC(1, 1, 0, 0));

	/* detach: P2 unmaps, the others keep the pages */
	sc_unmap(s, 2, BASE, GiB(1), ALL(0));
	sc_tables(s, W_ALL, 2, 0, 0, 0);
	sc_fault(s, 1, BASE, RD, ALL(0));
	sc_shared(s, W_MCC | W_LINUX, 1, 0, 0, 0);
	sc_shared(s, W_ASLR | W_HPMD, 1, 0, 1, 0);
	sc_distinct(s, W_LINUX | W_MCC, 0, 3, 3);
	sc_distinct(s, W_ASLR | W_HPMD, 0, 2, 3);
	sc_findings(s, W_ALL, 0, 0, 0, 0);
}

/* hugetlb-pmd does not link at fork: the child links at its first fault. */
static void hugetlb_pmd_fork(void **state)
{
	struct sc *s = *state;

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_hugetlb(HUGE_H, BASE, GiB(1), 0, 21, SH), ALL(0));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_fork(s, 1, 2, ALL(0));
	sc_tables(s, W_LINUX | W_HPMD, 2, 0, 0, 0);
	sc_tables(s, W_FSHARE, 2, 0, 1, 1);
	sc_forkwork(s, W_LINUX | W_HPMD, 2, 0, 0, 0);
	sc_forkwork(s, W_FSHARE, 2, 1, 0, 1);

	sc_fault(s, 2, BASE, RD, RC(1, 0, 0, 0));
	sc_tables(s, W_ALL, 2, 0, 1, 1);
	sc_shared(s, W_LINUX, 2, 0, 0, 0);
	sc_shared(s, W_MCC | W_ASLR | W_HPMD, 2, 0, 1, 0);
	sc_distinct(s, W_LINUX, 0, 2, 2);
	sc_distinct(s, W_MCC | W_ASLR | W_HPMD, 0, 1, 2);
	sc_fault(s, 2, BASE + MiB(2), WR, ALL(1));
	sc_fault(s, 1, BASE + MiB(2) + PG, RD, RC(1, 0, 0, 0));
	sc_faults(s, W_LINUX, 1, 2, 0);
	sc_faults(s, W_MCC | W_ASLR | W_HPMD, 1, 1, 0);
	sc_faults(s, W_LINUX, 2, 2, 0);
	sc_faults(s, W_MCC | W_ASLR | W_HPMD, 2, 1, 0);
}

/* hugetlb-pmd ignores LOCKED when matching (page_table_shareable); the
 * other policies need equal flags. */
static void hugetlb_pmd_ignores_locked(void **state)
{
	struct sc *s = *state;

	sc_create(s, 1, ALL(0));
	sc_create(s, 2, ALL(0));
	sc_map(s, 1, sc_hugetlb(HUGE_H, BASE, GiB(1), 0, 21, SH | MM_VMA_LOCKED),
	       ALL(0));
	sc_map(s, 2, sc_hugetlb(HUGE_H, BASE, GiB(1), 0, 21, SH), ALL(0));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_fault(s, 2, BASE, RD, RC(1, 1, 1, 0));
	sc_shared(s, W_HPMD, 2, 0, 1, 0);
	sc_shared(s, W_LINUX | W_FSHARE, 2, 0, 0, 0);
	sc_distinct(s, W_HPMD, 0, 1, 2);
	sc_distinct(s, W_LINUX | W_FSHARE, 0, 2, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SC_TEST(share_at_fault_same_range),
		SC_TEST(share_at_fork_pmd),
		SC_TEST(share_at_fork_pte_partial_span),
		SC_TEST(share_private_readonly_file),
		SC_TEST(scope_anon_private),
		SC_TEST(scope_private_writable),
		SC_TEST(scope_small),
		SC_TEST(scope_private_ro_with_anon_pages),
		SC_TEST(scope_flags_differ),
		SC_TEST(scope_no_whole_span),
		SC_TEST(share_detach_dontneed_unmap),
		SC_TEST(share_detach_exit),
		SC_TEST(share_unshare_on_protect),
		SC_TEST(share_unshare_on_remap_move),
		SC_TEST(share_remap_grow_in_place_keeps_links),
		SC_TEST(share_observe),
		SC_TEST_PUD(share_pud_level),
		SC_TEST(aslr_object_slot),
		SC_TEST(hugetlb_pmd_share),
		SC_TEST(hugetlb_pmd_fork),
		SC_TEST(hugetlb_pmd_ignores_locked),
	};

	return cmocka_run_group_tests_name("unit_share", tests, NULL, NULL);
}
