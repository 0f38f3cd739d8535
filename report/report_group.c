/* SPDX-License-Identifier: MIT */
/*
 * --group-by: the processes gathered by pid, command, user or cgroup (a
 * container or a systemd service is its cgroup), and each group's tables
 * summed, so that every output can give the totals per group.
 */
#include <errno.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

const char *report_group_by_name(enum report_group_by by)
{
	static const char *const names[REPORT_GROUP_NR] = {
		[REPORT_GROUP_PROCESS] = "process", [REPORT_GROUP_COMMAND] = "command",
		[REPORT_GROUP_USER] = "user", [REPORT_GROUP_CGROUP] = "cgroup",
	};
	return by < REPORT_GROUP_NR ? names[by] : NULL;
}

/* The user's name as this machine knows it, or the uid. */
static void user_key(uint32_t uid, char *key, size_t len)
{
	struct passwd pw, *found = NULL;
	char buf[1024];
	if (!getpwuid_r(uid, &pw, buf, sizeof(buf), &found) && found)
		snprintf(key, len, "%s", pw.pw_name);
	else
		snprintf(key, len, "%" PRIu32, uid);
}

static void key_of(enum report_group_by by, const struct report_proc *p,
		   char *key, size_t len)
{
	switch (by) {
	case REPORT_GROUP_COMMAND:
		snprintf(key, len, "%s", p->name);
		break;
	case REPORT_GROUP_USER:
		user_key(p->uid, key, len);
		break;
	case REPORT_GROUP_CGROUP:
		snprintf(key, len, "%s", *p->cgroup ? p->cgroup : "?");
		break;
	default:
		snprintf(key, len, "%" PRIu32, p->pid);
	}
}

static int by_tables(const void *x, const void *y)
{
	const struct report_group *a = x, *b = y;
	if (a->model_kb != b->model_kb)
		return a->model_kb < b->model_kb ? 1 : -1;
	return strcmp(a->key, b->key);
}

/* The group of key, added when there is none yet (r->groups has room). */
static struct report_group *group_of(struct report *r, const char *key)
{
	for (size_t i = 0; i < r->ngroups; i++)
		if (!strcmp(r->groups[i].key, key))
			return &r->groups[i];
	struct report_group *g = &r->groups[r->ngroups++];
	*g = (struct report_group){ 0 };
	snprintf(g->key, sizeof(g->key), "%s", key);
	return g;
}

int report_group(struct report *r)
{
	free(r->groups);
	r->groups = NULL;
	r->ngroups = 0;
	if (r->group_by == REPORT_GROUP_NONE)
		return 0;
	if (!(r->groups = calloc(r->nrows + 1, sizeof(*r->groups))))
		return -ENOMEM;
	for (size_t i = 0; i < r->nrows; i++) {
		const struct report_row *row = &r->rows[i];
		char key[REPORT_CGROUP_MAX];
		key_of(r->group_by, row->proc, key, sizeof(key));
		struct report_group *g = group_of(r, key);
		uint64_t model = 4 * report_sum3(row->s[0].tables);
		g->nprocs++;
		g->model_kb += model;
		if (row->proc->vmpte_kb >= 0) {
			g->kernel_kb += (uint64_t)row->proc->vmpte_kb;
			g->exact += model == (uint64_t)row->proc->vmpte_kb;
		}
		for (size_t k = 0; k < r->npol; k++)
			g->pss[k] += row->s[k].pss_bytes;
	}
	qsort(r->groups, r->ngroups, sizeof(*r->groups), by_tables);
	return 0;
}
