/* SPDX-License-Identifier: MIT */
/*
 * daemon/log.c: every line of a message said with the daemon's name, and
 * a kind of event said once (keyed by its format, whatever its numbers)
 * until say_again.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "log.h"

/* What stderr got while fn ran, into out. */
static void said_by(void (*fn)(void), char *out, size_t cap)
{
	FILE *f = tmpfile();
	assert_non_null(f);
	int saved = dup(STDERR_FILENO);
	assert_true(saved >= 0);
	assert_true(dup2(fileno(f), STDERR_FILENO) >= 0);
	fn();
	fflush(stderr);
	assert_true(dup2(saved, STDERR_FILENO) >= 0);
	close(saved);
	rewind(f);
	size_t n = fread(out, 1, cap - 1, f);
	out[n] = 0;
	fclose(f);
}

static void two_lines(void)
{
	say("cannot listen on %s: %s\nsee %s", "/x", "No such file", "docs");
}

static void test_say_prefixes_every_line(void **state)
{
	char out[256];
	said_by(two_lines, out, sizeof(out));
	assert_string_equal(out, "ptshared: cannot listen on /x: No such file\n"
				 "ptshared: see docs\n");
}

#define REFUSED "refused a process of uid %u"

static void refused_twice(void)
{
	assert_true(say_once(REFUSED, 1000u));
	assert_false(say_once(REFUSED, 1001u)); /* the same kind of event */
	assert_true(say_once("uid %u is full", 1000u)); /* another kind */
}

static void test_say_once_per_format(void **state)
{
	char out[256];
	said_by(refused_twice, out, sizeof(out));
	assert_string_equal(out, "ptshared: refused a process of uid 1000\n"
				 "ptshared: uid 1000 is full\n");
}

#define FAILING "accept: %s; retrying"

static void failing_then_over(void)
{
	say_once(FAILING, "first");
	say_once(FAILING, "second");
	say_again(FAILING); /* an accept succeeded */
	say_once(FAILING, "third");
}

static void test_say_again(void **state)
{
	char out[256];
	said_by(failing_then_over, out, sizeof(out));
	assert_string_equal(out, "ptshared: accept: first; retrying\n"
				 "ptshared: accept: third; retrying\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_say_prefixes_every_line),
		cmocka_unit_test(test_say_once_per_format),
		cmocka_unit_test(test_say_again),
	};
	return cmocka_run_group_tests_name("daemon_log", tests, NULL, NULL);
}
