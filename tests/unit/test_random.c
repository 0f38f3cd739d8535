/* SPDX-License-Identifier: MIT */
/*
 * Every built-in policy under random operations of every kind (mappings
 * of every object kind at sizes around the table spans, fork, exec, exit,
 * unmap, mprotect, mremap, madvise, faults, fault ranges, observations),
 * over a window that crosses 1 GiB and 512 GiB boundaries: mm_check()
 * after each one, and a rejected operation is an ordinary refusal, never
 * a broken invariant or an out-of-memory.  What the scenario tests do by
 * hand for each rule, this does for their combinations, in particular for
 * the policies whose tables live elsewhere than in the process (mshare's
 * host) or at another level (hugetlb-2m, thp-shmem).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "ptshare/mm.h"

#define MiB (1ULL << 20)
#define GiB (1ULL << 30)
/* Around the 512 GiB boundary at 1 TiB: spans of every level meet. */
#define BASE ((1ULL << 40) - 2 * GiB)
#define WINDOW (4 * GiB)
#define PROCS 6
#define OPS 2000

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* A page-aligned address in the window, often on a span boundary. */
static uint64_t addr(uint64_t *x)
{
	static const uint64_t align[] = { 4096, 2 * MiB, GiB, 4096, 4096 };
	uint64_t a = align[rnd(x) % 5];
	return BASE + (rnd(x) % (WINDOW / a)) * a;
}

static uint64_t length(uint64_t *x)
{
	static const uint64_t unit[] = { 4096, 2 * MiB, 64 * MiB, GiB };
	return (1 + rnd(x) % 3) * unit[rnd(x) % 4] +
	       (rnd(x) % 2 ? 0 : (rnd(x) % 512) * 4096);
}

static struct mm_mapping mapping(uint64_t *x)
{
	static const uint32_t kinds[] = { MM_OBJ_ANON, MM_OBJ_FILE, MM_OBJ_SHMEM,
					  MM_OBJ_SYSV, MM_OBJ_HUGETLB,
					  MM_OBJ_SHMEM };
	struct mm_mapping m = {
		.addr = addr(x), .len = length(x),
		.prot = rnd(x) % 4 ? MM_PROT_READ | MM_PROT_WRITE : MM_PROT_READ,
		.fixed = rnd(x) % 2,
	};
	m.kernel_placed = !m.fixed;
	m.obj.kind = kinds[rnd(x) % 6];
	m.obj.ino = 1 + rnd(x) % 3;
	if (m.obj.kind != MM_OBJ_ANON) {
		m.flags = rnd(x) % 4 ? MM_VMA_SHARED : 0;
		m.offset = (rnd(x) % 4) * 2 * MiB + (rnd(x) % 2) * 4096;
	}
	if (m.obj.kind == MM_OBJ_HUGETLB) {
		m.huge_shift = 21;
		m.addr &= ~(2 * MiB - 1);
		m.len = (m.len + 2 * MiB - 1) & ~(2 * MiB - 1);
		m.offset &= ~(2 * MiB - 1);
	}
	if (m.addr + m.len > BASE + WINDOW)
		m.len = (BASE + WINDOW - m.addr) & ~(m.huge_shift ? 2 * MiB - 1 : 4095);
	if (!m.len)
		m.len = 4096;
	return m;
}

static void one(const struct mm_policy *p, uint64_t seed)
{
	struct mm_world *w = mm_world_new(p);
	uint64_t x = seed;
	uint32_t next = 2;
	uint32_t live[PROCS] = { 1 };
	size_t n = 1;
	assert_non_null(w);
	assert_int_equal(mm_create(w, 1), 0);
	for (int op = 0; op < OPS; op++) {
		uint32_t pid = live[rnd(&x) % n];
		uint64_t a = addr(&x), len = length(&x);
		if (a + len > BASE + WINDOW)
			len = BASE + WINDOW - a;
		int r = 0;
		switch (rnd(&x) % 16) {
		case 0: case 1: case 2: {
			struct mm_mapping m = mapping(&x);
			r = mm_map(w, pid, &m);
			break;
		}
		case 3:
			r = mm_unmap(w, pid, a, len);
			break;
		case 4:
			r = mm_protect(w, pid, a, len, rnd(&x) % 2 ? MM_PROT_READ
					: MM_PROT_READ | MM_PROT_WRITE);
			break;
		case 5:
			r = mm_remap(w, pid, a, len, addr(&x), len,
				     MM_REMAP_MAYMOVE | MM_REMAP_FIXED);
			break;
		case 6:
			r = mm_advise(w, pid, a, len, (enum mm_advice)(rnd(&x) % 3));
			break;
		case 7:
			if (n < PROCS) {
				r = mm_fork(w, pid, next);
				if (!r)
					live[n++] = next;
				next++;
			}
			break;
		case 8:
			if (n > 1 && rnd(&x) % 3 == 0) {
				size_t i = rnd(&x) % n;
				r = mm_exit(w, live[i]);
				live[i] = live[--n];
			} else {
				r = mm_exec(w, pid);
			}
			break;
		case 9: case 10: {
			bool anon = rnd(&x) % 2;
			struct mm_run run = { a, a + (len < 8 * MiB ? len : 8 * MiB),
					      false, anon, anon && rnd(&x) % 2 };
			r = mm_observe(w, pid, a, a + len, &run, 1);
			break;
		}
		case 11:
			r = mm_fault_range(w, pid, a, len < 64 * MiB ? len : 64 * MiB,
					   rnd(&x) % 2);
			break;
		default:
			for (int k = 0; k < 8; k++)
				mm_fault(w, pid, a + (rnd(&x) % 1024) * 4096,
					 rnd(&x) % 2);
			break;
		}
		/* -ENOMEM is also mprotect's refusal of a hole; a world out
		 * of memory fails mm_check() below. */
		if (r == -EUCLEAN)
			fail_msg("%s, seed %#llx, op %d: %d: %s", p->name,
				 (unsigned long long)seed, op, r,
				 mm_world_error(w));
		if (mm_check(w))
			fail_msg("%s, seed %#llx, after op %d: %s", p->name,
				 (unsigned long long)seed, op, mm_world_error(w));
	}
	struct mm_world_totals t;
	struct mm_proc_stats s[PROCS];
	mm_world_stats(w, s, PROCS, &t);
	for (unsigned l = 0; l < PT_NR_LEVELS; l++)
		assert_true(t.host[l] <= t.distinct[l]);
	mm_world_free(w);
}

static void random_ops(void **state)
{
	(void)state;
	for (const struct mm_policy *const *p = mm_policies; *p; p++)
		for (uint64_t seed = 1; seed <= 4; seed++)
			one(*p, 0x9e3779b97f4a7c15ULL * seed);
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(random_ops) };
	return cmocka_run_group_tests(tests, NULL, NULL);
}
