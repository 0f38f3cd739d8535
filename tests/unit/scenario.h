/* SPDX-License-Identifier: MIT */
/*
 * Unit-test harness for the page-table model: one world per built-in policy
 * (plus an optional extra one), every operation applied to all of them.
 *
 * Every operation:
 *   - runs on each world and must return the expected value for that world
 *     (ALL(x): the same everywhere; RC(linux, mccracken, aslr, hugetlb-pmd)
 *     when a test says the policies differ; SC_ERR: any negative errno);
 *   - is followed by mm_check() on every world (the invariant checker);
 *   - when it fails, must leave a non-empty mm_world_error() and the world
 *     exactly as it was (every process's stats, the totals, the findings and
 *     every VMA are compared before/after).
 *
 * Expected values in the tests are worked by hand from docs/model.md, never
 * copied from the model's output.
 */
#ifndef PTSHARE_TEST_SCENARIO_H
#define PTSHARE_TEST_SCENARIO_H

#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "ptshare/mm.h"

#define KiB(n) ((uint64_t)(n) << 10)
#define MiB(n) ((uint64_t)(n) << 20)
#define GiB(n) ((uint64_t)(n) << 30)
#define PG MM_PAGE_SIZE

/* 1 TiB: aligned to the 512 GiB span of a PUD page, so a test's first touch
 * there allocates PUD + PMD + PTE. */
#define BASE GiB(1024)

#define P_NONE 0u
#define P_R ((uint32_t)MM_PROT_READ)
#define P_RW ((uint32_t)(MM_PROT_READ | MM_PROT_WRITE))
#define RD false
#define WR true

/* The worlds, by index; W_* are masks of them for expectations. */
enum sc_world { SC_LINUX, SC_MCC, SC_ASLR, SC_HPMD, SC_EXTRA, SC_NWORLDS };
#define W_LINUX (1u << SC_LINUX)
#define W_MCC (1u << SC_MCC)
#define W_ASLR (1u << SC_ASLR)
#define W_HPMD (1u << SC_HPMD)
#define W_EXTRA (1u << SC_EXTRA)
#define W_ALL (W_LINUX | W_MCC | W_ASLR | W_HPMD | W_EXTRA)
/* The two policies that share file-backed tables, and the two that do not. */
#define W_FSHARE (W_MCC | W_ASLR)
#define W_NOFSHARE (W_LINUX | W_HPMD)

struct sc {
	struct mm_world *w[SC_NWORLDS];
	unsigned n;               /* worlds in use: 4, or 5 with the extra one */
	struct mm_policy extra;   /* storage for the extra world's policy */
};

/* Expected return value per world. */
#define SC_ERR INT_MIN          /* any negative errno */
#define SC_UNSET (INT_MIN + 1)  /* no expectation given: a test bug if used */
struct sc_rc {
	int v[SC_NWORLDS];
};
#define ALL(x) ((struct sc_rc){ { (x), (x), (x), (x), (x) } })
#define RC(l, m, a, h) ((struct sc_rc){ { (l), (m), (a), (h), SC_UNSET } })
#define RC5(l, m, a, h, e) ((struct sc_rc){ { (l), (m), (a), (h), (e) } })

/* cmocka fixtures: the four built-in policies; or those plus
 * "mccracken-2005:pte+pmd+pud" as SC_EXTRA. */
int sc_setup(void **state);
int sc_setup_pud(void **state);
/* The four and any policy spec as SC_EXTRA (hugetlb-2m, mshare:min=...). */
int sc_setup_extra(void **state, const char *spec);
int sc_teardown(void **state);
#define SC_TEST(f) cmocka_unit_test_setup_teardown(f, sc_setup, sc_teardown)
#define SC_TEST_PUD(f) cmocka_unit_test_setup_teardown(f, sc_setup_pud, sc_teardown)

/* The kernel every world models maps the zero page on a read fault in
 * private anonymous memory (the default), or not: mm_world_set_zero_page. */
void sc_zero_page(struct sc *s, bool zero_page);

/* Mappings. */
struct mm_mapping sc_anon(uint64_t addr, uint64_t len, uint32_t prot);
struct mm_mapping sc_obj(uint32_t kind, uint64_t ino, uint64_t addr,
			 uint64_t len, uint64_t offset, uint32_t prot,
			 uint32_t flags);
struct mm_mapping sc_hugetlb(uint64_t ino, uint64_t addr, uint64_t len,
			     uint64_t offset, uint32_t huge_shift,
			     uint32_t flags);
struct mm_mapping sc_fixed(struct mm_mapping m);
/* The kernel chose its address (mm_mapping.kernel_placed). */
struct mm_mapping sc_placed(struct mm_mapping m);

/* Operations, applied to every world (see the top of this file). */
#define SC_AT __FILE__, __LINE__
#define sc_create(s, pid, want) sc_create_(SC_AT, s, pid, want)
#define sc_fork(s, parent, child, want) sc_fork_(SC_AT, s, parent, child, want)
#define sc_exec(s, pid, want) sc_exec_(SC_AT, s, pid, want)
#define sc_exit(s, pid, want) sc_exit_(SC_AT, s, pid, want)
#define sc_map(s, pid, m, want) sc_map_(SC_AT, s, pid, m, want)
#define sc_unmap(s, pid, addr, len, want) sc_unmap_(SC_AT, s, pid, addr, len, want)
#define sc_protect(s, pid, addr, len, prot, want) \
	sc_protect_(SC_AT, s, pid, addr, len, prot, want)
#define sc_remap(s, pid, old, old_len, new, new_len, flags, want) \
	sc_remap_(SC_AT, s, pid, old, old_len, new, new_len, flags, want)
#define sc_advise(s, pid, addr, len, adv, want) \
	sc_advise_(SC_AT, s, pid, addr, len, adv, want)
#define sc_fault(s, pid, addr, write, want) sc_fault_(SC_AT, s, pid, addr, write, want)
/* runs: RUNS({start, end, huge, anon}, ...) or NO_RUNS; pages none of
 * them wrote since a fork (struct mm_run.written: mm_observe directly) */
struct sc_run {
	uint64_t start, end;
	bool huge, anon;
};
#define sc_observe(s, pid, start, end, runs, want) \
	sc_observe_(SC_AT, s, pid, start, end, runs, want)
#define RUNS(...) \
	((const struct sc_run[]){ __VA_ARGS__ }), \
	(sizeof((const struct sc_run[]){ __VA_ARGS__ }) / sizeof(struct sc_run))
#define NO_RUNS NULL, (size_t)0

void sc_create_(const char *file, int line, struct sc *s, uint32_t pid,
		struct sc_rc want);
void sc_fork_(const char *file, int line, struct sc *s, uint32_t parent,
	      uint32_t child, struct sc_rc want);
void sc_exec_(const char *file, int line, struct sc *s, uint32_t pid,
	      struct sc_rc want);
void sc_exit_(const char *file, int line, struct sc *s, uint32_t pid,
	      struct sc_rc want);
void sc_map_(const char *file, int line, struct sc *s, uint32_t pid,
	     struct mm_mapping m, struct sc_rc want);
void sc_unmap_(const char *file, int line, struct sc *s, uint32_t pid,
	       uint64_t addr, uint64_t len, struct sc_rc want);
void sc_protect_(const char *file, int line, struct sc *s, uint32_t pid,
		 uint64_t addr, uint64_t len, uint32_t prot, struct sc_rc want);
void sc_remap_(const char *file, int line, struct sc *s, uint32_t pid,
	       uint64_t old_addr, uint64_t old_len, uint64_t new_addr,
	       uint64_t new_len, uint32_t flags, struct sc_rc want);
void sc_advise_(const char *file, int line, struct sc *s, uint32_t pid,
		uint64_t addr, uint64_t len, enum mm_advice adv,
		struct sc_rc want);
void sc_fault_(const char *file, int line, struct sc *s, uint32_t pid,
	       uint64_t addr, bool write, struct sc_rc want);
void sc_observe_(const char *file, int line, struct sc *s, uint32_t pid,
		 uint64_t start, uint64_t end, const struct sc_run *runs,
		 size_t nruns, struct sc_rc want);

/*
 * Expectations, checked in every world of mask.  A mismatch prints every
 * wrong value (with the world's policy) and fails the test at the caller.
 */
#define sc_tables(s, mask, pid, pte, pmd, pud) \
	sc_tables_(SC_AT, s, mask, pid, pte, pmd, pud)
#define sc_shared(s, mask, pid, pte, pmd, pud) \
	sc_shared_(SC_AT, s, mask, pid, pte, pmd, pud)
#define sc_faults(s, mask, pid, faults, observed) \
	sc_faults_(SC_AT, s, mask, pid, faults, observed)
#define sc_forkwork(s, mask, pid, copied, pages, linked) \
	sc_forkwork_(SC_AT, s, mask, pid, copied, pages, linked)
/* also checks that linked[] is the sum of the processes' tables[] */
#define sc_distinct(s, mask, pte, pmd, pud) sc_distinct_(SC_AT, s, mask, pte, pmd, pud)
#define sc_pss(s, mask, pid, bytes) sc_pss_(SC_AT, s, mask, pid, bytes)
#define sc_findings(s, mask, extra_links, past_end, missed, anon_shared) \
	sc_findings_(SC_AT, s, mask, extra_links, past_end, missed, anon_shared)
#define sc_nprocs(s, mask, n) sc_nprocs_(SC_AT, s, mask, n)
#define sc_gone(s, mask, pid) sc_gone_(SC_AT, s, mask, pid)
#define sc_vmas(s, mask, pid, ...)                                            \
	sc_vmas_(SC_AT, s, mask, pid,                                          \
		 sizeof((const struct sc_vma[]){ __VA_ARGS__ }) /              \
			 sizeof(struct sc_vma),                                \
		 (const struct sc_vma[]){ __VA_ARGS__ })
#define sc_no_vmas(s, mask, pid) sc_vmas_(SC_AT, s, mask, pid, 0, NULL)
#define sc_reason(s, mask, pid, addr, reason) \
	sc_reason_(SC_AT, s, mask, pid, addr, reason)

/* One expected VMA: [start, end), protection, flags, has anon pages. */
struct sc_vma {
	uint64_t start, end;
	uint32_t prot, flags;
	bool anon;
};

void sc_tables_(const char *file, int line, struct sc *s, unsigned mask,
		uint32_t pid, uint64_t pte, uint64_t pmd, uint64_t pud);
void sc_shared_(const char *file, int line, struct sc *s, unsigned mask,
		uint32_t pid, uint64_t pte, uint64_t pmd, uint64_t pud);
void sc_faults_(const char *file, int line, struct sc *s, unsigned mask,
		uint32_t pid, uint64_t faults, uint64_t observed);
void sc_forkwork_(const char *file, int line, struct sc *s, unsigned mask,
		  uint32_t pid, uint64_t copied, uint64_t pages,
		  uint64_t linked);
void sc_distinct_(const char *file, int line, struct sc *s, unsigned mask,
		  uint64_t pte, uint64_t pmd, uint64_t pud);
void sc_pss_(const char *file, int line, struct sc *s, unsigned mask,
	     uint32_t pid, double bytes);
void sc_findings_(const char *file, int line, struct sc *s, unsigned mask,
		  uint64_t extra_links, uint64_t past_end, uint64_t missed,
		  uint64_t anon_shared);
void sc_nprocs_(const char *file, int line, struct sc *s, unsigned mask,
		uint64_t n);
void sc_gone_(const char *file, int line, struct sc *s, unsigned mask,
	      uint32_t pid);
void sc_vmas_(const char *file, int line, struct sc *s, unsigned mask,
	      uint32_t pid, size_t n, const struct sc_vma *want);
void sc_reason_(const char *file, int line, struct sc *s, unsigned mask,
		uint32_t pid, uint64_t addr, enum mm_reason reason);

#endif
