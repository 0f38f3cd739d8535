/* SPDX-License-Identifier: MIT */
/* The process list: numeric entries of /proc. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "procfs_internal.h"

/* A positive decimal pid, or 0 for any other name. */
static int32_t name_pid(const char *name)
{
	struct procfs_cursor c = { name, name + strlen(name) };
	uint64_t v;

	if (!procfs_parse_dec(&c, &v) || c.p != c.end || v == 0 ||
	    v > INT32_MAX)
		return 0;
	return (int32_t)v;
}

static int cmp_pid(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return (x > y) - (x < y);
}

int procfs_list_pids(struct procfs_pids *out)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int err = 0;

	if (!d)
		return -errno;
	out->n = 0;
	for (;;) {
		errno = 0;
		if (!(e = readdir(d))) {
			err = -errno;
			break;
		}
		int32_t pid = name_pid(e->d_name);
		if (!pid)
			continue;
		err = grow_array((void **)&out->pids, &out->cap, out->n + 1,
				 sizeof(*out->pids));
		if (err)
			break;
		out->pids[out->n++] = pid;
	}
	closedir(d);
	/* readdir of /proc is in pid order today, but nothing promises it. */
	if (!err && out->n)
		qsort(out->pids, out->n, sizeof(*out->pids), cmp_pid);
	return err ? err : (int)out->n;
}

void procfs_pids_free(struct procfs_pids *p)
{
	free(p->pids);
	*p = (struct procfs_pids){ 0 };
}
