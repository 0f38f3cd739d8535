/* SPDX-License-Identifier: MIT */
/* The report for a terminal: totals, then processes, then mappings. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ptshare/wire.h"
#include "report.h"

/* "12.3 MiB": at most 9 characters. */
static const char *human(uint64_t bytes, char *buf, size_t len)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)bytes;
	unsigned u = 0;
	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", v, unit[u]);
	return buf;
}

const char *report_human(uint64_t bytes, char *buf, size_t len)
{
	return human(bytes, buf, len);
}

static uint64_t view(const struct mm_proc_stats *s)
{
	return s->tables[PT_PTE] + s->tables[PT_PMD] + s->tables[PT_PUD];
}

static void totals(FILE *f, const struct report *r)
{
	char a[16], b[16];
	uint64_t today = report_sum3(r->totals[0].distinct) * MM_PAGE_SIZE;
	fprintf(f, "%-26s %12s %10s %10s %10s\n", "policy", "table pages",
		"memory", "shared", "saved");
	if (r->nrows)
		fprintf(f, "%-26s %12" PRIu64 " %10s\n", "kernel VmPTE (sum)",
			r->kernel_kb / 4, human(r->kernel_kb * 1024, a, sizeof(a)));
	for (size_t k = 0; k < r->npol; k++) {
		uint64_t pages = report_sum3(r->totals[k].distinct);
		uint64_t shared = 0;
		for (size_t i = 0; i < r->nrows; i++)
			shared += report_sum3(r->rows[i].s[k].shared);
		uint64_t bytes = pages * MM_PAGE_SIZE;
		fprintf(f, "%-26s %12" PRIu64 " %10s",
			k ? r->pol[k].label : "linux (today, model)", pages,
			human(bytes, a, sizeof(a)));
		if (k)
			fprintf(f, " %10" PRIu64 " %10s (%.1f%%)", shared,
				human(today - bytes, b, sizeof(b)),
				today ? 100.0 * (double)(today - bytes) / (double)today : 0);
		fputc('\n', f);
	}
	if (r->nrows)
		fprintf(f, "model vs kernel: %zu of %zu processes exact; total "
			"%" PRIu64 " kB modelled, %" PRIu64 " kB in VmPTE (%+.2f%%)\n",
			r->exact, r->nrows, r->model_kb, r->kernel_kb,
			r->kernel_kb ? 100.0 * ((double)r->model_kb - (double)r->kernel_kb) /
					       (double)r->kernel_kb : 0.0);
	if (r->exact < r->nrows && !r->nfinals)
		fputs("(a table with no page present is invisible to /proc: after "
		      "a partial MADV_DONTNEED, or an empty one copied at fork; "
		      "docs/procfs.md)\n", f);
}

/* "What would help", first of all: the policies ranked by what they save,
 * each with what it needs. */
static void help(FILE *f, const struct report *r)
{
	struct report_help h[MM_WORLDS_MAX];
	size_t n = report_help(r, h);
	char a[16];
	if (!n)
		return;
	fputs("what would help (page-table memory saved against today's "
	      "kernel, ranked):\n", f);
	for (size_t i = 0; i < n; i++) {
		int64_t fork = h[i].fork_tables_avoided;
		fprintf(f, "%2zu. %-22s %s%9s (%5.1f%%), %" PRId64 " faults",
			i + 1, r->pol[h[i].k].label,
			h[i].saved_bytes < 0 ? "-" : " ",
			human((uint64_t)(h[i].saved_bytes < 0 ? -h[i].saved_bytes
							      : h[i].saved_bytes),
			      a, sizeof(a)),
			h[i].saved_pct, h[i].faults_avoided);
		/* A table linked at fork hangs from an upper table the child
		 * makes then, where today's kernel makes it at the child's
		 * first fault there: more tables at fork, not more in all. */
		if (fork < 0)
			fprintf(f, " avoided, %" PRId64 " more tables made at fork\n",
				-fork);
		else
			fprintf(f, " and %" PRId64 " fork table copies avoided\n",
				fork);
		if (r->pol[h[i].k].p.cow_pte)
			fprintf(f, "    %" PRIu64 " fork page entries not copied, %"
				PRIu64 " tables copied later, when written\n",
				(uint64_t)(h[i].fork_pages_avoided > 0
						   ? h[i].fork_pages_avoided : 0),
				h[i].deferred_copies);
		fprintf(f, "    %s\n", h[i].assumption);
	}
	fputc('\n', f);
}

/* Under mshare: the host's tables once, what the processes still pay. */
static void mshare_cover(FILE *f, const struct report *r)
{
	char a[16], b[16];
	for (size_t k = 1; k < r->npol; k++) {
		if (!r->pol[k].p.mshare)
			continue;
		struct report_mshare m;
		report_mshare_cover(r, k, &m);
		fprintf(f, "%s: the host holds %" PRIu64 " table pages (%s) once; "
			"the processes still pay %" PRIu64 " (%s) of their own, "
			"%" PRIu64 " PTE tables of them in private mappings, which "
			"mshare cannot hold\n", r->pol[k].label, m.host_tables,
			human(m.host_tables * MM_PAGE_SIZE, a, sizeof(a)),
			m.process_tables,
			human(m.process_tables * MM_PAGE_SIZE, b, sizeof(b)),
			m.private_pte_tables);
	}
}

static int by_today(const void *x, const void *y)
{
	const struct report_row *a = *(const struct report_row *const *)x;
	const struct report_row *b = *(const struct report_row *const *)y;
	uint64_t va = view(&a->s[0]), vb = view(&b->s[0]);
	if (va != vb)
		return va < vb ? 1 : -1;
	return (a->proc->pid > b->proc->pid) - (a->proc->pid < b->proc->pid);
}

static void processes(FILE *f, const struct report *r, size_t top)
{
	const struct report_row **order = malloc((r->nrows + 1) * sizeof(*order));
	if (!order)
		return;
	for (size_t i = 0; i < r->nrows; i++)
		order[i] = &r->rows[i];
	qsort(order, r->nrows, sizeof(*order), by_today);
	size_t n = top && top < r->nrows ? top : r->nrows;
	fprintf(f, "\nprocesses (%zu, by today's tables; kB)\n", r->nrows);
	fprintf(f, "%7s %7s %-15s %7s %7s %5s", "pid", "ppid", "command",
		"VmPTE", "model", "diff");
	for (size_t k = 1; k < r->npol; k++)
		fprintf(f, " | %-22.22s", r->pol[k].label);
	fputc('\n', f);
	fprintf(f, "%53s", "");
	for (size_t k = 1; k < r->npol; k++)
		fprintf(f, " | %7s %7s %6s", "pss", "saved", "shared");
	fputc('\n', f);
	for (size_t i = 0; i < n; i++) {
		const struct report_row *row = order[i];
		uint64_t model = 4 * view(&row->s[0]);
		fprintf(f, "%7" PRIu32 " %7" PRIu32 " %-15.15s ", row->proc->pid,
			row->proc->ppid, row->proc->name);
		if (row->proc->vmpte_kb >= 0)
			fprintf(f, "%7" PRId64 " %7" PRIu64 " %+5" PRId64,
				row->proc->vmpte_kb, model,
				(int64_t)model - row->proc->vmpte_kb);
		else
			fprintf(f, "%7s %7" PRIu64 " %5s", "?", model, "");
		for (size_t k = 1; k < r->npol; k++) {
			double pss = row->s[k].pss_bytes / 1024;
			fprintf(f, " | %7.0f %7.0f %6" PRIu64, pss, (double)model - pss,
				report_sum3(row->s[k].shared));
		}
		fputs(row->proc->stable ? "\n" : "  (changed while read)\n", f);
	}
	if (n < r->nrows)
		fprintf(f, "... %zu more (--top 0 shows all)\n", r->nrows - n);
	free(order);
}

/* --group-by: each group's processes summed, as the processes' rows. */
static void groups(FILE *f, const struct report *r, size_t top)
{
	if (!r->ngroups)
		return;
	size_t n = top && top < r->ngroups ? top : r->ngroups;
	fprintf(f, "\ngroups by %s (%zu, by today's tables; kB)\n",
		report_group_by_name(r->group_by), r->ngroups);
	fprintf(f, "%-30s %5s %7s %7s %5s", "group", "procs", "VmPTE", "model",
		"diff");
	for (size_t k = 1; k < r->npol; k++)
		fprintf(f, " | %-15.15s", r->pol[k].label);
	fputc('\n', f);
	fprintf(f, "%58s", "");
	for (size_t k = 1; k < r->npol; k++)
		fprintf(f, " | %7s %7s", "pss", "saved");
	fputc('\n', f);
	for (size_t i = 0; i < n; i++) {
		const struct report_group *g = &r->groups[i];
		fprintf(f, "%-30.30s %5zu %7" PRIu64 " %7" PRIu64 " %+5" PRId64,
			g->key, g->nprocs, g->kernel_kb, g->model_kb,
			(int64_t)g->model_kb - (int64_t)g->kernel_kb);
		for (size_t k = 1; k < r->npol; k++)
			fprintf(f, " | %7.0f %7.0f", g->pss[k] / 1024,
				(double)g->model_kb - g->pss[k] / 1024);
		fputc('\n', f);
	}
	if (n < r->ngroups)
		fprintf(f, "... %zu more (--top 0 shows all)\n", r->ngroups - n);
}

static void mappings(FILE *f, const struct report *r, size_t top)
{
	char a[16], site[512];
	size_t n = top && top < r->nmaps ? top : r->nmaps;
	fprintf(f, "\nmappings of %s or more (%zu, by today's tables)\n",
		human(r->min_mapping, a, sizeof(a)), r->nmaps);
	for (size_t i = 0; i < n; i++) {
		const struct report_mapping *m = &r->maps[i];
		fprintf(f, "%#14" PRIx64 " %9s %-7s %c%c%c%c %4" PRIu32 " proc %6"
			PRIu64 " PTE tables  %s\n", m->start,
			human(m->end - m->start, a, sizeof(a)),
			report_kind_name(m->obj.kind),
			m->prot & MM_PROT_READ ? 'r' : '-',
			m->prot & MM_PROT_WRITE ? 'w' : '-',
			m->prot & MM_PROT_EXEC ? 'x' : '-',
			m->flags & MM_VMA_SHARED ? 's' : 'p', m->nprocs,
			m->pol[0].tables, *m->name ? m->name : "[anonymous]");
		if (m->site.n)
			fprintf(f, "%16s created at %s\n", "",
				report_frame_text(&m->site.f[0], site, sizeof(site)));
		for (size_t k = 1; k < r->npol; k++)
			fprintf(f, "%16s %-22s %6" PRIu64 " shared: %s\n", "",
				r->pol[k].label, m->pol[k].shared,
				report_why_text(m, k));
	}
	if (n < r->nmaps)
		fprintf(f, "... %zu more (--top 0 shows all)\n", r->nmaps - n);
}

/* ptshare run: every process at its last checkpoint, and what the stream
 * lost on the way.  A model short of a steady VmPTE is missing tables that
 * hold no page: /proc shows pages, not tables, and memory the C library
 * empties itself (a thread's malloc arena trimmed) makes no call the shim
 * sees. */
static void finals(FILE *f, const struct report *r)
{
	static const char unseen[] = ": tables with no page present, which no "
				     "reading shows (docs/procfs.md)";
	if (!report_finals_seen(r))
		return;
	fprintf(f, "\nmodel vs kernel at each process's last checkpoint: %"
		PRIu64 " of %" PRIu64 " exact", r->finals_exact + r->folded.processes,
		report_finals_seen(r));
	if (r->folded.processes)
		fprintf(f, " (%" PRIu64 " of them summed, not listed: exact and "
			"with nothing else to say, they ended once enough were "
			"listed; the JSON's final_checkpoints_folded)",
			r->folded.processes);
	fputc('\n', f);
	for (size_t i = 0; i < r->nfinals; i++) {
		const struct report_final *x = &r->finals[i];
		if (x->model_kb >= 0 && x->model_kb == x->proc.vmpte_kb)
			continue;
		fprintf(f, "%7" PRIu32 " %-15.15s ", x->proc.pid, x->proc.name);
		if (x->model_kb < 0 || x->proc.vmpte_kb < 0)
			fputs("no checkpoint could read it\n", f);
		else
			fprintf(f, "model %" PRId64 " kB, VmPTE %" PRId64
				" kB (%+" PRId64 ") at %s%s\n", x->model_kb,
				x->proc.vmpte_kb, x->model_kb - x->proc.vmpte_kb,
				report_checkpoint_name(x->reason),
				!x->proc.stable ? ", changing while read"
				: x->model_kb < x->proc.vmpte_kb ? unseen : "");
	}
}

/* Faults per policy over every process's life: those seen on a
 * userfaultfd, and first touches only pagemap showed; what sharing avoids. */
static void faults(FILE *f, const struct report *r)
{
	static const char *const mode[] = { "off (pagemap only)",
					    "table (first fault per 2 MiB span)",
					    "all" };
	uint64_t seen[MM_WORLDS_MAX] = { 0 }, touched[MM_WORLDS_MAX] = { 0 };
	uint64_t without = r->folded.no_uffd;
	for (size_t i = 0; i < r->nfinals; i++)
		without += r->finals[i].fault_mode == PTS_FAULTS_OFF;
	for (size_t k = 0; k < r->npol; k++)
		report_finals_faults(r, k, &seen[k], &touched[k]);
	fprintf(f, "page faults: %s", mode[r->stream.fault_mode < 3 ? r->stream.fault_mode : 0]);
	if (without && r->stream.fault_mode != PTS_FAULTS_OFF)
		fprintf(f, "; %" PRIu64 " processes without a userfaultfd (pagemap only)",
			without);
	fprintf(f, "\n  linux: %" PRIu64 " faults seen, %" PRIu64
		" first touches from pagemap\n", seen[0], touched[0]);
	/* Signed: nothing makes a policy's counts the smaller ones. */
	for (size_t k = 1; k < r->npol; k++)
		fprintf(f, "  %s avoids %" PRId64 " of the faults and %" PRId64
			" of the touches\n", r->pol[k].label,
			(int64_t)(seen[0] - seen[k]),
			(int64_t)(touched[0] - touched[k]));
	for (size_t i = 0, shown = 0; i < r->nfinals && shown < 5; i++) {
		const struct report_final *x = &r->finals[i];
		if (x->fault_mode == PTS_FAULTS_OFF && x->fault_err) {
			fprintf(f, "  %" PRIu32 " %s: no userfaultfd: %s%s\n",
				x->proc.pid, x->proc.name, strerror(x->fault_err),
				x->fault_err == EPERM || x->fault_err == EACCES
					? " (docs/run.md: allowing a user /dev/userfaultfd)" : "");
			shown++;
		}
		if (x->own_uffd_ranges) {
			char size[16];
			report_human(x->own_uffd_bytes, size, sizeof(size));
			fprintf(f, "  %" PRIu32 " %s: %" PRIu64 " ranges (%s, the "
				"first at 0x%" PRIx64 ") registered with a userfaultfd "
				"of its own: their faults are its own, not seen\n",
				x->proc.pid, x->proc.name, x->own_uffd_ranges, size,
				x->own_uffd[0].start);
			shown++;
		}
	}
}

/* The clients the daemon hung up on or would not serve (docs/daemon.md,
 * Hostile clients): said only when there were any, with a few of them. */
static void clients(FILE *f, const struct report *r)
{
	const struct report_stream *s = &r->stream;
	uint64_t refused = s->refused_user + s->refused_full + s->refused_user_full;
	if (!s->dropped && !refused)
		return;
	fprintf(f, "connections: %" PRIu64 " served, %" PRIu64 " ended by the "
		"daemon, %" PRIu64 " refused (%" PRIu64 " of users not allowed, "
		"%" PRIu64 " over --max-clients, %" PRIu64 " over "
		"--max-clients-per-user)\n", s->connections, s->dropped, refused,
		s->refused_user, s->refused_full, s->refused_user_full);
	for (size_t i = 0, shown = 0; i < r->nfinals && shown < 5; i++) {
		const struct report_final *x = &r->finals[i];
		if (x->dropped) {
			fprintf(f, "  %" PRIu32 " %s: ended by the daemon: %s\n",
				x->proc.pid, x->proc.name, report_drop_name(x->dropped));
			shown++;
		}
	}
}

/* The processes that ran without the shim, by why (enum report_untraced). */
static void untraced(FILE *f, const struct report *r)
{
	static const char *const what[] = {
		[REPORT_UNTRACED_CLOSED] = "took or closed its connection",
		[REPORT_UNTRACED_EXEC] = "exec'd a static or set-user-ID program, "
					 "or cleared its environment",
		[REPORT_UNTRACED_NO_FD] = "exec'd with no fd free below "
					  "RLIMIT_NOFILE to load it",
		[REPORT_UNTRACED_USER] = "ran as another user, whom the daemon "
					 "does not serve (runuser, su, sudo -u; "
					 "--allow-users)",
	};
	unsigned n[REPORT_UNTRACED_USER + 1] = { 0 }, all = 0;
	const char *sep = " ";
	for (size_t i = 0; i < r->nfinals; i++)
		if (r->finals[i].untraced && r->finals[i].untraced_why <= REPORT_UNTRACED_USER) {
			n[r->finals[i].untraced_why]++;
			all++;
		}
	if (!all)
		return;
	fprintf(f, "%u processes ran without the shim, modelled from /proc only:", all);
	for (size_t k = REPORT_UNTRACED_CLOSED; k <= REPORT_UNTRACED_USER; k++)
		if (n[k]) {
			fprintf(f, "%s%u %s", sep, n[k], what[k]);
			sep = "; ";
		}
	fputc('\n', f);
}

/* --verbose: each process whose records the model refused, and why (the
 * last refusal's reason). */
static void refusals(FILE *f, const struct report *r)
{
	for (size_t i = 0; i < r->nfinals; i++) {
		const struct report_final *x = &r->finals[i];
		if (x->refused)
			fprintf(f, "  %" PRIu32 " %s: %" PRIu64 " refused by the "
				"model, the last: %s\n", x->proc.pid, x->proc.name,
				x->refused, x->refused_why);
	}
}

static void stream(FILE *f, const struct report *r, bool verbose)
{
	const struct report_stream *s = &r->stream;
	char a[16], b[16];
	if (!r->has_stream)
		return;
	fprintf(f, "\nrecords: %" PRIu64 " from the shim (%" PRIu64 " failed "
		"calls), %" PRIu64 " lost, %" PRIu64 " malformed, %" PRIu64
		" refused by the model, %" PRIu64 " resyncs from /proc\n",
		s->records, s->failed_calls, s->lost, s->malformed, s->refused,
		s->resyncs);
	if (verbose)
		refusals(f, r);
	if (s->readings_raced)
		fprintf(f, "  %" PRIu64 " readings of /proc raced a traced call "
			"(taken as they came)\n", s->readings_raced);
	if (s->superseded)
		fprintf(f, "  and %" PRIu64 " on connections a newer one of their "
			"process had replaced (not applied)\n", s->superseded);
	if (s->out_of_memory)
		fprintf(f, "  the ingest ran out of memory %" PRIu64 " times and "
			"dropped what it was keeping: the report misses it\n",
			s->out_of_memory);
	fprintf(f, "mapped: %s seen through interception, %s only through /proc"
		" (the loader's and libc's own mappings)\n",
		human(s->intercepted_bytes, a, sizeof(a)),
		human(s->proc_only_bytes, b, sizeof(b)));
	untraced(f, r);
	clients(f, r);
	faults(f, r);
}

static int by_why(const void *x, const void *y)
{
	const struct report_skip *a = *(const struct report_skip *const *)x;
	const struct report_skip *b = *(const struct report_skip *const *)y;
	int c = strcmp(a->what, b->what);
	return c ? c : (a->pid > b->pid) - (a->pid < b->pid);
}

/* More processes than this not modelled for one reason are one line (a
 * user's snapshot of the machine: every other user's process); the JSON
 * lists each. */
#define SKIPS_ONE_BY_ONE 3

/* What could not be modelled, by reason, then by pid. */
static void not_modelled(FILE *f, const struct report *r)
{
	const struct report_skip **order;
	order = malloc((r->nskips + 1) * sizeof(*order));
	if (!r->nskips || !order) {
		free(order);
		return;
	}
	for (size_t i = 0; i < r->nskips; i++)
		order[i] = &r->skips[i];
	qsort(order, r->nskips, sizeof(*order), by_why);
	fprintf(f, "\nnot modelled (%zu):\n", r->nskips);
	for (size_t i = 0, j; i < r->nskips; i = j) {
		for (j = i + 1; j < r->nskips &&
		     !strcmp(order[j]->what, order[i]->what); j++)
			;
		if (j - i > SKIPS_ONE_BY_ONE) {
			fprintf(f, "%7zu processes: %s (pids %" PRIu32 ", %"
				PRIu32 ", %" PRIu32 " and %zu more; --json lists "
				"each)\n", j - i, order[i]->what, order[i]->pid,
				order[i + 1]->pid, order[i + 2]->pid, j - i - 3);
			continue;
		}
		for (size_t k = i; k < j; k++)
			fprintf(f, "%7" PRIu32 "  %s\n", order[k]->pid,
				order[k]->what);
	}
	free(order);
}

static void notes(FILE *f, const struct report *r)
{
	not_modelled(f, r);
	for (size_t k = 1; k < r->npol; k++)
		for (size_t i = 0; i < r->pol[k].nfindings; i++) {
			const struct mm_finding *fd = &r->pol[k].findings[i];
			if (fd->count)
				fprintf(f, "%s finding %s: %" PRIu64 " (%s)\n",
					r->pol[k].label, fd->name, fd->count, fd->what);
		}
}

/* ptshare run: a report that ends before the run did, and why. */
static void cut_short(FILE *f, const struct report *r)
{
	const struct report_stream *s = &r->stream;
	if (!r->has_stream || !s->cut_why[0])
		return;
	fprintf(f, "the report ends before the run: %s; it was rebuilt from "
		"the daemon's trace, which ends there%s: %" PRIu64 " processes "
		"still ran, read last at an earlier checkpoint, and what the "
		"program did after is not in it\n", s->cut_why,
		s->cut_torn ? " (inside a record, left out)" : "", s->cut_running);
}

static void peak_skipped(FILE *f, const struct report *r)
{
	if (!r->has_stream || !r->stream.peak_skipped_tables)
		return;
	fprintf(f, "the peak shown is not the highest: today's model held %"
		PRIu64 " table pages at a reading after which the peak was not "
		"taken (past 64 processes, a capture waits for a record per "
		"process beyond them)\n", r->stream.peak_skipped_tables);
}

void report_text(FILE *f, const struct report *r, const char *command,
		 size_t top, bool verbose)
{
	fprintf(f, "ptshare %s: %zu processes modelled", command, r->nrows);
	if (report_finals_seen(r))
		fprintf(f, " at the peak, %" PRIu64 " seen in all",
			report_finals_seen(r));
	if (r->nskips)
		fprintf(f, ", %zu not (listed below)", r->nskips);
	fputs("\n", f);
	report_run_text(f, r);
	cut_short(f, r);
	peak_skipped(f, r);
	fputs("\n", f);
	help(f, r);
	totals(f, r);
	report_series_text(f, r);
	mshare_cover(f, r);
	finals(f, r);
	groups(f, r, top);
	processes(f, r, top);
	mappings(f, r, top);
	stream(f, r, verbose);
	notes(f, r);
}
