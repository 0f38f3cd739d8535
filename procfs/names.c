/* SPDX-License-Identifier: MIT */
/*
 * The path of each file object (device, inode) as the kernel first named
 * it for a reading.  Through PROCMAP_QUERY a reading asks for a mapping's
 * path (the kernel's d_path and escaping, most of what printing maps
 * costs) only the first time it meets the object; every later reading of
 * any process takes it from here.  The first path seen is kept, as the
 * ingest names an object once (another mount namespace may reach the same
 * file by another path), and so is whether it was deleted then: what
 * depends on that (SysV segments, memfds, shared /dev/zero) is deleted
 * from the start.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"
#include "procfs_internal.h"

/* Objects known at most: then all are forgotten, and asked for again. */
#define NAMES_MAX 32768

struct procfs_names {
	struct procfs_name *slot; /* open addressing; path NULL: free */
	size_t cap, n;            /* cap a power of two, or 0 */
};

struct procfs_names *procfs_names_new(void)
{
	return calloc(1, sizeof(struct procfs_names));
}

static void forget(struct procfs_names *t)
{
	for (size_t i = 0; i < t->cap; i++)
		free(t->slot[i].path);
	free(t->slot);
	*t = (struct procfs_names){ 0 };
}

void procfs_names_free(struct procfs_names *t)
{
	if (t)
		forget(t);
	free(t);
}

static size_t home(const struct procfs_names *t, uint64_t dev, uint64_t ino)
{
	uint64_t h = (ino ^ (dev << 32 | dev >> 32)) * 0x9e3779b97f4a7c15u;
	return (size_t)(h >> 32) & (t->cap - 1);
}

static struct procfs_name *probe(const struct procfs_names *t, uint64_t dev,
				 uint64_t ino)
{
	for (size_t i = home(t, dev, ino);; i = (i + 1) & (t->cap - 1)) {
		struct procfs_name *e = &t->slot[i];
		if (!e->path || (e->dev == dev && e->ino == ino))
			return e;
	}
}

const struct procfs_name *procfs_names_find(const struct procfs_names *t,
					    uint64_t dev, uint64_t ino)
{
	if (!t->cap)
		return NULL;
	const struct procfs_name *e = probe(t, dev, ino);
	return e->path ? e : NULL;
}

/* Twice the room, the entries placed again. */
static int grow(struct procfs_names *t)
{
	struct procfs_names bigger = { .cap = t->cap ? 2 * t->cap : 256 };
	bigger.slot = calloc(bigger.cap, sizeof(*bigger.slot));
	if (!bigger.slot)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++)
		if (t->slot[i].path)
			*probe(&bigger, t->slot[i].dev, t->slot[i].ino) = t->slot[i];
	bigger.n = t->n;
	free(t->slot);
	*t = bigger;
	return 0;
}

const struct procfs_name *procfs_names_add(struct procfs_names *t,
					   uint64_t dev, uint64_t ino,
					   const char *path, bool deleted)
{
	if (2 * (t->n + 1) > t->cap && grow(t))
		return NULL;
	struct procfs_name *e = probe(t, dev, ino);
	if (e->path)
		return e;
	char *copy = strdup(path);
	if (!copy)
		return NULL;
	*e = (struct procfs_name){ dev, ino, copy, deleted };
	t->n++;
	return e;
}

void procfs_names_trim(struct procfs_names *t)
{
	if (t->n >= NAMES_MAX)
		forget(t);
}
