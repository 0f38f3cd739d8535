/* SPDX-License-Identifier: MIT */
/*
 * Flame graphs of the page tables (docs/flamegraph.md): each PTE table of
 * each world once, to the mapping that owns it (mm_world_pte_owners),
 * summed by the command and the call stack that made the mapping, and
 * written as collapsed stacks ("frame;frame;frame weight"), the format
 * flamegraph.pl and speedscope read.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "lib/grow.h"
#include "lib/ptr_map.h"

struct flame_build {
	struct report *r;
	const struct report_input *in;
	struct report_object *names; /* in->objects by id */
	size_t cap;
	struct ptr_map index; /* a flame's hash -> 1 + its index */
	size_t k;             /* the world walked */
	int err;
};

/* What a flame is known by: its strings are the input's until kept. */
struct flame_key {
	const char *command, *object;
	const struct report_site *site;
};

static int by_id(const void *x, const void *y)
{
	const struct mm_object_id *a = &((const struct report_object *)x)->id;
	const struct mm_object_id *b = &((const struct report_object *)y)->id;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	return (a->ino > b->ino) - (a->ino < b->ino);
}

static int by_pid(const void *key, const void *row)
{
	uint32_t a = *(const uint32_t *)key;
	uint32_t b = ((const struct report_row *)row)->proc->pid;
	return (a > b) - (a < b);
}

static uint64_t hash_str(uint64_t h, const char *s)
{
	for (; s && *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return (h ^ 0xff) * 0x100000001b3ull;
}

static uint64_t hash_key(const struct flame_key *k)
{
	uint64_t h = hash_str(hash_str(0xcbf29ce484222325ull, k->command),
			      k->object);
	for (size_t i = 0; i < k->site->n; i++)
		h = hash_str(h, k->site->f[i].object) ^
		    ptr_map_hash(k->site->f[i].offset);
	return ptr_map_hash(h);
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

struct flame_match {
	const struct report *r;
	const struct flame_key *key;
};

static bool flame_is(const void *item, const void *arg)
{
	const struct flame_match *m = arg;
	const struct report_flame *f = &m->r->flames[(uintptr_t)item - 1];
	const struct flame_key *k = m->key;
	if (!same_str(f->command, k->command) || !same_str(f->object, k->object) ||
	    f->site.n != k->site->n)
		return false;
	for (size_t i = 0; i < f->site.n; i++)
		if (f->site.f[i].offset != k->site->f[i].offset ||
		    !same_str(f->site.f[i].object, k->site->f[i].object))
			return false;
	return true;
}

/* A new flame of key, its strings kept: its index, or -1. */
static long flame_add(struct flame_build *b, const struct flame_key *key,
		      uint64_t hash)
{
	struct report *r = b->r;
	if (grow_array((void **)&r->flames, &b->cap, r->nflames + 1,
		       sizeof(*r->flames)) ||
	    ptr_map_put(&b->index, hash, (void *)(uintptr_t)(r->nflames + 1))) {
		b->err = -ENOMEM;
		return -1;
	}
	struct report_flame *f = &r->flames[r->nflames];
	*f = (struct report_flame){
		.command = report_keep(r, key->command, &b->err),
		.object = report_keep(r, key->object, &b->err),
		.site.n = key->site->n,
	};
	for (size_t i = 0; i < key->site->n; i++)
		f->site.f[i] = (struct report_frame){
			.object = report_keep(r, key->site->f[i].object, &b->err),
			.offset = key->site->f[i].offset,
		};
	return (long)r->nflames++;
}

static const char *object_name(struct flame_build *b,
			       const struct mm_vma_info *v)
{
	if (v->obj.kind == MM_OBJ_ANON)
		return "[anonymous]";
	struct report_object key = { .id = v->obj };
	const struct report_object *o = bsearch(&key, b->names, b->in->nobjects,
						sizeof(key), by_id);
	return o && o->name && *o->name ? o->name : report_kind_name(v->obj.kind);
}

static int owner(uint32_t pid, const struct mm_vma_info *v, uint64_t tables,
		 void *arg)
{
	struct flame_build *b = arg;
	const struct report_input *in = b->in;
	const struct report_row *row = bsearch(&pid, b->r->rows, b->r->nrows,
					       sizeof(*row), by_pid);
	struct report_site site = { 0 };
	if (in->site_of && !in->site_of(in->site_ctx, pid, v->start, &site))
		site.n = 0;
	if (site.n > PTS_MAX_FRAMES)
		site.n = PTS_MAX_FRAMES;
	struct flame_key key = { row ? row->proc->name : "?", object_name(b, v),
				 &site };
	struct flame_match m = { b->r, &key };
	uint64_t hash = hash_key(&key);
	void *item = ptr_map_get(&b->index, hash, flame_is, &m);
	long i = item ? (long)((uintptr_t)item - 1) : flame_add(b, &key, hash);
	if (i < 0)
		return b->err;
	b->r->flames[i].tables[b->k] += tables;
	return b->err;
}

int report_flames_build(struct report *r, const struct report_input *in)
{
	struct flame_build b = { .r = r, .in = in };
	if (!(b.names = malloc((in->nobjects + 1) * sizeof(*b.names))))
		return -ENOMEM;
	if (in->nobjects) {
		memcpy(b.names, in->objects, in->nobjects * sizeof(*b.names));
		qsort(b.names, in->nobjects, sizeof(*b.names), by_id);
	}
	for (b.k = 0; b.k < in->ws->n && !b.err; b.k++)
		mm_world_pte_owners(in->ws->w[b.k], owner, &b);
	ptr_map_free(&b.index);
	free(b.names);
	return b.err;
}

/* s as one frame: ';' separates frames, a line ends a stack. */
static void frame_out(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc(*s == ';' ? ':' : *s == '\n' || *s == '\r' ? ' ' : *s, f);
}

void report_flamegraph(FILE *f, const struct report *r, size_t k)
{
	char buf[512];
	for (size_t i = 0; i < r->nflames; i++) {
		const struct report_flame *fl = &r->flames[i];
		uint64_t today = fl->tables[0], weight = today;
		if (k)
			weight = today > fl->tables[k] ? today - fl->tables[k] : 0;
		if (!weight)
			continue;
		frame_out(f, fl->command);
		if (!fl->site.n)
			fputs(";[no call seen]", f);
		for (size_t j = fl->site.n; j-- > 0;) {
			fputc(';', f);
			frame_out(f, report_frame_text(&fl->site.f[j], buf, sizeof(buf)));
		}
		fputc(';', f);
		frame_out(f, fl->object);
		fprintf(f, " %" PRIu64 "\n", weight);
	}
}

const char *report_flamegraph_path(const struct report *r, size_t k,
				   const char *path, char *buf, size_t len)
{
	if (!k)
		return path;
	snprintf(buf, len, "%s.%s", path, r->pol[k].label);
	return buf;
}
