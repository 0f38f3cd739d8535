/* SPDX-License-Identifier: MIT */
/*
 * The call-site bookkeeping of the ingest (ingest/callsite.h): return
 * addresses become places in the code mappings a checkpoint listed, equal
 * call sites are kept once, and the ranges each site made follow mmap over
 * them, munmap, mremap (moved, shrunk, grown, kept) and fork.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "ingest/callsite.h"

static void test_ranges_set(void **state)
{
	struct site_ranges s = { 0 };
	assert_int_equal(ingest_site_ranges_set(&s, 0x1000, 0x5000, 1), 0);
	assert_int_equal(ingest_site_ranges_set(&s, 0x2000, 0x3000, 2),
			 0); /* inside */
	assert_int_equal(ingest_site_ranges_at(&s, 0x0fff), 0);
	assert_int_equal(ingest_site_ranges_at(&s, 0x1000), 1);
	assert_int_equal(ingest_site_ranges_at(&s, 0x2000), 2);
	assert_int_equal(ingest_site_ranges_at(&s, 0x2fff), 2);
	assert_int_equal(ingest_site_ranges_at(&s, 0x3000), 1);
	assert_int_equal(ingest_site_ranges_at(&s, 0x5000), 0);
	assert_int_equal(s.t.n, 3);
	/* unmapped across two ranges, then mapped over all by another call */
	assert_int_equal(ingest_site_ranges_set(&s, 0x0000, 0x2800, 0), 0);
	assert_int_equal(ingest_site_ranges_at(&s, 0x1000), 0);
	assert_int_equal(ingest_site_ranges_at(&s, 0x2800), 2);
	assert_int_equal(ingest_site_ranges_set(&s, 0x2000, 0x6000, 7), 0);
	assert_int_equal(s.t.n, 1);
	assert_int_equal(ingest_site_ranges_at(&s, 0x4000), 7);
	struct site_ranges child = { 0 };
	assert_int_equal(ingest_site_ranges_copy(&child, &s), 0);
	assert_int_equal(ingest_site_ranges_set(&s, 0x2000, 0x6000, 0), 0);
	assert_int_equal(ingest_site_ranges_at(&child, 0x5fff), 7);
	assert_int_equal(ingest_site_ranges_at(&s, 0x5fff), 0);
	ingest_site_ranges_free(&s);
	ingest_site_ranges_free(&child);
}

static void test_ranges_move(void **state)
{
	struct site_ranges s = { 0 };
	ingest_site_ranges_set(&s, 0x10000, 0x12000, 1);
	/* moved and grown: the growth is the mremap's (3) */
	assert_int_equal(ingest_site_ranges_move(&s, 0x10000, 0x2000, 0x20000,
						 0x4000,
						 false, 3), 0);
	assert_int_equal(ingest_site_ranges_at(&s, 0x10000), 0);
	assert_int_equal(ingest_site_ranges_at(&s, 0x20000), 1);
	assert_int_equal(ingest_site_ranges_at(&s, 0x21fff), 1);
	assert_int_equal(ingest_site_ranges_at(&s, 0x22000), 3);
	assert_int_equal(ingest_site_ranges_at(&s, 0x23fff), 3);
	assert_int_equal(ingest_site_ranges_at(&s, 0x24000), 0);
	/* shrunk in place */
	ingest_site_ranges_move(&s, 0x20000, 0x4000, 0x20000, 0x1000, false, 4);
	assert_int_equal(ingest_site_ranges_at(&s, 0x20000), 1);
	assert_int_equal(ingest_site_ranges_at(&s, 0x21000), 0);
	/* MREMAP_DONTUNMAP: the old range stays */
	ingest_site_ranges_move(&s, 0x20000, 0x1000, 0x30000, 0x1000, true, 5);
	assert_int_equal(ingest_site_ranges_at(&s, 0x20000), 1);
	assert_int_equal(ingest_site_ranges_at(&s, 0x30000), 1);
	/* old_len 0 duplicates nothing: the new mapping is the mremap's */
	ingest_site_ranges_move(&s, 0x20000, 0, 0x40000, 0x2000, false, 6);
	assert_int_equal(ingest_site_ranges_at(&s, 0x20000), 1);
	assert_int_equal(ingest_site_ranges_at(&s, 0x41000), 6);
	ingest_site_ranges_free(&s);
}

static void test_intern(void **state)
{
	const struct pts_ck_vma ck[] = {
		{ .start = 0x400000, .end = 0x401000, .offset = 0x2000, .dev = 1,
		  .ino = 2, .kind = MM_OBJ_FILE, .prot = MM_PROT_READ | MM_PROT_EXEC },
		{ .start = 0x401000, .end = 0x402000, .offset = 0x3000, .dev = 1,
		  .ino = 2, .kind = MM_OBJ_FILE, .prot = MM_PROT_READ },
		{ .start = 0x500000, .end = 0x600000, .kind = MM_OBJ_ANON,
		  .prot = MM_PROT_READ | MM_PROT_EXEC },
	};
	struct code_map code = { 0 };
	struct callsites t = { 0 };
	assert_int_equal(ingest_code_map_set(&code, ck, 3), 0);
	assert_int_equal(code.n, 1); /* only the executable file mapping */
	const uint64_t a[] = { 0x400010, 0x401010, 0x500020 };
	uint32_t site = ingest_callsites_intern(&t, &code, a, 3);
	size_t n;
	const struct callsite_frame *f = ingest_callsites_get(&t, site, &n);
	assert_true(site > 0);
	assert_int_equal(n, 3);
	assert_int_equal(f[0].obj.kind, MM_OBJ_FILE);
	assert_int_equal(f[0].obj.ino, 2);
	assert_int_equal(f[0].offset, 0x2010);
	assert_int_equal(f[1].obj.kind, MM_OBJ_ANON); /* not executable */
	assert_int_equal(f[1].offset, 0x401010);
	assert_int_equal(f[2].offset, 0x500020);
	assert_int_equal(ingest_callsites_intern(&t, &code, a, 3), site);
	assert_int_not_equal(ingest_callsites_intern(&t, &code, a, 2), site);
	assert_int_equal(ingest_callsites_intern(&t, &code, a, 0), 0);
	/* many sites: each kept once, each found again */
	for (uint64_t i = 0; i < 1000; i++) {
		uint64_t b[2] = { 0x400000 + i, 0x400000 };
		uint32_t s1 = ingest_callsites_intern(&t, &code, b, 2);
		assert_int_equal(ingest_callsites_intern(&t, &code, b, 2), s1);
		f = ingest_callsites_get(&t, s1, &n);
		assert_int_equal(f[0].offset, 0x2000 + i);
	}
	assert_int_equal(t.nsites, 1002);
	ingest_callsites_free(&t);
	ingest_code_map_free(&code);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ranges_set),
		cmocka_unit_test(test_ranges_move),
		cmocka_unit_test(test_intern),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
