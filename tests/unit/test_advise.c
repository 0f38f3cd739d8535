/* SPDX-License-Identifier: MIT */
/* advise: DONTNEED (CONFIG_PT_RECLAIM), REMOVE, FREE.  Anonymous or small
 * mappings: every policy agrees with linux (detach on DONTNEED of a shared
 * table is in test_share.c). */
#include "scenario.h"

#define SHM_S 200

/* DONTNEED frees a PTE table only for a whole aligned 2 MiB span inside the
 * range and inside one VMA; otherwise it only zaps. */
static void dontneed_frees_whole_span_only(void **state)
{
	struct sc *s = *state;

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_anon(BASE, MiB(6), P_RW), ALL(0));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_fault(s, 1, BASE + PG, WR, ALL(1));
	sc_fault(s, 1, BASE + MiB(2), WR, ALL(1));
	sc_fault(s, 1, BASE + MiB(4), WR, ALL(1));
	sc_tables(s, W_ALL, 1, 3, 1, 1);

	sc_advise(s, 1, BASE + MiB(2), MiB(2), MM_ADV_DONTNEED, ALL(0));
	sc_tables(s, W_ALL, 1, 2, 1, 1); /* whole span: freed */
	sc_advise(s, 1, BASE, MiB(1), MM_ADV_DONTNEED, ALL(0));
	sc_tables(s, W_ALL, 1, 2, 1, 1); /* half a span: kept */
	sc_fault(s, 1, BASE, RD, ALL(1));
	sc_fault(s, 1, BASE + PG, RD, ALL(1));
	/* [BASE+3M, BASE+6M): covers the span [BASE+4M, +2M) whole */
	sc_advise(s, 1, BASE + MiB(3), MiB(3), MM_ADV_DONTNEED, ALL(0));
	sc_tables(s, W_ALL, 1, 1, 1, 1);
	sc_vmas(s, W_ALL, 1, { BASE, BASE + MiB(6), P_RW, 0, true });
	sc_faults(s, W_ALL, 1, 6, 0);
	sc_distinct(s, W_ALL, 1, 1, 1);
}

/* A span covered by the range but shared by two VMAs is kept. */
static void dontneed_span_of_two_vmas_kept(void **state)
{
	struct sc *s = *state;

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_anon(BASE, MiB(1), P_RW), ALL(0));
	sc_map(s, 1, sc_anon(BASE + MiB(1), MiB(1), P_R), ALL(0));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_fault(s, 1, BASE + MiB(1), RD, ALL(1));
	sc_advise(s, 1, BASE, MiB(2), MM_ADV_DONTNEED, ALL(0));
	sc_tables(s, W_ALL, 1, 1, 1, 1);
	sc_fault(s, 1, BASE, RD, ALL(1));
	sc_fault(s, 1, BASE + MiB(1), RD, ALL(1));
}

/* DONTNEED of a whole THP drops the leaf and its deposit; of part of one,
 * splits it first (the deposit becomes the table) then zaps. */
static void dontneed_thp(void **state)
{
	struct sc *s = *state;

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_anon(BASE, MiB(4), P_RW), ALL(0));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_observe(s, 1, BASE, BASE + MiB(4),
		   RUNS({ BASE, BASE + MiB(2), true, false },
			{ BASE + MiB(2), BASE + MiB(4), true, false }),
		   ALL(1023)); /* 511 + 512 new pages */
	sc_tables(s, W_ALL, 1, 2, 1, 1); /* two deposits */
	sc_advise(s, 1, BASE, MiB(2), MM_ADV_DONTNEED, ALL(0));
	sc_tables(s, W_ALL, 1, 1, 1, 1);
	sc_advise(s, 1, BASE + MiB(2), MiB(1), MM_ADV_DONTNEED, ALL(0));
	sc_tables(s, W_ALL, 1, 1, 1, 1);
	sc_fault(s, 1, BASE + MiB(3), RD, ALL(0)); /* kept by the split */
	sc_fault(s, 1, BASE + MiB(2), RD, ALL(1)); /* zapped */
	sc_fault(s, 1, BASE, RD, ALL(1));
	sc_tables(s, W_ALL, 1, 2, 1, 1);
	sc_faults(s, W_ALL, 1, 3, 1023);
}

/* REMOVE zaps the object range in every VMA of every process that maps it,
 * whatever the address; no table is freed.  The mappings are 1 MiB: no
 * policy shares them. */
static void remove_zaps_object_everywhere(void **state)
{
	struct sc *s = *state;
	const uint64_t c = BASE + GiB(1), d = BASE + GiB(2);
	const uint32_t sh = MM_VMA_SHARED;

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_obj(MM_OBJ_SHMEM, SHM_S, BASE, MiB(1), 0, P_RW, sh), ALL(0));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_fault(s, 1, BASE + PG, WR, ALL(1));
	sc_fault(s, 1, BASE + 2 * PG, WR, ALL(1));
	sc_fork(s, 1, 2, ALL(0)); /* not copied: the child faults */
	sc_fault(s, 2, BASE, RD, ALL(1));
	sc_fault(s, 2, BASE + PG, RD, ALL(1));
	sc_create(s, 3, ALL(0));
	sc_map(s, 3, sc_obj(MM_OBJ_SHMEM, SHM_S, c, MiB(1), 0, P_RW, sh), ALL(0));
	/* object page 1 at d */
	sc_map(s, 3, sc_obj(MM_OBJ_SHMEM, SHM_S, d, MiB(1), PG, P_RW, sh), ALL(0));
	sc_fault(s, 3, c, RD, ALL(1));
	sc_fault(s, 3, c + PG, RD, ALL(1));
	sc_fault(s, 3, d, RD, ALL(1));
	sc_fault(s, 3, d + PG, RD, ALL(1)); /* object page 2 */

	/* object pages 0 and 1 */
	sc_advise(s, 1, BASE, 2 * PG, MM_ADV_REMOVE, ALL(0));
	sc_tables(s, W_ALL, 1, 1, 1, 1);
	sc_tables(s, W_ALL, 2, 1, 1, 1);
	sc_tables(s, W_ALL, 3, 2, 2, 1);
	sc_fault(s, 1, BASE, RD, ALL(1));
	sc_fault(s, 1, BASE + 2 * PG, RD, ALL(0)); /* page 2: untouched */
	sc_fault(s, 2, BASE + PG, RD, ALL(1));
	sc_fault(s, 3, c, RD, ALL(1));
	sc_fault(s, 3, c + PG, RD, ALL(1));
	sc_fault(s, 3, d, RD, ALL(1));        /* object page 1 */
	sc_fault(s, 3, d + PG, RD, ALL(0));   /* object page 2 */
	sc_faults(s, W_ALL, 1, 4, 0);
	sc_faults(s, W_ALL, 2, 3, 0);
	sc_faults(s, W_ALL, 3, 7, 0);
	sc_distinct(s, W_ALL, 4, 4, 3);
}

/* FREE changes nothing the model sees. */
static void free_changes_nothing(void **state)
{
	struct sc *s = *state;

	sc_create(s, 1, ALL(0));
	sc_map(s, 1, sc_anon(BASE, MiB(2), P_RW), ALL(0));
	sc_fault(s, 1, BASE, WR, ALL(1));
	sc_advise(s, 1, BASE, MiB(2), MM_ADV_FREE, ALL(0));
	sc_tables(s, W_ALL, 1, 1, 1, 1);
	sc_vmas(s, W_ALL, 1, { BASE, BASE + MiB(2), P_RW, 0, true });
	sc_fault(s, 1, BASE, RD, ALL(0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SC_TEST(dontneed_frees_whole_span_only),
		SC_TEST(dontneed_span_of_two_vmas_kept),
		SC_TEST(dontneed_thp),
		SC_TEST(remove_zaps_object_everywhere),
		SC_TEST(free_changes_nothing),
	};

	return cmocka_run_group_tests_name("unit_advise", tests, NULL, NULL);
}
