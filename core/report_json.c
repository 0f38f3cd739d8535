/* SPDX-License-Identifier: MIT */
/* The report as JSON: the schema is docs/report-json.md. */
#include <string.h>

#include "json.h"
#include "report.h"

#define REPORT_SCHEMA_VERSION 1

static const char *const level_name[PT_NR_LEVELS] = { "pte", "pmd", "pud" };

static void levels(struct json *j, const char *key, const uint64_t *v)
{
	json_key(j, key);
	json_object(j);
	for (unsigned l = 0; l < PT_NR_LEVELS; l++) {
		json_key(j, level_name[l]);
		json_u64(j, v[l]);
	}
	json_end_object(j);
}

static void policies(struct json *j, const struct report *r)
{
	static const char *const scope[] = { "none", "file", "hugetlb-shared" };
	static const char *const match[] = { "same-range", "object-slot" };
	json_key(j, "policies");
	json_array(j);
	for (size_t k = 0; k < r->npol; k++) {
		const struct mm_policy *p = &r->pol[k].p;
		json_object(j);
		json_key(j, "label");
		json_string(j, r->pol[k].label);
		json_key(j, "name");
		json_string(j, p->name);
		json_key(j, "levels");
		json_array(j);
		for (unsigned l = 0; l < PT_NR_LEVELS; l++)
			if (p->levels & (1u << l))
				json_string(j, level_name[l]);
		json_end_array(j);
		json_key(j, "scope");
		json_string(j, scope[p->scope]);
		json_key(j, "match");
		json_string(j, p->scope == MM_SCOPE_NONE ? "none" : match[p->match]);
		json_key(j, "link_at_fork");
		json_bool(j, p->link_at_fork);
		json_end_object(j);
	}
	json_end_array(j);
}

static void totals(struct json *j, const struct report *r)
{
	uint64_t today = report_sum3(r->totals[0].distinct) * MM_PAGE_SIZE;
	json_key(j, "totals");
	json_object(j);
	json_key(j, "processes");
	json_u64(j, r->nrows);
	json_key(j, "exact_processes");
	json_u64(j, r->exact);
	json_key(j, "kernel_vmpte_kb");
	json_u64(j, r->kernel_kb);
	json_key(j, "model_kb");
	json_u64(j, r->model_kb);
	json_key(j, "policies");
	json_object(j);
	for (size_t k = 0; k < r->npol; k++) {
		uint64_t shared[PT_NR_LEVELS] = { 0 };
		for (size_t i = 0; i < r->nrows; i++)
			for (unsigned l = 0; l < PT_NR_LEVELS; l++)
				shared[l] += r->rows[i].s[k].shared[l];
		uint64_t bytes = report_sum3(r->totals[k].distinct) * MM_PAGE_SIZE;
		json_key(j, r->pol[k].label);
		json_object(j);
		levels(j, "distinct", r->totals[k].distinct);
		levels(j, "linked", r->totals[k].linked);
		levels(j, "shared", shared);
		json_key(j, "bytes");
		json_u64(j, bytes);
		json_key(j, "saved_bytes");
		json_i64(j, (int64_t)today - (int64_t)bytes);
		json_key(j, "findings");
		json_object(j);
		for (size_t i = 0; i < r->pol[k].nfindings; i++) {
			json_key(j, r->pol[k].findings[i].name);
			json_u64(j, r->pol[k].findings[i].count);
		}
		json_end_object(j);
		json_end_object(j);
	}
	json_end_object(j);
	json_end_object(j);
}

static void process(struct json *j, const struct report *r,
		    const struct report_row *row)
{
	uint64_t today = report_sum3(row->s[0].tables) * MM_PAGE_SIZE;
	json_object(j);
	json_key(j, "pid");
	json_u64(j, row->proc->pid);
	json_key(j, "ppid");
	json_u64(j, row->proc->ppid);
	json_key(j, "uid");
	json_u64(j, row->proc->uid);
	json_key(j, "command");
	json_string(j, row->proc->name);
	json_key(j, "vmpte_kb");
	if (row->proc->vmpte_kb >= 0)
		json_i64(j, row->proc->vmpte_kb);
	else
		json_null(j);
	json_key(j, "stable");
	json_bool(j, row->proc->stable);
	json_key(j, "policies");
	json_object(j);
	for (size_t k = 0; k < r->npol; k++) {
		const struct mm_proc_stats *s = &row->s[k];
		json_key(j, r->pol[k].label);
		json_object(j);
		levels(j, "tables", s->tables);
		levels(j, "shared", s->shared);
		json_key(j, "pss_bytes");
		json_double(j, s->pss_bytes);
		json_key(j, "saved_bytes");
		json_double(j, (double)today - s->pss_bytes);
		json_key(j, "faults");
		json_u64(j, s->faults);
		json_key(j, "faults_observed");
		json_u64(j, s->faults_observed);
		json_key(j, "fork_tables_copied");
		json_u64(j, s->fork_tables_copied);
		json_key(j, "fork_pages_copied");
		json_u64(j, s->fork_pages_copied);
		json_key(j, "fork_tables_linked");
		json_u64(j, s->fork_tables_linked);
		json_end_object(j);
	}
	json_end_object(j);
	json_end_object(j);
}

static void mapping(struct json *j, const struct report *r,
		    const struct report_mapping *m)
{
	char prot[4] = { m->prot & MM_PROT_READ ? 'r' : '-',
			 m->prot & MM_PROT_WRITE ? 'w' : '-',
			 m->prot & MM_PROT_EXEC ? 'x' : '-', 0 };
	json_object(j);
	json_key(j, "kind");
	json_string(j, report_kind_name(m->obj.kind));
	json_key(j, "dev");
	json_u64(j, m->obj.dev);
	json_key(j, "ino");
	json_u64(j, m->obj.ino);
	json_key(j, "name");
	json_string(j, m->name);
	json_key(j, "start");
	json_u64(j, m->start);
	json_key(j, "end");
	json_u64(j, m->end);
	json_key(j, "offset");
	json_u64(j, m->offset);
	json_key(j, "prot");
	json_string(j, prot);
	json_key(j, "shared");
	json_bool(j, m->flags & MM_VMA_SHARED);
	json_key(j, "anon_pages");
	json_bool(j, m->anon_pages);
	json_key(j, "processes");
	json_u64(j, m->nprocs);
	json_key(j, "first_pid");
	json_u64(j, m->first_pid);
	json_key(j, "policies");
	json_object(j);
	for (size_t k = 0; k < r->npol; k++) {
		json_key(j, r->pol[k].label);
		json_object(j);
		json_key(j, "pte_tables");
		json_u64(j, m->pol[k].tables);
		json_key(j, "shared_tables");
		json_u64(j, m->pol[k].shared);
		json_key(j, "reason");
		json_string(j, mm_reason_name(m->pol[k].reason));
		json_key(j, "why");
		json_string(j, report_why_text(m, k));
		json_end_object(j);
	}
	json_end_object(j);
	json_end_object(j);
}

static void final_checkpoint(struct json *j, const struct report_final *x)
{
	json_object(j);
	json_key(j, "pid");
	json_u64(j, x->proc.pid);
	json_key(j, "ppid");
	json_u64(j, x->proc.ppid);
	json_key(j, "uid");
	json_u64(j, x->proc.uid);
	json_key(j, "command");
	json_string(j, x->proc.name);
	json_key(j, "vmpte_kb");
	json_i64(j, x->proc.vmpte_kb);
	json_key(j, "model_kb");
	json_i64(j, x->model_kb);
	json_key(j, "stable");
	json_bool(j, x->proc.stable);
	json_key(j, "checkpoint");
	json_string(j, report_checkpoint_name(x->reason));
	json_key(j, "alive");
	json_bool(j, x->alive);
	json_key(j, "untraced");
	json_bool(j, x->untraced);
	json_key(j, "records");
	json_u64(j, x->records);
	json_key(j, "lost");
	json_u64(j, x->lost);
	json_key(j, "malformed");
	json_u64(j, x->malformed);
	json_key(j, "refused");
	json_u64(j, x->refused);
	json_key(j, "resyncs");
	json_u64(j, x->resyncs);
	json_end_object(j);
}

static void stream(struct json *j, const struct report *r)
{
	const struct report_stream *s = &r->stream;
	json_key(j, "stream");
	if (!r->has_stream) {
		json_null(j);
		return;
	}
	json_object(j);
	json_key(j, "records");
	json_u64(j, s->records);
	json_key(j, "failed_calls");
	json_u64(j, s->failed_calls);
	json_key(j, "lost");
	json_u64(j, s->lost);
	json_key(j, "malformed");
	json_u64(j, s->malformed);
	json_key(j, "refused");
	json_u64(j, s->refused);
	json_key(j, "resyncs");
	json_u64(j, s->resyncs);
	json_key(j, "intercepted_bytes");
	json_u64(j, s->intercepted_bytes);
	json_key(j, "proc_only_bytes");
	json_u64(j, s->proc_only_bytes);
	json_end_object(j);
}

void report_json(FILE *f, const struct report *r)
{
	struct json j;
	json_init(&j, f);
	json_object(&j);
	json_key(&j, "schema");
	json_string(&j, "ptshare.report");
	json_key(&j, "version");
	json_u64(&j, REPORT_SCHEMA_VERSION);
	json_key(&j, "command");
	json_string(&j, r->command);
	json_key(&j, "page_size");
	json_u64(&j, MM_PAGE_SIZE);
	policies(&j, r);
	totals(&j, r);
	json_key(&j, "processes");
	json_array(&j);
	for (size_t i = 0; i < r->nrows; i++)
		process(&j, r, &r->rows[i]);
	json_end_array(&j);
	json_key(&j, "min_mapping_bytes");
	json_u64(&j, r->min_mapping);
	json_key(&j, "mappings");
	json_array(&j);
	for (size_t i = 0; i < r->nmaps; i++)
		mapping(&j, r, &r->maps[i]);
	json_end_array(&j);
	json_key(&j, "final_checkpoints");
	json_array(&j);
	for (size_t i = 0; i < r->nfinals; i++)
		final_checkpoint(&j, &r->finals[i]);
	json_end_array(&j);
	stream(&j, r);
	json_key(&j, "not_modelled");
	json_array(&j);
	for (size_t i = 0; i < r->nskips; i++) {
		const struct report_skip *s = &r->skips[i];
		json_object(&j);
		json_key(&j, "pid");
		json_u64(&j, s->pid);
		json_key(&j, "errno");
		json_i64(&j, -s->err);
		json_key(&j, "what");
		json_string(&j, s->what);
		json_end_object(&j);
	}
	json_end_array(&j);
	json_end_object(&j);
}
