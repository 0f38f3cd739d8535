/* SPDX-License-Identifier: MIT */
#include "image.h"
#include "lib/grow.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define READ_TRIES 3

/*
 * Scans each mapping on its own, so that a run never straddles two (and
 * the anonymous pages of each cut where they turn exclusive): asking
 * the kernel which pages are page cache costs it 3.5 times more, and only a
 * private file mapping needs the answer (its anonymous pages are its
 * copied-on-write ones); in private anonymous memory every page but the
 * zero page is anonymous; in shared memory none is.
 */
static int scan_mappings(int fd, struct procfs_image *img)
{
	struct procfs_runs part = { 0 };
	int r = 0;
	img->nruns = 0;
	for (size_t i = 0; i < img->maps.n; i++) {
		const struct procfs_vma *v = &img->maps.vmas[i];
		bool priv_file = !v->shared && v->kind != MM_OBJ_ANON;
		if (v->end > MM_TASK_SIZE)
			continue; /* [vsyscall] */
		r = procfs_scan(fd, v->start, v->end,
				priv_file ? 0 : PROCFS_SCAN_NO_FILE, &part);
		if (r < 0)
			break;
		for (size_t k = 0; k < part.n && !r; k++) {
			struct mm_run m = part.runs[k];
			uint8_t not_anon = priv_file ? PROCFS_PAGE_FILE | PROCFS_PAGE_ZERO
						     : PROCFS_PAGE_ZERO;
			m.anon = !v->shared && !(part.pages[k] & not_anon);
			r = procfs_image_add_run(fd, img, &m);
		}
		if (r)
			break;
	}
	procfs_runs_free(&part);
	return r;
}

static int read_once(int pid, const struct procfs_fs_table *fs,
		     struct procfs_image *img)
{
	int r = procfs_status_read(pid, &img->status);
	if (r)
		return r;
	if (!img->status.has_mm)
		return -ENODATA;
	if ((r = procfs_maps_read(pid, fs, 0, &img->maps)))
		return r;
	int fd = procfs_pagemap_open(pid);
	if (fd < 0)
		return fd;
	r = scan_mappings(fd, img);
	close(fd);
	if (r < 0)
		return r;
	uint64_t after;
	if ((r = procfs_vmpte_kb(pid, &after)))
		return r == -ENODATA ? -ESRCH : r;
	img->stable = after == img->status.vmpte_kb;
	return 0;
}

int procfs_image_read(int pid, const struct procfs_fs_table *fs,
		      struct procfs_image *img)
{
	int r;
	for (int i = 0; i < READ_TRIES; i++)
		if ((r = read_once(pid, fs, img)) || img->stable)
			break;
	return r;
}

void procfs_image_free(struct procfs_image *img)
{
	procfs_maps_free(&img->maps);
	free(img->runs);
	img->runs = NULL;
	img->nruns = img->cap_runs = 0;
}

const struct procfs_fs_table *procfs_fs_cache_get(struct procfs_fs_cache *c,
						  int pid)
{
	char path[64], ns[64] = "self";
	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", pid);
	ssize_t n = readlink(path, ns, sizeof(ns) - 1);
	ns[n > 0 ? n : 4] = '\0';
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->e[i].ns, ns))
			return &c->e[i].fs;
	size_t i = c->n < PROCFS_FS_CACHE_SIZE ? c->n++ : PROCFS_FS_CACHE_SIZE - 1;
	procfs_fs_table_free(&c->e[i].fs);
	snprintf(c->e[i].ns, sizeof(c->e[i].ns), "%s", ns);
	if (procfs_fs_table_read(n > 0 ? pid : getpid(), &c->e[i].fs) < 0)
		procfs_fs_table_free(&c->e[i].fs); /* names alone then */
	return &c->e[i].fs;
}

void procfs_fs_cache_free(struct procfs_fs_cache *c)
{
	for (size_t i = 0; i < c->n; i++)
		procfs_fs_table_free(&c->e[i].fs);
	c->n = 0;
}
