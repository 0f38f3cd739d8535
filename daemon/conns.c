/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conns.h"

/* Where id is, or would go, in t->open (sorted by id). */
static size_t index_of(const struct conns *t, uint32_t id)
{
	size_t lo = 0, hi = t->nopen;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (t->open[mid]->id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct conn *conns_add(struct conns *t, int fd, uint32_t id, int32_t pid,
		       uint32_t uid)
{
	struct conn *c;
	if (t->nopen == t->cap_open) {
		size_t cap = t->cap_open ? 2 * t->cap_open : 64;
		struct conn **p = realloc(t->open, cap * sizeof(*p));
		if (!p)
			return NULL;
		t->open = p;
		t->cap_open = cap;
	}
	if (!(c = calloc(1, sizeof(*c))))
		return NULL;
	*c = (struct conn){ .fd = fd, .id = id, .pid = pid, .uid = uid };
	uffd_init(&c->uf);
	/* Ids are given in increasing order: a new one goes last. */
	t->open[t->nopen++] = c;
	return c;
}

struct conn *conns_get(const struct conns *t, uint32_t id)
{
	size_t i = index_of(t, id);
	return i < t->nopen && t->open[i]->id == id ? t->open[i] : NULL;
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
	size_t i = index_of(t, c->id);
	if (i == t->nopen || t->open[i] != c)
		return;
	memmove(&t->open[i], &t->open[i + 1], (t->nopen - i - 1) * sizeof(*t->open));
	t->nopen--;
}

void conn_free(struct conn *c)
{
	close(c->fd);
	uffd_close(&c->uf);
	free(c);
}

void conns_free(struct conns *t)
{
	free(t->open);
	*t = (struct conns){ 0 };
}
