/* SPDX-License-Identifier: MIT */
/* Helpers shared by the files of procfs/; not part of the public API. */
#ifndef PTSHARE_PROCFS_INTERNAL_H
#define PTSHARE_PROCFS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/fs.h>

#include "lib/grow.h"
#include "ptshare/procfs.h"

/* The shift of a power of two (a page size); 0 for 0. */
static inline uint32_t procfs_log2(uint64_t v)
{
	return v ? 63 - (uint32_t)__builtin_clzll(v) : 0;
}

/* The uapi of linux/fs.h since 6.11, for older installed headers. */
#ifndef PROCMAP_QUERY
#define PROCMAP_QUERY _IOWR('f', 17, struct procmap_query)

enum procmap_query_flags {
	PROCMAP_QUERY_VMA_READABLE = 0x01,
	PROCMAP_QUERY_VMA_WRITABLE = 0x02,
	PROCMAP_QUERY_VMA_EXECUTABLE = 0x04,
	PROCMAP_QUERY_VMA_SHARED = 0x08,
	PROCMAP_QUERY_COVERING_OR_NEXT_VMA = 0x10,
	PROCMAP_QUERY_FILE_BACKED_VMA = 0x20,
};

struct procmap_query {
	__u64 size;
	__u64 query_flags;
	__u64 query_addr;
	__u64 vma_start;
	__u64 vma_end;
	__u64 vma_flags;
	__u64 vma_page_size;
	__u64 vma_offset;
	__u64 inode;
	__u32 dev_major;
	__u32 dev_minor;
	__u32 vma_name_size;
	__u32 build_id_size;
	__u64 vma_name_addr;
	__u64 build_id_addr;
};
#endif

/* Opens /proc/PID/NAME read-only; a vanished /proc/PID gives -ESRCH. */
int procfs_open(int pid, const char *name);

/*
 * Reads fd from where it is to its end into t.  check_mm: fd is a maps-like
 * file, which the kernel ends early (a short, clean EOF) once the address
 * space it was opened on is gone; such a truncated read gives -ESRCH.
 */
int procfs_read_fd(int fd, struct procfs_text *t, bool check_mm);
int procfs_read_file(int pid, const char *name, struct procfs_text *t,
		     bool check_mm);
/* A copy of len bytes of text, NUL-terminated. */
int procfs_text_set(struct procfs_text *t, const char *text, size_t len);

/* A cursor over one line of text; parse functions advance it. */
struct procfs_cursor {
	const char *p;
	const char *end;
};

bool procfs_parse_hex(struct procfs_cursor *c, uint64_t *out);
bool procfs_parse_dec(struct procfs_cursor *c, uint64_t *out);
bool procfs_parse_char(struct procfs_cursor *c, char ch);
void procfs_skip_blanks(struct procfs_cursor *c);
/* The next line of [*pos, end) without its newline; false at the end. */
bool procfs_next_line(const char **pos, const char *end,
		      struct procfs_cursor *line);
/* If line starts with "key:", moves past it and the blanks after it. */
bool procfs_parse_key(struct procfs_cursor *line, const char *key);

/* The entry for a device, or NULL. */
const struct procfs_fs *procfs_fs_find(const struct procfs_fs_table *t,
				       uint64_t dev);
/* The path a file object (device, inode) was first read with, and whether
 * it was deleted then (names.c): NULL when not known yet. */
struct procfs_names;
struct procfs_name {
	uint64_t dev, ino;
	char *path;
	bool deleted;
};
const struct procfs_name *procfs_names_find(const struct procfs_names *t,
					    uint64_t dev, uint64_t ino);
/* Known from now on: NULL without memory. */
const struct procfs_name *procfs_names_add(struct procfs_names *t,
					   uint64_t dev, uint64_t ino,
					   const char *path, bool deleted);
/* Everything forgotten once the table is full, at the start of a reading
 * (the paths of a reading being taken stay valid until the next). */
void procfs_names_trim(struct procfs_names *t);
/* maps.c: a path's " (deleted)" cut off, in place; whether it had one. */
bool procfs_path_cut_deleted(char *path, size_t *len);
/* Whether m's mappings are in address order, none overlapping the one
 * before: a read of a process that maps meanwhile may not be (maps.c). */
bool procfs_maps_ordered(const struct procfs_maps *m);

/* Kind, huge page size and special name of a parsed mapping. */
void procfs_classify(struct procfs_vma *v, const struct procfs_fs_table *fs);
/* An smaps field line ("Rss:  4 kB", "VmFlags: rd wr"); fields ptshare
 * does not use are skipped.  -EPROTO for a malformed value. */
int procfs_smaps_field(struct procfs_cursor *line, struct procfs_smaps *s);

/* Appends a populated range, merging it into the last run when it can. */
int procfs_runs_append(struct procfs_runs *r, uint64_t start, uint64_t end,
		       bool huge, uint8_t pages);
/* The 8-byte /proc/PID/pagemap entries from at (page aligned) on, at most
 * cap of them and none from end on, into e: how many, or -errno (-ESRCH:
 * the process was reaped since the open). */
ssize_t procfs_pagemap_entries(int fd, uint64_t at, uint64_t end,
			       uint64_t *e, size_t cap);
/* Fallback of procfs_scan: the 8-byte entries of /proc/PID/pagemap. */
int procfs_scan_entries(int fd, uint64_t start, uint64_t end, bool file,
			struct procfs_runs *out);

#endif
