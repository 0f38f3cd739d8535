/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE /* struct mmsghdr, in recv.h */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conns.h"

/* Room for index need in *arr (zeroed), doubling. */
static int reserve(struct conn ***arr, size_t *cap, size_t need)
{
	if (need < *cap)
		return 0;
	size_t n = *cap ? *cap : 64;
	while (n <= need)
		n *= 2;
	struct conn **p = realloc(*arr, n * sizeof(*p));
	if (!p)
		return -1;
	memset(p + *cap, 0, (n - *cap) * sizeof(*p));
	*arr = p;
	*cap = n;
	return 0;
}

struct conn *conns_add(struct conns *t, int fd, uint32_t id, int32_t pid,
		       uint32_t uid)
{
	struct conn *c;
	if (reserve(&t->by_id, &t->cap_id, id) ||
	    reserve(&t->open, &t->cap_open, t->nopen) ||
	    !(c = calloc(1, sizeof(*c))))
		return NULL;
	*c = (struct conn){ .fd = fd, .id = id, .pid = pid, .uid = uid,
			    .slot = t->nopen };
	uffd_init(&c->uf);
	t->by_id[id] = c;
	t->open[t->nopen++] = c;
	return c;
}

struct conn *conns_get(const struct conns *t, uint32_t id)
{
	return id < t->cap_id ? t->by_id[id] : NULL;
}

struct conn *conns_of_pid(const struct conns *t, int32_t pid)
{
	for (size_t i = 0; i < t->nopen; i++)
		if (t->open[i]->pid == pid)
			return t->open[i];
	return NULL;
}

void conns_forget(struct conns *t, struct conn *c)
{
	t->by_id[c->id] = NULL;
	t->open[c->slot] = t->open[--t->nopen];
	t->open[c->slot]->slot = c->slot;
}

void conn_free(struct conn *c)
{
	close(c->fd);
	uffd_close(&c->uf);
	free(c);
}

void conns_free(struct conns *t)
{
	free(t->by_id);
	free(t->open);
	*t = (struct conns){ 0 };
}
