/* SPDX-License-Identifier: MIT */
/*
 * daemon/behind.c: what every ring says of the daemon's lag (the word a
 * fork waits on in the shim), as batches of readings are made, EXITs are
 * acked after a wait, and the loop runs out of work.
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

static void test_long_batch(void **state)
{
	struct two t;
	struct behind b = { 0 };
	(void)state;
	two_rings(&t);
	behind_batch_ran(&b, &t.cs, 19 * MS);
	assert_says(&t, 0);
	behind_batch_end(&b, &t.cs);
	behind_batch_ran(&b, &t.cs, 1 * MS);
	behind_batch_ran(&b, &t.cs, 20 * MS);
	assert_says(&t, 1);
	behind_batch_ran(&b, &t.cs, 40 * MS);
	assert_says(&t, 1);
	t.hdr[1].behind = 2; /* a shim sleeps on it */
	behind_batch_end(&b, &t.cs);
	assert_says(&t, 0);
}

static void test_exits_that_waited(void **state)
{
	struct two t;
	struct behind b = { 0 };
	(void)state;
	two_rings(&t);
	behind_exit_waited(&b, &t.cs, 19 * MS);
	assert_says(&t, 0);
	behind_exit_waited(&b, &t.cs, 20 * MS);
	assert_says(&t, 1);
	behind_exit_waited(&b, &t.cs, 10 * MS); /* still more than half */
	assert_says(&t, 1);
	/* A batch that ends leaves it to the EXITs. */
	behind_batch_ran(&b, &t.cs, 100 * MS);
	behind_batch_end(&b, &t.cs);
	assert_says(&t, 1);
	behind_exit_waited(&b, &t.cs, 9 * MS);
	assert_says(&t, 0);
	behind_exit_waited(&b, &t.cs, 50 * MS);
	assert_says(&t, 1);
	behind_idle(&b, &t.cs);
	assert_says(&t, 0);
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
	behind_exit_waited(&b, &t.cs, 30 * MS);
	behind_ring_new(&b, &c);
	assert_int_equal(late.behind, 1);
	t.hdr[0].behind = 7; /* what the process wrote there */
	behind_exit_waited(&b, &t.cs, 30 * MS);
	assert_int_equal(t.hdr[0].behind, 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_long_batch),
		cmocka_unit_test(test_exits_that_waited),
		cmocka_unit_test(test_new_ring),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
