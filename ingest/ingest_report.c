/* SPDX-License-Identifier: MIT */
/* The report of a run: the objects' names and call sites the ingest keeps,
 * the peak of today's tables, and every process at its last checkpoint. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ingest_internal.h"
#include "report/symbols.h"

/* The index of names holds 1 + a position in g->names (an item is never
 * NULL); the key carries the array to compare with. */
struct name_key {
	const struct ingest *g;
	const struct mm_object_id *id;
};

static bool name_is(const void *item, const void *key)
{
	const struct name_key *k = key;
	const struct mm_object_id *a = &k->g->names[(uintptr_t)item - 1].id;
	return a->kind == k->id->kind && a->dev == k->id->dev && a->ino == k->id->ino;
}

struct named *ingest_named(const struct ingest *g,
			   const struct mm_object_id *id)
{
	const struct name_key k = { g, id };
	void *item = ptr_map_get(&g->name_index, mm_object_id_hash(id), name_is, &k);
	return item ? &g->names[(uintptr_t)item - 1] : NULL;
}

const char *ingest_object_name(const struct ingest *g,
			       const struct mm_object_id *id)
{
	const struct named *n = ingest_named(g, id);
	return n ? n->name : NULL;
}

void ingest_name_object(struct ingest *g, const struct mm_object_id *id,
			const char *name, size_t len)
{
	char *copy = ingest_object_name(g, id) ? NULL : strndup(name, len);
	if (!copy || grow_array((void **)&g->names, &g->cap_names, g->nnames + 1,
				sizeof(*g->names)) ||
	    ptr_map_put(&g->name_index, mm_object_id_hash(id),
			(void *)(uintptr_t)(g->nnames + 1))) {
		if (copy || !ingest_object_name(g, id))
			ingest_out_of_memory(g);
		free(copy);
		return;
	}
	g->names[g->nnames++] = (struct named){ .id = *id, .name = copy };
}

/*
 * The names of memory that is no file (shmem, SysV, hugetlb) that nothing
 * maps any more: every process makes a memfd of its own (the shim's ring,
 * and many programs' own), which a run left on would name without end.
 * Files stay named (call sites name their code).  A reading names again
 * what it meets.  Pruned when the names doubled since: O(1) a name.
 */
#define NAMES_PRUNE_MIN 1024

void ingest_names_prune(struct ingest *g)
{
	if (g->nnames < g->names_prune_at || g->nnames < NAMES_PRUNE_MIN)
		return;
	size_t kept = 0;
	ptr_map_free(&g->name_index);
	for (size_t i = 0; i < g->nnames; i++) {
		struct named n = g->names[i];
		if (n.id.kind != MM_OBJ_FILE &&
		    !mm_world_maps_object(g->ws->w[0], &n.id)) {
			free(n.name);
			continue;
		}
		g->names[kept] = n;
		if (ptr_map_put(&g->name_index, mm_object_id_hash(&n.id),
				(void *)(uintptr_t)(kept + 1)))
			ingest_out_of_memory(g);
		kept++;
	}
	g->nnames = kept;
	g->names_prune_at = 2 * kept;
}

/* The report's question: which call made pid's mapping at addr.  A file
 * the checkpoints never named is "". */
static bool site_of_mapping(void *ingest, uint32_t pid, uint64_t addr,
			    struct report_site *out)
{
	struct ingest *g = ingest;
	struct session *s = ingest_session_of(g, (int32_t)pid);
	size_t n = 0;
	const struct callsite_frame *f =
		s ? ingest_callsites_get(&g->callsites,
					 ingest_site_ranges_at(&s->sites, addr),
					 &n)
		  : NULL;
	if (!f)
		return false;
	out->n = n;
	for (size_t i = 0; i < n; i++) {
		const char *name = ingest_object_name(g, &f[i].obj);
		out->f[i] = (struct report_frame){
			.object = f[i].obj.kind == MM_OBJ_ANON ? NULL : name ? name : "",
			.offset = f[i].offset,
		};
	}
	return true;
}

/* Shared anonymous memory has no file: its objects are named here, when a
 * report is made, from the mappings in the worlds, rather than each kept
 * from its mmap on (a program may make millions of them over a run). */
static int name_shared_anon(const struct mm_vma_info *v, void *arg)
{
	struct ingest *g = arg;
	static const char name[] = "[shared anonymous]";
	if (v->obj.dev != SYNTH_DEV || !(v->flags & MM_VMA_SHARED))
		return 0;
	if (grow_array((void **)&g->objects, &g->cap_objects, g->nobjects + 1,
		       sizeof(*g->objects)))
		return -ENOMEM;
	g->objects[g->nobjects++] = (struct report_object){ v->obj, name };
	return 0;
}

/* The report input of the processes in the worlds now. */
static int current_input(struct ingest *g, struct report_input *in,
			 const char *command)
{
	free(g->procs);
	g->procs = calloc(g->nsess + 1, sizeof(*g->procs));
	g->nobjects = 0;
	if (!g->procs || grow_array((void **)&g->objects, &g->cap_objects,
				    g->nnames + 1, sizeof(*g->objects))) {
		ingest_out_of_memory(g);
		return -ENOMEM;
	}
	size_t n = 0;
	for (size_t i = 0; i < g->nsess; i++)
		if (g->sess[i]->in_model)
			g->procs[n++] = g->sess[i]->last.proc;
	for (size_t i = 0; i < g->nnames; i++)
		g->objects[g->nobjects++] = (struct report_object){ g->names[i].id,
								    g->names[i].name };
	for (size_t i = 0; i < n; i++)
		if (mm_proc_vmas(g->ws->w[0], g->procs[i].pid, name_shared_anon, g) ==
		    -ENOMEM) {
			ingest_out_of_memory(g);
			return -ENOMEM;
		}
	*in = (struct report_input){
		.command = command, .group_by = g->group_by, .flames = g->flames,
		.ws = g->ws, .procs = g->procs, .nprocs = n,
		.objects = g->objects, .nobjects = g->nobjects,
		.min_mapping = MM_SPAN(PT_PTE),
		.site_of = site_of_mapping, .site_ctx = g,
	};
	return 0;
}

/* Processes whose report is cheap enough to take at every new peak (a
 * PostgreSQL server's 14 to 40, an apache's first 64). */
#define PEAK_FREE_PROCESSES 64

/*
 * Keeps the report of the moment the workload held the most tables today:
 * the steady state a user asks about, before processes start to exit.
 * A capture is a report of every process, so past PEAK_FREE_PROCESSES one
 * waits for a record per process beyond them since the last (unless
 * always): a workload that keeps rising (a fork storm of a thousand, each
 * exit's reading a new peak) then pays a constant per record, not the
 * square of its processes, and a replay, counting the same records, takes
 * the same peaks.  A higher moment passed by is said
 * (stream.peak_skipped_tables).
 */
/* Every world's tables, hashed (FNV-1a). */
static uint64_t worlds_tables(const struct ingest *g)
{
	uint64_t h = 14695981039346656037ull, t[PT_NR_LEVELS];
	for (size_t k = 0; k < g->ws->n; k++) {
		mm_world_tables(g->ws->w[k], t);
		h = (h ^ report_sum3(t)) * 1099511628211ull;
	}
	return h;
}

static bool unread_in_worlds(const struct ingest *g)
{
	for (size_t i = 0; i < g->nsess; i++)
		if (g->sess[i]->in_model && g->sess[i]->unread)
			return true;
	return false;
}

void ingest_capture_peak(struct ingest *g, bool always)
{
	uint64_t t[PT_NR_LEVELS];
	mm_world_tables(g->ws->w[0], t);
	uint64_t total = report_sum3(t);
	uint64_t *skipped = &g->stream.peak_skipped_tables;
	struct report_input in;
	struct report r;
	/* A moment only as high, with every world's tables as many, keeps
	 * the first: PostgreSQL's backends coming and going (pgbench -C) tie
	 * it at every exit, and each capture is a report of every process in
	 * every world.  Another world may still change beneath linux's count
	 * (cow-pte's copies): that moment is taken. */
	uint64_t worlds = worlds_tables(g);
	if (g->peak.nrows && (total < g->peak_tables ||
			      (total == g->peak_tables &&
			       worlds == g->peak_worlds && !always)))
		return;
	if (g->peak.nrows && !always &&
	    g->since_peak + PEAK_FREE_PROCESSES < g->nsess) {
		if (total > g->peak_tables && total > *skipped)
			*skipped = total;
		return;
	}
	/* A process in the worlds that no reading has checked yet (a forked
	 * child is its parent's copy until its first: readings_owed.c) has
	 * no VmPTE to hold its model to: only a moment without one is
	 * taken. */
	if (!always && unread_in_worlds(g)) {
		if (total > g->peak_tables && total > *skipped)
			*skipped = total;
		return;
	}
	if (current_input(g, &in, "run") || report_build(&r, &in))
		return;
	report_free(&g->peak);
	g->peak = r;
	g->peak_tables = total;
	g->peak_worlds = worlds;
	g->peak_symbolized = false;
	g->since_peak = 0;
	if (*skipped <= total)
		*skipped = 0;
}

/* The series' point of the moment: the processes in the worlds, their
 * VmPTE as last read, every world's tables.  A live report takes none:
 * its round of readings may be only half over, and a replay would not
 * take it there.  Nor a moment with a process no reading has checked yet
 * (as the peak): the VmPTE beside the model would be short of its own. */
static void series_point(struct ingest *g)
{
	struct report_point pt = {
		.t_ns = g->reading_ns > g->first_ns ? g->reading_ns - g->first_ns : 0,
	};
	for (size_t i = 0; i < g->nsess; i++) {
		const struct session *s = g->sess[i];
		if (!s->in_model)
			continue;
		if (s->unread)
			return;
		pt.processes++;
		if (s->last.proc.vmpte_kb > 0)
			pt.vmpte_kb += (uint64_t)s->last.proc.vmpte_kb;
	}
	report_point_tables(&pt, g->ws);
	if (report_series_add(&g->series, &pt))
		ingest_out_of_memory(g);
}

void ingest_readings_over(struct ingest *g, bool always)
{
	if (g->series_due)
		series_point(g);
	if (g->peak_due || always)
		ingest_capture_peak(g, always);
	g->peak_due = g->series_due = false;
}

/* The peak as it stands, with every process at its last checkpoint: the
 * finals are replaced, and the call sites named once per peak (from the
 * files as they are when it is first reported), so that reporting again
 * changes nothing and keeps nothing more. */
static const struct report *report_of_peak(struct ingest *g)
{
	size_t n = g->nfinals + g->nsess;
	struct report_final *all = calloc(n + 1, sizeof(*all));
	if (all) {
		struct report_stream st = g->stream;
		if (g->nfinals)
			memcpy(all, g->finals, g->nfinals * sizeof(*g->finals));
		for (size_t i = 0; i < g->nsess; i++)
			all[g->nfinals + i] = ingest_final_of(g, g->sess[i],
						       !g->sess[i]->gone);
		/* A process of a user not served, which ran untraced, is a
		 * connection refused for its user: the socket's mode refused
		 * it before the daemon could (docs/daemon.md, Access). */
		for (size_t i = 0; i < n; i++)
			st.refused_user += all[i].untraced_why == REPORT_UNTRACED_USER;
		report_set_finals(&g->peak, all, n, &g->folded, &st);
		free(all);
	}
	if (report_set_series(&g->peak, &g->series))
		ingest_out_of_memory(g);
	if (!g->peak_symbolized &&
	    (g->symbols || (g->symbols = report_symbols_new()))) {
		report_symbolize(&g->peak, g->symbols);
		ingest_check_build_ids(g, &g->peak);
		g->peak_symbolized = true;
	}
	return &g->peak;
}

void ingest_progress(const struct ingest *g, struct pts_heartbeat *hb)
{
	uint64_t t[PT_NR_LEVELS], n = 0;
	mm_world_tables(g->ws->w[0], t);
	for (size_t i = 0; i < g->nsess; i++)
		n += g->sess[i]->in_model;
	__atomic_store_n(&hb->processes, n, __ATOMIC_RELAXED);
	__atomic_store_n(&hb->records, g->stream.records, __ATOMIC_RELAXED);
	__atomic_store_n(&hb->tables, report_sum3(t), __ATOMIC_RELAXED);
}

void ingest_report_options(struct ingest *g, enum report_group_by by,
			   bool flames)
{
	g->group_by = by;
	g->flames = flames;
}

const struct report *ingest_report(struct ingest *g)
{
	ingest_readings_over(g, true);
	return report_of_peak(g);
}

const struct report *ingest_report_now(struct ingest *g)
{
	/* A reading over is the peak's already: the next record would take
	 * it before anything changes. */
	if (g->peak_due) {
		g->peak_due = false;
		ingest_capture_peak(g, false);
	}
	return report_of_peak(g);
}
