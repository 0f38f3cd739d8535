/* SPDX-License-Identifier: MIT */
/*
 * bench/mmu: the model's speed and size, each figure the median of
 * --rounds runs (5 by default) with its spread (bench_noise):
 *   - faults per second on one core, against a baseline that only sets a
 *     bit per page in a flat bitmap (the least any model must do);
 *   - fork of a process with 64 GiB populated, like with like: the same
 *     memory forked under linux and under mccracken-2005, once shared (linux
 *     copies no table, mccracken-2005 links them) and once private and
 *     written (both copy every table);
 *   - model bytes per table page, and beyond each PTE table's presence map;
 *   - one-page mappings made top-down, as mmap makes them, until a process
 *     has 65,000 (vm.max_map_count): the cost per mapping against a process
 *     of 1,000 (the VMA set must not cost a move per VMA), and under
 *     hugetlb-2m after a shared mapping it moves (its layout must not
 *     cost a move per mapping either);
 *   - a 64 MiB populate (the most one record may ask), by mm_fault_range
 *     against mm_fault page by page, into empty tables and again;
 *   - the policies of issue 14 against the goals (hugetlb-2m also with a
 *     segment its layout moves: every touch translated), and what a record
 *     and a checkpoint cost in each policy's world (the daemon feeds every
 *     one);
 *   - a server's child, forked, read at its exit and gone, in each
 *     policy's world (a PostgreSQL connection under pgbench -C).
 * Goals (issue 2): >= 10M faults/s, <= 1 ms for the shared fork under
 * mccracken-2005, <= 80 bytes per table page beyond the presence map; a
 * goal line says "within noise" when the spread of the rounds does not
 * tell.  (Issue 7) the per-mapping cost at 65,000 within a small factor of
 * that at 1,000 (log n, not n).
 *
 * usage: mmu [--rounds N]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_rounds.h"
#include "ptshare/mm.h"

#define GIB (1ULL << 30)
#define BASE 0x100000000000ULL

static int rounds = 5;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void die(struct mm_world *w, const char *what)
{
	fprintf(stderr, "bench/mmu: %s: %s\n", what, mm_world_error(w));
	exit(1);
}

/* A figure over the rounds. */
struct figure {
	double v[BENCH_MAX_ROUNDS];
	double median, noise;
};

static void figure_done(struct figure *f)
{
	f->median = bench_median(f->v, rounds);
	f->noise = bench_noise(f->v, rounds);
}

/* skew: the mapping is at BASE + skew, placed by the kernel (hugetlb-2m
 * moves it to BASE, aligned: every touch goes through its layout). */
static struct mm_world *world_at(const struct mm_policy *p, uint64_t len,
				 bool shared, uint64_t skew)
{
	struct mm_world *w = mm_world_new(p);
	struct mm_mapping m = {
		.addr = BASE + skew, .len = len,
		.prot = MM_PROT_READ | MM_PROT_WRITE,
		.obj = { shared ? MM_OBJ_SHMEM : MM_OBJ_ANON, 1, shared },
		.flags = shared ? MM_VMA_SHARED : 0,
		.kernel_placed = skew != 0,
	};
	if (!w || mm_create(w, 1) || mm_map(w, 1, &m))
		die(w, "setting up");
	return w;
}

static struct mm_world *world_with(const struct mm_policy *p, uint64_t len,
				   bool shared)
{
	return world_at(p, len, shared, 0);
}

/* Faults per second over every page of [BASE, BASE + len), in order or,
 * with shuffle, in a random order (every fault a cache miss in the
 * tables). */
static double fault_rate_at(const struct mm_policy *p, uint64_t len,
			    bool shuffle, uint64_t skew)
{
	uint64_t pages = len / MM_PAGE_SIZE;
	uint32_t *order = malloc(pages * sizeof(*order));
	uint64_t x = 88172645463325252ULL;
	for (uint64_t i = 0; i < pages; i++)
		order[i] = (uint32_t)i;
	for (uint64_t i = pages - 1; shuffle && i > 0; i--) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		uint64_t j = x % (i + 1);
		uint32_t t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	struct mm_world *w = world_at(p, len, true, skew);
	/* Under a policy that maps the shmem by 2 MiB pages only the first
	 * touch of a span is a fault: the rate is of touches. */
	int want = p->huge_shmem ? -1 : 1;
	double t0 = now();
	for (uint64_t i = 0; i < pages; i++) {
		int r = mm_fault(w, 1, BASE + skew +
				 (uint64_t)order[i] * MM_PAGE_SIZE, false);
		if (want < 0 ? r < 0 : r != want)
			die(w, "fault");
	}
	double t = now() - t0;
	mm_world_free(w);
	free(order);
	return pages / t;
}

static double fault_rate(const struct mm_policy *p, uint64_t len, bool shuffle)
{
	return fault_rate_at(p, len, shuffle, 0);
}

static double bitmap_rate(uint64_t len)
{
	uint64_t pages = len / MM_PAGE_SIZE;
	uint64_t *map = calloc(pages / 64, 8);
	volatile uint64_t sink = 0;
	double t0 = now();
	for (uint64_t a = BASE; a < BASE + len; a += MM_PAGE_SIZE) {
		uint64_t i = (a - BASE) / MM_PAGE_SIZE;
		if (!(map[i / 64] >> (i % 64) & 1)) {
			map[i / 64] |= 1ULL << (i % 64);
			sink++;
		}
	}
	double t = now() - t0;
	free(map);
	return pages / (t + 0 * sink);
}

/* Forks (one per round) of a process with len populated bytes, shared or
 * private and written; the last child's counts in child. */
static void time_fork(const struct mm_policy *p, uint64_t len, bool shared,
		      struct figure *f, struct mm_proc_stats *child)
{
	struct mm_world *w = world_with(p, len, shared);
	struct mm_run run = { .start = BASE, .end = BASE + len, .anon = !shared };
	if (!shared && mm_fault(w, 1, BASE, true) != 1) /* anon_vma */
		die(w, "fault");
	if (mm_observe(w, 1, BASE, BASE + len, &run, 1) < 0)
		die(w, "populating");
	for (int i = 0; i < rounds; i++) {
		double t0 = now();
		if (mm_fork(w, 1, 2 + i))
			die(w, "fork");
		f->v[i] = now() - t0;
	}
	mm_proc_stats(w, 1 + rounds, child);
	mm_world_free(w);
	figure_done(f);
}

/* Seconds per mapping to make n one-page mappings, each just below the
 * last, of alternating protections (so none merge), in one process. */
/* Seconds per one-page mapping, n of them made top-down below BASE - skip
 * as the kernel places them; a shared mapping of skip bytes the kernel
 * placed first, right below BASE, when skip is not 0 (hugetlb-2m moves
 * it, aligned, and with it every mapping after it). */
static double top_down(const struct mm_policy *p, uint64_t n, uint64_t skip)
{
	struct mm_world *w = mm_world_new(p);
	struct mm_mapping seg = {
		.addr = BASE - skip, .len = skip,
		.prot = MM_PROT_READ | MM_PROT_WRITE,
		.obj = { MM_OBJ_SHMEM, 1, 1 }, .flags = MM_VMA_SHARED,
		.kernel_placed = true,
	};
	if (!w || mm_create(w, 1) || (skip && mm_map(w, 1, &seg)))
		die(w, "setting up");
	double t0 = now();
	for (uint64_t i = 0; i < n; i++) {
		struct mm_mapping m = {
			.addr = BASE - skip - (i + 1) * MM_PAGE_SIZE,
			.len = MM_PAGE_SIZE,
			.prot = i % 2 ? MM_PROT_READ : MM_PROT_READ | MM_PROT_WRITE,
			.obj = { MM_OBJ_ANON, 0, 0 },
			.kernel_placed = true,
		};
		if (mm_map(w, 1, &m))
			die(w, "mapping");
	}
	double t = (now() - t0) / n;
	mm_world_free(w);
	return t;
}

/* Seconds to populate 64 MiB of a fresh anonymous mapping (again: a
 * second time), by range or page by page. */
static double populate(bool by_range, bool again)
{
	const uint64_t len = 64ULL << 20;
	struct mm_world *w = world_with(&mm_policy_linux, len, false);
	double t0 = 0;
	for (int pass = 0; pass <= again; pass++) {
		t0 = now();
		if (by_range && mm_fault_range(w, 1, BASE, len, true) < 0)
			die(w, "populating");
		for (uint64_t a = BASE; !by_range && a < BASE + len;
		     a += MM_PAGE_SIZE)
			if (mm_fault(w, 1, a, true) < 0)
				die(w, "faulting");
	}
	double t = now() - t0;
	mm_world_free(w);
	return t;
}

static void faults(void)
{
	const uint64_t len = 16 * GIB; /* 4M faults */
	struct figure in_order, bitmap, random, mcc;
	for (int i = 0; i < rounds; i++) {
		in_order.v[i] = fault_rate(&mm_policy_linux, len, false);
		bitmap.v[i] = bitmap_rate(len);
		random.v[i] = fault_rate(&mm_policy_linux, len, true);
		mcc.v[i] = fault_rate(&mm_policy_mccracken, len, false);
	}
	figure_done(&in_order);
	figure_done(&bitmap);
	figure_done(&random);
	figure_done(&mcc);
	printf("faults (linux, in order): %.1fM/s +-%.1f%%; flat-bitmap baseline "
	       "%.1fM/s; model/baseline time %.2fx; goal >= 10M/s: %s\n",
	       in_order.median / 1e6, 100 * in_order.noise, bitmap.median / 1e6,
	       bitmap.median / in_order.median,
	       bench_verdict(in_order.median, 10e6, true, in_order.noise));
	printf("faults (linux, random order): %.1fM/s +-%.1f%%; %.2fx the "
	       "in-order time\n", random.median / 1e6, 100 * random.noise,
	       in_order.median / random.median);
	printf("faults (mccracken-2005, in order): %.1fM/s +-%.1f%%; goal >= "
	       "10M/s: %s\n", mcc.median / 1e6, 100 * mcc.noise,
	       bench_verdict(mcc.median, 10e6, true, mcc.noise));
}

static void forks(void)
{
	static const char *const how[] = { "shared", "private, written" };
	for (int shared = 1; shared >= 0; shared--) {
		struct figure lin, mcc;
		struct mm_proc_stats cl, cm;
		time_fork(&mm_policy_linux, 64 * GIB, shared, &lin, &cl);
		time_fork(&mm_policy_mccracken, 64 * GIB, shared, &mcc, &cm);
		printf("fork, 64 GiB populated %s: linux %.3f ms +-%.1f%% (%llu "
		       "tables copied); mccracken-2005 %.3f ms +-%.1f%% (%llu "
		       "copied, %llu linked); ratio %.2f", how[!shared],
		       lin.median * 1e3, 100 * lin.noise,
		       (unsigned long long)cl.fork_tables_copied,
		       mcc.median * 1e3, 100 * mcc.noise,
		       (unsigned long long)cm.fork_tables_copied,
		       (unsigned long long)cm.fork_tables_linked,
		       mcc.median / lin.median);
		if (shared)
			printf("; goal <= 1 ms: %s",
			       bench_verdict(mcc.median, 1e-3, false, mcc.noise));
		printf("\n");
	}
}

/* The policies of issue 14, each against the goals: touches per second
 * over 16 GiB of shared memory in order, and the 64 GiB shared fork (and
 * the private one, which copies as linux does). */
static void new_policies(void)
{
	static const struct mm_policy *const pols[] = {
		&mm_policy_hugetlb_2m, &mm_policy_thp_shmem, &mm_policy_mshare,
		&mm_policy_cow_pte,
	};
	for (size_t k = 0; k < sizeof(pols) / sizeof(pols[0]); k++) {
		struct figure rate, sh, pr;
		struct mm_proc_stats cs, cp;
		for (int i = 0; i < rounds; i++)
			rate.v[i] = fault_rate(pols[k], 16 * GIB, false);
		figure_done(&rate);
		time_fork(pols[k], 64 * GIB, true, &sh, &cs);
		time_fork(pols[k], 64 * GIB, false, &pr, &cp);
		printf("%s: touches (in order) %.1fM/s +-%.1f%%, goal >= 10M/s: "
		       "%s; fork, 64 GiB populated shared %.3f ms +-%.1f%% (%llu "
		       "tables copied), goal <= 1 ms: %s; private, written "
		       "%.3f ms +-%.1f%% (%llu copied, %llu linked)\n",
		       pols[k]->name,
		       rate.median / 1e6, 100 * rate.noise,
		       bench_verdict(rate.median, 10e6, true, rate.noise),
		       sh.median * 1e3, 100 * sh.noise,
		       (unsigned long long)cs.fork_tables_copied,
		       bench_verdict(sh.median, 1e-3, false, sh.noise),
		       pr.median * 1e3, 100 * pr.noise,
		       (unsigned long long)cp.fork_tables_copied,
		       (unsigned long long)cp.fork_tables_linked);
	}
	/* The layout's cost: a segment the kernel placed 64 KiB off a span
	 * boundary, which hugetlb-2m moves to the boundary below. */
	struct figure moved;
	for (int i = 0; i < rounds; i++)
		moved.v[i] = fault_rate_at(&mm_policy_hugetlb_2m, 16 * GIB,
					   false, 64 << 10);
	figure_done(&moved);
	printf("hugetlb-2m, the segment moved (placed by the kernel 64 KiB off "
	       "a span): touches (in order) %.1fM/s +-%.1f%%, goal >= 10M/s: "
	       "%s\n", moved.median / 1e6, 100 * moved.noise,
	       bench_verdict(moved.median, 10e6, true, moved.noise));
}

/* What the daemon's per-record work costs per policy (every policy is a
 * world fed each record): ns per record of bench/ingest's mix (MMAP,
 * MPROTECT, MUNMAP of 64 KiB, one after another), and us per checkpoint
 * of a process mapping 1 GiB of shared memory, every page present (the
 * observation a HELLO, fork or EXIT checkpoint makes), in each world. */
static void per_record(void)
{
	const uint64_t region = 64 << 10, n = 300000;
	for (const struct mm_policy *const *p = mm_policies; *p; p++) {
		struct figure rec, ck;
		for (int i = 0; i < rounds; i++) {
			struct mm_world *w = mm_world_new(*p);
			if (!w || mm_create(w, 1))
				die(w, "setting up");
			double t0 = now();
			for (uint64_t k = 0; k < n / 3; k++) {
				uint64_t a = BASE + (k % 1024) * region;
				struct mm_mapping m = {
					.addr = a, .len = region,
					.prot = MM_PROT_READ | MM_PROT_WRITE,
					.obj = { MM_OBJ_ANON, 0, 0 },
				};
				if (mm_map(w, 1, &m) ||
				    mm_protect(w, 1, a, region, MM_PROT_READ) ||
				    mm_unmap(w, 1, a, region))
					die(w, "records");
			}
			rec.v[i] = (now() - t0) / n;
			mm_world_free(w);
			w = world_with(*p, GIB, true);
			struct mm_run run = { .start = BASE, .end = BASE + GIB };
			if (mm_observe(w, 1, BASE, BASE + GIB, &run, 1) < 0)
				die(w, "populating");
			t0 = now();
			for (int k = 0; k < 10; k++)
				if (mm_observe(w, 1, BASE, BASE + GIB, &run, 1) < 0)
					die(w, "observing");
			ck.v[i] = (now() - t0) / 10;
			mm_world_free(w);
		}
		figure_done(&rec);
		figure_done(&ck);
		printf("per record, %s: %.0f ns +-%.1f%% (map, mprotect, munmap "
		       "of 64 KiB); checkpoint of 1 GiB shared, populated: %.0f us "
		       "+-%.1f%%\n", (*p)->name, rec.median * 1e9,
		       100 * rec.noise, ck.median * 1e6, 100 * ck.noise);
	}
}

/*
 * A server's child, as PostgreSQL forks one per connection (pgbench -C):
 * a parent of SERVER_LIBS libraries (four mappings each, a few pages of
 * each populated, the data written), a heap and a 512 MiB shared buffer
 * pool partly populated, 243 mappings as a postmaster has; each child
 * forked from it, read once at its exit (its parent's pages and some of
 * its own), counted, and gone: what the daemon's worlds do per connection
 * beside its reading of /proc.
 */
#define SERVER_LIBS 60
#define LIB_SPAN (2ULL << 20)
#define LIBS_TOP 0x7f0000000000ULL
#define HEAP 0x555556000000ULL
#define POOL 0x7e0000000000ULL

struct runs {
	struct mm_run r[1024];
	size_t n;
};

static void run_add(struct runs *rs, uint64_t start, uint64_t pages, bool anon)
{
	rs->r[rs->n++] = (struct mm_run){ .start = start,
					  .end = start + pages * MM_PAGE_SIZE,
					  .anon = anon, .written = anon };
}

/* The parent's mappings into pid 1 of w; its runs, and the child's (more
 * pages of each library's code, heap and pool), in address order. */
static void server(struct mm_world *w, struct runs *parent, struct runs *child)
{
	static const struct { uint64_t off, len; uint32_t prot; } seg[4] = {
		{ 0, 16 << 10, MM_PROT_READ },
		{ 16 << 10, 1 << 20, MM_PROT_READ | MM_PROT_EXEC },
		{ (16 << 10) + (1 << 20), 64 << 10, MM_PROT_READ },
		{ (80 << 10) + (1 << 20), 16 << 10, MM_PROT_READ | MM_PROT_WRITE },
	};
	struct mm_mapping heap = {
		.addr = HEAP, .len = 4 << 20, .obj = { MM_OBJ_ANON, 0, 0 },
		.prot = MM_PROT_READ | MM_PROT_WRITE,
	};
	struct mm_mapping pool = {
		.addr = POOL, .len = 512 << 20, .obj = { MM_OBJ_SHMEM, 2, 1 },
		.prot = MM_PROT_READ | MM_PROT_WRITE, .flags = MM_VMA_SHARED,
	};
	if (mm_create(w, 1) || mm_map(w, 1, &heap) || mm_map(w, 1, &pool))
		die(w, "setting up the server");
	parent->n = child->n = 0;
	run_add(parent, HEAP, 300, true);
	run_add(child, HEAP, 350, true);
	for (uint64_t i = 0; i < 40; i++) { /* buffers, 25 pages every 12 MiB */
		run_add(parent, POOL + i * (12 << 20), 25, false);
		run_add(child, POOL + i * (12 << 20), 30, false);
	}
	for (int l = SERVER_LIBS - 1; l >= 0; l--) {
		uint64_t base = LIBS_TOP - (uint64_t)(l + 1) * LIB_SPAN;
		for (int k = 0; k < 4; k++) {
			struct mm_mapping m = {
				.addr = base + seg[k].off, .len = seg[k].len,
				.offset = seg[k].off, .prot = seg[k].prot,
				.obj = { MM_OBJ_FILE, 1, 100 + (uint64_t)l },
				.listed = true,
			};
			if (mm_map(w, 1, &m))
				die(w, "mapping a library");
		}
		run_add(parent, base, 2, false);
		run_add(child, base, 2, false);
		run_add(parent, base + seg[1].off, 16, false);
		run_add(child, base + seg[1].off, 24, false);
		run_add(parent, base + seg[2].off, 4, false);
		run_add(child, base + seg[2].off, 4, false);
		run_add(parent, base + seg[3].off, 4, true);
		run_add(child, base + seg[3].off, 4, true);
	}
	if (mm_observe(w, 1, 0, MM_TASK_SIZE, parent->r, parent->n) < 0)
		die(w, "populating the server");
}

static void server_children(void)
{
	const int children = 2000;
	static struct runs parent, child;
	double all = 0;
	for (const struct mm_policy *const *p = mm_policies; *p; p++) {
		struct figure f;
		for (int i = 0; i < rounds; i++) {
			struct mm_world *w = mm_world_new(*p);
			if (!w)
				die(w, "setting up");
			server(w, &parent, &child);
			struct mm_proc_stats st;
			double t0 = now();
			for (int c = 0; c < children; c++)
				if (mm_fork(w, 1, 2) ||
				    mm_observe(w, 2, 0, MM_TASK_SIZE, child.r,
					       child.n) < 0 ||
				    mm_proc_stats(w, 2, &st) || mm_exiting(w, 2) ||
				    mm_exit(w, 2))
					die(w, "a child");
			f.v[i] = (now() - t0) / children;
			mm_world_free(w);
		}
		figure_done(&f);
		all += f.median;
		printf("server child (243 mappings: fork, its reading, exit), "
		       "%s: %.1f us +-%.1f%%\n", (*p)->name, f.median * 1e6,
		       100 * f.noise);
	}
	printf("server child, every policy: %.1f us\n", all * 1e6);
}

/* Size: a process with 64 GiB populated, every table private. */
static void size(void)
{
	struct mm_world *w = world_with(&mm_policy_linux, 64 * GIB, true);
	struct mm_run run = { .start = BASE, .end = BASE + 64 * GIB };
	if (mm_observe(w, 1, BASE, BASE + 64 * GIB, &run, 1) < 0)
		die(w, "populating");
	struct mm_proc_stats s;
	mm_proc_stats(w, 1, &s);
	uint64_t tables = s.tables[PT_PTE] + s.tables[PT_PMD] + s.tables[PT_PUD];
	size_t bytes = mm_world_table_bytes(w);
	double beyond = (double)(bytes - 64 * s.tables[PT_PTE]) / tables;
	/* A count, not a time: no noise. */
	printf("size: %llu table pages in %zu bytes: %.1f bytes per table "
	       "page, %.1f beyond the 64-byte presence map; goal <= 80: %s\n",
	       (unsigned long long)tables, bytes, (double)bytes / tables,
	       beyond, bench_verdict(beyond, 80, false, 0));
	mm_world_free(w);
}

static void mappings(void)
{
	const uint64_t seg = (4ULL << 20) + 3 * MM_PAGE_SIZE;
	struct figure small, large, ratio, moved, moved_ratio;
	for (int i = 0; i < rounds; i++) {
		small.v[i] = top_down(&mm_policy_linux, 1000, 0);
		large.v[i] = top_down(&mm_policy_linux, 65000, 0);
		ratio.v[i] = large.v[i] / small.v[i];
		moved.v[i] = top_down(&mm_policy_hugetlb_2m, 65000, seg);
		moved_ratio.v[i] = moved.v[i] / large.v[i];
	}
	figure_done(&small);
	figure_done(&large);
	figure_done(&ratio);
	figure_done(&moved);
	figure_done(&moved_ratio);
	printf("one-page mappings top-down: %.0f ns per mapping in a process "
	       "of 1,000, %.0f ns in one of 65,000; ratio %.2f +-%.1f%%\n",
	       small.median * 1e9, large.median * 1e9, ratio.median,
	       100 * ratio.noise);
	printf("the same 65,000 after a 4 MiB + 12 KiB shared mapping, under "
	       "hugetlb-2m (every one moved with it): %.0f ns per mapping, "
	       "%.2fx linux's +-%.1f%%\n", moved.median * 1e9,
	       moved_ratio.median, 100 * moved_ratio.noise);
}

static void populates(void)
{
	for (int again = 0; again <= 1; again++) {
		struct figure pages, range;
		for (int i = 0; i < rounds; i++) {
			pages.v[i] = populate(false, again);
			range.v[i] = populate(true, again);
		}
		figure_done(&pages);
		figure_done(&range);
		printf("populate 64 MiB%s: %.0f us +-%.1f%% by range, %.0f us "
		       "+-%.1f%% page by page; ratio %.1f\n", again ? " again" : "",
		       range.median * 1e6, 100 * range.noise, pages.median * 1e6,
		       100 * pages.noise, pages.median / range.median);
	}
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--rounds"))
		rounds = atoi(argv[2]);
	if ((argc != 1 && argc != 3) || rounds < 1 || rounds > BENCH_MAX_ROUNDS) {
		fprintf(stderr, "usage: mmu [--rounds N] (1 to %d)\n",
			BENCH_MAX_ROUNDS);
		return 2;
	}
	printf("bench/mmu: medians of %d rounds, +- their spread\n", rounds);
	faults();
	forks();
	new_policies();
	per_record();
	server_children();
	size();
	mappings();
	populates();
	return 0;
}
