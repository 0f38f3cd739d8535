/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conns.h"
#include "lib/grow.h"
#include "lib/bsearch.h"

/* Where id is, or would go, in t->open (sorted by id). */
static size_t index_of(const struct conns *t, uint32_t id)
{
	return bsearch_first(t->open, t->nopen, c, (*c)->id < id);
}

/* Where uid is, or would go, in t->users. */
static size_t user_index(const struct conns *t, uint32_t uid)
{
	return bsearch_first(t->users, t->nusers, u, u->uid < uid);
}

size_t conns_of_uid(const struct conns *t, uint32_t uid)
{
	size_t i = user_index(t, uid);
	return i < t->nusers && t->users[i].uid == uid ? t->users[i].nopen : 0;
}

/* One more connection of uid: false when out of memory. */
static bool user_add(struct conns *t, uint32_t uid)
{
	size_t i = user_index(t, uid);
	if (i < t->nusers && t->users[i].uid == uid) {
		t->users[i].nopen++;
		return true;
	}
	if (grow_array((void **)&t->users, &t->cap_users, t->nusers + 1,
		       sizeof(*t->users)))
		return false;
	memmove(&t->users[i + 1], &t->users[i], (t->nusers - i) * sizeof(*t->users));
	t->users[i] = (struct conns_user){ uid, 1 };
	t->nusers++;
	return true;
}

/* One fewer: a user with none left is forgotten. */
static void user_remove(struct conns *t, uint32_t uid)
{
	size_t i = user_index(t, uid);
	if (i == t->nusers || t->users[i].uid != uid || --t->users[i].nopen)
		return;
	memmove(&t->users[i], &t->users[i + 1], (t->nusers - i - 1) * sizeof(*t->users));
	t->nusers--;
}

struct conn *conns_add(struct conns *t, int fd, uint32_t id, int32_t pid,
		       uint32_t uid)
{
	struct conn *c;
	if (grow_array((void **)&t->open, &t->cap_open, t->nopen + 1,
		       sizeof(*t->open)))
		return NULL;
	if (!(c = calloc(1, sizeof(*c))))
		return NULL;
	if (!user_add(t, uid)) {
		free(c);
		return NULL;
	}
	*c = (struct conn){ .fd = fd, .id = id, .pid = pid, .uid = uid };
	uffd_init(&c->uf);
	/* Ids are given in increasing order: a new one goes last. */
	t->open[t->nopen++] = c;
	return c;
}

struct conn *conns_of_pid(const struct conns *t, int32_t pid)
{
	for (size_t i = t->nopen; i-- > 0;)
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
	user_remove(t, c->uid);
}

void conn_free(struct conn *c)
{
	close(c->fd);
	uffd_close(&c->uf);
	rec_ring_unmap(&c->rr);
	free(c);
}

void conns_free(struct conns *t)
{
	free(t->open);
	free(t->users);
	*t = (struct conns){ 0 };
}
