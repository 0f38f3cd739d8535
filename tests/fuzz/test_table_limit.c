/* SPDX-License-Identifier: MIT */
/*
 * mm_world_limit_tables, which keeps the fuzz harnesses' inputs affordable:
 * the table page past the limit fails its operation as out of memory, the
 * world keeps what it had and stays failed; without a limit the same
 * operations succeed.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "ptshare/mm.h"

#define BASE (1ULL << 30)
#define SPAN (2ULL << 20) /* one PTE table's */

static uint64_t tables(const struct mm_world *w)
{
	uint64_t t[PT_NR_LEVELS], n = 0;
	mm_world_tables(w, t);
	for (unsigned l = 0; l < PT_NR_LEVELS; l++)
		n += t[l];
	return n;
}

/* A process with 8 MiB of anonymous memory, its first page touched: a
 * PUD, a PMD and a PTE table. */
static struct mm_world *world(uint64_t limit)
{
	struct mm_world *w = mm_world_new(&mm_policy_linux);
	struct mm_mapping m = {
		.addr = BASE, .len = 4 * SPAN,
		.prot = MM_PROT_READ | MM_PROT_WRITE, .fixed = true,
	};
	assert_non_null(w);
	mm_world_limit_tables(w, limit);
	assert_int_equal(mm_create(w, 1), 0);
	assert_int_equal(mm_map(w, 1, &m), 0);
	assert_int_equal(mm_fault(w, 1, BASE, true), 1);
	assert_int_equal(tables(w), 3);
	return w;
}

static void limit_reached(void **state)
{
	struct mm_world *w = world(3);
	assert_int_equal(mm_fault(w, 1, BASE + 1, true), 0); /* same page */
	assert_int_equal(mm_fault(w, 1, BASE + SPAN, true), -ENOMEM);
	assert_int_equal(tables(w), 3);
	assert_int_equal(mm_fault(w, 1, BASE + 4096, true), -ENOMEM);
	assert_string_not_equal(mm_world_error(w), "");
	mm_world_free(w);
}

static void no_limit(void **state)
{
	struct mm_world *w = world(0);
	assert_int_equal(mm_fault(w, 1, BASE + SPAN, true), 1);
	assert_int_equal(mm_fault(w, 1, BASE + 3 * SPAN, true), 1);
	assert_int_equal(tables(w), 5);
	mm_world_free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(limit_reached),
		cmocka_unit_test(no_limit),
	};
	return cmocka_run_group_tests_name("test_table_limit", tests, NULL, NULL);
}
