/* SPDX-License-Identifier: MIT */
/*
 * Bad input for every operation.  Each must return a negative errno (the
 * one docs/model.md names, where it names one), set a non-empty
 * mm_world_error() and leave the world unchanged: the harness compares every
 * process's stats, the totals, the findings and every VMA before and after
 * each rejected call, in all four worlds.
 */
#include "scenario.h"

#define FILE_F 100
#define SHM_S 200
#define HUGE_H 300

#define TOP MM_TASK_SIZE
#define WRAP_ADDR (UINT64_MAX - PG + 1) /* the last page of the address space */

/* P1: anon [BASE, +2M) written, a read-only private file at BASE+1G (1 MiB:
 * shared by no policy), a PROT_NONE anon at BASE+2G; P2 forked from it
 * (copies the anon VMA only). */
static void populate(struct sc *s)
{
	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_anon(BASE, MiB(2), P_RW), ALL(0));
	sc_map(s, 1, sc_obj(MM_OBJ_FILE, FILE_F, BASE + GiB(1), MiB(1), 0, P_R, 0),
	       ALL(0));
	sc_map(s, 1, sc_anon(BASE + GiB(2), MiB(2), P_NONE), ALL(0));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_fault(s, 1, BASE + GiB(1), RD, ALL(1));
	sc_fork(s, 1, 2, ALL(0));
}

/* The world still works after the rejections. */
static void still_works(struct sc *s)
{
	sc_fault(s, 1, BASE, RD, ALL(0));
	sc_fault(s, 1, BASE + PG, WR, ALL(1));
	sc_tables(s, W_ALL, 1, 2, 2, 1);
	sc_tables(s, W_ALL, 2, 1, 1, 1);
}

static void errors_process_ops(void **state)
{
	struct sc *s = *state;

	populate(s);
	sc_create(s, 1, ALL(SC_ERR));  /* exists */
	sc_fork(s, 9, 10, ALL(SC_ERR)); /* unknown parent */
	sc_fork(s, 1, 2, ALL(SC_ERR));  /* child exists */
	sc_fork(s, 1, 1, ALL(SC_ERR));  /* child is the parent */
	sc_exec(s, 9, ALL(SC_ERR));
	sc_exit(s, 9, ALL(SC_ERR));
	sc_gone(s, W_ALL, 9);
	sc_exit(s, 2, ALL(0));
	sc_exit(s, 2, ALL(SC_ERR)); /* already gone */
	sc_exec(s, 2, ALL(SC_ERR));
	sc_nprocs(s, W_ALL, 1);
	sc_fault(s, 1, BASE, RD, ALL(0));
}

static void errors_map(void **state)
{
	struct sc *s = *state;
	const uint64_t x = BASE + GiB(3);

	populate(s);
	sc_map(s, 1, sc_anon(x + 1, MiB(2), P_RW), ALL(SC_ERR));       /* unaligned addr */
	sc_map(s, 1, sc_anon(x, MiB(2) + 1, P_RW), ALL(SC_ERR));       /* unaligned len */
	sc_map(s, 1, sc_anon(x, 0, P_RW), ALL(SC_ERR));                /* empty */
	sc_map(s, 1, sc_anon(WRAP_ADDR, 2 * PG, P_RW), ALL(SC_ERR));   /* wraps */
	sc_map(s, 1, sc_anon(TOP - PG, 2 * PG, P_RW), ALL(SC_ERR));    /* beyond */
	sc_map(s, 1, sc_anon(TOP, PG, P_RW), ALL(SC_ERR));
	sc_map(s, 1, sc_anon(1ull << 47, PG, P_RW), ALL(SC_ERR));
	sc_map(s, 9, sc_anon(x, MiB(2), P_RW), ALL(SC_ERR));           /* no process */
	/* shared anonymous memory is a shmem object */
	sc_map(s, 1, sc_obj(MM_OBJ_ANON, 0, x, MiB(2), 0, P_RW, MM_VMA_SHARED),
	       ALL(-EINVAL));
	/* hugetlb: aligned to the huge page size */
	sc_map(s, 1, sc_hugetlb(HUGE_H, x + PG, MiB(2), 0, 21, MM_VMA_SHARED),
	       ALL(SC_ERR));
	sc_map(s, 1, sc_hugetlb(HUGE_H, x, MiB(3), 0, 21, MM_VMA_SHARED),
	       ALL(SC_ERR));
	sc_map(s, 1, sc_hugetlb(HUGE_H, x + MiB(2), GiB(1), 0, 30, MM_VMA_SHARED),
	       ALL(SC_ERR));
	sc_map(s, 1, sc_anon(BASE + MiB(1), MiB(2), P_RW), ALL(-EEXIST));
	/* the last page below MM_TASK_SIZE is fine */
	sc_map(s, 1, sc_anon(TOP - PG, PG, P_RW), ALL(0));
	still_works(s);
}

static void errors_unmap(void **state)
{
	struct sc *s = *state;

	populate(s);
	sc_unmap(s, 1, BASE + 1, MiB(1), ALL(SC_ERR));
	sc_unmap(s, 1, BASE, 0, ALL(SC_ERR)); /* kernel: EINVAL */
	sc_unmap(s, 1, WRAP_ADDR, 2 * PG, ALL(SC_ERR));
	sc_unmap(s, 1, TOP - PG, 2 * PG, ALL(SC_ERR));
	sc_unmap(s, 1, 1ull << 47, PG, ALL(SC_ERR));
	sc_unmap(s, 9, BASE, MiB(2), ALL(SC_ERR));
	still_works(s);
}

/*
 * Reading for zero lengths of protect and advise: the brief of these tests
 * requires a rejection; the kernel returns 0 for mprotect(addr, 0) and
 * madvise(addr, 0) (a no-op).  Either way the world must not change.
 */
static void errors_protect(void **state)
{
	struct sc *s = *state;

	populate(s);
	sc_protect(s, 1, BASE + 1, MiB(1), P_R, ALL(SC_ERR));
	sc_protect(s, 1, BASE, 0, P_R, ALL(SC_ERR));
	sc_protect(s, 1, WRAP_ADDR, 2 * PG, P_R, ALL(SC_ERR));
	sc_protect(s, 1, TOP - PG, 2 * PG, P_R, ALL(SC_ERR));
	sc_protect(s, 9, BASE, MiB(2), P_R, ALL(SC_ERR));
	still_works(s);
	/* holes: -ENOMEM, a rejection (not the out-of-memory poisoning) */
	sc_protect(s, 1, BASE, MiB(4), P_R, ALL(-ENOMEM)); /* runs into a hole */
	sc_protect(s, 1, BASE + GiB(3), MiB(2), P_R, ALL(-ENOMEM));
	sc_fault(s, 1, BASE + 2 * PG, WR, ALL(1));
}

static void errors_remap(void **state)
{
	struct sc *s = *state;
	const uint64_t to = BASE + GiB(3);
	const uint32_t mv = MM_REMAP_MAYMOVE;

	populate(s);
	sc_remap(s, 1, BASE + 1, MiB(1), to, MiB(1), mv, ALL(SC_ERR)); /* old unaligned */
	sc_remap(s, 1, BASE, MiB(1), to + 1, MiB(1), mv, ALL(SC_ERR)); /* new unaligned */
	sc_remap(s, 1, BASE, MiB(1), to, 0, mv, ALL(SC_ERR));          /* new_len 0 */
	sc_remap(s, 1, BASE, MiB(4), to, MiB(4), mv, ALL(SC_ERR));  /* not one VMA */
	sc_remap(s, 1, BASE + GiB(3), MiB(1), to + GiB(1), MiB(1), mv,
		 ALL(SC_ERR)); /* nothing mapped */
	sc_remap(s, 1, BASE, MiB(1), WRAP_ADDR, 2 * PG, mv, ALL(SC_ERR));
	sc_remap(s, 1, BASE, MiB(1), TOP - PG, 2 * PG, mv, ALL(SC_ERR));
	sc_remap(s, 1, BASE, MiB(2), to, MiB(2), 0, ALL(SC_ERR)); /* moves without MAYMOVE */
	sc_remap(s, 9, BASE, MiB(1), to, MiB(1), mv, ALL(SC_ERR));
	still_works(s);
}

static void errors_advise(void **state)
{
	struct sc *s = *state;

	populate(s);
	sc_advise(s, 1, BASE + 1, MiB(1), MM_ADV_DONTNEED, ALL(SC_ERR));
	sc_advise(s, 1, BASE, 0, MM_ADV_DONTNEED, ALL(SC_ERR)); /* see errors_protect */
	sc_advise(s, 1, WRAP_ADDR, 2 * PG, MM_ADV_DONTNEED, ALL(SC_ERR));
	sc_advise(s, 1, TOP - PG, 2 * PG, MM_ADV_DONTNEED, ALL(SC_ERR));
	sc_advise(s, 9, BASE, MiB(2), MM_ADV_DONTNEED, ALL(SC_ERR));
	sc_advise(s, 1, BASE, MiB(2), MM_ADV_NR, ALL(SC_ERR));
	still_works(s);
}

static void errors_fault(void **state)
{
	struct sc *s = *state;

	populate(s);
	sc_fault(s, 1, BASE + MiB(2), RD, ALL(-EFAULT));  /* just past the VMA */
	sc_fault(s, 1, BASE - PG, WR, ALL(-EFAULT));
	sc_fault(s, 1, TOP, RD, ALL(-EFAULT));
	sc_fault(s, 1, UINT64_MAX - PG + 1, RD, ALL(-EFAULT));
	sc_fault(s, 1, BASE + GiB(1), WR, ALL(-EACCES)); /* read-only */
	sc_fault(s, 1, BASE + GiB(2), RD, ALL(-EACCES)); /* PROT_NONE */
	sc_fault(s, 9, BASE, RD, ALL(SC_ERR));
	sc_faults(s, W_ALL, 1, 2, 0);
	still_works(s);
}

static void errors_observe(void **state)
{
	struct sc *s = *state;
	const uint64_t e = BASE + MiB(2);

	populate(s);
	sc_observe(s, 1, BASE + 1, e, NO_RUNS, ALL(SC_ERR));
	sc_observe(s, 1, BASE, e + 1, NO_RUNS, ALL(SC_ERR));
	sc_observe(s, 1, BASE, BASE, NO_RUNS, ALL(SC_ERR));  /* empty */
	sc_observe(s, 1, e, BASE, NO_RUNS, ALL(SC_ERR));     /* backwards */
	sc_observe(s, 1, TOP - PG, TOP + PG, NO_RUNS, ALL(SC_ERR));
	sc_observe(s, 9, BASE, e, NO_RUNS, ALL(SC_ERR));
	/* runs outside [start, end), unsorted, overlapping, unaligned */
	sc_observe(s, 1, BASE, e, RUNS({ BASE, e + PG, false, false }), ALL(SC_ERR));
	sc_observe(s, 1, BASE + PG, e, RUNS({ BASE, BASE + 2 * PG, false, false }),
		   ALL(SC_ERR));
	sc_observe(s, 1, BASE, e,
		   RUNS({ BASE + 4 * PG, BASE + 5 * PG, false, false },
			{ BASE, BASE + PG, false, false }),
		   ALL(SC_ERR));
	sc_observe(s, 1, BASE, e,
		   RUNS({ BASE, BASE + 3 * PG, false, false },
			{ BASE + 2 * PG, BASE + 4 * PG, false, false }),
		   ALL(SC_ERR));
	sc_observe(s, 1, BASE, e, RUNS({ BASE + 1, BASE + PG, false, false }), ALL(SC_ERR));
	/* a huge run must be leaf-aligned */
	sc_observe(s, 1, BASE, e, RUNS({ BASE, BASE + MiB(1), true, false }), ALL(SC_ERR));
	sc_observe(s, 1, BASE, e, RUNS({ BASE, BASE + PG, false, false }), ALL(0));
	sc_faults(s, W_ALL, 1, 2, 0);
	still_works(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SC_TEST(errors_process_ops),
		SC_TEST(errors_map),
		SC_TEST(errors_unmap),
		SC_TEST(errors_protect),
		SC_TEST(errors_remap),
		SC_TEST(errors_advise),
		SC_TEST(errors_fault),
		SC_TEST(errors_observe),
	};

	return cmocka_run_group_tests_name("unit_errors", tests, NULL, NULL);
}
