/* SPDX-License-Identifier: MIT */
/* ptshare snapshot: the model fed from /proc alone, for running processes. */
#define _GNU_SOURCE /* asprintf */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/cli_options.h"
#include "commands.h"
#include "procfs/image.h"
#include "lib/clock.h"
#include "lib/grow.h"
#include "report/report.h"

struct snapshot {
	struct mm_worlds ws;
	struct report_proc *procs;
	size_t nprocs, cap_procs;
	struct report_skip *skips;
	size_t nskips, cap_skips;
	struct report_object *objects;
	size_t nobjects, cap_objects;
	struct procfs_fs_cache fs;
};

static void usage(FILE *f)
{
	fputs("usage: ptshare snapshot [--pid PID [--tree]] [--policy LIST]\n"
	      "                        [--interval S --count N]\n"
	      "                        [--json FILE] [--html FILE] [--openmetrics FILE]\n"
	      "                        [--top N] [--min-mapping BYTES] [-o FILE]\n"
	      "\n"
	      "Reads every process the caller may read (or PID, and with --tree its\n"
	      "descendants) from /proc: mappings, populated pages (PAGEMAP_SCAN) and\n"
	      "VmPTE.  Builds one model per policy and reports today's page tables\n"
	      "(model beside the kernel's VmPTE) and the tables under each policy.\n"
	      "\n"
	      "  --pid PID          only this process\n"
	      "  --tree             with --pid: and its descendants\n"
	      "  --policy LIST      comma-separated policies (default: all);\n"
	      "                     name[:pte+pmd+pud] picks the levels that share\n"
	      "  --count N          read N times (default 1): the report is the\n"
	      "                     reading with the most page tables, and its\n"
	      "                     series holds every reading\n"
	      "  --interval S       with --count: S seconds between readings (0-86400)\n"
	      "  --json FILE        also write the JSON report to FILE ('-': stdout,\n"
	      "                     instead of the text report)\n"
	      "  --html FILE        also write the report as an HTML page (0600)\n"
	      "  --openmetrics FILE also write the totals as OpenMetrics, for\n"
	      "                     Prometheus (FILE replaced whole, 0644)\n"
	      "  --top N            processes and mappings to list (default 20, 0: all)\n"
	      "  --min-mapping B    list mappings of at least B bytes (default 2 MiB)\n"
	      "  -o FILE            write the text report to FILE (0600; %p: ptshare's\n"
	      "                     pid), not stdout\n"
	      "\n"
	      "Exit status: 0 report written, 1 nothing could be read or the JSON,\n"
	      "HTML or OpenMetrics could not be written, 2 usage error.\n",
	      f);
}

static int skip(struct snapshot *s, int pid, int err, const char *what)
{
	if (grow_array((void **)&s->skips, &s->cap_skips, s->nskips + 1,
		       sizeof(*s->skips)))
		return -ENOMEM;
	struct report_skip *k = &s->skips[s->nskips++];
	k->pid = (uint32_t)pid;
	k->err = err;
	snprintf(k->what, sizeof(k->what), "%s", what);
	return 0;
}

static int add_names(struct snapshot *s, const struct procfs_maps *maps)
{
	for (size_t i = 0; i < maps->n; i++) {
		const struct procfs_vma *v = &maps->vmas[i];
		struct mm_mapping m;
		if (v->kind == MM_OBJ_ANON || !*v->path || procfs_vma_mapping(v, &m))
			continue;
		if (grow_array((void **)&s->objects, &s->cap_objects, s->nobjects + 1,
			       sizeof(*s->objects)))
			return -ENOMEM;
		char *name;
		if (asprintf(&name, "%s%s", v->path, v->deleted ? " (deleted)" : "") < 0)
			return -ENOMEM;
		s->objects[s->nobjects++] = (struct report_object){ m.obj, name };
	}
	return 0;
}

static const char *why_unreadable(int err)
{
	switch (err) {
	case -ESRCH:
		return "exited while it was read";
	case -EACCES:
	case -EPERM:
		return "permission denied (run as root or as its owner)";
	default:
		return strerror(-err);
	}
}

/* Creates the process of img in every world, maps its VMAs and observes
 * its pages.  On a model error, returns it with the world's message in err
 * (no world keeps half of it). */
static int load(struct mm_worlds *ws, const struct procfs_image *img,
		char *err, size_t errlen)
{
	uint32_t pid = (uint32_t)img->status.tgid;
	for (size_t k = 0; k < ws->n; k++) {
		struct mm_world *w = ws->w[k];
		int r = mm_create(w, pid);
		for (size_t i = 0; !r && i < img->maps.n; i++) {
			const struct procfs_vma *v = &img->maps.vmas[i];
			struct mm_mapping m;
			if (procfs_vma_mapping(v, &m))
				continue; /* [vsyscall]: above user space */
			r = mm_map(w, pid, &m);
		}
		if (!r) {
			r = mm_observe(w, pid, 0, MM_TASK_SIZE, img->runs,
				       img->nruns);
			r = r < 0 ? r : 0;
		}
		if (r) {
			snprintf(err, errlen, "%s", mm_world_error(w));
			for (size_t j = 0; j <= k; j++)
				mm_exit(ws->w[j], pid);
			return r;
		}
	}
	return 0;
}

/* Reads pid and puts it into the worlds: 0, or 1 when it is not modelled. */
static int take(struct snapshot *s, int pid)
{
	struct procfs_image img = { 0 };
	char err[256];
	int r = procfs_image_read(pid, procfs_fs_cache_get(&s->fs, pid), &img);
	if (r == -ENODATA) /* kernel thread, zombie: nothing to model */
		goto out;
	if (!r && (r = load(&s->ws, &img, err, sizeof(err)))) {
		char what[sizeof(((struct report_skip *)0)->what)];
		snprintf(what, sizeof(what), "model refused it: %.100s", err);
		r = skip(s, pid, r, what) ? -ENOMEM : 1;
		goto out;
	}
	if (r) {
		r = skip(s, pid, r, why_unreadable(r)) ? -ENOMEM : 1;
		goto out;
	}
	if (grow_array((void **)&s->procs, &s->cap_procs, s->nprocs + 1,
		       sizeof(*s->procs)) || add_names(s, &img.maps)) {
		r = -ENOMEM;
		goto out;
	}
	struct report_proc *p = &s->procs[s->nprocs++];
	*p = (struct report_proc){
		.pid = (uint32_t)img.status.tgid,
		.ppid = (uint32_t)img.status.ppid,
		.uid = img.status.uid,
		.vmpte_kb = (int64_t)img.status.vmpte_kb,
		.stable = img.stable,
	};
	snprintf(p->name, sizeof(p->name), "%s", img.status.name);
out:
	procfs_image_free(&img);
	return r;
}

/* pid and, with tree, every descendant, found through PPid. */
static int select_pids(int pid, bool tree, struct procfs_pids *out)
{
	struct procfs_pids all = { 0 };
	int r = procfs_list_pids(&all);
	if (r < 0)
		return r;
	r = 0;
	out->n = 0;
	int32_t *sel = malloc((all.n + 1) * sizeof(*sel));
	int32_t *ppid = malloc((all.n + 1) * sizeof(*ppid));
	if (!sel || !ppid) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < all.n; i++) {
		struct procfs_status st;
		ppid[i] = procfs_status_read(all.pids[i], &st) ? -1 : st.ppid;
	}
	size_t n = 0;
	for (size_t i = 0; i < all.n; i++)
		if (all.pids[i] == pid)
			sel[n++] = pid;
	/* Breadth first: a child's pid may be lower than its parent's. */
	for (size_t head = 0; tree && head < n; head++)
		for (size_t i = 0; i < all.n; i++)
			if (ppid[i] == sel[head])
				sel[n++] = all.pids[i];
	free(out->pids);
	out->pids = sel;
	out->n = out->cap = n;
	sel = NULL;
out:
	free(sel);
	free(ppid);
	procfs_pids_free(&all);
	return r;
}

static void snapshot_free(struct snapshot *s)
{
	mm_worlds_free(&s->ws);
	for (size_t i = 0; i < s->nobjects; i++)
		free((char *)s->objects[i].name);
	free(s->objects);
	free(s->procs);
	free(s->skips);
	procfs_fs_cache_free(&s->fs);
}

/* What to read, and how often. */
struct snapshot_plan {
	const char *policies;
	uint64_t pid, min_mapping;
	bool tree;
	uint64_t interval_s, count;
};

/* One reading of every process selected, into fresh worlds; its report
 * into rep.  0, 1 (said on stderr) or -ENOMEM. */
static int read_once(struct snapshot *s, const struct snapshot_plan *plan,
		     struct report *rep)
{
	char err[256];
	*s = (struct snapshot){ 0 };
	if (mm_worlds_init(&s->ws, plan->policies, err, sizeof(err)))
		return -ENOMEM; /* the policies were checked before */
	struct procfs_pids pids = { 0 };
	int r = plan->pid ? select_pids((int)plan->pid, plan->tree, &pids)
			  : procfs_list_pids(&pids);
	r = r < 0 ? r : 0;
	if (!r && plan->pid && !pids.n) {
		fprintf(stderr, "ptshare snapshot: no process %llu\n",
			(unsigned long long)plan->pid);
		r = 1;
	}
	for (size_t i = 0; !r && i < pids.n; i++)
		if (pids.pids[i] != getpid())
			r = take(s, pids.pids[i]) == -ENOMEM ? -ENOMEM : 0;
	procfs_pids_free(&pids);
	if (r)
		return r;
	struct report_input in = {
		.command = "snapshot", .ws = &s->ws,
		.procs = s->procs, .nprocs = s->nprocs,
		.objects = s->objects, .nobjects = s->nobjects,
		.skips = s->skips, .nskips = s->nskips,
		.min_mapping = plan->min_mapping,
	};
	return report_build(rep, &in);
}

/* A point of the series from the reading in s. */
static int add_point(struct report_series *series, const struct snapshot *s,
		     uint64_t t_ns)
{
	struct report_point pt = { .t_ns = t_ns, .processes = (uint32_t)s->nprocs };
	for (size_t i = 0; i < s->nprocs; i++)
		if (s->procs[i].vmpte_kb > 0)
			pt.vmpte_kb += (uint64_t)s->procs[i].vmpte_kb;
	report_point_tables(&pt, &s->ws);
	return report_series_add(series, &pt);
}

/* count readings, interval_s apart: the report of the one with the most
 * of today's tables, with the series of all.  0, 1 or -ENOMEM. */
static int read_series(const struct snapshot_plan *plan, struct report *out,
		       size_t *nprocs)
{
	struct report_series series = { 0 };
	uint64_t start = now_ns(), most = 0;
	int r = 0;
	*out = (struct report){ 0 };
	for (uint64_t i = 0; !r && i < plan->count; i++) {
		struct snapshot s;
		struct report rep = { 0 };
		if (i)
			sleep((unsigned)plan->interval_s);
		uint64_t t = i ? now_ns() - start : 0;
		r = read_once(&s, plan, &rep);
		uint64_t tables = r ? 0 : report_sum3(rep.totals[0].distinct);
		if (!r && !(r = add_point(&series, &s, t)) && (!i || tables > most)) {
			most = tables;
			*nprocs = s.nprocs;
			report_free(out);
			*out = rep;
		} else {
			report_free(&rep);
		}
		snapshot_free(&s);
	}
	if (!r)
		r = report_set_series(out, &series);
	report_series_free(&series);
	if (r)
		report_free(out);
	return r;
}

int cmd_snapshot(int argc, char **argv)
{
	static const struct option own[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "tree", no_argument, NULL, 't' },
		{ "min-mapping", required_argument, NULL, 'm' },
		{ "count", required_argument, NULL, 'c' },
		{ 0 },
	};
	struct cli_parser p;
	cli_parser_init(&p, "ptshare snapshot", usage,
			CLI_POLICY | CLI_JSON | CLI_HTML | CLI_OPENMETRICS |
				CLI_TOP | CLI_INTERVAL,
			own, "o:");
	const char *text = NULL;
	struct snapshot_plan plan = { .min_mapping = MM_SPAN(PT_PTE), .count = 1 };
	int c;
	while ((c = cli_next(&p, argc, argv)) != -1) {
		switch (c) {
		case 'p':
			if (cli_u64(optarg, &plan.pid) || !plan.pid || plan.pid > INT_MAX)
				return cli_usage_error(&p, "bad pid", optarg);
			break;
		case 't':
			plan.tree = true;
			break;
		case 'm':
			if (cli_u64(optarg, &plan.min_mapping))
				return cli_usage_error(&p, "bad number", optarg);
			break;
		case 'c':
			if (cli_u64(optarg, &plan.count) || !plan.count ||
			    plan.count > REPORT_SERIES_MAX * 1000u)
				return cli_usage_error(&p, "bad count", optarg);
			break;
		case 'o':
			if (!(text = cli_output_template(&p, optarg)))
				return CLI_USAGE_STATUS;
			break;
		}
	}
	if (p.status >= 0)
		return p.status;
	if (optind < argc)
		return cli_usage_error(&p, "unexpected argument", argv[optind]);
	if (plan.tree && !plan.pid)
		return cli_usage(p.name, "--tree needs --pid");
	if (p.v.interval && (cli_u64(p.v.interval, &plan.interval_s) ||
			     plan.interval_s > 86400))
		return cli_usage_error(&p, "--interval is 0 to 86400 seconds, not",
				       p.v.interval);
	if (p.v.interval && plan.count < 2)
		return cli_usage(p.name, "--interval needs --count N, N > 1");
	struct mm_worlds ws;
	char err[256];
	if (mm_worlds_init(&ws, p.v.policies, err, sizeof(err)))
		return cli_usage(p.name, "%s", err);
	mm_worlds_free(&ws);
	plan.policies = p.v.policies;
	struct report rep;
	size_t nprocs = 0;
	int r = read_series(&plan, &rep, &nprocs);
	if (r < 0)
		fprintf(stderr, "ptshare snapshot: %s\n", strerror(-r));
	if (r)
		return 1;
	r = write_reports(&rep, "snapshot", text, &p.v);
	report_free(&rep);
	if (!r && !nprocs) {
		fprintf(stderr, "ptshare snapshot: no process could be read\n");
		r = 1;
	}
	return r;
}
