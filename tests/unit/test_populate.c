/* SPDX-License-Identifier: MIT */
/*
 * mm_fault_range() against mm_fault() page by page: two worlds of each
 * built-in policy take the same random mappings (private and shared,
 * small and hugetlb, with holes and forbidding protections), forks,
 * transparent huge pages seen by a checkpoint, and populates of random
 * ranges, one world by range and the other page by page, on a kernel
 * with the zero page and on one without.  The returns must agree (the count of pages that were faults, or
 * the refusal of the first page refused), and so must everything after:
 * every process's tables, shared tables, faults and anon pages, the
 * world's tables, and which pages are present (one more fault of every
 * page in both, compared).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ptshare/mm.h"
#include "ptshare/policy.h"

#define PG MM_PAGE_SIZE
#define SPAN MM_SPAN(PT_PTE)
#define BASE (1ULL << 40)
#define WINDOW (16 * SPAN) /* 32 MiB */
#define PROCS 3

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* The page-by-page reference: what the ingest did before. */
static int fault_pages(struct mm_world *w, uint32_t pid, uint64_t addr,
		       uint64_t len, bool write)
{
	int n = 0;
	for (uint64_t a = addr; a < addr + len; a += PG) {
		int r = mm_fault(w, pid, a, write);
		if (r < 0)
			return r;
		n += r;
	}
	return n;
}

/* The same operation on both worlds, with the same result (its arguments
 * are evaluated twice). */
#define BOTH(call, ...)                                                     \
	do {                                                                \
		int ra_ = call(w[0], __VA_ARGS__), rb_ = call(w[1], __VA_ARGS__); \
		assert_int_equal(ra_, rb_);                                 \
	} while (0)

/* A process's mappings, as far as they may differ here. */
struct vma_list {
	struct { uint64_t start, end; bool anon_pages; } v[1024];
	size_t n;
};

static int collect(const struct mm_vma_info *vma, void *arg)
{
	struct vma_list *l = arg;
	if (l->n == sizeof(l->v) / sizeof(l->v[0]))
		return -1;
	l->v[l->n].start = vma->start;
	l->v[l->n].end = vma->end;
	l->v[l->n++].anon_pages = vma->anon_pages;
	return 0;
}

static void same_vmas(struct mm_world *w[2], uint32_t pid)
{
	static struct vma_list a, b;
	a.n = b.n = 0;
	assert_int_equal(mm_proc_vmas(w[0], pid, collect, &a), 0);
	assert_int_equal(mm_proc_vmas(w[1], pid, collect, &b), 0);
	assert_int_equal(a.n, b.n);
	for (size_t i = 0; i < a.n; i++) {
		assert_int_equal(a.v[i].start, b.v[i].start);
		assert_int_equal(a.v[i].end, b.v[i].end);
		assert_int_equal(a.v[i].anon_pages, b.v[i].anon_pages);
	}
}

static void same_state(struct mm_world *w[2])
{
	struct mm_proc_stats a[PROCS], b[PROCS];
	struct mm_world_totals ta, tb;
	int na = mm_world_stats(w[0], a, PROCS, &ta);
	assert_int_equal(na, mm_world_stats(w[1], b, PROCS, &tb));
	assert_memory_equal(&ta, &tb, sizeof(ta));
	for (int i = 0; i < na; i++) {
		assert_memory_equal(a[i].tables, b[i].tables, sizeof(a[i].tables));
		assert_memory_equal(a[i].shared, b[i].shared, sizeof(a[i].shared));
		assert_int_equal(a[i].faults, b[i].faults);
		assert_int_equal(a[i].vmas, b[i].vmas);
		same_vmas(w, a[i].pid);
	}
	assert_int_equal(mm_check(w[0]), 0);
	assert_int_equal(mm_check(w[1]), 0);
}

static struct mm_mapping random_mapping(uint64_t *x)
{
	uint64_t a = rnd(x) % (WINDOW / PG), len = 1 + rnd(x) % 1024;
	static const uint32_t prots[] = { 0, MM_PROT_READ,
					  MM_PROT_READ | MM_PROT_WRITE,
					  MM_PROT_READ | MM_PROT_WRITE,
					  MM_PROT_READ | MM_PROT_WRITE };
	struct mm_mapping m = {
		.addr = BASE + a * PG, .len = len * PG,
		.prot = prots[rnd(x) % 5], .fixed = true,
		.obj = { MM_OBJ_ANON, 0, 0 },
	};
	switch (rnd(x) % 5) {
	case 0: /* a shared file at its own offset, whole spans: shareable */
		m.obj = (struct mm_object_id){ MM_OBJ_FILE, 1, 7 };
		m.addr = BASE + (a * PG & ~(SPAN - 1));
		m.len = SPAN * (1 + len % 4);
		m.offset = m.addr - BASE;
		m.flags = MM_VMA_SHARED;
		break;
	case 1: /* hugetlb, 2 MiB pages */
		m.obj = (struct mm_object_id){ MM_OBJ_HUGETLB, 2, 9 };
		m.huge_shift = 21;
		m.addr = BASE + (a * PG & ~(SPAN - 1));
		m.len = SPAN * (1 + len % 3);
		m.offset = m.addr - BASE;
		m.flags = MM_VMA_SHARED;
		break;
	case 2: /* shared shmem anywhere, up to 3 spans: huge spans under
		 * hugetlb-2m and thp-shmem, an mshare region under mshare */
		m.obj = (struct mm_object_id){ MM_OBJ_SHMEM, 3, 11 };
		m.len = PG * (1 + len * 3 * (SPAN / PG) / 1024);
		m.offset = m.addr - BASE;
		m.flags = MM_VMA_SHARED;
		break;
	}
	if (m.addr + m.len > BASE + WINDOW)
		m.len = BASE + WINDOW - m.addr;
	return m;
}

static void one_policy(const struct mm_policy *p, uint64_t seed,
		       bool zero_page)
{
	struct mm_world *w[2] = { mm_world_new(p), mm_world_new(p) };
	uint64_t x = seed;
	uint32_t nprocs = 1;
	assert_non_null(w[0]);
	assert_non_null(w[1]);
	mm_world_set_zero_page(w[0], zero_page);
	mm_world_set_zero_page(w[1], zero_page);
	BOTH(mm_create, 1);
	BOTH(mm_map, 1, &(struct mm_mapping){ .addr = BASE, .len = WINDOW,
		.prot = MM_PROT_READ | MM_PROT_WRITE, .obj = { MM_OBJ_ANON, 0, 0 } });
	for (int op = 0; op < 600; op++) {
		uint32_t pid = 1 + rnd(&x) % nprocs;
		switch (rnd(&x) % 9) {
		case 0:
		case 1: {
			struct mm_mapping m = random_mapping(&x);
			BOTH(mm_map, pid, &m);
			break;
		}
		case 2: {
			uint64_t a = BASE + rnd(&x) % (WINDOW / PG) * PG;
			uint64_t len = (1 + rnd(&x) % 64) * PG;
			BOTH(mm_unmap, pid, a, len);
			break;
		}
		case 3: { /* a checkpoint saw a 2 MiB span as one THP */
			uint64_t sb = BASE + rnd(&x) % (WINDOW / SPAN) * SPAN;
			struct mm_run run = { sb, sb + SPAN, true, true, false };
			BOTH(mm_observe, pid, sb, sb + SPAN, &run, 1);
			break;
		}
		case 4:
			if (nprocs < PROCS) {
				BOTH(mm_fork, pid, nprocs + 1);
				nprocs++;
			}
			break;
		default: {
			uint64_t a = BASE + rnd(&x) % (WINDOW / PG) * PG;
			uint64_t len = (rnd(&x) % (3 * SPAN / PG)) * PG;
			bool write = rnd(&x) % 2;
			if (a + len > BASE + WINDOW)
				len = BASE + WINDOW - a;
			int r = mm_fault_range(w[0], pid, a, len, write);
			assert_int_equal(r, fault_pages(w[1], pid, a, len, write));
		}
		}
		same_state(w);
	}
	/* The same pages present: faulting each again agrees everywhere. */
	for (uint32_t pid = 1; pid <= nprocs; pid++)
		for (uint64_t a = BASE; a < BASE + WINDOW; a += PG)
			assert_int_equal(mm_fault(w[0], pid, a, false),
					 mm_fault(w[1], pid, a, false));
	same_state(w);
	mm_world_free(w[0]);
	mm_world_free(w[1]);
}

static void range_as_pages(void **state)
{
	const struct mm_policy *policies[] = {
		&mm_policy_linux, &mm_policy_mccracken,
		&mm_policy_aslr_tolerant, &mm_policy_hugetlb_pmd,
		&mm_policy_hugetlb_2m, &mm_policy_thp_shmem, &mm_policy_mshare,
		&mm_policy_cow_pte,
	};
	for (size_t i = 0; i < sizeof(policies) / sizeof(policies[0]); i++)
		for (uint64_t seed = 1; seed <= 4; seed++) /* odd: zero page */
			one_policy(policies[i], 0x9e3779b97f4a7c15ULL * seed,
				   seed % 2);
}

/* What the range version is for: a 64 MiB populate (the most a record may
 * ask, ingest/ingest_limits.c) is 32 walks, and counts its 16,384 pages. */
static void whole_record(void **state)
{
	struct mm_world *w = mm_world_new(&mm_policy_linux);
	struct mm_mapping m = {
		.addr = BASE, .len = 64ULL << 20,
		.prot = MM_PROT_READ | MM_PROT_WRITE,
		.obj = { MM_OBJ_ANON, 0, 0 },
	};
	struct mm_proc_stats st;
	assert_int_equal(mm_create(w, 1), 0);
	assert_int_equal(mm_map(w, 1, &m), 0);
	assert_int_equal(mm_fault(w, 1, BASE + SPAN + 5 * PG, true), 1);
	assert_int_equal(mm_fault_range(w, 1, BASE, m.len, true), 16383);
	assert_int_equal(mm_fault_range(w, 1, BASE, m.len, false), 0);
	assert_int_equal(mm_fault_range(w, 1, BASE, 0, false), 0);
	assert_int_equal(mm_proc_stats(w, 1, &st), 0);
	assert_int_equal(st.faults, 16384);
	assert_int_equal(st.tables[PT_PTE], 32);
	/* Past the mapping: the pages before it are faulted in, then -EFAULT. */
	assert_int_equal(mm_unmap(w, 1, BASE + m.len - SPAN, SPAN), 0);
	assert_int_equal(mm_map(w, 1, &(struct mm_mapping){
		.addr = BASE + m.len, .len = SPAN, .prot = MM_PROT_READ,
		.obj = { MM_OBJ_ANON, 0, 0 } }), 0);
	assert_int_equal(mm_fault_range(w, 1, BASE + m.len, SPAN + PG, false),
			 -EFAULT);
	assert_int_equal(mm_proc_stats(w, 1, &st), 0);
	assert_int_equal(st.faults, 16384 + SPAN / PG);
	assert_int_equal(mm_check(w), 0);
	mm_world_free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(range_as_pages),
		cmocka_unit_test(whole_record),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
