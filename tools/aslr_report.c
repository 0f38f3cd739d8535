/* SPDX-License-Identifier: MIT */
/*
 * The output of ptshare aslr: the two runs side by side, policy by policy,
 * then the mappings whose sharing changed and why; as text, and as one
 * JSON document holding both reports (docs/aslr.md).
 */
#include <inttypes.h>
#include <string.h>

#include "aslr.h"
#include "lib/json.h"

#define ASLR_SCHEMA_VERSION 1

const char *const aslr_run_name[COMPARE_RUNS] = { "randomised",
						  "not randomised" };
static const char *const json_run_name[COMPARE_RUNS] = { "randomised",
							 "not_randomised" };

static const char *va_space_text(int v)
{
	switch (v) {
	case 0:
		return "nothing is randomised, so both runs have the same layout";
	case 1:
		return "the stack, mmap areas and vDSO are randomised";
	case 2:
		return "the stack, mmap areas, vDSO and heap are randomised";
	}
	return "unknown";
}

static const char *label(const struct report *r, size_t k)
{
	return k ? r->pol[k].label : "linux (today, model)";
}

/* "saved" as the report shows it: bytes and the share of today's. */
static const char *saved_text(const struct compare_totals *t, size_t k,
			      char *buf, size_t len)
{
	char h[16];
	if (!k)
		return "";
	int64_t s = t[k].saved_bytes;
	snprintf(buf, len, "%s%s (%.1f%%)", s < 0 ? "-" : "",
		 report_human((uint64_t)(s < 0 ? -s : s), h, sizeof(h)),
		 t[0].bytes ? 100.0 * (double)s / (double)t[0].bytes : 0.0);
	return buf;
}

static void runs_text(FILE *f, const struct aslr_runs *a)
{
	char h[COMPARE_RUNS][16], x[COMPARE_RUNS][32];
	const struct report *r[COMPARE_RUNS];
	for (size_t i = 0; i < COMPARE_RUNS; i++) {
		r[i] = a->run[i]->report;
		report_human(r[i]->kernel_kb * 1024, h[i], sizeof(h[i]));
		snprintf(x[i], sizeof(x[i]), "%zu of %zu exact", r[i]->exact,
			 r[i]->nrows);
	}
	fprintf(f, "%-26s %18s %18s\n", "", aslr_run_name[0], aslr_run_name[1]);
	fprintf(f, "%-26s %18d %18d\n", "exit status", a->run[0]->status,
		a->run[1]->status);
	fprintf(f, "%-26s %18zu %18zu\n", "processes at the peak", r[0]->nrows,
		r[1]->nrows);
	fprintf(f, "%-26s %18s %18s\n", "kernel VmPTE (sum)", h[0], h[1]);
	fprintf(f, "%-26s %18s %18s\n", "model vs kernel", x[0], x[1]);
}

static void policies_text(FILE *f, const struct aslr_runs *a)
{
	const struct report *r = a->run[0]->report;
	fprintf(f, "\n%-22s | %-37s | %s\n", "", aslr_run_name[0],
		aslr_run_name[1]);
	fprintf(f, "%-22s", "policy");
	for (size_t i = 0; i < COMPARE_RUNS; i++)
		fprintf(f, " | %7s %7s %21s", "tables", "shared", "saved");
	fputc('\n', f);
	for (size_t k = 0; k < r->npol; k++) {
		fprintf(f, "%-22.22s", label(r, k));
		for (size_t i = 0; i < COMPARE_RUNS; i++) {
			const struct compare_totals *t = a->cmp->totals[i];
			char s[48];
			fprintf(f, " | %7" PRIu64, t[k].tables);
			if (k)
				fprintf(f, " %7" PRIu64 " %21s", t[k].shared,
					saved_text(t, k, s, sizeof(s)));
			else if (i + 1 < COMPARE_RUNS)
				fprintf(f, " %29s", "");
		}
		fputc('\n', f);
	}
}

/* The first policy of the report matching as p does, or 0. */
static size_t policy_matching(const struct report *r, enum mm_match match)
{
	for (size_t k = 1; k < r->npol; k++)
		if (r->pol[k].p.scope == MM_SCOPE_FILE && r->pol[k].p.match == match)
			return k;
	return 0;
}

/* What the exact policy loses to randomisation, and what matching by
 * table slot gets back, in a sentence. */
static void summary_text(FILE *f, const struct aslr_runs *a)
{
	const struct report *r = a->run[0]->report;
	size_t exact = policy_matching(r, MM_MATCH_SAME_RANGE);
	size_t slot = policy_matching(r, MM_MATCH_OBJECT_SLOT);
	char b[3][16];
	if (!exact)
		return;
	const struct compare_totals *t0 = a->cmp->totals[0], *t1 = a->cmp->totals[1];
	fprintf(f, "\n%s saves %s with randomisation and %s without it",
		r->pol[exact].label,
		report_human((uint64_t)(t0[exact].saved_bytes > 0 ? t0[exact].saved_bytes : 0),
		      b[0], sizeof(b[0])),
		report_human((uint64_t)(t1[exact].saved_bytes > 0 ? t1[exact].saved_bytes : 0),
		      b[1], sizeof(b[1])));
	if (slot)
		fprintf(f, ";\n%s, which matches sharers by where the object's "
			"pages fall in a table\nwhatever the address, saves %s on "
			"the randomised run", r->pol[slot].label,
			report_human((uint64_t)(t0[slot].saved_bytes > 0 ? t0[slot].saved_bytes : 0),
			      b[2], sizeof(b[2])));
	fputs(".\n", f);
}

static void prot_text(char *p, uint32_t prot, uint32_t flags)
{
	p[0] = prot & MM_PROT_READ ? 'r' : '-';
	p[1] = prot & MM_PROT_WRITE ? 'w' : '-';
	p[2] = prot & MM_PROT_EXEC ? 'x' : '-';
	p[3] = flags & MM_VMA_SHARED ? 's' : 'p';
	p[4] = '\0';
}

/* Where the mapping is in one run: the addresses explain the exact
 * policy, the table slots the aslr-tolerant one. */
static void side_text(FILE *f, const struct compare_side *s, size_t i)
{
	fprintf(f, "  %-16s", aslr_run_name[i]);
	if (!s->present) {
		fputs("not mapped in this run\n", f);
		return;
	}
	fprintf(f, "%" PRIu32 " processes at %" PRIu32 " address%s (first %#"
		PRIx64 ")", s->nprocs, s->addresses, s->addresses == 1 ? "" : "es",
		s->start);
	if (s->addresses > 1)
		fprintf(f, s->slots == 1
			? ", all at one offset within a 2 MiB table span"
			: ", at %" PRIu32 " offsets within a 2 MiB table span",
			s->slots);
	fputc('\n', f);
}

static bool same_side(const struct compare_mapping *m, size_t k)
{
	const struct compare_side *x = &m->run[0], *y = &m->run[1];
	return x->present && y->present &&
	       x->pol[k].tables == y->pol[k].tables &&
	       x->pol[k].shared == y->pol[k].shared &&
	       x->pol[k].whys == y->pol[k].whys &&
	       x->pol[k].reason == y->pol[k].reason;
}

static void mapping_text(FILE *f, const struct report *r,
			 const struct compare_mapping *m)
{
	char size[16], prot[5], why[256];
	prot_text(prot, m->prot, m->flags);
	fprintf(f, "%s %s, %s at offset %#" PRIx64 ", %s, in %s\n",
		report_kind_name(m->kind), *m->name ? m->name : "[anonymous]",
		report_human(m->size, size, sizeof(size)), m->offset, prot,
		*m->command ? m->command : "?");
	for (size_t i = 0; i < COMPARE_RUNS; i++)
		side_text(f, &m->run[i], i);
	for (size_t k = 1; k < r->npol; k++) {
		bool same = same_side(m, k);
		for (size_t i = 0; i < (same ? 1 : COMPARE_RUNS); i++) {
			const struct compare_side *s = &m->run[i];
			fprintf(f, "  %-22.22s %-16s", i ? "" : r->pol[k].label,
				same ? "both runs" : aslr_run_name[i]);
			if (!s->present) {
				fputs("-\n", f);
				continue;
			}
			fprintf(f, "%5" PRIu64 " of %5" PRIu64 " PTE tables shared: %s\n",
				s->pol[k].shared, s->pol[k].tables,
				report_compare_why_text(s, k, why,
							sizeof(why)));
		}
	}
}

void aslr_text(FILE *f, const struct aslr_runs *a, size_t top)
{
	const struct report *r = a->run[0]->report;
	const struct report_compare *c = a->cmp;
	fputs("ptshare aslr: the workload with its addresses randomised as the "
	      "system does,\nthen without randomisation (ADDR_NO_RANDOMIZE)\n", f);
	if (a->va_space >= 0)
		fprintf(f, "kernel.randomize_va_space = %d: %s\n", a->va_space,
			va_space_text(a->va_space));
	fputc('\n', f);
	runs_text(f, a);
	policies_text(f, a);
	summary_text(f, a);
	size_t n = top && top < c->nmaps ? top : c->nmaps;
	fprintf(f, "\nmappings whose sharing changed (%zu of %zu compared; "
		"the biggest change first)\n", c->nmaps, c->compared);
	for (size_t i = 0; i < n; i++)
		mapping_text(f, r, &c->maps[i]);
	if (n < c->nmaps)
		fprintf(f, "... %zu more (--top 0 shows all)\n", c->nmaps - n);
	if (a->run[0]->status != a->run[1]->status)
		fprintf(f, "\nthe runs ended differently: exit status %d %s, %d %s "
			"(ptshare aslr exits with the second)\n",
			a->run[0]->status, aslr_run_name[0], a->run[1]->status,
			aslr_run_name[1]);
}

/* The run's side arg of a mapping under policy k. */
static void side_policy(struct json *j, size_t k, const void *arg)
{
	const struct compare_side *s = arg;
	char why[256];
	json_member_u64(j, "pte_tables", s->pol[k].tables);
	json_member_u64(j, "shared_tables", s->pol[k].shared);
	json_member_string(j, "why", report_compare_why_text(s, k, why,
							     sizeof(why)));
}

static void side_json(struct json *j, const struct report *r,
		      const struct compare_side *s)
{
	if (!s->present) {
		json_null(j);
		return;
	}
	json_object(j);
	json_member_u64(j, "processes", s->nprocs);
	json_member_u64(j, "addresses", s->addresses);
	json_member_u64(j, "slots", s->slots);
	json_member_u64(j, "first_start", s->start);
	report_json_by_policy(j, "policies", r, side_policy, s);
	json_end_object(j);
}

static void mapping_json(struct json *j, const struct report *r,
			 const struct compare_mapping *m)
{
	char prot[5];
	prot_text(prot, m->prot, m->flags);
	prot[3] = '\0';
	json_object(j);
	json_member_string(j, "kind", report_kind_name(m->kind));
	json_member_string(j, "name", m->name);
	json_member_u64(j, "offset", m->offset);
	json_member_u64(j, "size", m->size);
	json_member_string(j, "prot", prot);
	json_member_bool(j, "shared", m->flags & MM_VMA_SHARED);
	json_member_string(j, "command", m->command);
	for (size_t i = 0; i < COMPARE_RUNS; i++) {
		json_key(j, json_run_name[i]);
		side_json(j, r, &m->run[i]);
	}
	json_end_object(j);
}

/* Policy k's totals in each run of the runs arg. */
static void policy_totals(struct json *j, size_t k, const void *arg)
{
	const struct aslr_runs *a = arg;
	for (size_t i = 0; i < COMPARE_RUNS; i++) {
		const struct compare_totals *t = &a->cmp->totals[i][k];
		json_key(j, json_run_name[i]);
		json_object(j);
		json_member_u64(j, "tables", t->tables);
		json_member_u64(j, "shared", t->shared);
		json_member_u64(j, "bytes", t->bytes);
		json_member_i64(j, "saved_bytes", t->saved_bytes);
		json_end_object(j);
	}
}

void aslr_json(FILE *f, const struct aslr_runs *a)
{
	const struct report *r = a->run[0]->report;
	struct json j;
	json_init(&j, f);
	json_object(&j);
	json_member_string(&j, "schema", "ptshare.aslr");
	json_member_u64(&j, "version", ASLR_SCHEMA_VERSION);
	json_key(&j, "randomize_va_space");
	if (a->va_space >= 0)
		json_i64(&j, a->va_space);
	else
		json_null(&j);
	json_key(&j, "runs");
	json_object(&j);
	for (size_t i = 0; i < COMPARE_RUNS; i++) {
		json_key(&j, json_run_name[i]);
		json_object(&j);
		json_member_bool(&j, "randomised", i == 0);
		json_member_i64(&j, "exit_status", a->run[i]->status);
		json_key(&j, "report");
		report_json_value(&j, a->run[i]->report);
		json_end_object(&j);
	}
	json_end_object(&j);
	report_json_by_policy(&j, "policies", r, policy_totals, a);
	json_member_u64(&j, "mappings_compared", a->cmp->compared);
	json_key(&j, "changed_mappings");
	json_array(&j);
	for (size_t i = 0; i < a->cmp->nmaps; i++)
		mapping_json(&j, r, &a->cmp->maps[i]);
	json_end_array(&j);
	json_end_object(&j);
}
