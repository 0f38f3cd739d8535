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
#include <string.h>

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

/* The kinds a mapping is of, drawn from the first n of kinds. */
struct kinds {
	const uint32_t *kind;
	unsigned n;
};

#define KINDS 6
/* Every kind, shmem twice. */
static const uint32_t all_kinds[KINDS] = { MM_OBJ_ANON, MM_OBJ_FILE,
					   MM_OBJ_SHMEM, MM_OBJ_SYSV,
					   MM_OBJ_HUGETLB, MM_OBJ_SHMEM };
/* Anonymous and file memory first, which every policy that follows
 * linux's maps as linux does (mm_worlds_follow), then SysV, hugetlb and
 * shmem, which some do not. */
static const uint32_t followed_kinds[KINDS] = { MM_OBJ_ANON, MM_OBJ_FILE,
						MM_OBJ_SYSV, MM_OBJ_HUGETLB,
						MM_OBJ_SHMEM, MM_OBJ_SHMEM };

static struct mm_mapping mapping(uint64_t *x, struct kinds k)
{
	struct mm_mapping m = {
		.addr = addr(x), .len = length(x),
		.prot = rnd(x) % 4 ? MM_PROT_READ | MM_PROT_WRITE : MM_PROT_READ,
		.fixed = rnd(x) % 2,
	};
	m.kernel_placed = !m.fixed;
	m.obj.kind = k.kind[rnd(x) % k.n];
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

/* One random operation, drawn once, so that it may go to several worlds. */
struct rop {
	unsigned kind;
	uint32_t pid, child;   /* fork: the new pid; exit: the pid */
	uint64_t a, len, to;
	uint32_t arg;
	struct mm_mapping m;
	struct mm_run run;
	uint64_t fault[8];
	bool write[8];
};

enum { ROP_MAP, ROP_UNMAP, ROP_PROTECT, ROP_REMAP, ROP_ADVISE, ROP_FORK,
       ROP_EXIT, ROP_EXEC, ROP_OBSERVE, ROP_POPULATE, ROP_FAULTS };

static struct rop draw(uint64_t *x, const uint32_t *live, size_t n,
		       uint32_t next, struct kinds kinds)
{
	struct rop o = { .pid = live[rnd(x) % n], .a = addr(x), .len = length(x) };
	if (o.a + o.len > BASE + WINDOW)
		o.len = BASE + WINDOW - o.a;
	switch (rnd(x) % 16) {
	case 0: case 1: case 2:
		o.kind = ROP_MAP;
		o.m = mapping(x, kinds);
		break;
	case 3:
		o.kind = ROP_UNMAP;
		break;
	case 4:
		o.kind = ROP_PROTECT;
		o.arg = rnd(x) % 2 ? MM_PROT_READ : MM_PROT_READ | MM_PROT_WRITE;
		break;
	case 5:
		o.kind = ROP_REMAP;
		o.to = addr(x);
		break;
	case 6:
		o.kind = ROP_ADVISE;
		o.arg = (uint32_t)(rnd(x) % 3);
		break;
	case 7:
		o.kind = n < PROCS ? ROP_FORK : ROP_FAULTS;
		o.child = next;
		break;
	case 8:
		o.kind = n > 1 && rnd(x) % 3 == 0 ? ROP_EXIT : ROP_EXEC;
		if (o.kind == ROP_EXIT)
			o.pid = live[rnd(x) % n];
		break;
	case 9: case 10: {
		bool anon = rnd(x) % 2;
		o.kind = ROP_OBSERVE;
		o.run = (struct mm_run){ o.a, o.a + (o.len < 8 * MiB ? o.len : 8 * MiB),
					 false, anon, anon && rnd(x) % 2 };
		break;
	}
	case 11:
		o.kind = ROP_POPULATE;
		o.len = o.len < 64 * MiB ? o.len : 64 * MiB;
		o.arg = rnd(x) % 2;
		break;
	default:
		o.kind = ROP_FAULTS;
		break;
	}
	for (int k = 0; k < 8; k++) {
		o.fault[k] = o.a + (rnd(x) % 1024) * 4096;
		o.write[k] = rnd(x) % 2;
	}
	return o;
}

static int apply(struct mm_world *w, const struct rop *o)
{
	switch (o->kind) {
	case ROP_MAP:
		return mm_map(w, o->pid, &o->m);
	case ROP_UNMAP:
		return mm_unmap(w, o->pid, o->a, o->len);
	case ROP_PROTECT:
		return mm_protect(w, o->pid, o->a, o->len, o->arg);
	case ROP_REMAP:
		return mm_remap(w, o->pid, o->a, o->len, o->to, o->len,
				MM_REMAP_MAYMOVE | MM_REMAP_FIXED);
	case ROP_ADVISE:
		return mm_advise(w, o->pid, o->a, o->len, (enum mm_advice)o->arg);
	case ROP_FORK:
		return mm_fork(w, o->pid, o->child);
	case ROP_EXIT:
		return mm_exit(w, o->pid);
	case ROP_EXEC:
		return mm_exec(w, o->pid);
	case ROP_OBSERVE:
		return mm_observe(w, o->pid, o->a, o->a + o->len, &o->run, 1);
	case ROP_POPULATE:
		return mm_fault_range(w, o->pid, o->a, o->len, o->arg);
	}
	for (int k = 0; k < 8; k++)
		mm_fault(w, o->pid, o->fault[k], o->write[k]);
	return 0;
}

/* The processes alive after o went to the first world with result r. */
static void track(const struct rop *o, int r, uint32_t *live, size_t *n,
		  uint32_t *next)
{
	if (o->kind == ROP_FORK) {
		if (!r)
			live[(*n)++] = o->child;
		(*next)++;
	} else if (o->kind == ROP_EXIT) {
		for (size_t i = 0; i < *n; i++)
			if (live[i] == o->pid) {
				live[i] = live[--*n];
				break;
			}
	}
}

static void check(struct mm_world *w, const char *name, uint64_t seed,
		  int op, int r)
{
	/* -ENOMEM is also mprotect's refusal of a hole; a world out of
	 * memory fails mm_check() below. */
	if (r == -EUCLEAN)
		fail_msg("%s, seed %#llx, op %d: %d: %s", name,
			 (unsigned long long)seed, op, r, mm_world_error(w));
	if (mm_check(w))
		fail_msg("%s, seed %#llx, after op %d: %s", name,
			 (unsigned long long)seed, op, mm_world_error(w));
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
		struct rop o = draw(&x, live, n, next,
				    (struct kinds){ all_kinds, KINDS });
		int r = apply(w, &o);
		track(&o, r, live, &n, &next);
		check(w, p->name, seed, op, r);
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

struct vmas {
	struct mm_vma_info v[512];
	size_t n;
};

static int collect(const struct mm_vma_info *v, void *arg)
{
	struct vmas *l = arg;
	if (l->n < 512)
		l->v[l->n++] = *v;
	return 0;
}

static bool same_stats(const struct mm_proc_stats *a,
		       const struct mm_proc_stats *b)
{
	return a->pid == b->pid &&
	       !memcmp(a->tables, b->tables, sizeof(a->tables)) &&
	       !memcmp(a->shared, b->shared, sizeof(a->shared)) &&
	       a->pss_bytes == b->pss_bytes && a->faults == b->faults &&
	       a->faults_observed == b->faults_observed &&
	       a->fork_tables_copied == b->fork_tables_copied &&
	       a->fork_pages_copied == b->fork_pages_copied &&
	       a->fork_tables_linked == b->fork_tables_linked &&
	       a->cow_copies == b->cow_copies && a->vmas == b->vmas &&
	       a->mapped_bytes == b->mapped_bytes &&
	       a->private_pte_tables == b->private_pte_tables;
}

static bool same_vma(const struct mm_vma_info *a, const struct mm_vma_info *b)
{
	return a->start == b->start && a->end == b->end &&
	       a->offset == b->offset && a->obj.kind == b->obj.kind &&
	       a->obj.dev == b->obj.dev && a->obj.ino == b->obj.ino &&
	       a->prot == b->prot && a->flags == b->flags &&
	       a->huge_shift == b->huge_shift &&
	       a->anon_pages == b->anon_pages && a->reason == b->reason &&
	       a->tables == b->tables && a->shared == b->shared;
}

/* What a report reads of a world: the same of both. */
static void assert_same_reads(struct mm_world *a, struct mm_world *b,
			      uint64_t seed, int op)
{
	struct mm_world_totals ta, tb;
	struct mm_proc_stats sa[PROCS], sb[PROCS];
	int na = mm_world_stats(a, sa, PROCS, &ta);
	int nb = mm_world_stats(b, sb, PROCS, &tb);
	if (na != nb || memcmp(&ta, &tb, sizeof(ta)))
		fail_msg("%s, seed %#llx, op %d: world totals differ: %d/%d "
			 "processes, %llu/%llu %llu/%llu %llu/%llu distinct",
			 mm_world_policy(b)->name, (unsigned long long)seed, op,
			 na, nb, (unsigned long long)ta.distinct[0],
			 (unsigned long long)tb.distinct[0],
			 (unsigned long long)ta.distinct[1],
			 (unsigned long long)tb.distinct[1],
			 (unsigned long long)ta.distinct[2],
			 (unsigned long long)tb.distinct[2]);
	for (int i = 0; i < na && i < PROCS; i++) {
		static struct vmas va, vb;
		va.n = vb.n = 0;
		bool same = same_stats(&sa[i], &sb[i]) &&
			    !mm_proc_vmas(a, sa[i].pid, collect, &va) &&
			    !mm_proc_vmas(b, sb[i].pid, collect, &vb) &&
			    va.n == vb.n;
		for (size_t j = 0; same && j < va.n; j++)
			same = same_vma(&va.v[j], &vb.v[j]);
		if (!same)
			fail_msg("%s, seed %#llx, op %d: process %u differs",
				 mm_world_policy(b)->name,
				 (unsigned long long)seed, op, sa[i].pid);
	}
	uint64_t xa[PT_NR_LEVELS], xb[PT_NR_LEVELS];
	mm_world_tables(a, xa);
	mm_world_tables(b, xb);
	assert_memory_equal(xa, xb, sizeof(xa));
}

/*
 * The worlds that follow linux's (mm_worlds_follow: hugetlb-pmd,
 * thp-shmem, mshare) against worlds of the same policies fed every operation
 * themselves: what each pair says is the same after each operation, the
 * operations going to linux's world first (as the ingest feeds them; one
 * that fails may have done part of its work, as mprotect over a hole
 * does, and the fed world does the same), before the mapping each follower
 * takes its copy at and after it.
 */
#define FOLLOWERS 3
static void follow_ops(void **state)
{
	(void)state;
	static const struct mm_policy *const fed_policy[FOLLOWERS] = {
		&mm_policy_hugetlb_pmd, &mm_policy_thp_shmem, &mm_policy_mshare,
	};
	char err[128];
	for (uint64_t seed = 1; seed <= 8; seed++) {
		struct mm_worlds ws;
		assert_int_equal(mm_worlds_init(&ws, "hugetlb-pmd,thp-shmem,mshare",
						err, sizeof(err)), 0);
		mm_worlds_follow(&ws);
		struct mm_world *fed[FOLLOWERS];
		for (size_t k = 0; k < FOLLOWERS; k++)
			assert_non_null(fed[k] = mm_world_new(fed_policy[k]));
		uint64_t x = 0x9e3779b97f4a7c15ULL * seed;
		uint32_t next = 2, live[PROCS] = { 1 };
		size_t n = 1;
		assert_int_equal(mm_create(ws.w[0], 1), 0);
		for (size_t k = 0; k < FOLLOWERS; k++)
			assert_int_equal(mm_create(ws.w[1 + k], 1) |
					 mm_create(fed[k], 1), 0);
		for (int op = 0; op < OPS; op++) {
			/* anonymous and file memory, then SysV too (thp-shmem
			 * takes its copy), hugetlb (hugetlb-pmd does), and
			 * every kind */
			static const unsigned phase[] = { 2, 3, 4, KINDS };
			struct kinds now = { followed_kinds, phase[op * 4 / OPS] };
			struct rop o = draw(&x, live, n, next, now);
			int r = apply(ws.w[0], &o);
			for (size_t k = 0; k < FOLLOWERS; k++) {
				int r1 = apply(ws.w[1 + k], &o);
				int r2 = apply(fed[k], &o);
				if (r >= 0 && (r1 < 0) != (r2 < 0))
					fail_msg("%s, seed %#llx, op %d: %d "
						 "against %d", fed_policy[k]->name,
						 (unsigned long long)seed, op,
						 r1, r2);
			}
			track(&o, r, live, &n, &next);
			check(ws.w[0], "follow", seed, op, 0);
			for (size_t k = 0; k < FOLLOWERS; k++) {
				check(ws.w[1 + k], "follow", seed, op, 0);
				check(fed[k], "follow", seed, op, 0);
				assert_same_reads(ws.w[1 + k], fed[k], seed, op);
			}
		}
		for (size_t k = 0; k < FOLLOWERS; k++)
			mm_world_free(fed[k]);
		mm_worlds_free(&ws);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(random_ops),
					    cmocka_unit_test(follow_ops) };
	return cmocka_run_group_tests(tests, NULL, NULL);
}
