/* SPDX-License-Identifier: MIT */
/*
 * The torture suite, arguments (docs/promises.md): every function the shim
 * interposes, called with edge-case arguments and with bad pointers next
 * to the system call it makes (edge_subject), gives the same result and
 * errno, or crashes the same way, under `ptshare run` as without it.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "torture_util.h"

static size_t lines(const char *text)
{
	size_t n = 0;
	for (; *text; text++)
		n += *text == '\n';
	return n;
}

/* The table `which` run plainly and traced: the same bytes, `rows` lines,
 * each of `want` among them. */
static void table(const char *which, size_t rows, const char *const want[])
{
	const char *argv[] = { EDGE_SUBJECT_PATH, which, NULL };
	struct torture t;
	torture_compare(&t, NULL, argv);
	assert_int_equal(t.status, 0);
	assert_int_equal(lines(t.plain.text[0]), rows);
	for (size_t i = 0; want[i]; i++)
		if (!strstr(t.plain.text[0], want[i]))
			fail_msg("no line \"%s\" in\n%s", want[i], t.plain.text[0]);
	assert_int_equal(stream_u64(t.doc, "malformed"), 0);
	torture_free(&t);
}

/* glibc 2.36 reads mremap's fifth argument for MREMAP_FIXED and
 * MREMAP_DONTUNMAP, checks fexecve's arguments before the call, and keeps
 * the posix_spawn of programs linked before 2.15, which runs a file
 * without #! with /bin/sh. */
static const char *const calls_want[] = {
	"mremap MREMAP_DONTUNMAP to a free hint: function at the hint; "
	"syscall at the hint\n",
	"mremap MREMAP_DONTUNMAP to an unaligned hint: function MAP_FAILED "
	"EINVAL; syscall MAP_FAILED EINVAL\n",
	"fexecve with a NULL envp: function -1 EINVAL; syscall ran the program\n",
	"_exit(263): function exit 7; syscall exit 7\n",
	"posix_spawn@GLIBC_2.2.5 of a script without #!: function 0, a child "
	"that exits 9; syscall -\n",
	NULL,
};

#define CALLS_ROWS 75

static void test_calls(void **state)
{
	table("calls", CALLS_ROWS, calls_want);
}

/* The same from a constructor that runs before the shim's: through the
 * shim's first versions of the functions (shim/real.c). */
static void test_calls_before_constructor(void **state)
{
	table("early", 1 + CALLS_ROWS, calls_want);
}

/* The kernel's EFAULT, not a crash in the shim; glibc's own crash where
 * glibc reads the pointer. */
static void test_bad_pointers(void **state)
{
	static const char *const want[] = {
		"execve, path (PROT_NONE): function -1 EFAULT; syscall -1 EFAULT\n",
		"execve, envp (unmapped): function -1 EFAULT; syscall -1 EFAULT\n",
		"execve, LD_PRELOAD running into the page (PROT_NONE): function -1 "
		"EFAULT; syscall -1 EFAULT\n",
		"execve of no file, envp (PROT_NONE): function -1 ENOENT; "
		"syscall -1 ENOENT\n",
		"execveat AT_EMPTY_PATH, path (unmapped): function -1 EFAULT; "
		"syscall -1 EFAULT\n",
		"posix_spawn, envp (PROT_NONE): function error EFAULT; syscall -\n",
		"execvp, file (PROT_NONE): function killed by SIGSEGV; "
		"syscall -1 EFAULT\n",
		NULL,
	};
	table("bad-pointers", 2 * 39, want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_calls, run_tmpdir_setup, run_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_calls_before_constructor, run_tmpdir_setup, run_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_bad_pointers, run_tmpdir_setup, run_tmpdir_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
