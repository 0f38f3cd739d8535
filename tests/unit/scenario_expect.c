/* SPDX-License-Identifier: MIT */
/*
 * The scenarios' expectations: each compares a figure of every world of
 * a mask with the value worked by hand (scenario.h), and says where.
 */
#include "scenario.h"
#include "scenario_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptshare/policy.h"

/* Every world of mask that exists. */
#define FOR_WORLDS(s, mask, i) \
	for (unsigned i = 0; i < (s)->n; i++) if ((mask) & (1u << i))

/* The stats of pid in world i, from mm_world_stats (so pss_bytes is set). */
static bool stats_of(const char *file, int line, struct sc *s, unsigned i,
		     uint32_t pid, struct mm_proc_stats *out,
		     struct mm_world_totals *tot)
{
	static struct mm_proc_stats all[SC_MAX_PROCS];
	struct mm_world_totals t;
	int n = mm_world_stats(s->w[i], all, SC_MAX_PROCS, &t);

	if (tot)
		*tot = t;
	for (int k = 0; k < n && k < SC_MAX_PROCS; k++)
		if (all[k].pid == pid) {
			*out = all[k];
			return true;
		}
	print_error("%s:%d: [%s] no process %" PRIu32 " in mm_world_stats\n",
		    file, line, sc_world_name(s, i), pid);
	return false;
}

static const char *const level_name[PT_NR_LEVELS] = { "PTE", "PMD", "PUD" };

static bool expect_u64(const char *file, int line, struct sc *s, unsigned i,
		       uint32_t pid, const char *what, uint64_t got,
		       uint64_t want)
{
	if (got == want)
		return true;
	if (pid)
		print_error("%s:%d: [%s] pid %" PRIu32 ": %s = %" PRIu64
			    ", expected %" PRIu64 "\n",
			    file, line, sc_world_name(s, i), pid, what, got, want);
	else
		print_error("%s:%d: [%s] world: %s = %" PRIu64
			    ", expected %" PRIu64 "\n",
			    file, line, sc_world_name(s, i), what, got, want);
	return false;
}

static void expect_levels(const char *file, int line, struct sc *s,
			  unsigned mask, uint32_t pid, bool shared,
			  const uint64_t want[PT_NR_LEVELS])
{
	bool ok = true;

	FOR_WORLDS(s, mask, i) {
		struct mm_proc_stats st;
		char what[32];

		if (!stats_of(file, line, s, i, pid, &st, NULL)) {
			ok = false;
			continue;
		}
		for (int l = 0; l < PT_NR_LEVELS; l++) {
			snprintf(what, sizeof(what), "%s[%s]",
				 shared ? "shared" : "tables", level_name[l]);
			ok &= expect_u64(file, line, s, i, pid, what,
					 shared ? st.shared[l] : st.tables[l],
					 want[l]);
		}
	}
	if (!ok)
		_fail(file, line);
}

void sc_tables_(const char *file, int line, struct sc *s, unsigned mask,
		uint32_t pid, uint64_t pte, uint64_t pmd, uint64_t pud)
{
	const uint64_t want[PT_NR_LEVELS] = { pte, pmd, pud };

	expect_levels(file, line, s, mask, pid, false, want);
}

void sc_shared_(const char *file, int line, struct sc *s, unsigned mask,
		uint32_t pid, uint64_t pte, uint64_t pmd, uint64_t pud)
{
	const uint64_t want[PT_NR_LEVELS] = { pte, pmd, pud };

	expect_levels(file, line, s, mask, pid, true, want);
}

void sc_faults_(const char *file, int line, struct sc *s, unsigned mask,
		uint32_t pid, uint64_t faults, uint64_t observed)
{
	bool ok = true;

	FOR_WORLDS(s, mask, i) {
		struct mm_proc_stats st;

		if (!stats_of(file, line, s, i, pid, &st, NULL)) {
			ok = false;
			continue;
		}
		ok &= expect_u64(file, line, s, i, pid, "faults", st.faults, faults);
		ok &= expect_u64(file, line, s, i, pid, "faults_observed",
				 st.faults_observed, observed);
	}
	if (!ok)
		_fail(file, line);
}

void sc_forkwork_(const char *file, int line, struct sc *s, unsigned mask,
		  uint32_t pid, uint64_t copied, uint64_t pages,
		  uint64_t linked)
{
	bool ok = true;

	FOR_WORLDS(s, mask, i) {
		struct mm_proc_stats st;

		if (!stats_of(file, line, s, i, pid, &st, NULL)) {
			ok = false;
			continue;
		}
		ok &= expect_u64(file, line, s, i, pid, "fork_tables_copied",
				 st.fork_tables_copied, copied);
		ok &= expect_u64(file, line, s, i, pid, "fork_pages_copied",
				 st.fork_pages_copied, pages);
		ok &= expect_u64(file, line, s, i, pid, "fork_tables_linked",
				 st.fork_tables_linked, linked);
	}
	if (!ok)
		_fail(file, line);
}

void sc_distinct_(const char *file, int line, struct sc *s, unsigned mask,
		  uint64_t pte, uint64_t pmd, uint64_t pud)
{
	const uint64_t want[PT_NR_LEVELS] = { pte, pmd, pud };
	bool ok = true;

	FOR_WORLDS(s, mask, i) {
		static struct mm_proc_stats all[SC_MAX_PROCS];
		struct mm_world_totals t;
		int n = mm_world_stats(s->w[i], all, SC_MAX_PROCS, &t);

		for (int l = 0; l < PT_NR_LEVELS; l++) {
			uint64_t sum = 0;
			char what[48];

			for (int k = 0; k < n && k < SC_MAX_PROCS; k++)
				sum += all[k].tables[l];
			snprintf(what, sizeof(what), "distinct[%s]", level_name[l]);
			ok &= expect_u64(file, line, s, i, 0, what,
					 t.distinct[l], want[l]);
			snprintf(what, sizeof(what),
				 "linked[%s] (sum of tables[])", level_name[l]);
			ok &= expect_u64(file, line, s, i, 0, what, t.linked[l], sum);
		}
		ok &= expect_u64(file, line, s, i, 0, "processes (return)",
				 (uint64_t)n, t.processes);
	}
	if (!ok)
		_fail(file, line);
}

void sc_pss_(const char *file, int line, struct sc *s, unsigned mask,
	     uint32_t pid, double bytes)
{
	bool ok = true;

	FOR_WORLDS(s, mask, i) {
		struct mm_proc_stats st;

		if (!stats_of(file, line, s, i, pid, &st, NULL)) {
			ok = false;
			continue;
		}
		/* exact: every expected value is a sum of 4096 / 2^k */
		if (st.pss_bytes != bytes) {
			print_error("%s:%d: [%s] pid %" PRIu32
				    ": pss_bytes = %.3f, expected %.3f\n",
				    file, line, sc_world_name(s, i), pid, st.pss_bytes,
				    bytes);
			ok = false;
		}
	}
	if (!ok)
		_fail(file, line);
}

void sc_findings_(const char *file, int line, struct sc *s, unsigned mask,
		  uint64_t extra_links, uint64_t past_end, uint64_t missed,
		  uint64_t anon_shared)
{
	const uint64_t want[SC_NFINDINGS] = { extra_links, past_end, missed,
					      anon_shared };
	bool ok = true;

	FOR_WORLDS(s, mask, i) {
		uint64_t got[SC_NFINDINGS];

		sc_findings_of(s->w[i], got);
		for (unsigned k = 0; k < SC_NFINDINGS; k++)
			ok &= expect_u64(file, line, s, i, 0, sc_finding_name(k),
					 got[k], want[k]);
	}
	if (!ok)
		_fail(file, line);
}

void sc_nprocs_(const char *file, int line, struct sc *s, unsigned mask,
		uint64_t n)
{
	bool ok = true;

	FOR_WORLDS(s, mask, i) {
		static struct mm_proc_stats all[SC_MAX_PROCS];
		struct mm_world_totals t;
		int got = mm_world_stats(s->w[i], all, SC_MAX_PROCS, &t);

		ok &= expect_u64(file, line, s, i, 0, "mm_world_stats()",
				 (uint64_t)got, n);
		ok &= expect_u64(file, line, s, i, 0, "totals.processes",
				 t.processes, n);
	}
	if (!ok)
		_fail(file, line);
}

void sc_gone_(const char *file, int line, struct sc *s, unsigned mask,
	      uint32_t pid)
{
	bool ok = true;

	FOR_WORLDS(s, mask, i) {
		struct mm_proc_stats st;
		int rc = mm_proc_stats(s->w[i], pid, &st);

		if (rc >= 0) {
			print_error("%s:%d: [%s] mm_proc_stats(%" PRIu32
				    ") = %d, expected an error (no such process)\n",
				    file, line, sc_world_name(s, i), pid, rc);
			ok = false;
		}
	}
	if (!ok)
		_fail(file, line);
}

void sc_vmas_(const char *file, int line, struct sc *s, unsigned mask,
	      uint32_t pid, size_t n, const struct sc_vma *want)
{
	static struct mm_vma_info got[SC_MAX_VMAS];
	bool ok = true;

	FOR_WORLDS(s, mask, i) {
		struct vma_list l = { 0, got };
		struct mm_proc_stats st;
		uint64_t bytes = 0;

		mm_proc_vmas(s->w[i], pid, sc_collect_vma, &l);
		if (l.n != n) {
			print_error("%s:%d: [%s] pid %" PRIu32 ": %zu VMAs, expected %zu\n",
				    file, line, sc_world_name(s, i), pid, l.n, n);
			for (size_t v = 0; v < l.n; v++)
				print_error("    [%#" PRIx64 ", %#" PRIx64 ") prot %" PRIu32
					    " flags %#" PRIx32 " anon %d\n",
					    got[v].start, got[v].end, got[v].prot,
					    got[v].flags, got[v].anon_pages);
			ok = false;
			continue;
		}
		for (size_t v = 0; v < n; v++) {
			const struct mm_vma_info *g = &got[v];
			const struct sc_vma *e = &want[v];

			bytes += e->end - e->start;
			if (g->start != e->start || g->end != e->end ||
			    g->prot != e->prot || g->flags != e->flags ||
			    g->anon_pages != e->anon) {
				print_error("%s:%d: [%s] pid %" PRIu32 " VMA %zu: "
					    "[%#" PRIx64 ", %#" PRIx64 ") prot %" PRIu32
					    " flags %#" PRIx32 " anon %d, expected "
					    "[%#" PRIx64 ", %#" PRIx64 ") prot %" PRIu32
					    " flags %#" PRIx32 " anon %d\n",
					    file, line, sc_world_name(s, i), pid, v, g->start,
					    g->end, g->prot, g->flags, g->anon_pages,
					    e->start, e->end, e->prot, e->flags, e->anon);
				ok = false;
			}
		}
		if (mm_proc_stats(s->w[i], pid, &st) < 0) {
			print_error("%s:%d: [%s] mm_proc_stats(%" PRIu32 ") failed\n",
				    file, line, sc_world_name(s, i), pid);
			ok = false;
			continue;
		}
		ok &= expect_u64(file, line, s, i, pid, "vmas", st.vmas, n);
		ok &= expect_u64(file, line, s, i, pid, "mapped_bytes",
				 st.mapped_bytes, bytes);
	}
	if (!ok)
		_fail(file, line);
}

struct find_addr {
	uint64_t addr;
	struct mm_vma_info found;
	bool ok;
};

static int find_vma(const struct mm_vma_info *vma, void *arg)
{
	struct find_addr *f = arg;

	if (vma->start <= f->addr && f->addr < vma->end) {
		f->found = *vma;
		f->ok = true;
		return 1;
	}
	return 0;
}

void sc_reason_(const char *file, int line, struct sc *s, unsigned mask,
		uint32_t pid, uint64_t addr, enum mm_reason reason)
{
	bool ok = true;

	FOR_WORLDS(s, mask, i) {
		struct find_addr f = { .addr = addr };

		mm_proc_vmas(s->w[i], pid, find_vma, &f);
		if (!f.ok) {
			print_error("%s:%d: [%s] pid %" PRIu32 ": no VMA at %#" PRIx64 "\n",
				    file, line, sc_world_name(s, i), pid, addr);
			ok = false;
		} else if (f.found.reason != reason) {
			print_error("%s:%d: [%s] pid %" PRIu32 " VMA at %#" PRIx64
				    ": reason %s, expected %s\n",
				    file, line, sc_world_name(s, i), pid, addr,
				    mm_reason_name(f.found.reason),
				    mm_reason_name(reason));
			ok = false;
		}
	}
	if (!ok)
		_fail(file, line);
}
