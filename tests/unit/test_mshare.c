/* SPDX-License-Identifier: MIT */
/*
 * mshare (docs/model.md, "mshare"), as SC_EXTRA beside the four built-in
 * worlds: MAP_SHARED objects placed in regions of 512 GiB whose tables
 * live once, in a host no process is charged for; private mappings stay
 * each process's.  Expected values are worked by hand: an object's
 * offset 0 is at its region's start (host address 512 GiB for the first
 * region), so its 2 MiB spans are the object's own, whatever address a
 * process maps it at.
 */
#include "scenario.h"

#define SHM_S 200
#define SHM_T 201

static const uint32_t SH = MM_VMA_SHARED;

static int setup_mshare(void **state) { return sc_setup_extra(state, "mshare"); }
static int setup_named(void **state)
{
	return sc_setup_extra(state, "mshare:201");
}
static int setup_min(void **state)
{
	return sc_setup_extra(state, "mshare:min=64M");
}

static struct mm_mapping shm(uint64_t ino, uint64_t addr, uint64_t len)
{
	return sc_obj(MM_OBJ_SHMEM, ino, addr, len, 0, P_RW, SH);
}

/*
 * 8 MiB of shmem at BASE + 1 MiB in P1 and at BASE + 3 GiB + 5 MiB in P2:
 * under linux each process has the PTE tables of the spans its pages fall
 * in; under mshare the host has one PUD page, one PMD page and a PTE
 * table per object span touched, and neither process pays for them.
 */
static void region_tables_once(void **state)
{
	struct sc *s = *state;
	uint64_t a1 = BASE + MiB(1), a2 = BASE + GiB(3) + MiB(5);

	sc_create(s, 1, ALL(0));
	sc_create(s, 2, ALL(0));
	sc_map(s, 1, shm(SHM_S, a1, MiB(8)), ALL(0));
	sc_map(s, 2, shm(SHM_S, a2, MiB(8)), ALL(0));
	sc_fault(s, 1, a1, WR, ALL(1));                   /* object page 0 */
	sc_fault(s, 2, a2, RD, RC5(1, 1, 1, 1, 0));       /* present in host */
	sc_fault(s, 2, a2 + MiB(2) + PG, WR, ALL(1));     /* object span 1 */
	/* aslr-tolerant links P2's table there: the same object span on the
	 * same slots. */
	sc_fault(s, 1, a1 + MiB(2) + PG, RD, RC5(1, 1, 0, 1, 0));
	sc_tables(s, W_LINUX, 1, 2, 1, 1); /* a1 and a1 + 2 MiB: 2 spans */
	sc_tables(s, W_LINUX, 2, 2, 1, 1);
	sc_tables(s, W_EXTRA, 1, 0, 0, 0);
	sc_tables(s, W_EXTRA, 2, 0, 0, 0);
	sc_distinct(s, W_EXTRA, 2, 1, 1);
	sc_pss(s, W_EXTRA, 1, 4 * 4096.0 / 2);
	sc_pss(s, W_EXTRA, 2, 4 * 4096.0 / 2);
	sc_faults(s, W_EXTRA, 1, 1, 0);
	sc_faults(s, W_EXTRA, 2, 1, 0);
	sc_reason(s, W_EXTRA, 1, a1, MM_REASON_SHAREABLE);

	/* A private mapping: P1's own tables, under every policy. */
	sc_map(s, 1, sc_anon(BASE + GiB(2), MiB(2), P_RW), ALL(0));
	sc_fault(s, 1, BASE + GiB(2), WR, ALL(1));
	sc_tables(s, W_EXTRA, 1, 1, 1, 1);
	sc_reason(s, W_EXTRA, 1, BASE + GiB(2), MM_REASON_PRIVATE);
	sc_pss(s, W_EXTRA, 1, 3 * 4096.0 + 4 * 4096.0 / 2);

	/* fork: the child attaches too (its VMA is a copy), pays nothing
	 * for the region and takes no fault on its pages. */
	sc_fork(s, 2, 3, ALL(0));
	sc_fault(s, 3, a2 + MiB(2) + PG, RD, RC5(1, 0, 0, 1, 0));
	sc_tables(s, W_EXTRA, 3, 0, 0, 0);
	sc_pss(s, W_EXTRA, 3, 4 * 4096.0 / 3);

	/* The region lives while a process maps the object. */
	sc_exit(s, 1, ALL(0));
	sc_exit(s, 2, ALL(0));
	sc_distinct(s, W_EXTRA, 2, 1, 1);
	sc_unmap(s, 3, a2, MiB(8), ALL(0));
	sc_distinct(s, W_EXTRA, 0, 0, 0);
}

/* MADV_REMOVE punches a hole in the object: the host's page goes for
 * every process; its table stays. */
static void remove_zaps_host(void **state)
{
	struct sc *s = *state;

	sc_create(s, 1, ALL(0));
	sc_create(s, 2, ALL(0));
	sc_map(s, 1, shm(SHM_S, BASE, MiB(4)), ALL(0));
	sc_map(s, 2, shm(SHM_S, BASE + GiB(1), MiB(4)), ALL(0));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_fault(s, 2, BASE + GiB(1), RD, RC5(1, 1, 0, 1, 0));
	sc_advise(s, 1, BASE, MiB(2), MM_ADV_REMOVE, ALL(0));
	sc_distinct(s, W_EXTRA, 1, 1, 1);
	sc_fault(s, 2, BASE + GiB(1), RD, ALL(1));
	/* A pagemap scan of P2 adds to the host and takes nothing away. */
	sc_observe(s, 2, BASE + GiB(1), BASE + GiB(1) + MiB(4),
		   RUNS({ BASE + GiB(1) + MiB(2), BASE + GiB(1) + MiB(2) + 2 * PG,
			  false, false }),
		   RC5(2, 2, 2, 2, 2));
	sc_distinct(s, W_EXTRA, 2, 1, 1);
	sc_fault(s, 1, BASE, RD, RC5(1, 1, 1, 1, 0));
	sc_fault(s, 1, BASE + MiB(2) + PG, RD, RC5(1, 1, 0, 1, 0));
}

/* Which objects: only those named, or those of the minimum size. */
static void named_only(void **state)
{
	struct sc *s = *state;

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, shm(SHM_S, BASE, MiB(4)), ALL(0));
	sc_map(s, 1, shm(SHM_T, BASE + MiB(4), MiB(4)), ALL(0));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_fault(s, 1, BASE + MiB(4), WR, ALL(1));
	sc_tables(s, W_EXTRA, 1, 1, 1, 1); /* SHM_S's span only */
	sc_distinct(s, W_EXTRA, 2, 2, 2);
	sc_reason(s, W_EXTRA, 1, BASE, MM_REASON_NOT_PLACED);
	sc_reason(s, W_EXTRA, 1, BASE + MiB(4), MM_REASON_SHAREABLE);
}

static void min_size(void **state)
{
	struct sc *s = *state;

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, shm(SHM_S, BASE, MiB(8)), ALL(0));
	sc_map(s, 1, shm(SHM_T, BASE + GiB(1), MiB(64)), ALL(0));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_fault(s, 1, BASE + GiB(1), WR, ALL(1));
	sc_tables(s, W_EXTRA, 1, 1, 1, 1);
	sc_distinct(s, W_EXTRA, 2, 2, 2);
	sc_reason(s, W_EXTRA, 1, BASE, MM_REASON_NOT_PLACED);
	sc_reason(s, W_EXTRA, 1, BASE + GiB(1), MM_REASON_SHAREABLE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(region_tables_once, setup_mshare,
						sc_teardown),
		cmocka_unit_test_setup_teardown(remove_zaps_host, setup_mshare,
						sc_teardown),
		cmocka_unit_test_setup_teardown(named_only, setup_named,
						sc_teardown),
		cmocka_unit_test_setup_teardown(min_size, setup_min, sc_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
