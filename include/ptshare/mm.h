/* SPDX-License-Identifier: MIT */
/*
 * The page-table model: a user-space model of x86-64 4-level page tables for a
 * set of processes, with refcounted table pages and a pluggable sharing policy.
 *
 * A world (struct mm_world) is one instance of the model under one policy.
 * Every policy is its own world fed the same operations; nothing here does a
 * syscall or any I/O.  The rules each operation follows are in docs/model.md.
 *
 * All operations return 0 (or a non-negative count) on success and a negative
 * errno value when the operation is impossible (unaligned or wrapping range,
 * unknown process, overlap without MAP_FIXED, fault outside any mapping...).
 * A rejected operation leaves the world unchanged and mm_world_error() says
 * why.  Running out of memory poisons the world: every later call fails
 * with -ENOMEM, since a half-applied operation cannot be trusted.  (protect
 * over a hole is rejected with -ENOMEM, as mprotect() does; that is an
 * ordinary rejection.)
 */
#ifndef PTSHARE_MM_H
#define PTSHARE_MM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ptshare/policy.h"

#define MM_PAGE_SHIFT 12
#define MM_PAGE_SIZE (1ULL << MM_PAGE_SHIFT)
/* x86-64 with 4-level paging: user addresses are below 128 TiB - 4 KiB. */
#define MM_TASK_SIZE ((1ULL << 47) - MM_PAGE_SIZE)

/* Bytes spanned by one table page of a level: 2 MiB, 1 GiB, 512 GiB. */
#define MM_SPAN(level) (1ULL << (21 + 9 * (level)))

enum mm_prot {
	MM_PROT_READ = 1u << 0,
	MM_PROT_WRITE = 1u << 1,
	MM_PROT_EXEC = 1u << 2,
};

/* The vm_flags that matter to table accounting and to matching sharers. */
enum mm_vma_flag {
	MM_VMA_SHARED = 1u << 0,     /* MAP_SHARED (VM_MAYSHARE) */
	MM_VMA_LOCKED = 1u << 1,     /* VM_LOCKED */
	MM_VMA_DONTFORK = 1u << 2,   /* MADV_DONTFORK: not inherited */
	MM_VMA_WIPEONFORK = 1u << 3, /* MADV_WIPEONFORK: child gets it empty */
	MM_VMA_PFNMAP = 1u << 4,     /* VM_PFNMAP/VM_MIXEDMAP: always copied at fork */
};

/* What backs a mapping.  Objects are told apart by (kind, dev, ino). */
enum mm_obj_kind {
	MM_OBJ_ANON,    /* private anonymous: no object */
	MM_OBJ_FILE,    /* a regular file (device + inode) */
	MM_OBJ_SHMEM,   /* shmem: memfd, MAP_SHARED|MAP_ANONYMOUS, /dev/zero, tmpfs */
	MM_OBJ_SYSV,    /* a SysV shared memory segment (ino = shmid) */
	MM_OBJ_HUGETLB, /* hugetlbfs file or MFD_HUGETLB memfd */
	MM_OBJ_NR_KINDS
};

struct mm_object_id {
	uint32_t kind; /* enum mm_obj_kind */
	uint64_t dev;
	uint64_t ino;
};

/* The hash of an object's identity (for ptshare/ptr_map.h). */
uint64_t mm_object_id_hash(const struct mm_object_id *id);

struct mm_mapping {
	uint64_t addr;
	uint64_t len;
	uint64_t offset;         /* byte offset into the object (0 for anonymous) */
	struct mm_object_id obj;
	uint32_t prot;           /* enum mm_prot */
	uint32_t flags;          /* enum mm_vma_flag */
	uint32_t huge_shift;     /* hugetlb page size as a shift (21 or 30), else 0 */
	bool fixed;              /* MAP_FIXED: replace whatever is mapped there */
	/* The kernel chose addr (no MAP_FIXED): a world whose kernel would
	 * place it elsewhere (hugetlb-2m) places it as that kernel would. */
	bool kernel_placed;
	/* A VMA /proc listed: kept as listed, merged with no neighbour.  The
	 * kernel keeps apart VMAs whose flags /proc/PID/maps does not show
	 * (VM_ACCOUNT: a RELRO segment beside its read-only neighbour). */
	bool listed;
};

enum mm_remap_flag {
	MM_REMAP_MAYMOVE = 1u << 0,
	MM_REMAP_FIXED = 1u << 1,
	MM_REMAP_DONTUNMAP = 1u << 2,
};

enum mm_advice {
	MM_ADV_DONTNEED,
	MM_ADV_REMOVE,
	MM_ADV_FREE,
	MM_ADV_DONTFORK,
	MM_ADV_DOFORK,
	MM_ADV_WIPEONFORK,
	MM_ADV_KEEPONFORK,
	MM_ADV_NR
};

/*
 * A run of populated pages, as a pagemap scan delivers them.  huge: the run is
 * mapped by huge leaf entries (a PMD entry per 2 MiB, or a PUD entry per 1 GiB
 * in a 1 GiB hugetlb mapping) rather than by PTEs; it must be leaf-aligned.
 * anon: anonymous pages (not page cache, not the zero page): in a private
 * mapping, proof that it was written and has an anon_vma.  written: of
 * those, pages this process alone maps (pagemap's PM_MMAP_EXCLUSIVE): after
 * a fork, pages one side wrote since (its copy, and the other side's
 * original, mapped once now); cow-pte copies a shared table holding one.
 */
struct mm_run {
	uint64_t start;
	uint64_t end;
	bool huge;
	bool anon;
	bool written;
};

/* One process under the world's policy. */
struct mm_proc_stats {
	uint32_t pid;
	/* Table pages this process links, kernel-style: VmPTE = sum * 4 KiB. */
	uint64_t tables[PT_NR_LEVELS];
	/* Of those, the ones some other process (or mapping) uses too. */
	uint64_t shared[PT_NR_LEVELS];
	/* Sum over its tables of 4 KiB / users, and under mshare its share of
	 * each region it maps (the region's tables / the processes mapping
	 * it); only from mm_world_stats(). */
	double pss_bytes;
	uint64_t faults;          /* first touches reported by mm_fault() */
	uint64_t faults_observed; /* first touches inferred by mm_observe() */
	uint64_t fork_tables_copied;
	uint64_t fork_pages_copied;
	uint64_t fork_tables_linked;
	/* cow-pte: shared PTE tables it copied when it first changed them
	 * (the copies fork deferred). */
	uint64_t cow_copies;
	uint64_t vmas;
	uint64_t mapped_bytes;
	/* Under mshare, of tables[PT_PTE], those whose span meets a private
	 * mapping, which mshare cannot hold; only from mm_world_stats(). */
	uint64_t private_pte_tables;
};

struct mm_world_totals {
	uint64_t processes;
	uint64_t distinct[PT_NR_LEVELS]; /* table pages that exist system-wide */
	uint64_t linked[PT_NR_LEVELS];   /* sum over processes of their view */
	/* Of distinct, those the mshare host holds for its regions: no
	 * process's VmPTE counts them (policy mshare; else 0). */
	uint64_t host[PT_NR_LEVELS];
};

struct mm_world;

struct mm_world *mm_world_new(const struct mm_policy *policy);
void mm_world_free(struct mm_world *w);
const struct mm_policy *mm_world_policy(const struct mm_world *w);
const char *mm_world_error(const struct mm_world *w);
/* Whether a process in w maps the object. */
bool mm_world_maps_object(const struct mm_world *w,
			  const struct mm_object_id *id);
/* Whether w takes operations: false while it follows (mm_worlds_follow). */
bool mm_world_fed(const struct mm_world *w);

int mm_create(struct mm_world *w, uint32_t pid);
int mm_fork(struct mm_world *w, uint32_t parent, uint32_t child);
int mm_exec(struct mm_world *w, uint32_t pid);
int mm_exit(struct mm_world *w, uint32_t pid);
/*
 * pid is exiting (it said so, and its last reading was made): it stays in
 * the model, its tables counted, until mm_exit(), but maps no page in the
 * kernel's eyes from now on, and the pages it shared turn exclusive in
 * the others without a write.  cow-pte: a page another process maps alone
 * (mm_run.written) in a PTE table it shares with exiting processes alone
 * breaks nothing: the kernel dropped their links, and the table is the
 * reader's own (docs/model.md, "cow-pte").
 */
int mm_exiting(struct mm_world *w, uint32_t pid);

int mm_map(struct mm_world *w, uint32_t pid, const struct mm_mapping *m);
int mm_unmap(struct mm_world *w, uint32_t pid, uint64_t addr, uint64_t len);
int mm_protect(struct mm_world *w, uint32_t pid, uint64_t addr, uint64_t len,
	       uint32_t prot);
/* new_addr is where the kernel put the result (== old_addr when in place). */
int mm_remap(struct mm_world *w, uint32_t pid, uint64_t old_addr,
	     uint64_t old_len, uint64_t new_addr, uint64_t new_len,
	     uint32_t flags);
int mm_advise(struct mm_world *w, uint32_t pid, uint64_t addr, uint64_t len,
	      enum mm_advice advice);

/* Returns 1 when the touch is a fault under this policy, 0 when the page was
 * already present in the table the process uses. */
int mm_fault(struct mm_world *w, uint32_t pid, uint64_t addr, bool write);

/*
 * Faults every page of [addr, addr + len) in order, exactly as mm_fault()
 * on each page would (MAP_POPULATE, MADV_POPULATE_*), but a PTE table's
 * pages at a time: one walk per 2 MiB, not per page.  Returns how many
 * pages were faults, or the error of the first page mm_fault() would
 * refuse, the pages before it faulted in.  len 0 does nothing, as
 * madvise() does.
 */
int mm_fault_range(struct mm_world *w, uint32_t pid, uint64_t addr,
		   uint64_t len, bool write);

/* The pages of [start, end) that are populated are exactly those in runs
 * (sorted, non-overlapping, inside [start, end)).  Returns the number of
 * pages newly seen present. */
int mm_observe(struct mm_world *w, uint32_t pid, uint64_t start, uint64_t end,
	       const struct mm_run *runs, size_t nruns);

/* One process; pss_bytes is left 0 (it needs the whole world). */
int mm_proc_stats(const struct mm_world *w, uint32_t pid,
		  struct mm_proc_stats *out);
/* Its counters and vmas alone, without the walk of its tables and
 * mappings (tables, shared and mapped_bytes left 0): what a process
 * leaving the world keeps, at every exit. */
int mm_proc_counters(const struct mm_world *w, uint32_t pid,
		     struct mm_proc_stats *out);

/*
 * Every process (up to cap of them into out, in creation order) and the
 * system-wide totals.  Returns the number of processes.
 */
int mm_world_stats(struct mm_world *w, struct mm_proc_stats *out, size_t cap,
		   struct mm_world_totals *totals);

/* Table pages that exist system-wide, per level: distinct[] of
 * mm_world_stats() without its walk. */
void mm_world_tables(const struct mm_world *w, uint64_t out[PT_NR_LEVELS]);

/* Bytes the world holds from the system for its table pages. */
size_t mm_world_table_bytes(const struct mm_world *w);

/*
 * At most max table pages at once (0, the default: no limit).  The one
 * that would pass it fails its operation as out of memory, and the world
 * stays failed.  For a caller whose input may claim more memory than it
 * can afford to model: the work grows with the tables (tests/fuzz).
 */
void mm_world_limit_tables(struct mm_world *w, uint64_t max);

/*
 * Whether the kernel maps the shared zero page on a read fault in private
 * anonymous memory (true, the default, as stock kernels do).  A kernel
 * where mm_forbids_zeropage() holds allocates an anonymous page instead
 * (do_anonymous_page()), and with it the VMA's anon_vma: such a read then
 * gives the VMA anon pages as a write does, and fork copies its tables.
 * A fact of the kernel the processes ran on (procfs_zero_page() asks
 * it); set before the first operation.
 */
void mm_world_set_zero_page(struct mm_world *w, bool zero_page);

/*
 * Where this world's policy diverges from the posted patch it models
 * (see docs/model.md, "Findings").  Returns the number of kinds.
 */
struct mm_finding {
	const char *name;
	const char *what;
	uint64_t count;
};
size_t mm_world_findings(const struct mm_world *w, struct mm_finding *out,
			 size_t cap);

/* A mapping of a process, and why it can or cannot share under the policy. */
struct mm_vma_info {
	uint64_t start;
	uint64_t end;
	uint64_t offset;
	struct mm_object_id obj;
	uint32_t prot;
	uint32_t flags;
	uint32_t huge_shift;
	bool anon_pages;        /* has anonymous pages (the kernel's anon_vma) */
	enum mm_reason reason;  /* under this world's policy */
	uint64_t tables;        /* PTE tables (and deposits) whose span it meets */
	uint64_t shared;        /* of those, the shared ones */
};

/* Calls fn on each mapping of pid in address order until fn returns
 * non-zero, and returns that value (0 when it went through them all). */
int mm_proc_vmas(const struct mm_world *w, uint32_t pid,
		 int (*fn)(const struct mm_vma_info *vma, void *arg), void *arg);
/* The same for the mappings meeting [start, end) only: a lookup, not a
 * walk of every mapping. */
int mm_proc_vmas_in(const struct mm_world *w, uint32_t pid, uint64_t start,
		    uint64_t end,
		    int (*fn)(const struct mm_vma_info *vma, void *arg),
		    void *arg);

/*
 * Every PTE table of the world (deposits too) once, to the first mapping
 * whose span meets it: processes in creation order, each one's mappings in
 * address order (the mshare host's tables to the first mapping placed in
 * them).  fn(pid, mapping, its tables; mapping.tables is not counted) for
 * each mapping that owns some, until fn returns non-zero, which is
 * returned.  Costs a walk of every mapping's tables (the report's).
 */
int mm_world_pte_owners(struct mm_world *w,
			int (*fn)(uint32_t pid, const struct mm_vma_info *v,
				  uint64_t tables, void *arg),
			void *arg);

/* Checks every invariant; 0 when they hold, else -EUCLEAN and the error says
 * which.  Costs a walk of every table: for tests. */
int mm_check(struct mm_world *w);

/* One world per policy, fed the same operations; `linux` is always the
 * first, the baseline every other policy is compared with. */
#define MM_WORLDS_MAX 8

struct mm_worlds {
	struct mm_policy policy[MM_WORLDS_MAX];
	struct mm_world *w[MM_WORLDS_MAX];
	size_t n;
};

/* list: comma-separated policy specs (mm_policy_parse), or NULL for every
 * built-in policy.  Returns 0, or -1 with a message in err. */
int mm_worlds_init(struct mm_worlds *ws, const char *list, char *err,
		   size_t errlen);
/*
 * Before the worlds' first operation: every world whose policy can differ
 * from linux's only on mappings of some kinds (every built-in one but
 * cow-pte: docs/model.md, *World*) follows linux's world: it is fed
 * nothing, and read from linux's under its own policy, until linux's
 * world comes to hold such a mapping, when it takes a copy of it.  Every
 * operation must then go to linux's world first, then to each world
 * mm_world_fed() says is fed at that moment (a follower given one
 * ignores it, as cheaply as a call can); a caller that feeds some worlds
 * only must not ask.
 */
void mm_worlds_follow(struct mm_worlds *ws);
void mm_worlds_free(struct mm_worlds *ws);

#endif
