/* SPDX-License-Identifier: MIT */
/* Backing objects and the list of VMAs mapping each (the model's i_mmap). */
#include <stdlib.h>

#include "mm_internal.h"

uint64_t mm_object_id_hash(const struct mm_object_id *id)
{
	return ptr_map_hash(ptr_map_hash(id->dev ^ ((uint64_t)id->kind << 56)) ^
			    id->ino);
}

static bool object_is(const void *item, const void *key)
{
	const struct mm_object_id *a = &((const struct mm_object *)item)->id;
	const struct mm_object_id *b = key;
	return a->kind == b->kind && a->dev == b->dev && a->ino == b->ino;
}

struct mm_object *mm_object_get(struct mm_world *w,
				const struct mm_object_id *id)
{
	if (w->object_hint && object_is(w->object_hint, id))
		return w->object_hint;
	uint64_t h = mm_object_id_hash(id);
	struct mm_object *o = ptr_map_get(&w->objects, h, object_is, id);
	if (o)
		return w->object_hint = o;
	o = calloc(1, sizeof(*o));
	if (!o || ptr_map_put(&w->objects, h, o)) {
		free(o);
		mm_nomem(w, "an object");
		return NULL;
	}
	o->id = *id;
	return w->object_hint = o;
}

bool mm_world_maps_object(const struct mm_world *w,
			  const struct mm_object_id *id)
{
	const struct mm_world *d = mm_data_of(w);
	return ptr_map_get(&d->objects, mm_object_id_hash(id), object_is, id);
}

/* Links v after `after` (at the tail when NULL), as dup_mmap() and a split
 * place the new VMA next to the one it comes from. */
void mm_object_link(struct mm_object *o, struct mm_vma *v, struct mm_vma *after)
{
	v->obj = o;
	v->obj_prev = after ? after : o->last;
	v->obj_next = v->obj_prev ? v->obj_prev->obj_next : o->first;
	if (v->obj_prev)
		v->obj_prev->obj_next = v;
	else
		o->first = v;
	if (v->obj_next)
		v->obj_next->obj_prev = v;
	else
		o->last = v;
	mm_mshare_link(v->mm->w, v);
}

/* Unlinks an object-backed VMA; the object goes when nothing maps it. */
void mm_object_unlink(struct mm_vma *v)
{
	struct mm_object *o = v->obj;
	if (!o)
		return;
	mm_mshare_unlink(v->mm->w, v);
	if (v->obj_prev)
		v->obj_prev->obj_next = v->obj_next;
	else
		o->first = v->obj_next;
	if (v->obj_next)
		v->obj_next->obj_prev = v->obj_prev;
	else
		o->last = v->obj_prev;
	v->obj_prev = v->obj_next = NULL;
	if (!o->first) {
		struct mm_world *w = v->mm->w;
		ptr_map_del(&w->objects, mm_object_id_hash(&o->id), o);
		if (w->object_hint == o)
			w->object_hint = NULL;
		free(o);
	}
}
