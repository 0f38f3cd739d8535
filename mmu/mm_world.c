/* SPDX-License-Identifier: MIT */
/* A world: one policy's model of every process, and its error state. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "mm_internal.h"

struct mm_world *mm_world_new(const struct mm_policy *policy)
{
	struct mm_world *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->policy = *policy;
	mm_pt_pool_init(&w->pool);
	mm_pool_class_init(&w->vmas, sizeof(struct mm_vma), SIZE_MAX);
	if (!(w->empty_pgd = mm_pt_pool_get(&w->pool, PT_PGD))) {
		mm_pt_pool_destroy(&w->pool);
		free(w);
		return NULL;
	}
	w->empty_pgd->share = 1;
	return w;
}

void mm_world_free(struct mm_world *w)
{
	if (!w)
		return;
	while (w->first) {
		struct mm_space *mm = w->first;
		w->first = mm->next;
		mm_layout_free(mm);
		free(mm);
	}
	mm_mshare_free(w);
	for (size_t i = 0; i < w->objects.cap; i++)
		free(w->objects.slot[i].item);
	ptr_map_free(&w->objects);
	ptr_map_free(&w->procs);
	mm_pt_pool_destroy(&w->pool); /* every table page at once */
	mm_pool_class_destroy(&w->vmas); /* and every VMA */
	free(w);
}

const struct mm_policy *mm_world_policy(const struct mm_world *w)
{
	return &w->policy;
}

bool mm_world_fed(const struct mm_world *w)
{
	return !w->follows;
}

void mm_world_tables(const struct mm_world *w, uint64_t out[PT_NR_LEVELS])
{
	memcpy(out, mm_data_of(w)->tables, sizeof(w->tables));
}

size_t mm_world_table_bytes(const struct mm_world *w)
{
	return mm_pt_pool_bytes(&w->pool);
}

void mm_world_limit_tables(struct mm_world *w, uint64_t max)
{
	w->max_tables = max;
}

void mm_world_set_zero_page(struct mm_world *w, bool zero_page)
{
	w->no_zero_page = !zero_page;
}

const char *mm_world_error(const struct mm_world *w)
{
	return w->err;
}

int mm_fail(struct mm_world *w, int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(w->err, sizeof(w->err), fmt, ap);
	va_end(ap);
	return err;
}

/* Out of memory half-way through an operation: the world can no longer be
 * trusted, so every later call fails too. */
int mm_nomem(struct mm_world *w, const char *what)
{
	w->poisoned = true;
	return mm_fail(w, -ENOMEM, "out of memory for %s; the model is "
		       "incomplete from here on", what);
}

/* Every public operation starts here. */
int mm_begin(struct mm_world *w)
{
	if (w->poisoned)
		return -ENOMEM; /* the message of the first failure stays */
	w->err[0] = '\0';
	if (w->copies_due)
		mm_followers_copy_due(w);
	return 0;
}

static bool proc_is(const void *item, const void *key)
{
	return ((const struct mm_space *)item)->pid == *(const uint32_t *)key;
}

struct mm_space *mm_find(const struct mm_world *w, uint32_t pid)
{
	if (w->hint && w->hint->pid == pid)
		return w->hint;
	return ptr_map_get(&w->procs, ptr_map_hash(pid), proc_is, &pid);
}

/* A world that follows (mm_follow.c) is fed nothing: no process, no
 * error. */
struct mm_space *mm_begin_on(struct mm_world *w, uint32_t pid, int *err)
{
	struct mm_space *mm = NULL;
	if ((*err = mm_begin(w)) || w->follows)
		return NULL;
	if (!(mm = mm_find(w, pid)))
		*err = mm_fail(w, -ESRCH, "no process %u in the model", pid);
	else
		w->hint = mm;
	return mm;
}

struct mm_space *mm_space_new(struct mm_world *w, uint32_t pid)
{
	struct mm_space *mm = calloc(1, sizeof(*mm));
	if (!mm || ptr_map_put(&w->procs, ptr_map_hash(pid), mm)) {
		free(mm);
		mm_nomem(w, "a process");
		return NULL;
	}
	mm->w = w;
	mm->pid = pid;
	mm->pgd = w->empty_pgd;
	mm->prev = w->last;
	if (w->last)
		w->last->next = mm;
	else
		w->first = mm;
	w->last = mm;
	return mm;
}

int mm_check_range(struct mm_world *w, uint64_t addr, uint64_t len)
{
	if ((addr | len) & (MM_PAGE_SIZE - 1))
		return mm_fail(w, -EINVAL, "range %#llx+%#llx is not page aligned",
			       (unsigned long long)addr, (unsigned long long)len);
	if (!len)
		return mm_fail(w, -EINVAL, "empty range at %#llx",
			       (unsigned long long)addr);
	if (addr + len < addr || addr + len > MM_TASK_SIZE)
		return mm_fail(w, -EINVAL,
			       "range %#llx+%#llx is outside user space",
			       (unsigned long long)addr, (unsigned long long)len);
	return 0;
}

int mm_create(struct mm_world *w, uint32_t pid)
{
	int r = mm_begin(w);
	if (r || w->follows)
		return r;
	if (mm_find(w, pid))
		return mm_fail(w, -EEXIST, "process %u already exists", pid);
	return mm_space_new(w, pid) ? 0 : -ENOMEM;
}

int mm_exec(struct mm_world *w, uint32_t pid)
{
	int r;
	struct mm_space *mm = mm_begin_on(w, pid, &r);
	if (!mm)
		return r;
	mm_teardown(w, mm);
	mm_layout_free(mm);
	return 0;
}

int mm_exiting(struct mm_world *w, uint32_t pid)
{
	int r;
	struct mm_space *mm = mm_begin_on(w, pid, &r);
	if (!mm)
		return r;
	w->exiting += !mm->exiting;
	mm->exiting = true;
	return 0;
}

int mm_exit(struct mm_world *w, uint32_t pid)
{
	int r;
	struct mm_space *mm = mm_begin_on(w, pid, &r);
	if (!mm)
		return r;
	mm_teardown(w, mm);
	mm_layout_free(mm);
	w->exiting -= mm->exiting;
	ptr_map_del(&w->procs, ptr_map_hash(pid), mm);
	if (mm->prev)
		mm->prev->next = mm->next;
	else
		w->first = mm->next;
	if (mm->next)
		mm->next->prev = mm->prev;
	else
		w->last = mm->prev;
	if (w->hint == mm)
		w->hint = NULL;
	if (mm->pgd != w->empty_pgd)
		mm_pt_pool_put(&w->pool, mm->pgd);
	free(mm);
	return 0;
}
