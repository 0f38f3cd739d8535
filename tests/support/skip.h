/* SPDX-License-Identifier: MIT */
/*
 * A test that cannot run on this machine.  cmocka's skip() alone shows as
 * a pass in ctest; so a skip makes the test program exit with
 * TEST_SKIPPED, which ctest is told about (SKIP_RETURN_CODE) and counts
 * as "Not Run".  Under CI=true nothing is skipped: CI installs and runs as
 * everything a test needs (scripts/test.sh), so a missing prerequisite
 * there is a failure.
 */
#ifndef PTSHARE_TESTS_SKIP_H
#define PTSHARE_TESTS_SKIP_H

#include <stdbool.h>

#define TEST_SKIPPED 77

/* CI=true in the environment (.ci/run sets it). */
bool test_under_ci(void);

/* Ends the running cmocka test: failed under CI, else skipped, with why
 * printed either way. */
void test_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* main's status from cmocka_run_group_tests()'s: the failures, else
 * TEST_SKIPPED when a test skipped, else 0. */
int test_group_status(int failed);

#endif
