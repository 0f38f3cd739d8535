/* SPDX-License-Identifier: MIT */
/* The built-in sharing policies: each is a row of rules (docs/model.md). */
#include <stdio.h>
#include <string.h>

#include "ptshare/policy.h"

#define LEVEL(l) (1u << (l))

const struct mm_policy mm_policy_linux = {
	.name = "linux",
	.scope = MM_SCOPE_NONE,
};

const struct mm_policy mm_policy_mccracken = {
	.name = "mccracken-2005",
	.levels = LEVEL(PT_PTE) | LEVEL(PT_PMD),
	.scope = MM_SCOPE_FILE,
	.match = MM_MATCH_SAME_RANGE,
	.link_at_fork = true,
	.patch_findings = true,
};

const struct mm_policy mm_policy_aslr_tolerant = {
	.name = "aslr-tolerant",
	.levels = LEVEL(PT_PTE) | LEVEL(PT_PMD),
	.scope = MM_SCOPE_FILE,
	.match = MM_MATCH_OBJECT_SLOT,
	.link_at_fork = true,
};

const struct mm_policy mm_policy_hugetlb_pmd = {
	.name = "hugetlb-pmd",
	.levels = LEVEL(PT_PMD),
	.scope = MM_SCOPE_HUGETLB_SHARED,
	.match = MM_MATCH_OBJECT_SLOT,
	.ignore_locked = true,
};

const struct mm_policy *const mm_policies[] = {
	&mm_policy_linux, &mm_policy_mccracken, &mm_policy_aslr_tolerant,
	&mm_policy_hugetlb_pmd, NULL,
};

static const char *const level_names[PT_NR_LEVELS] = { "pte", "pmd", "pud" };

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
			 "aslr-tolerant, hugetlb-pmd)", (int)n, spec);
		return -1;
	}
	*out = **p;
	if (!spec[n])
		return 0;
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
	};
	return r < MM_REASON_NR ? names[r] : "unknown";
}
