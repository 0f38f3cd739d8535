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
#include <stdlib.h>
#include <string.h>

#include "image.h"
#include "lib/ptr_map.h"
#include "procfs_internal.h"

/* Objects known at most: then all are forgotten, and asked for again. */
#define NAMES_MAX 32768

struct procfs_names {
	struct ptr_map by_id; /* (dev, ino) -> struct procfs_name */
};

struct procfs_names *procfs_names_new(void)
{
	return calloc(1, sizeof(struct procfs_names));
}

static void forget(struct procfs_names *t)
{
	for (size_t i = 0; i < t->by_id.cap; i++) {
		struct procfs_name *e = t->by_id.slot[i].item;
		if (e) {
			free(e->path);
			free(e);
		}
	}
	ptr_map_free(&t->by_id);
}

void procfs_names_free(struct procfs_names *t)
{
	if (t)
		forget(t);
	free(t);
}

static uint64_t id_hash(uint64_t dev, uint64_t ino)
{
	return ptr_map_hash(ino ^ (dev << 32 | dev >> 32));
}

static bool name_is(const void *item, const void *key)
{
	const struct procfs_name *e = item, *k = key;
	return e->dev == k->dev && e->ino == k->ino;
}

const struct procfs_name *procfs_names_find(const struct procfs_names *t,
					    uint64_t dev, uint64_t ino)
{
	return ptr_map_get(&t->by_id, id_hash(dev, ino), name_is,
			   &(struct procfs_name){ .dev = dev, .ino = ino });
}

const struct procfs_name *procfs_names_add(struct procfs_names *t,
					   uint64_t dev, uint64_t ino,
					   const char *path, bool deleted)
{
	const struct procfs_name *known = procfs_names_find(t, dev, ino);
	if (known)
		return known;
	struct procfs_name *e = malloc(sizeof(*e));
	char *copy = strdup(path);
	if (e && copy)
		*e = (struct procfs_name){ dev, ino, copy, deleted };
	if (!e || !copy || ptr_map_put(&t->by_id, id_hash(dev, ino), e)) {
		free(e);
		free(copy);
		return NULL;
	}
	return e;
}

void procfs_names_trim(struct procfs_names *t)
{
	if (t->by_id.n >= NAMES_MAX)
		forget(t);
}
