/* SPDX-License-Identifier: MIT */
/* The report as JSON: the schema is docs/report-json.md. */
#include <string.h>

#include "lib/json.h"
#include "report.h"

#define REPORT_SCHEMA_VERSION 1

static const char *const level_name[PT_NR_LEVELS] = { "pte", "pmd", "pud" };

static void levels(struct json *j, const char *key, const uint64_t *v)
{
	json_key(j, key);
	json_object(j);
	for (unsigned l = 0; l < PT_NR_LEVELS; l++) {
		json_member_u64(j, level_name[l], v[l]);
	}
	json_end_object(j);
}

void report_json_by_policy(struct json *j, const char *key,
			   const struct report *r,
			   void (*fn)(struct json *j, size_t k, const void *arg),
			   const void *arg)
{
	json_key(j, key);
	json_object(j);
	for (size_t k = 0; k < r->npol; k++) {
		json_key(j, r->pol[k].label);
		json_object(j);
		fn(j, k, arg);
		json_end_object(j);
	}
	json_end_object(j);
}

/* "What would help": the policies ranked by what they save. */
static void help(struct json *j, const struct report *r)
{
	struct report_help h[MM_WORLDS_MAX];
	size_t n = report_help(r, h);
	json_key(j, "help");
	json_array(j);
	for (size_t i = 0; i < n; i++) {
		json_object(j);
		json_member_string(j, "policy", r->pol[h[i].k].label);
		json_member_i64(j, "saved_bytes", h[i].saved_bytes);
		json_member_double(j, "saved_percent", h[i].saved_pct);
		json_member_i64(j, "faults_avoided", h[i].faults_avoided);
		json_member_i64(j, "fork_tables_avoided", h[i].fork_tables_avoided);
		json_member_i64(j, "fork_pages_avoided", h[i].fork_pages_avoided);
		json_member_u64(j, "deferred_copies", h[i].deferred_copies);
		json_member_string(j, "assumption", h[i].assumption);
		json_end_object(j);
	}
	json_end_array(j);
}

static void policies(struct json *j, const struct report *r)
{
	static const char *const scope[] = { "none", "file", "hugetlb-shared",
					     "shmem-huge-shared", "mshare" };
	static const char *const match[] = { "same-range", "object-slot" };
	json_key(j, "policies");
	json_array(j);
	for (size_t k = 0; k < r->npol; k++) {
		const struct mm_policy *p = &r->pol[k].p;
		json_object(j);
		json_member_string(j, "label", r->pol[k].label);
		json_member_string(j, "name", p->name);
		json_key(j, "levels");
		json_array(j);
		for (unsigned l = 0; l < PT_NR_LEVELS; l++)
			if (p->levels & (1u << l))
				json_string(j, level_name[l]);
		json_end_array(j);
		json_member_string(j, "scope", scope[p->scope]);
		json_member_string(j, "match", p->scope == MM_SCOPE_NONE ? "none" : match[p->match]);
		json_member_bool(j, "link_at_fork", p->link_at_fork);
		json_member_bool(j, "huge_shmem", p->huge_shmem);
		if (p->mshare) {
			json_member_u64(j, "mshare_min", p->mshare_min);
			json_key(j, "mshare_objects");
			json_array(j);
			for (unsigned i = 0; i < p->mshare_nobj; i++)
				json_u64(j, p->mshare_ino[i]);
			json_end_array(j);
		}
		if (p->assumption)
			json_member_string(j, "assumption", p->assumption);
		json_end_object(j);
	}
	json_end_array(j);
}

/* The totals under policy k of the report arg. */
static void policy_totals(struct json *j, size_t k, const void *arg)
{
	const struct report *r = arg;
	uint64_t today = report_sum3(r->totals[0].distinct) * MM_PAGE_SIZE;
	uint64_t shared[PT_NR_LEVELS] = { 0 };
	for (size_t i = 0; i < r->nrows; i++)
		for (unsigned l = 0; l < PT_NR_LEVELS; l++)
			shared[l] += r->rows[i].s[k].shared[l];
	uint64_t bytes = report_sum3(r->totals[k].distinct) * MM_PAGE_SIZE;
	levels(j, "distinct", r->totals[k].distinct);
	levels(j, "linked", r->totals[k].linked);
	levels(j, "shared", shared);
	json_member_u64(j, "bytes", bytes);
	json_member_i64(j, "saved_bytes", (int64_t)today - (int64_t)bytes);
	if (r->pol[k].p.mshare) {
		struct report_mshare m;
		report_mshare_cover(r, k, &m);
		levels(j, "host", r->totals[k].host);
		json_member_u64(j, "process_tables", m.process_tables);
		json_member_u64(j, "private_pte_tables", m.private_pte_tables);
	}
	json_key(j, "findings");
	json_object(j);
	for (size_t i = 0; i < r->pol[k].nfindings; i++)
		json_member_u64(j, r->pol[k].findings[i].name,
				r->pol[k].findings[i].count);
	json_end_object(j);
}

static void totals(struct json *j, const struct report *r)
{
	json_key(j, "totals");
	json_object(j);
	json_member_u64(j, "processes", r->nrows);
	json_member_u64(j, "exact_processes", r->exact);
	json_member_u64(j, "kernel_vmpte_kb", r->kernel_kb);
	json_member_u64(j, "model_kb", r->model_kb);
	report_json_by_policy(j, "policies", r, policy_totals, r);
	json_end_object(j);
}

/* A span's PTE tables under a policy, as regions and mappings give them. */
static void span_tables(struct json *j, uint64_t tables, uint64_t shared,
			enum mm_reason reason)
{
	json_member_u64(j, "pte_tables", tables);
	json_member_u64(j, "shared_tables", shared);
	json_member_string(j, "reason", mm_reason_name(reason));
}

/* The region arg under policy k. */
static void region_policy(struct json *j, size_t k, const void *arg)
{
	const struct report_region *g = arg;
	span_tables(j, g->pol[k].tables, g->pol[k].shared, g->pol[k].reason);
}

/* The process's address space, region by region (report.h). */
static void regions(struct json *j, const struct report *r,
		    const struct report_row *row)
{
	json_key(j, "regions");
	json_array(j);
	for (size_t i = 0; i < row->nregions; i++) {
		const struct report_region *g = &row->regions[i];
		json_object(j);
		json_member_u64(j, "start", g->start);
		json_member_u64(j, "end", g->end);
		json_member_u64(j, "mappings", g->nmaps);
		report_json_by_policy(j, "policies", r, region_policy, g);
		json_end_object(j);
	}
	json_end_array(j);
}

static void member_string_or_null(struct json *j, const char *key,
				  const char *v)
{
	json_key(j, key);
	if (v)
		json_string(j, v);
	else
		json_null(j);
}

static void call_site(struct json *j, const struct report_site *site)
{
	json_key(j, "call_site");
	json_array(j);
	for (size_t i = 0; i < site->n; i++) {
		const struct report_frame *f = &site->f[i];
		json_object(j);
		member_string_or_null(j, "object", f->object);
		json_member_u64(j, "offset", f->offset);
		member_string_or_null(j, "function", f->function);
		member_string_or_null(j, "file", f->file);
		json_key(j, "line");
		if (f->line)
			json_u64(j, f->line);
		else
			json_null(j);
		json_end_object(j);
	}
	json_end_array(j);
}

/* The process of the row arg under policy k. */
static void process_policy(struct json *j, size_t k, const void *arg)
{
	const struct report_row *row = arg;
	const struct mm_proc_stats *s = &row->s[k];
	uint64_t today = report_sum3(row->s[0].tables) * MM_PAGE_SIZE;
	levels(j, "tables", s->tables);
	levels(j, "shared", s->shared);
	json_member_double(j, "pss_bytes", s->pss_bytes);
	json_member_double(j, "saved_bytes", (double)today - s->pss_bytes);
	json_member_u64(j, "faults", s->faults);
	json_member_u64(j, "faults_observed", s->faults_observed);
	json_member_u64(j, "fork_tables_copied", s->fork_tables_copied);
	json_member_u64(j, "fork_pages_copied", s->fork_pages_copied);
	json_member_u64(j, "fork_tables_linked", s->fork_tables_linked);
	json_member_u64(j, "cow_copies", s->cow_copies);
}

static void process(struct json *j, const struct report *r,
		    const struct report_row *row)
{
	json_object(j);
	json_member_u64(j, "pid", row->proc->pid);
	json_member_u64(j, "ppid", row->proc->ppid);
	json_member_u64(j, "uid", row->proc->uid);
	json_member_string(j, "command", row->proc->name);
	json_key(j, "vmpte_kb");
	if (row->proc->vmpte_kb >= 0)
		json_i64(j, row->proc->vmpte_kb);
	else
		json_null(j);
	json_member_bool(j, "stable", row->proc->stable);
	member_string_or_null(j, "cgroup", *row->proc->cgroup ? row->proc->cgroup
							     : NULL);
	report_json_by_policy(j, "policies", r, process_policy, row);
	regions(j, r, row);
	json_end_object(j);
}

/* The group arg under policy k: its share, and what that saves. */
static void group_policy(struct json *j, size_t k, const void *arg)
{
	const struct report_group *g = arg;
	json_member_double(j, "pss_bytes", g->pss[k]);
	json_member_double(j, "saved_bytes", (double)g->model_kb * 1024 - g->pss[k]);
}

/* --group-by: "group_by" (null without) and the groups. */
static void groups(struct json *j, const struct report *r)
{
	member_string_or_null(j, "group_by", report_group_by_name(r->group_by));
	json_key(j, "groups");
	json_array(j);
	for (size_t i = 0; i < r->ngroups; i++) {
		const struct report_group *g = &r->groups[i];
		json_object(j);
		json_member_string(j, "group", g->key);
		json_member_u64(j, "processes", g->nprocs);
		json_member_u64(j, "exact_processes", g->exact);
		json_member_u64(j, "kernel_vmpte_kb", g->kernel_kb);
		json_member_u64(j, "model_kb", g->model_kb);
		report_json_by_policy(j, "policies", r, group_policy, g);
		json_end_object(j);
	}
	json_end_array(j);
}

/* The mapping arg under policy k. */
static void mapping_policy(struct json *j, size_t k, const void *arg)
{
	const struct report_mapping *m = arg;
	span_tables(j, m->pol[k].tables, m->pol[k].shared, m->pol[k].reason);
	json_member_string(j, "why", report_why_text(m, k));
}

static void mapping(struct json *j, const struct report *r,
		    const struct report_mapping *m)
{
	char prot[4] = { m->prot & MM_PROT_READ ? 'r' : '-',
			 m->prot & MM_PROT_WRITE ? 'w' : '-',
			 m->prot & MM_PROT_EXEC ? 'x' : '-', 0 };
	json_object(j);
	json_member_string(j, "kind", report_kind_name(m->obj.kind));
	json_member_u64(j, "dev", m->obj.dev);
	json_member_u64(j, "ino", m->obj.ino);
	json_member_string(j, "name", m->name);
	json_member_u64(j, "start", m->start);
	json_member_u64(j, "end", m->end);
	json_member_u64(j, "offset", m->offset);
	json_member_string(j, "prot", prot);
	json_member_bool(j, "shared", m->flags & MM_VMA_SHARED);
	json_member_bool(j, "anon_pages", m->anon_pages);
	json_member_u64(j, "processes", m->nprocs);
	json_member_u64(j, "first_pid", m->first_pid);
	report_json_by_policy(j, "policies", r, mapping_policy, m);
	call_site(j, &m->site);
	json_end_object(j);
}

static const char *fault_mode_name(uint32_t mode)
{
	static const char *const names[] = { "off", "table", "all" };
	return mode < 3 ? names[mode] : "?";
}

/* The faults of the final checkpoint arg under policy k. */
static void final_faults(struct json *j, size_t k, const void *arg)
{
	const struct report_final *x = arg;
	json_member_u64(j, "seen", x->faults[k]);
	json_member_u64(j, "pagemap", x->observed[k]);
}

/* The process's tables under policy k at the final checkpoint arg. */
static void final_tables(struct json *j, size_t k, const void *arg)
{
	const struct report_final *x = arg;
	json_member_i64(j, "tables_kb", x->policy_kb[k]);
}

/* The ranges the process registered with a userfaultfd of its own. */
static void own_uffd(struct json *j, const struct report_final *x)
{
	json_key(j, "own_userfaultfd");
	json_object(j);
	json_member_u64(j, "ranges", x->own_uffd_ranges);
	json_member_u64(j, "bytes", x->own_uffd_bytes);
	json_key(j, "first");
	json_array(j);
	for (uint64_t i = 0; i < x->own_uffd_ranges && i < REPORT_OWN_UFFD_MAX;
	     i++) {
		json_object(j);
		json_member_u64(j, "start", x->own_uffd[i].start);
		json_member_u64(j, "end", x->own_uffd[i].end);
		json_end_object(j);
	}
	json_end_array(j);
	json_end_object(j);
}

static void final_checkpoint(struct json *j, const struct report *r,
			     const struct report_final *x)
{
	json_object(j);
	json_member_u64(j, "pid", x->proc.pid);
	json_member_u64(j, "ppid", x->proc.ppid);
	json_member_u64(j, "uid", x->proc.uid);
	json_member_string(j, "command", x->proc.name);
	json_member_i64(j, "vmpte_kb", x->proc.vmpte_kb);
	json_member_i64(j, "model_kb", x->model_kb);
	json_member_bool(j, "stable", x->proc.stable);
	json_member_string(j, "checkpoint", report_checkpoint_name(x->reason));
	json_member_bool(j, "alive", x->alive);
	json_member_bool(j, "untraced", x->untraced);
	json_key(j, "untraced_why");
	if (x->untraced_why)
		json_string(j, report_untraced_name(x->untraced_why));
	else
		json_null(j);
	json_member_u64(j, "records", x->records);
	json_member_u64(j, "lost", x->lost);
	json_member_u64(j, "malformed", x->malformed);
	json_member_u64(j, "refused", x->refused);
	json_key(j, "refused_why");
	if (x->refused_why[0])
		json_string(j, x->refused_why);
	else
		json_null(j);
	json_member_u64(j, "resyncs", x->resyncs);
	json_key(j, "dropped");
	if (x->dropped)
		json_string(j, report_drop_name(x->dropped));
	else
		json_null(j);
	json_member_string(j, "fault_mode", fault_mode_name(x->fault_mode));
	json_member_i64(j, "fault_errno", x->fault_err);
	report_json_by_policy(j, "models", r, final_tables, x);
	report_json_by_policy(j, "faults", r, final_faults, x);
	own_uffd(j, x);
	json_end_object(j);
}

/* The folded processes' sums under policy k (report_folded). */
static void folded_tables(struct json *j, size_t k, const void *arg)
{
	json_member_i64(j, "tables_kb", ((const struct report_folded *)arg)->policy_kb[k]);
}

static void folded_faults(struct json *j, size_t k, const void *arg)
{
	const struct report_folded *f = arg;
	json_member_u64(j, "seen", f->faults[k]);
	json_member_u64(j, "pagemap", f->observed[k]);
}

static void folded(struct json *j, const struct report *r)
{
	const struct report_folded *f = &r->folded;
	json_key(j, "final_checkpoints_folded");
	if (!f->processes) {
		json_null(j);
		return;
	}
	json_object(j);
	json_member_u64(j, "processes", f->processes);
	json_member_u64(j, "records", f->records);
	json_member_u64(j, "resyncs", f->resyncs);
	json_member_u64(j, "without_userfaultfd", f->no_uffd);
	json_member_i64(j, "vmpte_kb", f->vmpte_kb);
	report_json_by_policy(j, "models", r, folded_tables, f);
	report_json_by_policy(j, "faults", r, folded_faults, f);
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
	json_member_u64(j, "records", s->records);
	json_member_u64(j, "failed_calls", s->failed_calls);
	json_member_u64(j, "lost", s->lost);
	json_member_u64(j, "malformed", s->malformed);
	json_member_u64(j, "refused", s->refused);
	json_member_u64(j, "resyncs", s->resyncs);
	json_member_u64(j, "readings_raced", s->readings_raced);
	json_member_u64(j, "readings_at_rest", s->readings_at_rest);
	json_member_u64(j, "superseded", s->superseded);
	json_member_u64(j, "connections", s->connections);
	json_member_u64(j, "connections_dropped", s->dropped);
	json_member_u64(j, "connections_refused_user", s->refused_user);
	json_member_u64(j, "connections_refused_full", s->refused_full);
	json_member_u64(j, "connections_refused_user_full", s->refused_user_full);
	json_member_u64(j, "intercepted_bytes", s->intercepted_bytes);
	json_member_u64(j, "proc_only_bytes", s->proc_only_bytes);
	json_member_string(j, "fault_mode", fault_mode_name(s->fault_mode));
	json_member_u64(j, "faults_outside", s->faults_outside);
	json_member_u64(j, "out_of_memory", s->out_of_memory);
	json_member_u64(j, "peak_skipped_tables", s->peak_skipped_tables);
	json_key(j, "cut_short");
	if (s->cut_why[0]) {
		json_object(j);
		json_member_string(j, "why", s->cut_why);
		json_member_u64(j, "processes_running", s->cut_running);
		json_member_bool(j, "trace_torn", s->cut_torn);
		json_end_object(j);
	} else {
		json_null(j);
	}
	json_end_object(j);
}

static void build_ids_changed(struct json *j, const struct report *r)
{
	json_key(j, "build_ids_changed");
	json_array(j);
	for (size_t i = 0; i < r->nbuild_ids; i++) {
		const struct report_build_id *b = &r->build_ids[i];
		json_object(j);
		json_member_string(j, "object", b->object);
		json_member_string(j, "trace", b->trace);
		member_string_or_null(j, "here", *b->here ? b->here : NULL);
		json_end_object(j);
	}
	json_end_array(j);
}

void report_json_value(struct json *j, const struct report *r)
{
	json_object(j);
	json_member_string(j, "schema", "ptshare.report");
	json_member_u64(j, "version", REPORT_SCHEMA_VERSION);
	json_member_string(j, "command", r->command);
	json_member_u64(j, "page_size", MM_PAGE_SIZE);
	report_run_json(j, r);
	help(j, r);
	policies(j, r);
	totals(j, r);
	report_series_json(j, r);
	json_key(j, "processes");
	json_array(j);
	for (size_t i = 0; i < r->nrows; i++)
		process(j, r, &r->rows[i]);
	json_end_array(j);
	groups(j, r);
	json_member_u64(j, "min_mapping_bytes", r->min_mapping);
	json_key(j, "mappings");
	json_array(j);
	for (size_t i = 0; i < r->nmaps; i++)
		mapping(j, r, &r->maps[i]);
	json_end_array(j);
	json_key(j, "final_checkpoints");
	json_array(j);
	for (size_t i = 0; i < r->nfinals; i++)
		final_checkpoint(j, r, &r->finals[i]);
	json_end_array(j);
	folded(j, r);
	stream(j, r);
	json_key(j, "not_modelled");
	json_array(j);
	for (size_t i = 0; i < r->nskips; i++) {
		const struct report_skip *s = &r->skips[i];
		json_object(j);
		json_member_u64(j, "pid", s->pid);
		json_member_i64(j, "errno", -s->err);
		json_member_string(j, "what", s->what);
		json_end_object(j);
	}
	json_end_array(j);
	build_ids_changed(j, r);
	json_end_object(j);
}

void report_json(FILE *f, const struct report *r)
{
	struct json j;
	json_init(&j, f);
	report_json_value(&j, r);
}
