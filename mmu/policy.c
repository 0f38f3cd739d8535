/* SPDX-License-Identifier: MIT */
/* The built-in sharing policies: each is a row of rules (docs/model.md). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptshare/policy.h"

#define LEVEL(l) (1u << (l))

const struct mm_policy mm_policy_linux = {
	.name = "linux",
	.scope = MM_SCOPE_NONE,
	.assumption = "today's kernel",
};

const struct mm_policy mm_policy_mccracken = {
	.name = "mccracken-2005",
	.levels = LEVEL(PT_PTE) | LEVEL(PT_PMD),
	.scope = MM_SCOPE_FILE,
	.match = MM_MATCH_SAME_RANGE,
	.link_at_fork = true,
	.patch_findings = true,
	.assumption = "needs the 2005 patch (never merged); same address "
		      "in every process (fork, or ASLR off)",
};

const struct mm_policy mm_policy_aslr_tolerant = {
	.name = "aslr-tolerant",
	.levels = LEVEL(PT_PTE) | LEVEL(PT_PMD),
	.scope = MM_SCOPE_FILE,
	.match = MM_MATCH_OBJECT_SLOT,
	.link_at_fork = true,
	.assumption = "needs a kernel patch (none posted); any address",
};

const struct mm_policy mm_policy_hugetlb_pmd = {
	.name = "hugetlb-pmd",
	.levels = LEVEL(PT_PMD),
	.scope = MM_SCOPE_HUGETLB_SHARED,
	.match = MM_MATCH_OBJECT_SLOT,
	.ignore_locked = true,
	.assumption = "today's kernel; hugetlb mappings only",
};

/* As if PostgreSQL's huge_pages=on: 2 MiB hugetlb pages for the big shared
 * mappings, and mainline's PMD sharing over them (docs/model.md). */
const struct mm_policy mm_policy_hugetlb_2m = {
	.name = "hugetlb-2m",
	.levels = LEVEL(PT_PMD),
	.scope = MM_SCOPE_SHMEM_HUGE_SHARED,
	.match = MM_MATCH_OBJECT_SLOT,
	.ignore_locked = true,
	.huge_shmem = true,
	.huge_aligned = true,
	.assumption = "needs vm.nr_hugepages and the program to ask "
		      "(huge_pages=on, MAP_HUGETLB, SHM_HUGETLB)",
};

/* shmem transparent huge pages, shmem_enabled=always: PMD-mapped, never
 * shared. */
const struct mm_policy mm_policy_thp_shmem = {
	.name = "thp-shmem",
	.scope = MM_SCOPE_NONE,
	.huge_shmem = true,
	.assumption = "needs shmem_enabled=always (tmpfs: huge=always)",
};

/* Anthony Yznaga's mshare v3: MAP_SHARED objects of 2 MiB or more placed
 * in regions whose tables below the PGD exist once. */
const struct mm_policy mm_policy_mshare = {
	.name = "mshare",
	.levels = LEVEL(PT_PTE) | LEVEL(PT_PMD) | LEVEL(PT_PUD),
	.scope = MM_SCOPE_MSHARE,
	.mshare = true,
	.mshare_min = 2ULL << 20,
	.assumption = "needs the program to opt in, and the mshare series "
		      "(not merged)",
};

/* Chih-En Lin's COW-PTE (v5, 2023): fork shares PTE tables, a write
 * copies.  Opt-in: what a program writes after fork is not yet seen. */
const struct mm_policy mm_policy_cow_pte = {
	.name = "cow-pte",
	.levels = LEVEL(PT_PTE),
	.scope = MM_SCOPE_NONE,
	.cow_pte = true,
	.opt_in = true,
	.assumption = "needs the COW-PTE series (not merged) and "
		      "prctl(PR_SET_COW_PTE) before fork",
};

const struct mm_policy *const mm_policies[] = {
	&mm_policy_linux, &mm_policy_mccracken, &mm_policy_aslr_tolerant,
	&mm_policy_hugetlb_pmd, &mm_policy_hugetlb_2m, &mm_policy_thp_shmem,
	&mm_policy_mshare, &mm_policy_cow_pte, NULL,
};

static const char *const level_names[PT_NR_LEVELS] = { "pte", "pmd", "pud" };

/* "123" or "64M": a number with an optional K, M or G. */
static int parse_size(const char *s, size_t len, uint64_t *out)
{
	char buf[32], *end;
	if (!len || len >= sizeof(buf))
		return -1;
	memcpy(buf, s, len);
	buf[len] = 0;
	errno = 0;
	unsigned long long v = strtoull(buf, &end, 10);
	unsigned shift = 0;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	}
	if (errno || end == buf || *end || buf[0] == '-' ||
	    v > (UINT64_MAX >> shift))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

/* mshare's options: "min=SIZE", or the objects' inode numbers "INO+INO". */
static int parse_mshare(const char *spec, const char *s,
			struct mm_policy *out, char *err, size_t errlen)
{
	if (!strncmp(s, "min=", 4)) {
		if (parse_size(s + 4, strlen(s + 4), &out->mshare_min))
			goto bad;
		return 0;
	}
	for (;;) {
		size_t len = strcspn(s, "+");
		uint64_t ino;
		if (out->mshare_nobj == MM_MSHARE_MAX_OBJECTS) {
			snprintf(err, errlen, "at most %d objects in '%s'",
				 MM_MSHARE_MAX_OBJECTS, spec);
			return -1;
		}
		if (parse_size(s, len, &ino) || (len && s[len - 1] > '9'))
			goto bad;
		out->mshare_ino[out->mshare_nobj++] = ino;
		if (!s[len])
			return 0;
		s += len + 1;
	}
bad:
	snprintf(err, errlen, "bad mshare option in '%s' (mshare:min=SIZE, "
		 "or the objects' inode numbers: mshare:INO+INO)", spec);
	return -1;
}

/* "name" or "name:pte+pmd+pud": the levels replace the policy's own. */
int mm_policy_parse(const char *spec, struct mm_policy *out, char *err,
		    size_t errlen)
{
	size_t n = strcspn(spec, ":");
	const struct mm_policy *const *p = mm_policies;
	while (*p && (strlen((*p)->name) != n || strncmp((*p)->name, spec, n)))
		p++;
	if (!*p) {
		snprintf(err, errlen,
			 "unknown policy '%.*s' (linux, mccracken-2005, "
			 "aslr-tolerant, hugetlb-pmd, hugetlb-2m, thp-shmem, "
			 "mshare, cow-pte)", (int)n, spec);
		return -1;
	}
	*out = **p;
	if (!spec[n])
		return 0;
	if (out->mshare)
		return parse_mshare(spec, spec + n + 1, out, err, errlen);
	if (out->scope == MM_SCOPE_NONE) {
		snprintf(err, errlen, "policy '%s' shares no level", out->name);
		return -1;
	}
	out->levels = 0;
	for (const char *s = spec + n + 1;;) {
		size_t len = strcspn(s, "+");
		unsigned l = 0;
		while (l < PT_NR_LEVELS && (strlen(level_names[l]) != len ||
					    strncmp(level_names[l], s, len)))
			l++;
		if (l == PT_NR_LEVELS) {
			snprintf(err, errlen,
				 "unknown level '%.*s' in '%s' (pte, pmd, pud)",
				 (int)len, s, spec);
			return -1;
		}
		out->levels |= LEVEL(l);
		if (!s[len])
			return 0;
		s += len + 1;
	}
}

const char *mm_reason_name(enum mm_reason r)
{
	static const char *const names[MM_REASON_NR] = {
		[MM_REASON_SHAREABLE] = "shareable",
		[MM_REASON_POLICY_SHARES_NOTHING] = "policy shares nothing",
		[MM_REASON_ANON_PRIVATE] = "anonymous private",
		[MM_REASON_PRIVATE_WRITABLE] = "private writable",
		[MM_REASON_PRIVATE_ANON_PAGES] = "private with copied-on-write pages",
		[MM_REASON_SMALL] = "smaller than 2 MiB",
		[MM_REASON_NOT_HUGETLB_SHARED] = "not shared hugetlb",
		[MM_REASON_NO_WHOLE_SPAN] = "covers no whole aligned table span",
		[MM_REASON_NOT_SHARED_SHMEM] = "not shared shmem or hugetlb",
		[MM_REASON_PRIVATE] = "private (mshare holds shared objects only)",
		[MM_REASON_NOT_PLACED] = "not placed in an mshare region",
		[MM_REASON_HUGE_PAGES] = "2 MiB pages, no PTE table, not shared",
	};
	return r < MM_REASON_NR ? names[r] : "unknown";
}
