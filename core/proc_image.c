/* SPDX-License-Identifier: MIT */
#include "proc_image.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define READ_TRIES 3

/* Whether a run from index i on, inside [.., end), has pages not `not`. */
static bool any_run(const struct procfs_runs *runs, size_t i, uint64_t end,
		    uint8_t not)
{
	for (; i < runs->n && runs->runs[i].start < end; i++)
		if (!(runs->pages[i] & not))
			return true;
	return false;
}

/*
 * Which mappings hold anonymous pages: in private anonymous memory, any page
 * but the zero page; in a private file mapping, a copied-on-write page,
 * which only a scan asking the kernel about file pages tells (a scan that
 * costs 3.5 times more, so only there).
 */
static int find_anon_pages(int fd, struct proc_image *img)
{
	struct procfs_runs file = { 0 };
	bool *anon = realloc(img->anon_pages, (img->maps.n + 1) * sizeof(*anon));
	if (!anon)
		return -ENOMEM;
	img->anon_pages = anon;
	int r = 0;
	for (size_t i = 0, ri = 0; i < img->maps.n; i++) {
		const struct procfs_vma *v = &img->maps.vmas[i];
		const struct procfs_runs *runs = &img->runs;
		while (ri < runs->n && runs->runs[ri].end <= v->start)
			ri++;
		bool populated = ri < runs->n && runs->runs[ri].start < v->end;
		anon[i] = false;
		if (v->shared || !populated)
			continue;
		if (v->kind == MM_OBJ_ANON) {
			anon[i] = any_run(runs, ri, v->end, PROCFS_PAGE_ZERO);
			continue;
		}
		if ((r = procfs_scan(fd, v->start, v->end, 0, &file)) < 0)
			break;
		r = 0;
		anon[i] = any_run(&file, 0, v->end,
				  PROCFS_PAGE_FILE | PROCFS_PAGE_ZERO);
	}
	procfs_runs_free(&file);
	return r;
}

static int read_once(int pid, const struct procfs_fs_table *fs,
		     struct proc_image *img)
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
	r = procfs_scan(fd, 0, MM_TASK_SIZE, PROCFS_SCAN_NO_FILE, &img->runs);
	if (r >= 0)
		r = find_anon_pages(fd, img);
	close(fd);
	if (r < 0)
		return r;
	uint64_t after;
	if ((r = procfs_vmpte_kb(pid, &after)))
		return r == -ENODATA ? -ESRCH : r;
	img->stable = after == img->status.vmpte_kb;
	return 0;
}

int proc_image_read(int pid, const struct procfs_fs_table *fs,
		    struct proc_image *img)
{
	int r;
	for (int i = 0; i < READ_TRIES; i++)
		if ((r = read_once(pid, fs, img)) || img->stable)
			break;
	return r;
}

void proc_image_free(struct proc_image *img)
{
	procfs_maps_free(&img->maps);
	procfs_runs_free(&img->runs);
	free(img->anon_pages);
	img->anon_pages = NULL;
}

int proc_image_load(struct worlds *ws, const struct proc_image *img, char *err,
		    size_t errlen)
{
	uint32_t pid = (uint32_t)img->status.tgid;
	for (size_t k = 0; k < ws->n; k++) {
		struct mm_world *w = ws->w[k];
		int r = mm_create(w, pid);
		for (size_t i = 0; !r && i < img->maps.n; i++) {
			const struct procfs_vma *v = &img->maps.vmas[i];
			struct mm_mapping m;
			if (procfs_vma_mapping(v, &m))
				continue; /* [vsyscall]: above user space */
			m.anon_pages = img->anon_pages[i];
			r = mm_map(w, pid, &m);
		}
		if (!r) {
			r = mm_observe(w, pid, 0, MM_TASK_SIZE, img->runs.runs,
				       img->runs.n);
			r = r < 0 ? r : 0;
		}
		if (r) {
			snprintf(err, errlen, "%s", mm_world_error(w));
			for (size_t j = 0; j <= k; j++) /* none keeps half of it */
				mm_exit(ws->w[j], pid);
			return r;
		}
	}
	return 0;
}
