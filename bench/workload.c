/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE /* sbrk, MADV_POPULATE_WRITE */
#include "workload.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#define MIB (1UL << 20)
#define FANOUT 4

/* Tags: what a member is, and for group members which group. */
enum { TAG_SMALL, TAG_BIG, TAG_LEADER = 0x100, TAG_WORKER = 0x200 };

static int populate(void *addr, size_t len)
{
	return madvise(addr, len, MADV_POPULATE_WRITE) ? -errno : 0;
}

/* Stack pages stay populated after the frame is gone, as in a real stack. */
static void touch_stack(size_t len)
{
	volatile char buf[len];
	for (size_t off = 0; off < len; off += 4096)
		buf[off] = 1;
	(void)buf[0]; /* a volatile read: the writes stay */
}

/*
 * 1-2 MiB of [heap] and 64-256 KiB of stack written, varying with i; a
 * child also keeps what it inherited, so a tree's processes hold 1-7 MiB.
 */
static int small_memory(unsigned i)
{
	size_t heap = (1 + i % 2) * MIB;
	char *h = sbrk((intptr_t)heap);
	if (h == (void *)-1)
		return -errno;
	memset(h, 1, heap);
	touch_stack((64 + 64 * (i % 4)) << 10);
	return 0;
}

/* A tree of count small processes numbered from first: this one and up to
 * FANOUT subtrees of nearly equal size. */
struct subtree {
	unsigned first, count;
};

static int small_tree(struct population *p, void *arg)
{
	const struct subtree *t = arg;
	int r = small_memory(t->first);
	unsigned at = t->first + 1, left = t->count - 1;
	for (unsigned k = 0; !r && left; k++) {
		struct subtree sub = { at, (left + FANOUT - 1 - k) / (FANOUT - k) };
		r = population_start(p, small_tree, &sub, TAG_SMALL);
		at += sub.count;
		left -= sub.count;
	}
	return r;
}

struct group {
	unsigned index, size;
	size_t len;
	char *pool;
};

/* A worker maps every page of its leader's pool, as after serving a while. */
static int worker(struct population *p, void *arg)
{
	const struct group *g = arg;
	int r = small_memory(g->index);
	return r ? r : populate(g->pool, g->len);
}

static int leader(struct population *p, void *arg)
{
	struct group g = *(const struct group *)arg;
	g.pool = mmap(NULL, g.len, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (g.pool == MAP_FAILED)
		return -errno;
	int r = small_memory(g.index);
	if (!r)
		r = populate(g.pool, g.len);
	for (unsigned i = 1; !r && i < g.size; i++)
		r = population_start(p, worker, &g, TAG_WORKER + (int)g.index);
	return r;
}

static int big(struct population *p, void *arg)
{
	size_t len = *(const size_t *)arg;
	void *heap = mmap(NULL, len, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return heap == MAP_FAILED ? -errno : populate(heap, len);
}

int workload_start(struct population *p, const struct workload *w)
{
	int r = 0;
	if (w->group_size > WORKLOAD_GROUP_MAX || !w->trees)
		return -EINVAL;
	for (unsigned t = 0, first = 0; !r && t < w->trees; t++) {
		struct subtree sub = { first, (w->small - first) / (w->trees - t) };
		if (sub.count)
			r = population_start(p, small_tree, &sub, TAG_SMALL);
		first += sub.count;
	}
	for (unsigned g = 0; !r && g < w->groups; g++) {
		struct group grp = { g, w->group_size, w->mib * MIB, NULL };
		r = population_start(p, leader, &grp, TAG_LEADER + (int)g);
	}
	size_t len = w->mib * MIB;
	for (unsigned b = 0; !r && b < w->big; b++)
		r = population_start(p, big, &len, TAG_BIG);
	return r;
}

static unsigned long mem_available_mib(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];
	unsigned long kb = 0;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %lu kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb / 1024;
}

int workload_check_memory(const struct workload *w, unsigned long *need,
			  unsigned long *available)
{
	unsigned procs = w->small + w->groups * w->group_size + w->big;
	/* Pools and heaps, their page tables (1/512), 3 MiB per process. */
	*need = (w->groups + w->big) * w->mib +
		(w->groups * w->group_size + w->big) * w->mib / 512 + 3UL * procs;
	*available = mem_available_mib();
	return *need + *need / 4 > *available ? -ENOMEM : 0;
}

void workload_describe(const struct workload *w, FILE *f)
{
	fprintf(f, "%u small in %u trees, %u groups of %u sharing %lu MiB each, "
		"%u with %lu MiB private\n", w->small, w->trees, w->groups,
		w->group_size, w->mib, w->big, w->mib);
}

size_t workload_group_pids(const struct population *p, unsigned g,
			   int32_t *out, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < p->n && n < max; i++)
		if (p->members[i].tag == TAG_LEADER + (int)g)
			out[n++] = p->members[i].pid;
	for (size_t i = 0; i < p->n && n < max && n; i++)
		if (p->members[i].tag == TAG_WORKER + (int)g)
			out[n++] = p->members[i].pid;
	return n;
}
