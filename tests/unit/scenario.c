/* SPDX-License-Identifier: MIT */
#include "scenario.h"
#include "scenario_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptshare/policy.h"

/* ---------------------------------------------------------------- fixtures */

static const struct mm_policy *const builtin[] = {
	[SC_LINUX] = &mm_policy_linux,
	[SC_MCC] = &mm_policy_mccracken,
	[SC_ASLR] = &mm_policy_aslr_tolerant,
	[SC_HPMD] = &mm_policy_hugetlb_pmd,
};

static int setup_worlds(void **state, const char *extra_spec)
{
	struct sc *s = calloc(1, sizeof(*s));

	if (!s)
		return -1;
	s->n = 4;
	for (unsigned i = 0; i < 4; i++) {
		s->w[i] = mm_world_new(builtin[i]);
		if (!s->w[i]) {
			print_error("mm_world_new(%s) failed\n", builtin[i]->name);
			return -1;
		}
	}
	if (extra_spec) {
		char err[256] = "";

		if (mm_policy_parse(extra_spec, &s->extra, err, sizeof(err))) {
			print_error("mm_policy_parse(%s): %s\n", extra_spec, err);
			return -1;
		}
		s->w[SC_EXTRA] = mm_world_new(&s->extra);
		if (!s->w[SC_EXTRA])
			return -1;
		s->n = 5;
	}
	*state = s;
	return 0;
}

int sc_setup(void **state)
{
	return setup_worlds(state, NULL);
}

int sc_setup_pud(void **state)
{
	return setup_worlds(state, "mccracken-2005:pte+pmd+pud");
}

int sc_setup_extra(void **state, const char *spec)
{
	return setup_worlds(state, spec);
}

int sc_teardown(void **state)
{
	struct sc *s = *state;

	if (!s)
		return 0;
	for (unsigned i = 0; i < SC_NWORLDS; i++)
		if (s->w[i])
			mm_world_free(s->w[i]);
	free(s);
	*state = NULL;
	return 0;
}

void sc_zero_page(struct sc *s, bool zero_page)
{
	for (unsigned i = 0; i < s->n; i++)
		mm_world_set_zero_page(s->w[i], zero_page);
}

const char *sc_world_name(const struct sc *s, unsigned i)
{
	const struct mm_policy *p = mm_world_policy(s->w[i]);

	return p && p->name ? p->name : "?";
}

/* -------------------------------------------------------------- mappings */

struct mm_mapping sc_anon(uint64_t addr, uint64_t len, uint32_t prot)
{
	return (struct mm_mapping){
		.addr = addr, .len = len, .prot = prot,
		.obj = { .kind = MM_OBJ_ANON },
	};
}

struct mm_mapping sc_obj(uint32_t kind, uint64_t ino, uint64_t addr,
			 uint64_t len, uint64_t offset, uint32_t prot,
			 uint32_t flags)
{
	return (struct mm_mapping){
		.addr = addr, .len = len, .offset = offset, .prot = prot,
		.flags = flags,
		.obj = { .kind = kind, .dev = kind == MM_OBJ_FILE ? 8 : 0,
			 .ino = ino },
	};
}

struct mm_mapping sc_hugetlb(uint64_t ino, uint64_t addr, uint64_t len,
			     uint64_t offset, uint32_t huge_shift,
			     uint32_t flags)
{
	struct mm_mapping m = sc_obj(MM_OBJ_HUGETLB, ino, addr, len, offset,
				     P_RW, flags);

	m.huge_shift = huge_shift;
	return m;
}

struct mm_mapping sc_fixed(struct mm_mapping m)
{
	m.fixed = true;
	return m;
}

struct mm_mapping sc_placed(struct mm_mapping m)
{
	m.kernel_placed = true;
	return m;
}

/* -------------------------------------------------------------- snapshots */

static const char *const finding_names[SC_NFINDINGS] = {
	"fault-search-extra-links",
	"unshare-past-end",
	"unshare-misses-table",
	"private-anon-pages-shared",
};

const char *sc_finding_name(unsigned k)
{
	return finding_names[k];
}

struct sc_snap {
	int nproc;
	struct mm_proc_stats proc[SC_MAX_PROCS];
	struct mm_world_totals tot;
	uint64_t findings[SC_NFINDINGS];
	size_t nvma[SC_MAX_PROCS];
	struct mm_vma_info vma[SC_MAX_PROCS][SC_MAX_VMAS];
};

int sc_collect_vma(const struct mm_vma_info *vma, void *arg)
{
	struct vma_list *l = arg;

	if (l->n >= SC_MAX_VMAS)
		return 1;
	l->v[l->n++] = *vma;
	return 0;
}

void sc_findings_of(struct mm_world *w, uint64_t out[SC_NFINDINGS])
{
	struct mm_finding f[16];
	size_t n = mm_world_findings(w, f, 16);

	memset(out, 0, SC_NFINDINGS * sizeof(out[0]));
	for (size_t i = 0; i < n && i < 16; i++)
		for (unsigned k = 0; k < SC_NFINDINGS; k++)
			if (f[i].name && !strcmp(f[i].name, finding_names[k]))
				out[k] = f[i].count;
}

static void snap(struct mm_world *w, struct sc_snap *sn)
{
	memset(sn, 0, sizeof(*sn));
	sn->nproc = mm_world_stats(w, sn->proc, SC_MAX_PROCS, &sn->tot);
	sc_findings_of(w, sn->findings);
	for (int i = 0; i < sn->nproc && i < SC_MAX_PROCS; i++) {
		struct vma_list l = { 0, sn->vma[i] };

		mm_proc_vmas(w, sn->proc[i].pid, sc_collect_vma, &l);
		sn->nvma[i] = l.n;
	}
}

#define DIFF(field)                                                            \
	do {                                                                   \
		if (a->field != b->field) {                                    \
			snprintf(why, len, "%s changed", #field);              \
			return false;                                          \
		}                                                              \
	} while (0)

static bool same_proc(const struct mm_proc_stats *a,
		      const struct mm_proc_stats *b, char *why, size_t len)
{
	DIFF(pid);
	for (int l = 0; l < PT_NR_LEVELS; l++) {
		DIFF(tables[l]);
		DIFF(shared[l]);
	}
	DIFF(pss_bytes);
	DIFF(faults);
	DIFF(faults_observed);
	DIFF(fork_tables_copied);
	DIFF(fork_pages_copied);
	DIFF(fork_tables_linked);
	DIFF(vmas);
	DIFF(mapped_bytes);
	return true;
}

static bool same_vma(const struct mm_vma_info *a, const struct mm_vma_info *b,
		     char *why, size_t len)
{
	DIFF(start);
	DIFF(end);
	DIFF(offset);
	DIFF(obj.kind);
	DIFF(obj.dev);
	DIFF(obj.ino);
	DIFF(prot);
	DIFF(flags);
	DIFF(huge_shift);
	DIFF(anon_pages);
	DIFF(reason);
	return true;
}

static bool same_snap(const struct sc_snap *a, const struct sc_snap *b,
		      char *why, size_t len)
{
	char sub[96];

	DIFF(nproc);
	DIFF(tot.processes);
	for (int l = 0; l < PT_NR_LEVELS; l++) {
		DIFF(tot.distinct[l]);
		DIFF(tot.linked[l]);
	}
	for (int k = 0; k < 3; k++)
		DIFF(findings[k]);
	for (int i = 0; i < a->nproc && i < SC_MAX_PROCS; i++) {
		if (!same_proc(&a->proc[i], &b->proc[i], sub, sizeof(sub))) {
			snprintf(why, len, "pid %" PRIu32 ": %s", a->proc[i].pid, sub);
			return false;
		}
		DIFF(nvma[i]);
		for (size_t v = 0; v < a->nvma[i]; v++)
			if (!same_vma(&a->vma[i][v], &b->vma[i][v], sub, sizeof(sub))) {
				snprintf(why, len, "pid %" PRIu32 " vma %zu: %s",
					 a->proc[i].pid, v, sub);
				return false;
			}
	}
	return true;
}

/* ------------------------------------------------------------- operations */

enum sc_op { OP_CREATE, OP_FORK, OP_EXEC, OP_EXIT, OP_MAP, OP_UNMAP,
	     OP_PROTECT, OP_REMAP, OP_ADVISE, OP_FAULT, OP_OBSERVE };

struct sc_call {
	enum sc_op op;
	uint32_t pid, pid2;
	uint64_t a, b, c, d;
	uint32_t flags;
	bool write;
	enum mm_advice adv;
	struct mm_mapping m;
	const struct mm_run *runs;
	size_t nruns;
	char what[160];
};

static int call(struct mm_world *w, const struct sc_call *c)
{
	switch (c->op) {
	case OP_CREATE: return mm_create(w, c->pid);
	case OP_FORK: return mm_fork(w, c->pid, c->pid2);
	case OP_EXEC: return mm_exec(w, c->pid);
	case OP_EXIT: return mm_exit(w, c->pid);
	case OP_MAP: return mm_map(w, c->pid, &c->m);
	case OP_UNMAP: return mm_unmap(w, c->pid, c->a, c->b);
	case OP_PROTECT: return mm_protect(w, c->pid, c->a, c->b, c->flags);
	case OP_REMAP:
		return mm_remap(w, c->pid, c->a, c->b, c->c, c->d, c->flags);
	case OP_ADVISE: return mm_advise(w, c->pid, c->a, c->b, c->adv);
	case OP_FAULT: return mm_fault(w, c->pid, c->a, c->write);
	case OP_OBSERVE:
		return mm_observe(w, c->pid, c->a, c->b, c->runs, c->nruns);
	}
	return -1;
}

static struct sc_snap before, after;

static const char *want_str(int v)
{
	static char buf[16];

	snprintf(buf, sizeof(buf), "%d", v);
	return buf;
}

static void apply(const char *file, int line, struct sc *s,
		  const struct sc_call *c, struct sc_rc want)
{
	bool bad = false;

	for (unsigned i = 0; i < s->n; i++) {
		struct mm_world *w = s->w[i];
		int exp = want.v[i];
		int rc, chk;
		const char *e;
		char err[256];

		if (exp == SC_UNSET) {
			print_error("%s:%d: test bug: no expected result for %s\n",
				    file, line, sc_world_name(s, i));
			_fail(file, line);
		}
		snap(w, &before);
		rc = call(w, c);
		/* the error now, before mm_check() may replace it */
		e = mm_world_error(w);
		snprintf(err, sizeof(err), "%s", e ? e : "");
		if (exp == SC_ERR ? rc >= 0 : rc != exp) {
			print_error("%s:%d: [%s] %s returned %d, expected %s%s%s\n",
				    file, line, sc_world_name(s, i), c->what, rc,
				    exp == SC_ERR ? "an error" : want_str(exp),
				    rc < 0 ? ": " : "", rc < 0 ? err : "");
			bad = true;
		}
		chk = mm_check(w);
		if (chk != 0) {
			e = mm_world_error(w);
			print_error("%s:%d: [%s] mm_check after %s: %d %s\n", file,
				    line, sc_world_name(s, i), c->what, chk, e ? e : "");
			bad = true;
		}
		if (rc < 0) {
			char why[192];

			if (!err[0]) {
				print_error("%s:%d: [%s] %s failed (%d) without "
					    "mm_world_error()\n",
					    file, line, sc_world_name(s, i), c->what, rc);
				bad = true;
			}
			snap(w, &after);
			if (!same_snap(&before, &after, why, sizeof(why))) {
				print_error("%s:%d: [%s] rejected %s changed the "
					    "world: %s\n",
					    file, line, sc_world_name(s, i), c->what, why);
				bad = true;
			}
		}
	}
	if (bad)
		_fail(file, line);
}

void sc_create_(const char *file, int line, struct sc *s, uint32_t pid,
		struct sc_rc want)
{
	struct sc_call c = { .op = OP_CREATE, .pid = pid };

	snprintf(c.what, sizeof(c.what), "create(%" PRIu32 ")", pid);
	apply(file, line, s, &c, want);
}

void sc_fork_(const char *file, int line, struct sc *s, uint32_t parent,
	      uint32_t child, struct sc_rc want)
{
	struct sc_call c = { .op = OP_FORK, .pid = parent, .pid2 = child };

	snprintf(c.what, sizeof(c.what), "fork(%" PRIu32 " -> %" PRIu32 ")",
		 parent, child);
	apply(file, line, s, &c, want);
}

void sc_exec_(const char *file, int line, struct sc *s, uint32_t pid,
	      struct sc_rc want)
{
	struct sc_call c = { .op = OP_EXEC, .pid = pid };

	snprintf(c.what, sizeof(c.what), "exec(%" PRIu32 ")", pid);
	apply(file, line, s, &c, want);
}

void sc_exit_(const char *file, int line, struct sc *s, uint32_t pid,
	      struct sc_rc want)
{
	struct sc_call c = { .op = OP_EXIT, .pid = pid };

	snprintf(c.what, sizeof(c.what), "exit(%" PRIu32 ")", pid);
	apply(file, line, s, &c, want);
}

void sc_map_(const char *file, int line, struct sc *s, uint32_t pid,
	     struct mm_mapping m, struct sc_rc want)
{
	struct sc_call c = { .op = OP_MAP, .pid = pid, .m = m };

	snprintf(c.what, sizeof(c.what),
		 "map(%" PRIu32 ", %#" PRIx64 "+%#" PRIx64 " kind %" PRIu32
		 " off %#" PRIx64 " prot %" PRIu32 " flags %#" PRIx32 "%s)",
		 pid, m.addr, m.len, m.obj.kind, m.offset, m.prot, m.flags,
		 m.fixed ? " fixed" : "");
	apply(file, line, s, &c, want);
}

void sc_unmap_(const char *file, int line, struct sc *s, uint32_t pid,
	       uint64_t addr, uint64_t len, struct sc_rc want)
{
	struct sc_call c = { .op = OP_UNMAP, .pid = pid, .a = addr, .b = len };

	snprintf(c.what, sizeof(c.what), "unmap(%" PRIu32 ", %#" PRIx64 "+%#" PRIx64 ")",
		 pid, addr, len);
	apply(file, line, s, &c, want);
}

void sc_protect_(const char *file, int line, struct sc *s, uint32_t pid,
		 uint64_t addr, uint64_t len, uint32_t prot, struct sc_rc want)
{
	struct sc_call c = { .op = OP_PROTECT, .pid = pid, .a = addr, .b = len,
			     .flags = prot };

	snprintf(c.what, sizeof(c.what),
		 "protect(%" PRIu32 ", %#" PRIx64 "+%#" PRIx64 ", %" PRIu32 ")",
		 pid, addr, len, prot);
	apply(file, line, s, &c, want);
}

void sc_remap_(const char *file, int line, struct sc *s, uint32_t pid,
	       uint64_t old_addr, uint64_t old_len, uint64_t new_addr,
	       uint64_t new_len, uint32_t flags, struct sc_rc want)
{
	struct sc_call c = { .op = OP_REMAP, .pid = pid, .a = old_addr,
			     .b = old_len, .c = new_addr, .d = new_len,
			     .flags = flags };

	snprintf(c.what, sizeof(c.what),
		 "remap(%" PRIu32 ", %#" PRIx64 "+%#" PRIx64 " -> %#" PRIx64
		 "+%#" PRIx64 ", flags %#" PRIx32 ")",
		 pid, old_addr, old_len, new_addr, new_len, flags);
	apply(file, line, s, &c, want);
}

void sc_advise_(const char *file, int line, struct sc *s, uint32_t pid,
		uint64_t addr, uint64_t len, enum mm_advice adv,
		struct sc_rc want)
{
	struct sc_call c = { .op = OP_ADVISE, .pid = pid, .a = addr, .b = len,
			     .adv = adv };

	snprintf(c.what, sizeof(c.what),
		 "advise(%" PRIu32 ", %#" PRIx64 "+%#" PRIx64 ", %d)", pid, addr,
		 len, (int)adv);
	apply(file, line, s, &c, want);
}

void sc_fault_(const char *file, int line, struct sc *s, uint32_t pid,
	       uint64_t addr, bool write, struct sc_rc want)
{
	struct sc_call c = { .op = OP_FAULT, .pid = pid, .a = addr,
			     .write = write };

	snprintf(c.what, sizeof(c.what), "fault(%" PRIu32 ", %#" PRIx64 ", %s)",
		 pid, addr, write ? "write" : "read");
	apply(file, line, s, &c, want);
}

void sc_observe_(const char *file, int line, struct sc *s, uint32_t pid,
		 uint64_t start, uint64_t end, const struct sc_run *runs,
		 size_t nruns, struct sc_rc want)
{
	struct mm_run mr[nruns ? nruns : 1];
	for (size_t i = 0; i < nruns; i++)
		mr[i] = (struct mm_run){ runs[i].start, runs[i].end,
					 runs[i].huge, runs[i].anon, false };
	struct sc_call c = { .op = OP_OBSERVE, .pid = pid, .a = start,
			     .b = end, .runs = nruns ? mr : NULL, .nruns = nruns };

	snprintf(c.what, sizeof(c.what),
		 "observe(%" PRIu32 ", %#" PRIx64 "..%#" PRIx64 ", %zu runs)",
		 pid, start, end, nruns);
	apply(file, line, s, &c, want);
}
