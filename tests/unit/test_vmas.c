/* SPDX-License-Identifier: MIT */
/*
 * A process's VMA set at scale (mmu/mm_vma.c, an ordered tree): many
 * one-page mappings made top-down as mmap makes them, and random maps,
 * unmaps and protections checked against a page-by-page reference.  The
 * model's VMAs must be exactly the reference's maximal runs of pages of
 * one protection (anonymous VMAs without pages merge whenever they touch),
 * and mm_check() (the tree balanced and in order) must hold throughout.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "ptshare/mm.h"
#include "ptshare/policy.h"

#define PG MM_PAGE_SIZE
#define BASE (1ULL << 40)
#define WINDOW 1024          /* pages of the random test */
#define UNMAPPED 0xff

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static struct mm_mapping anon(uint64_t addr, uint64_t len, uint32_t prot,
			      bool fixed)
{
	return (struct mm_mapping){ .addr = addr, .len = len, .prot = prot,
				    .obj = { MM_OBJ_ANON, 0, 0 }, .fixed = fixed };
}

struct listing {
	struct mm_vma_info v[WINDOW];
	size_t n;
};

static int collect(const struct mm_vma_info *v, void *arg)
{
	struct listing *l = arg;
	assert_true(l->n < WINDOW);
	l->v[l->n++] = *v;
	return 0;
}

/* The model's VMAs of [BASE + lo, BASE + hi) pages are the maximal runs of
 * one protection of the reference meeting that window. */
static void same_as_reference(struct mm_world *w, const uint8_t *page,
			      unsigned lo, unsigned hi)
{
	struct listing l = { .n = 0 };
	assert_int_equal(mm_proc_vmas_in(w, 1, BASE + lo * PG, BASE + hi * PG,
					 collect, &l), 0);
	size_t k = 0;
	unsigned i = lo;
	while (i > 0 && page[i] != UNMAPPED && page[i - 1] == page[i])
		i--;
	while (i < hi) {
		if (page[i] == UNMAPPED) {
			i++;
			continue;
		}
		unsigned j = i;
		while (j < WINDOW && page[j] == page[i])
			j++;
		assert_true(k < l.n);
		assert_int_equal(l.v[k].start, BASE + i * PG);
		assert_int_equal(l.v[k].end, BASE + j * PG);
		assert_int_equal(l.v[k].prot, page[i]);
		k++;
		i = j;
	}
	assert_int_equal(l.n, k);
}

static void set_pages(uint8_t *page, unsigned a, unsigned b, uint8_t to)
{
	for (unsigned i = a; i < b; i++)
		page[i] = to;
}

static bool all_mapped(const uint8_t *page, unsigned a, unsigned b)
{
	for (unsigned i = a; i < b; i++)
		if (page[i] == UNMAPPED)
			return false;
	return true;
}

/* 4,000 random operations on a 4 MiB window; the whole listing and a
 * random window of it compared after each. */
static void random_operations(void **state)
{
	static const uint32_t prots[] = { 0, MM_PROT_READ,
					  MM_PROT_READ | MM_PROT_WRITE };
	struct mm_world *w = mm_world_new(&mm_policy_linux);
	uint8_t page[WINDOW];
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	set_pages(page, 0, WINDOW, UNMAPPED);
	assert_non_null(w);
	assert_int_equal(mm_create(w, 1), 0);
	for (int op = 0; op < 4000; op++) {
		unsigned a = rnd(&x) % WINDOW;
		unsigned len = 1 + rnd(&x) % (rnd(&x) % 4 ? 4 : 64);
		unsigned b = a + len < WINDOW ? a + len : WINDOW;
		uint8_t prot = (uint8_t)prots[rnd(&x) % 3];
		uint64_t addr = BASE + a * PG, bytes = (b - a) * PG;
		switch (rnd(&x) % 4) {
		case 0: /* mmap without MAP_FIXED: only where nothing is */ {
			struct mm_mapping m = anon(addr, bytes, prot, false);
			bool free_range = true;
			for (unsigned i = a; i < b; i++)
				free_range &= page[i] == UNMAPPED;
			assert_int_equal(mm_map(w, 1, &m), free_range ? 0 : -EEXIST);
			if (free_range)
				set_pages(page, a, b, prot);
			break;
		}
		case 1: {
			struct mm_mapping m = anon(addr, bytes, prot, true);
			assert_int_equal(mm_map(w, 1, &m), 0);
			set_pages(page, a, b, prot);
			break;
		}
		case 2:
			assert_int_equal(mm_unmap(w, 1, addr, bytes), 0);
			set_pages(page, a, b, UNMAPPED);
			break;
		default: {
			bool mapped = all_mapped(page, a, b);
			assert_int_equal(mm_protect(w, 1, addr, bytes, prot),
					 mapped ? 0 : -ENOMEM);
			if (mapped)
				set_pages(page, a, b, prot);
		}
		}
		assert_int_equal(mm_check(w), 0);
		same_as_reference(w, page, 0, WINDOW);
		unsigned lo = rnd(&x) % WINDOW;
		same_as_reference(w, page, lo, lo + 1 + rnd(&x) % (WINDOW - lo));
	}
	mm_world_free(w);
}

static int count(const struct mm_vma_info *v, void *arg)
{
	(*(uint64_t *)arg)++;
	return 0;
}

/* What a program mapping until vm.max_map_count does: one-page mappings
 * each just below the last, of alternating protections (so none merge);
 * then a fork, and every other one unmapped, then the rest. */
static void top_down_many(void **state)
{
	const uint64_t n = 20000, top = BASE + n * 2 * PG;
	struct mm_world *w = mm_world_new(&mm_policy_linux);
	struct mm_proc_stats st;
	uint64_t seen = 0;
	assert_non_null(w);
	assert_int_equal(mm_create(w, 1), 0);
	for (uint64_t i = 0; i < n; i++) {
		struct mm_mapping m = anon(top - (i + 1) * PG, PG,
					   i % 2 ? MM_PROT_READ
						 : MM_PROT_READ | MM_PROT_WRITE,
					   false);
		assert_int_equal(mm_map(w, 1, &m), 0);
		assert_int_equal(mm_fault(w, 1, m.addr, false), 1);
	}
	assert_int_equal(mm_check(w), 0);
	assert_int_equal(mm_proc_stats(w, 1, &st), 0);
	assert_int_equal(st.vmas, n);
	assert_int_equal(st.mapped_bytes, n * PG);
	/* pages 20,000 to 39,999 above BASE: 2 MiB spans 39 to 78 */
	assert_int_equal(st.tables[PT_PTE], 40);
	assert_int_equal(mm_proc_vmas_in(w, 1, top - 10 * PG, top - 5 * PG,
					 count, &seen), 0);
	assert_int_equal(seen, 5);

	assert_int_equal(mm_fork(w, 1, 2), 0);
	assert_int_equal(mm_proc_stats(w, 2, &st), 0);
	assert_int_equal(st.vmas, n);
	for (uint64_t i = 0; i < n; i += 2)
		assert_int_equal(mm_unmap(w, 1, top - (i + 1) * PG, PG), 0);
	assert_int_equal(mm_check(w), 0);
	assert_int_equal(mm_proc_stats(w, 1, &st), 0);
	assert_int_equal(st.vmas, n / 2);
	/* the read-only ones left, each alone: none merged across a hole */
	seen = 0;
	assert_int_equal(mm_proc_vmas(w, 1, count, &seen), 0);
	assert_int_equal(seen, n / 2);
	assert_int_equal(mm_unmap(w, 1, top - n * PG, n * PG), 0);
	assert_int_equal(mm_proc_stats(w, 1, &st), 0);
	assert_int_equal(st.vmas, 0);
	assert_int_equal(mm_proc_stats(w, 2, &st), 0);
	assert_int_equal(st.vmas, n);
	assert_int_equal(mm_check(w), 0);
	mm_world_free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(random_operations),
		cmocka_unit_test(top_down_many),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
