/* SPDX-License-Identifier: MIT */
/*
 * daemon/behind.c: what every ring says of the daemon's lag (the word a
 * fork waits on in the shim) as it works without a break, and once it
 * has nothing left to do.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "behind.h"

#define MS (1000 * 1000ull)

struct two {
	struct pts_ring hdr[3];
	struct conn conn[3];
	struct conn *open[3];
	struct conns cs;
};

/* Two connections with a ring and one without. */
static void two_rings(struct two *t)
{
	*t = (struct two){ 0 };
	for (int i = 0; i < 3; i++) {
		t->conn[i].rr.hdr = i < 2 ? &t->hdr[i] : NULL;
		t->open[i] = &t->conn[i];
	}
	t->cs = (struct conns){ .open = t->open, .nopen = 3 };
}

static void assert_says(const struct two *t, uint32_t v)
{
	assert_int_equal(t->hdr[0].behind, v);
	assert_int_equal(t->hdr[1].behind, v);
}

/* Busy 100 ms without a break: behind, until it has nothing to do. */
static void test_busy_then_idle(void **state)
{
	struct two t;
	struct behind b = { 0 };
	(void)state;
	two_rings(&t);
	behind_check(&b, &t.cs, false, 1000 * MS); /* its first work: the clock starts */
	behind_check(&b, &t.cs, false, 1099 * MS);
	assert_says(&t, 0);
	behind_check(&b, &t.cs, false, 1100 * MS);
	assert_says(&t, 1);
	t.hdr[1].behind = 2; /* a shim sleeps on it */
	behind_check(&b, &t.cs, false, 1500 * MS);
	assert_int_equal(t.hdr[0].behind, 1);
	assert_int_equal(t.hdr[1].behind, 2); /* not written again */
	behind_check(&b, &t.cs, true, 1600 * MS);
	assert_says(&t, 0);
	/* The clock starts again at the break. */
	behind_check(&b, &t.cs, false, 1650 * MS);
	assert_says(&t, 0);
	behind_check(&b, &t.cs, true, 1690 * MS);
	behind_check(&b, &t.cs, false, 1750 * MS);
	assert_says(&t, 0);
	behind_check(&b, &t.cs, false, 1790 * MS);
	assert_says(&t, 1);
}

/* A ring mapped while the daemon is behind says so at once; the others
 * are not written again while nothing changes. */
static void test_new_ring(void **state)
{
	struct two t;
	struct behind b = { 0 };
	struct pts_ring late = { 0 };
	struct conn c = { .rr.hdr = &late };
	(void)state;
	two_rings(&t);
	behind_ring_new(&b, &c);
	assert_int_equal(late.behind, 0);
	behind_check(&b, &t.cs, true, 1000 * MS);
	behind_check(&b, &t.cs, false, 1200 * MS);
	behind_ring_new(&b, &c);
	assert_int_equal(late.behind, 1);
	t.hdr[0].behind = 7; /* what the process wrote there */
	behind_check(&b, &t.cs, false, 1300 * MS);
	assert_int_equal(t.hdr[0].behind, 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_busy_then_idle),
		cmocka_unit_test(test_new_ring),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
