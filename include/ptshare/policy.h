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

/* Table page levels counted in VmPTE; a table at level L spans 2 MiB << 9L. */
enum pt_level { PT_PTE, PT_PMD, PT_PUD, PT_NR_LEVELS };

/* Which mappings a policy considers for sharing. */
enum mm_scope {
	MM_SCOPE_NONE,           /* nothing is shared: today's Linux */
	MM_SCOPE_FILE,           /* file-backed, shared or read-only, >= 2 MiB */
	MM_SCOPE_HUGETLB_SHARED, /* MAP_SHARED hugetlb (mainline PMD sharing) */
};

/* How a process finds a table to share with another. */
enum mm_match {
	/* Same object, same start, end, offset and flags: the same address. */
	MM_MATCH_SAME_RANGE,
	/* Same object pages on the same slots of the table, at any address. */
	MM_MATCH_OBJECT_SLOT,
};

struct mm_policy {
	const char *name;
	unsigned levels;      /* 1u << enum pt_level, for each shareable level */
	enum mm_scope scope;
	enum mm_match match;
	bool link_at_fork;    /* fork links shareable tables instead of copying */
	bool ignore_locked;   /* sharers may differ in MM_VMA_LOCKED */
	bool patch_findings;  /* count where the posted 2005 patch would diverge */
};

extern const struct mm_policy mm_policy_linux;
extern const struct mm_policy mm_policy_mccracken;
extern const struct mm_policy mm_policy_aslr_tolerant;
extern const struct mm_policy mm_policy_hugetlb_pmd;

/* The built-in policies, in report order; NULL-terminated. */
extern const struct mm_policy *const mm_policies[];

/*
 * "mccracken-2005", "aslr-tolerant:pte+pmd+pud", ... into *out.  Returns 0, or
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
	MM_REASON_NR
};

const char *mm_reason_name(enum mm_reason r);

#endif
