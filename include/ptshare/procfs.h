/* SPDX-License-Identifier: MIT */
/*
 * What ptshare reads about a live process from /proc: the process list,
 * /proc/PID/status (identity, state, VmPTE), the mappings of /proc/PID/maps
 * (optionally /proc/PID/smaps) classified into the model's object kinds, and
 * page presence through the PAGEMAP_SCAN ioctl of /proc/PID/pagemap.
 * docs/procfs.md says how each is read and which kernel behaviour it rests on.
 *
 * Every function returns 0 (or a count, or an fd) on success and a negative
 * errno:
 *   -ESRCH   the process does not exist, or lost its address space (exit,
 *            exec) while it was being read;
 *   -EACCES, -EPERM  not allowed to read it;
 *   -EPROTO  text the parser does not understand (a changed kernel format);
 *   -ENOMEM, -EINVAL, or what the failing system call said.
 * Nothing aborts, exits or prints.  Results live in caller-visible structs
 * that the library grows as needed; zero-initialise one before its first use
 * and release it with its _free function.  A struct may be reused: each call
 * replaces its contents.
 */
#ifndef PTSHARE_PROCFS_H
#define PTSHARE_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ptshare/mm.h"

/* ---- Processes ------------------------------------------------------- */

struct procfs_pids {
	int32_t *pids; /* ascending */
	size_t n, cap;
};

/* The numeric entries of /proc: thread-group leaders only. */
int procfs_list_pids(struct procfs_pids *out);
void procfs_pids_free(struct procfs_pids *p);

#define PROCFS_NAME_MAX 64

struct procfs_status {
	int32_t tgid;
	int32_t pid;   /* != tgid when a thread id was asked for */
	int32_t ppid;
	uint32_t uid;  /* real */
	char state;    /* 'R', 'S', 'D', 'Z' (zombie), ... */
	bool has_mm;   /* false for kernel threads and zombies */
	uint64_t vmpte_kb; /* page-table memory; 0 when !has_mm */
	/* A mark of what the process has done: its context switches and
	 * memory sizes (the Vm*, Rss* and HugetlbPages lines) and who it is
	 * (Name, PPid, Uid, Gid), hashed; 0 unless it sleeps (S) with one
	 * thread.  With its run time, the mark of a reading at rest
	 * (procfs_image.rest, docs/procfs.md, "At rest"). */
	uint64_t rest;
	char name[PROCFS_NAME_MAX]; /* escaped as /proc shows it; truncated */
};

int procfs_status_read(int pid, struct procfs_status *out);
int procfs_status_parse(const char *text, size_t len,
			struct procfs_status *out);
/* VmPTE alone; -ENODATA when the process has no address space. */
int procfs_vmpte_kb(int pid, uint64_t *kb);
/* When pid started (clock ticks after boot, /proc/PID/stat's starttime):
 * a process, and not a later one given its pid, is its pid and this. */
int procfs_start_time(int pid, uint64_t *ticks);
int procfs_start_parse(const char *text, size_t len, uint64_t *ticks);
/* The CPU time pid's main thread has run, in ns (/proc/PID/schedstat's
 * first field): the scheduler adds to it at every tick and every pass
 * through schedule() of the task, so it moves whenever the task ran. */
int procfs_runtime_ns(int pid, uint64_t *ns);

/* The cgroup v2 path of pid ("/system.slice/nginx.service": a container
 * or a systemd service is its cgroup), from /proc/PID/cgroup's "0::" line,
 * into path (cap bytes); -ENODATA on a system without cgroup v2,
 * -ENAMETOOLONG when it does not fit. */
int procfs_cgroup_read(int pid, char *path, size_t cap);
int procfs_cgroup_parse(const char *text, size_t len, char *path, size_t cap);

/* The kernel's VMAs of pid that meet [start, end) (end > start), as one
 * range: *lo the first one's start, *hi the last one's end (start, end
 * where no VMA covers them).  PROCMAP_QUERY: -ENOTTY before Linux 6.11. */
int procfs_vma_hull(int pid, uint64_t start, uint64_t end, uint64_t *lo,
		    uint64_t *hi);

/* ---- Filesystems that change what a mapping is ------------------------ */

/*
 * Devices whose files are shmem (tmpfs) or hugetlb objects: the mounts of a
 * process's mount namespace plus the kernel's internal ones (memfd, SysV,
 * shared anonymous memory), which no mountinfo lists.
 */
struct procfs_fs {
	uint64_t dev;        /* makedev(major, minor), as stat's st_dev */
	enum mm_obj_kind kind; /* MM_OBJ_SHMEM or MM_OBJ_HUGETLB */
	uint32_t huge_shift; /* hugetlb page size as a shift, else 0 */
};

struct procfs_fs_table {
	struct procfs_fs *fs;
	size_t n, cap;
};

/* /proc/PID/mountinfo and the internal mounts (found by probing memfds). */
int procfs_fs_table_read(int pid, struct procfs_fs_table *out);
/* Only the mountinfo text: for tests and replays. */
int procfs_fs_table_parse(const char *text, size_t len,
			  struct procfs_fs_table *out);
void procfs_fs_table_free(struct procfs_fs_table *t);

/* ---- Mappings ------------------------------------------------------- */

/* Mappings the kernel names in brackets. */
enum procfs_special {
	PROCFS_SPECIAL_NONE,
	PROCFS_SPECIAL_HEAP,      /* [heap] */
	PROCFS_SPECIAL_STACK,     /* [stack] */
	PROCFS_SPECIAL_VDSO,      /* [vdso]: kernel pages, never copied at fork */
	PROCFS_SPECIAL_VVAR,      /* [vvar], [vvar_vclock]: VM_PFNMAP */
	PROCFS_SPECIAL_VSYSCALL,  /* [vsyscall]: above MM_TASK_SIZE, skip it */
	PROCFS_SPECIAL_ANON_NAME, /* [anon:NAME], [anon_shmem:NAME] */
	PROCFS_SPECIAL_OTHER,     /* [uprobes] and any other [name] */
};

/* The smaps VmFlags ptshare cares about (two-letter names in comments). */
enum procfs_vmflag {
	PROCFS_VMF_SHARED = 1u << 0,        /* sh: VM_SHARED */
	PROCFS_VMF_MAYSHARE = 1u << 1,      /* ms: VM_MAYSHARE (maps 's') */
	PROCFS_VMF_MAYREAD = 1u << 2,       /* mr */
	PROCFS_VMF_MAYWRITE = 1u << 3,      /* mw */
	PROCFS_VMF_LOCKED = 1u << 4,        /* lo */
	PROCFS_VMF_DONTCOPY = 1u << 5,      /* dc: MADV_DONTFORK */
	PROCFS_VMF_WIPEONFORK = 1u << 6,    /* wf */
	PROCFS_VMF_PFNMAP = 1u << 7,        /* pf */
	PROCFS_VMF_MIXEDMAP = 1u << 8,      /* mm */
	PROCFS_VMF_IO = 1u << 9,            /* io */
	PROCFS_VMF_HUGETLB = 1u << 10,      /* ht */
	PROCFS_VMF_HUGEPAGE = 1u << 11,     /* hg: MADV_HUGEPAGE */
	PROCFS_VMF_NOHUGEPAGE = 1u << 12,   /* nh */
	PROCFS_VMF_UFFD_MISSING = 1u << 13, /* um */
	PROCFS_VMF_UFFD_WP = 1u << 14,      /* uw: fork copies such a VMA */
	PROCFS_VMF_UFFD_MINOR = 1u << 15,   /* ui */
};

/* Per-mapping figures of /proc/PID/smaps, in bytes. */
struct procfs_smaps {
	uint32_t vmflags; /* enum procfs_vmflag */
	uint64_t kernel_page_size;
	uint64_t rss;
	uint64_t anonymous;
	uint64_t anon_huge_pages;
	uint64_t file_pmd_mapped;
	uint64_t shmem_pmd_mapped;
	uint64_t swap;
};

struct procfs_vma {
	uint64_t start, end;
	uint64_t offset;       /* as maps shows it: 0 for anonymous memory */
	uint64_t dev;          /* makedev(major, minor) */
	uint64_t ino;          /* SysV: the shmid */
	uint32_t prot;         /* enum mm_prot */
	bool shared;           /* 's': MAP_SHARED (VM_MAYSHARE) */
	bool deleted;          /* " (deleted)" was stripped from path */
	enum mm_obj_kind kind;
	uint32_t huge_shift;   /* hugetlb page size as a shift (21, 30), else 0 */
	enum procfs_special special;
	const char *path;      /* "" when none; owned by the procfs_maps */
	struct procfs_smaps smaps; /* zero unless read from smaps */
};

/* A whole /proc file, NUL-terminated. */
struct procfs_text {
	char *data;
	size_t len, cap;
};

struct procfs_maps {
	struct procfs_vma *vmas; /* in address order */
	size_t n, cap;
	bool has_smaps;
	struct procfs_text text; /* what was read; paths point into it */
};

enum procfs_maps_flag {
	PROCFS_MAPS_SMAPS = 1u << 0, /* read smaps: VmFlags, sizes, page size */
};

/*
 * fs classifies files on tmpfs and hugetlbfs (NULL: by name only, so
 * hugetlb memfds read as shmem and tmpfs files as files).  A process without
 * an address space (kernel thread, zombie) has no mappings.
 */
int procfs_maps_read(int pid, const struct procfs_fs_table *fs, unsigned flags,
		     struct procfs_maps *out);
/* maps or smaps text (told apart by its content). */
int procfs_maps_parse(const char *text, size_t len,
		      const struct procfs_fs_table *fs, struct procfs_maps *out);
void procfs_maps_free(struct procfs_maps *m);

/*
 * The mapping as the model takes it (fixed is false).  Flags other than
 * MM_VMA_SHARED need smaps; without it [vvar] still gets MM_VMA_PFNMAP.
 * -EINVAL for a mapping above MM_TASK_SIZE ([vsyscall]).
 */
int procfs_vma_mapping(const struct procfs_vma *v, struct mm_mapping *out);

/* ---- Page presence ------------------------------------------------- */

/* What the pages of a run are, besides populated. */
enum procfs_page {
	PROCFS_PAGE_FILE = 1u << 0,    /* page cache or shmem, not anonymous */
	PROCFS_PAGE_SWAPPED = 1u << 1, /* a swap entry, not a present page */
	PROCFS_PAGE_ZERO = 1u << 2,    /* the shared zero page */
};

/*
 * The populated runs of a range, sorted; pages[i] (enum procfs_page) says
 * what the pages of runs[i] are, and adjacent runs differ in huge or pages.
 * A populated page that is neither FILE nor ZERO is an anonymous page: in a
 * file mapping, a copied-on-write one (unless PROCFS_SCAN_NO_FILE left FILE
 * out).  exact is false when the kernel has no PAGEMAP_SCAN and 8-byte
 * pagemap entries were read instead: huge is then never set and ZERO never
 * reported (the zero page reads as anonymous).
 */
struct procfs_runs {
	struct mm_run *runs;
	uint8_t *pages;
	size_t n, cap;
	bool exact;
};

enum procfs_scan_flag {
	/*
	 * Leave PROCFS_PAGE_FILE out: the kernel then need not look at each
	 * page, which makes a scan of populated memory ~3.5x faster.  For
	 * mappings whose kind already says (anonymous, shared).
	 */
	PROCFS_SCAN_NO_FILE = 1u << 0,
	PROCFS_SCAN_PAGEMAP_ENTRIES = 1u << 1, /* skip the ioctl (tests) */
	/* only the ioctl: -ENOTTY without it (a range with gaps of
	 * terabytes, whose 8-byte entries would take minutes to read) */
	PROCFS_SCAN_IOCTL = 1u << 2,
};

/* An fd for procfs_scan; -ESRCH for a process without address space. */
int procfs_pagemap_open(int pid);
/*
 * [start, end) page aligned, below MM_TASK_SIZE.  Runs are clipped to the
 * range, so a huge run is leaf-aligned only when the range is.  Memory in
 * PFN-mapped VMAs ([vvar]) is not reported (the kernel shows none).  The
 * ioctl skips holes; the fallback reads 8 bytes per page of the range
 * (~9 ms per GiB), so without PAGEMAP_SCAN scan the mappings one by one,
 * never the whole address space.
 */
int procfs_scan(int pagemap_fd, uint64_t start, uint64_t end, unsigned flags,
		struct procfs_runs *out);
void procfs_runs_free(struct procfs_runs *r);

/*
 * Whether this kernel maps the shared zero page on a read fault in private
 * anonymous memory: 1 it does (stock kernels), 0 it allocates an anonymous
 * page (as where mm_forbids_zeropage() holds; seen on a kernel booted with
 * pvm_no_zero_page=1), as the model's mm_world_set_zero_page() takes it.
 * Asked of a page of the caller's own, read once and scanned.
 * -EOPNOTSUPP without PAGEMAP_SCAN (before 6.7): the 8-byte entries cannot
 * tell the zero page from an anonymous page.
 */
int procfs_zero_page(void);

#endif
