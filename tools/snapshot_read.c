/* SPDX-License-Identifier: MIT */
/* Reading processes from /proc into the worlds, for ptshare snapshot and
 * ptshare top: every process the caller may read, or one and its
 * descendants. */
#define _GNU_SOURCE /* asprintf */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/grow.h"
#include "procfs/image.h"
#include "snapshot_read.h"

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

/* A process's last whole reading, while it rests. */
struct cached {
	int pid;
	uint64_t start;          /* procfs_start_time: this process */
	uint32_t view;           /* the last snapshot that read it */
	struct procfs_image img; /* its mark in img.rest */
};

static bool cached_is(const void *item, const void *key)
{
	return ((const struct cached *)item)->pid == *(const int *)key;
}

static struct cached *cached_of(struct snapshot_cache *c, int pid)
{
	return c ? ptr_map_get(&c->procs, ptr_map_hash((uint64_t)pid),
			       cached_is, &pid)
		 : NULL;
}

static void cached_free(struct cached *e)
{
	procfs_image_free(&e->img);
	free(e);
}

static void cached_drop(struct snapshot_cache *c, struct cached *e)
{
	if (!e)
		return;
	ptr_map_del(&c->procs, ptr_map_hash((uint64_t)e->pid), e);
	cached_free(e);
}

/* After pid's reading img (r its outcome), the cache keeps it while it
 * rests, in e (or a new entry), and drops e otherwise.  img is the
 * cache's then. */
static void cache_keep(struct snapshot_cache *c, struct cached *e, int pid,
		       uint64_t start, struct procfs_image *img, int r)
{
	if (!c || (e && img->at_rest))
		return;
	if (r || !img->rest || !start) {
		cached_drop(c, e);
		return;
	}
	if (!e) {
		if (!(e = calloc(1, sizeof(*e))))
			return;
		if (ptr_map_put(&c->procs, ptr_map_hash((uint64_t)pid), e)) {
			free(e);
			return;
		}
	}
	procfs_image_free(&e->img);
	*e = (struct cached){ pid, start, c->views, *img };
	*img = (struct procfs_image){ 0 };
}

/* Reads pid and puts it into the worlds: 0, or 1 when it is not modelled.
 * From the cache when it rests since the cache's reading of it. */
static int take(struct snapshot *s, struct snapshot_cache *cache, int pid)
{
	struct procfs_image img = { 0 };
	char err[256];
	uint64_t start = 0;
	struct cached *e = cached_of(cache, pid);
	/* That process, not a later one given its pid. */
	if (cache && procfs_start_time(pid, &start))
		start = 0;
	if (e && e->start != start) {
		cached_drop(cache, e);
		e = NULL;
	}
	img.rest = e ? e->img.rest : 0;
	int r = procfs_image_read(pid, procfs_fs_cache_get(&s->fs, pid), &img);
	const struct procfs_image *use = &img;
	if (!r && img.at_rest) {
		e->img.status = img.status;
		e->view = cache->views;
		use = &e->img;
		s->at_rest++;
	}
	if (r == -ENODATA) /* kernel thread, zombie: nothing to model */
		goto out;
	if (!r && (r = load(&s->ws, use, err, sizeof(err)))) {
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
		       sizeof(*s->procs)) || add_names(s, &use->maps)) {
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
	if (procfs_cgroup_read(pid, p->cgroup, sizeof(p->cgroup)))
		*p->cgroup = '\0'; /* no cgroup v2, or gone meanwhile */
out:
	cache_keep(cache, e, pid, start, &img, r);
	procfs_image_free(&img);
	return r;
}

/* The processes the last snapshot did not read (gone, or not asked for)
 * leave the cache. */
static void cache_sweep(struct snapshot_cache *c)
{
	for (size_t i = 0; i < c->procs.cap;) {
		struct cached *e = c->procs.slot[i].item;
		if (e && e->view != c->views)
			cached_drop(c, e); /* may move another into slot i */
		else
			i++;
	}
}

void snapshot_cache_free(struct snapshot_cache *c)
{
	for (size_t i = 0; i < c->procs.cap; i++)
		if (c->procs.slot[i].item)
			cached_free(c->procs.slot[i].item);
	ptr_map_free(&c->procs);
	*c = (struct snapshot_cache){ 0 };
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

void snapshot_free(struct snapshot *s)
{
	mm_worlds_free(&s->ws);
	for (size_t i = 0; i < s->nobjects; i++)
		free((char *)s->objects[i].name);
	free(s->objects);
	free(s->procs);
	free(s->skips);
	procfs_fs_cache_free(&s->fs);
}

int snapshot_read(struct snapshot *s, const char *policies, int pid,
		  bool tree, struct snapshot_cache *cache, char *err,
		  size_t errlen)
{
	*s = (struct snapshot){ 0 };
	if (cache)
		cache->views++;
	if (mm_worlds_init(&s->ws, policies, err, errlen))
		return -EINVAL;
	struct procfs_pids pids = { 0 };
	int r = pid ? select_pids(pid, tree, &pids) : procfs_list_pids(&pids);
	r = r < 0 ? r : 0;
	if (!r && pid && !pids.n) {
		snprintf(err, errlen, "no process %d", pid);
		r = -ESRCH;
	}
	for (size_t i = 0; !r && i < pids.n; i++)
		if (pids.pids[i] != getpid())
			r = take(s, cache, pids.pids[i]) == -ENOMEM ? -ENOMEM : 0;
	if (cache)
		cache_sweep(cache);
	if (r == -ENOMEM || (r && r != -ESRCH && r != -EINVAL))
		snprintf(err, errlen, "%s", strerror(-r));
	procfs_pids_free(&pids);
	return r;
}

int snapshot_report(const struct snapshot *s, enum report_group_by by,
		    uint64_t min_mapping, struct report *out)
{
	struct report_input in = {
		.command = "snapshot", .group_by = by,
		.ws = (struct mm_worlds *)&s->ws,
		.procs = s->procs, .nprocs = s->nprocs,
		.objects = s->objects, .nobjects = s->nobjects,
		.skips = s->skips, .nskips = s->nskips,
		.min_mapping = min_mapping,
	};
	return report_build(out, &in);
}
