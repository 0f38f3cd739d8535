/* SPDX-License-Identifier: MIT */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "skip.h"

static bool skipped;

bool test_under_ci(void)
{
	const char *ci = getenv("CI");
	return ci && !strcmp(ci, "true");
}

void test_skip(const char *fmt, ...)
{
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (test_under_ci())
		fail_msg("cannot run here, and CI must run every test: %s", why);
	print_message("skipped: %s\n", why);
	skipped = true;
	skip();
}

int test_group_status(int failed)
{
	return failed ? failed : skipped ? TEST_SKIPPED : 0;
}
