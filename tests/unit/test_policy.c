/* SPDX-License-Identifier: MIT */
/* The built-in policies (the table in docs/model.md) and mm_policy_parse. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ptshare/mm.h"
#include "ptshare/policy.h"

#define L(x) (1u << (x))

static void same_rules(const struct mm_policy *a, const struct mm_policy *b)
{
	assert_int_equal(a->levels, b->levels);
	assert_int_equal(a->scope, b->scope);
	assert_int_equal(a->match, b->match);
	assert_int_equal(a->link_at_fork, b->link_at_fork);
	assert_int_equal(a->ignore_locked, b->ignore_locked);
	assert_int_equal(a->patch_findings, b->patch_findings);
}

static void builtin_table(void **state)
{
	const struct mm_policy *p;

	p = &mm_policy_linux;
	assert_string_equal(p->name, "linux");
	assert_int_equal(p->scope, MM_SCOPE_NONE);
	assert_int_equal(p->levels, 0);
	assert_false(p->link_at_fork);
	assert_false(p->patch_findings);

	p = &mm_policy_mccracken;
	assert_string_equal(p->name, "mccracken-2005");
	assert_int_equal(p->scope, MM_SCOPE_FILE);
	assert_int_equal(p->levels, L(PT_PTE) | L(PT_PMD));
	assert_int_equal(p->match, MM_MATCH_SAME_RANGE);
	assert_true(p->link_at_fork);
	assert_false(p->ignore_locked);
	assert_true(p->patch_findings);

	p = &mm_policy_aslr_tolerant;
	assert_string_equal(p->name, "aslr-tolerant");
	assert_int_equal(p->scope, MM_SCOPE_FILE);
	assert_int_equal(p->levels, L(PT_PTE) | L(PT_PMD));
	assert_int_equal(p->match, MM_MATCH_OBJECT_SLOT);
	assert_true(p->link_at_fork);
	assert_false(p->ignore_locked);
	assert_false(p->patch_findings);

	p = &mm_policy_hugetlb_pmd;
	assert_string_equal(p->name, "hugetlb-pmd");
	assert_int_equal(p->scope, MM_SCOPE_HUGETLB_SHARED);
	assert_int_equal(p->levels, L(PT_PMD));
	assert_int_equal(p->match, MM_MATCH_OBJECT_SLOT);
	assert_false(p->link_at_fork);
	assert_true(p->ignore_locked);
	assert_false(p->patch_findings);
}

static void builtin_list(void **state)
{
	const struct mm_policy *want[] = { &mm_policy_linux, &mm_policy_mccracken,
					   &mm_policy_aslr_tolerant,
					   &mm_policy_hugetlb_pmd };
	size_t n = 0;

	while (mm_policies[n])
		n++;
	assert_true(n >= 4);
	for (size_t k = 0; k < 4; k++) {
		size_t seen = 0;

		for (size_t i = 0; i < n; i++)
			seen += mm_policies[i] == want[k];
		assert_int_equal(seen, 1);
	}
}

static void parse_names(void **state)
{
	const struct mm_policy *const b[] = { &mm_policy_linux, &mm_policy_mccracken,
					      &mm_policy_aslr_tolerant,
					      &mm_policy_hugetlb_pmd };

	for (size_t i = 0; i < 4; i++) {
		struct mm_policy p;
		char err[128] = "";

		assert_int_equal(mm_policy_parse(b[i]->name, &p, err, sizeof(err)), 0);
		assert_string_equal(p.name, b[i]->name);
		same_rules(&p, b[i]);
	}
}

static void parse_levels(void **state)
{
	struct mm_policy p, want;
	char err[128] = "";

	assert_int_equal(mm_policy_parse("mccracken-2005:pte+pmd+pud", &p, err,
					 sizeof(err)), 0);
	want = mm_policy_mccracken;
	want.levels = L(PT_PTE) | L(PT_PMD) | L(PT_PUD);
	same_rules(&p, &want);

	assert_int_equal(mm_policy_parse("aslr-tolerant:pte", &p, err, sizeof(err)), 0);
	want = mm_policy_aslr_tolerant;
	want.levels = L(PT_PTE);
	same_rules(&p, &want);

	assert_int_equal(mm_policy_parse("mccracken-2005:pmd", &p, err, sizeof(err)), 0);
	want = mm_policy_mccracken;
	want.levels = L(PT_PMD);
	same_rules(&p, &want);

	/* order does not matter */
	assert_int_equal(mm_policy_parse("mccracken-2005:pud+pte", &p, err,
					 sizeof(err)), 0);
	assert_int_equal(p.levels, L(PT_PTE) | L(PT_PUD));
}

/* mshare's options: the minimum size, or the objects named. */
static void parse_mshare(void **state)
{
	struct mm_policy p;
	char err[128] = "";

	assert_int_equal(mm_policy_parse("mshare", &p, err, sizeof(err)), 0);
	assert_true(p.mshare);
	assert_int_equal(p.mshare_min, 2ULL << 20);
	assert_int_equal(p.mshare_nobj, 0);
	assert_int_equal(mm_policy_parse("mshare:min=64M", &p, err, sizeof(err)), 0);
	assert_int_equal(p.mshare_min, 64ULL << 20);
	assert_int_equal(mm_policy_parse("mshare:min=4096", &p, err, sizeof(err)), 0);
	assert_int_equal(p.mshare_min, 4096);
	assert_int_equal(mm_policy_parse("mshare:12+345", &p, err, sizeof(err)), 0);
	assert_int_equal(p.mshare_nobj, 2);
	assert_int_equal(p.mshare_ino[0], 12);
	assert_int_equal(p.mshare_ino[1], 345);
	assert_int_equal(mm_policy_parse("hugetlb-2m", &p, err, sizeof(err)), 0);
	assert_true(p.huge_shmem);
	assert_int_equal(p.scope, MM_SCOPE_SHMEM_HUGE_SHARED);
	assert_int_equal(p.levels, L(PT_PMD));
	assert_int_equal(mm_policy_parse("thp-shmem", &p, err, sizeof(err)), 0);
	assert_true(p.huge_shmem);
	assert_int_equal(p.scope, MM_SCOPE_NONE);
	for (const struct mm_policy *const *q = mm_policies; *q; q++)
		assert_true((*q)->assumption && strlen((*q)->assumption) > 5);
}

static void parse_bad(void **state)
{
	static const char *const bad[] = {
		"", "nosuch", "mccracken", "mccracken-2005x", ":pte",
		"mccracken-2005:", "mccracken-2005:pte+", "mccracken-2005:+pte",
		"mccracken-2005:pte++pmd", "mccracken-2005:foo",
		"mccracken-2005:pte+pgd", "mccracken-2005:pte:pmd",
		"mshare:", "mshare:min=", "mshare:min=2X", "mshare:12M",
		"mshare:1+", "mshare:+1", "mshare:pte", "mshare:min=-1",
		"thp-shmem:pmd",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct mm_policy p;
		char err[128] = "";

		if (mm_policy_parse(bad[i], &p, err, sizeof(err)) != -1)
			fail_msg("mm_policy_parse(\"%s\") accepted", bad[i]);
		if (!err[0])
			fail_msg("mm_policy_parse(\"%s\"): no message", bad[i]);
	}
}

static void reason_names(void **state)
{
	for (int r = 0; r < MM_REASON_NR; r++) {
		const char *n = mm_reason_name((enum mm_reason)r);

		assert_non_null(n);
		assert_true(n[0] != '\0');
		for (int q = 0; q < r; q++)
			assert_string_not_equal(n, mm_reason_name((enum mm_reason)q));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(builtin_table),
		cmocka_unit_test(builtin_list),
		cmocka_unit_test(parse_names),
		cmocka_unit_test(parse_levels),
		cmocka_unit_test(parse_mshare),
		cmocka_unit_test(parse_bad),
		cmocka_unit_test(reason_names),
	};

	return cmocka_run_group_tests_name("unit_policy", tests, NULL, NULL);
}
