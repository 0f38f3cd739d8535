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

/* The kinds a mapping is of, drawn from the first n of kinds; files_out:
 * file mappings private and writable, or under 2 MiB (in no policy's
 * scope as they are made). */
struct kinds {
	const uint32_t *kind;
	unsigned n;
	bool files_out;
};

#define KINDS 6
/* Every kind, shmem twice. */
static const uint32_t all_kinds[KINDS] = { MM_OBJ_ANON, MM_OBJ_FILE,
					   MM_OBJ_SHMEM, MM_OBJ_SYSV,
					   MM_OBJ_HUGETLB, MM_OBJ_SHMEM };
/* Anonymous and file memory first, which every policy that follows
 * linux's maps as linux does (mm_worlds_follow) until a file mapping
 * comes into mccracken-2005's scope, then SysV, hugetlb and shmem, which
 * some map otherwise. */
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
	if (m.obj.kind == MM_OBJ_FILE && k.files_out && rnd(x) % 2) {
		m.flags = 0;
		m.prot = MM_PROT_READ | MM_PROT_WRITE;
	} else if (m.obj.kind == MM_OBJ_FILE && k.files_out) {
		m.len = (1 + rnd(x) % 511) * 4096;
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
       ROP_EXIT, ROP_EXEC, ROP_OBSERVE, ROP_POPULATE, ROP_FAULTS,
       ROP_GROW /* in place, from len to `to`; not drawn */ };

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
	case ROP_GROW:
		return mm_remap(w, o->pid, o->a, o->len, o->a, o->to, 0);
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

static void one(const struct mm_policy *p, uint64_t seed, const uint32_t *kinds)
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
				    (struct kinds){ kinds, KINDS, false });
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
	/* The second order of kinds draws other sequences: its first seed
	 * put a hugetlb mapping inside a reservation hugetlb-2m's layout had
	 * moved by less than a huge page, which must be refused. */
	for (const struct mm_policy *const *p = mm_policies; *p; p++)
		for (uint64_t seed = 1; seed <= 4; seed++) {
			one(*p, 0x9e3779b97f4a7c15ULL * seed, all_kinds);
			one(*p, 0x9e3779b97f4a7c15ULL * seed, followed_kinds);
		}
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
 * The worlds that follow linux's (mm_worlds_follow: every policy but
 * cow-pte) against worlds of the same policies fed every operation
 * themselves: what each pair says is the same after each operation, the
 * operations going to linux's world first (as the ingest feeds them; one
 * that fails may have done part of its work, as mprotect over a hole
 * does, and the fed world does the same), before each follower takes its
 * copy and after.
 */
#define FOLLOWERS 6
static const struct mm_policy *const fed_policy[FOLLOWERS] = {
	&mm_policy_hugetlb_pmd, &mm_policy_thp_shmem, &mm_policy_mshare,
	&mm_policy_mccracken, &mm_policy_aslr_tolerant, &mm_policy_hugetlb_2m,
};

struct followed {
	struct mm_worlds ws; /* linux's, then the followers */
	struct mm_world *fed[FOLLOWERS];
};

static void followed_new(struct followed *f)
{
	char err[128];
	assert_int_equal(mm_worlds_init(&f->ws, "hugetlb-pmd,thp-shmem,mshare,"
					"mccracken-2005,aslr-tolerant,hugetlb-2m",
					err, sizeof(err)), 0);
	mm_worlds_follow(&f->ws);
	assert_int_equal(mm_create(f->ws.w[0], 1), 0);
	for (size_t k = 0; k < FOLLOWERS; k++) {
		assert_non_null(f->fed[k] = mm_world_new(fed_policy[k]));
		assert_int_equal(mm_create(f->ws.w[1 + k], 1) |
				 mm_create(f->fed[k], 1), 0);
	}
}

static void followed_free(struct followed *f)
{
	for (size_t k = 0; k < FOLLOWERS; k++)
		mm_world_free(f->fed[k]);
	mm_worlds_free(&f->ws);
}

/* o to linux's world, then to each follower and its fed world, which must
 * refuse it alike and read alike after; the result linux's world gave. */
static int follow_apply(struct followed *f, const struct rop *o, uint64_t seed,
			int op)
{
	int r = apply(f->ws.w[0], o);
	for (size_t k = 0; k < FOLLOWERS; k++) {
		int r1 = apply(f->ws.w[1 + k], o);
		int r2 = apply(f->fed[k], o);
		if (r >= 0 && (r1 < 0) != (r2 < 0))
			fail_msg("%s, seed %#llx, op %d: %d against %d",
				 fed_policy[k]->name, (unsigned long long)seed,
				 op, r1, r2);
	}
	check(f->ws.w[0], "linux, followed", seed, op, 0);
	for (size_t k = 0; k < FOLLOWERS; k++) {
		char name[64];
		snprintf(name, sizeof(name), "%s following", fed_policy[k]->name);
		check(f->ws.w[1 + k], name, seed, op, 0);
		check(f->fed[k], fed_policy[k]->name, seed, op, 0);
		assert_same_reads(f->ws.w[1 + k], f->fed[k], seed, op);
	}
	return r;
}

static void follow_ops(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 8; seed++) {
		struct followed f;
		followed_new(&f);
		uint64_t x = 0x9e3779b97f4a7c15ULL * seed;
		uint32_t next = 2, live[PROCS] = { 1 };
		size_t n = 1;
		for (int op = 0; op < OPS; op++) {
			/* anonymous memory and files in no scope (mccracken-2005
			 * and aslr-tolerant take their copies once an mprotect
			 * or a merge brings one in), any file, then SysV too
			 * (thp-shmem and hugetlb-2m take theirs), hugetlb
			 * (hugetlb-pmd does), and every kind */
			static const struct { unsigned n; bool files_out; } phase[] = {
				{ 2, true }, { 2, false }, { 3, false },
				{ 4, false }, { KINDS, false },
			};
			unsigned p = op * 5 / OPS;
			struct kinds now = { followed_kinds, phase[p].n,
					     phase[p].files_out };
			struct rop o = draw(&x, live, n, next, now);
			track(&o, follow_apply(&f, &o, seed, op), live, &n, &next);
		}
		followed_free(&f);
	}
}

/*
 * The changes that bring a file mapping into mccracken-2005's and
 * aslr-tolerant's scope without a mapping of 2 MiB: two halves of a file
 * merging, an mprotect making a private writable one read-only, an mremap
 * growing one in place; and one /proc listed (mapped, not merged).  Two processes then fault the span, which the fed
 * worlds share: so must the followers.
 */
static void follow_vma_changes(void **state)
{
	(void)state;
	const struct mm_mapping half = {
		.addr = BASE, .len = MiB, .prot = MM_PROT_READ, .fixed = true,
		.obj = { .kind = MM_OBJ_FILE, .ino = 7 },
	};
	struct mm_mapping second = half, whole = half, listed = half;
	second.addr += MiB;
	second.offset = MiB;
	whole.len = 2 * MiB;
	whole.prot |= MM_PROT_WRITE;
	listed.len = 2 * MiB;
	listed.listed = true;
	const struct rop merge[] = {
		{ .kind = ROP_MAP, .pid = 1, .m = half },
		{ .kind = ROP_MAP, .pid = 1, .m = second },
	}, protect[] = {
		{ .kind = ROP_MAP, .pid = 1, .m = whole },
		{ .kind = ROP_PROTECT, .pid = 1, .a = BASE, .len = 2 * MiB,
		  .arg = MM_PROT_READ },
	}, read[] = {
		{ .kind = ROP_MAP, .pid = 1, .m = listed },
	}, grow[] = {
		{ .kind = ROP_MAP, .pid = 1, .m = half },
		{ .kind = ROP_GROW, .pid = 1, .a = BASE, .len = MiB,
		  .to = 2 * MiB },
	};
	const struct { const struct rop *o; size_t n; } ways[] = {
		{ merge, 2 }, { protect, 2 }, { grow, 2 }, { read, 1 },
	};
	const struct rop fork_fault[] = {
		{ .kind = ROP_FORK, .pid = 1, .child = 2 },
		{ .kind = ROP_FAULTS, .pid = 1, .fault = { BASE, BASE + MiB } },
		{ .kind = ROP_FAULTS, .pid = 2, .fault = { BASE, BASE + MiB } },
	};
	for (size_t i = 0; i < sizeof(ways) / sizeof(ways[0]); i++) {
		struct followed f;
		followed_new(&f);
		for (size_t k = 0; k < ways[i].n; k++)
			assert_int_equal(follow_apply(&f, &ways[i].o[k], i, k), 0);
		for (size_t k = 0; k < 3; k++)
			assert_int_equal(follow_apply(&f, &fork_fault[k], i,
						      (int)(ways[i].n + k)), 0);
		for (size_t k = 3; k < 5; k++) { /* mccracken, aslr-tolerant */
			struct mm_world_totals t;
			mm_world_stats(f.fed[k], NULL, 0, &t);
			assert_true(t.linked[PT_PTE] > t.distinct[PT_PTE]);
		}
		followed_free(&f);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(random_ops),
					    cmocka_unit_test(follow_ops),
					    cmocka_unit_test(follow_vma_changes) };
	return cmocka_run_group_tests(tests, NULL, NULL);
}
