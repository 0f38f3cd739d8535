/* SPDX-License-Identifier: MIT */
/*
 * Sharing policies.  A policy is a small table of rules read by the one model:
 * which mappings may share, at which table levels, how sharers are matched and
 * whether fork links tables instead of copying them.  docs/model.md describes
 * each policy; mm_policy_parse() builds one from "name[:level+level...]".
 */
#ifndef PTSHARE_POLICY_H
#define PTSHARE_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Table page levels counted in VmPTE; a table at level L spans 2 MiB << 9L. */
enum pt_level { PT_PTE, PT_PMD, PT_PUD, PT_NR_LEVELS };

/* Which mappings a policy considers for sharing. */
enum mm_scope {
	MM_SCOPE_NONE,           /* nothing is shared: today's Linux */
	MM_SCOPE_FILE,           /* file-backed, shared or read-only, >= 2 MiB */
	MM_SCOPE_HUGETLB_SHARED, /* MAP_SHARED hugetlb (mainline PMD sharing) */
	/* MAP_SHARED hugetlb, and MAP_SHARED shmem and SysV as if they were
	 * hugetlb with 2 MiB pages (hugetlb-2m) */
	MM_SCOPE_SHMEM_HUGE_SHARED,
	/* MAP_SHARED objects placed in mshare regions (policy mshare) */
	MM_SCOPE_MSHARE,
};

/* How a process finds a table to share with another. */
enum mm_match {
	/* Same object, same start, end, offset and flags: the same address. */
	MM_MATCH_SAME_RANGE,
	/* Same object pages on the same slots of the table, at any address. */
	MM_MATCH_OBJECT_SLOT,
};

/* At most this many objects named in one mshare policy (mshare:INO+INO). */
#define MM_MSHARE_MAX_OBJECTS 16

struct mm_policy {
	const char *name;
	unsigned levels;      /* 1u << enum pt_level, for each shareable level */
	enum mm_scope scope;
	enum mm_match match;
	bool link_at_fork;    /* fork links shareable tables instead of copying */
	bool ignore_locked;   /* sharers may differ in MM_VMA_LOCKED */
	bool patch_findings;  /* count where the posted 2005 patch would diverge */
	/* MAP_SHARED shmem and SysV mappings are mapped by 2 MiB PMD leaves
	 * over every whole aligned 2 MiB span they cover (hugetlb-2m,
	 * thp-shmem): no PTE table there, one fault per span. */
	bool huge_shmem;
	/* hugetlb-2m: the kernel aligns a hugetlb mapping to 2 MiB and
	 * rounds its length up (hugetlb_get_unmapped_area): the world puts
	 * such a mapping of 2 MiB or more, and the mappings placed after
	 * it, where the kernel would (docs/model.md), and none of its pages
	 * needs a PTE table, not even in the spans it does not cover wholly
	 * where it stays (MAP_FIXED).  thp-shmem leaves those to small
	 * pages. */
	bool huge_aligned;
	/* mshare: MAP_SHARED objects' tables live once, in a host, in
	 * regions of 512 GiB; the processes mapping them pay nothing. */
	bool mshare;
	/* Which objects: those named (by inode number; a SysV segment's is
	 * its shmid), or when none is named every MAP_SHARED mapping of at
	 * least mshare_min bytes. */
	unsigned mshare_nobj;
	uint64_t mshare_ino[MM_MSHARE_MAX_OBJECTS];
	uint64_t mshare_min;
	/* cow-pte: fork shares the PTE tables it would copy, and a process
	 * copies a shared one when it first changes it (docs/model.md). */
	bool cow_pte;
	/* Left out of the default set (mm_worlds_init with no list): asked
	 * for by name only. */
	bool opt_in;
	/* What a user must do or accept to get it, in a few words. */
	const char *assumption;
};

extern const struct mm_policy mm_policy_linux;
extern const struct mm_policy mm_policy_mccracken;
extern const struct mm_policy mm_policy_aslr_tolerant;
extern const struct mm_policy mm_policy_hugetlb_pmd;
extern const struct mm_policy mm_policy_hugetlb_2m;
extern const struct mm_policy mm_policy_thp_shmem;
extern const struct mm_policy mm_policy_mshare;
extern const struct mm_policy mm_policy_cow_pte;

/* The built-in policies, in report order; NULL-terminated.  Those marked
 * opt_in are not in the default set. */
extern const struct mm_policy *const mm_policies[];

/*
 * "mccracken-2005", "aslr-tolerant:pte+pmd+pud", "mshare:min=64M",
 * "mshare:1234+5678" (inode numbers), ... into *out.  Returns 0, or
 * -1 with a message in err.
 */
int mm_policy_parse(const char *spec, struct mm_policy *out, char *err,
		    size_t errlen);

/* Why a mapping can or cannot share its tables under a policy. */
enum mm_reason {
	MM_REASON_SHAREABLE,
	MM_REASON_POLICY_SHARES_NOTHING,
	MM_REASON_ANON_PRIVATE,        /* anonymous private memory */
	MM_REASON_PRIVATE_WRITABLE,    /* private and writable */
	MM_REASON_PRIVATE_ANON_PAGES,  /* private with copied-on-write pages */
	MM_REASON_SMALL,               /* smaller than 2 MiB */
	MM_REASON_NOT_HUGETLB_SHARED,  /* policy shares only MAP_SHARED hugetlb */
	MM_REASON_NO_WHOLE_SPAN,       /* covers no whole aligned table span */
	MM_REASON_NOT_SHARED_SHMEM,    /* policy shares only shared shmem/hugetlb */
	MM_REASON_PRIVATE,             /* mshare holds MAP_SHARED objects only */
	MM_REASON_NOT_PLACED,          /* not named, or below mshare's min size */
	MM_REASON_HUGE_PAGES,          /* 2 MiB pages (no PTE table), not shared */
	MM_REASON_NR
};

const char *mm_reason_name(enum mm_reason r);

#endif
