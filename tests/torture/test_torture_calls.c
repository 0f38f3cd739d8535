/* SPDX-License-Identifier: MIT */
/*
 * The torture suite, calls (docs/promises.md): 64 threads mapping and
 * unmapping at once, signal handlers that map, forks while other threads
 * are in the shim, vfork + exec, posix_spawn and clone, and execs of static and set-user-ID programs from a preloaded
 * parent.  Each program prints the same bytes and exits with the same
 * status under `ptshare run` as without it; the report counts every call
 * it could see and names what it could not.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "torture_subject.h"
#include "torture_util.h"

/* Every call of 64 threads reached the daemon, in order, none lost. */
static void test_threads(void **state)
{
	const char *argv[] = { NULL, "threads", NULL };
	struct torture t;
	uint64_t calls = 2; /* HELLO, EXIT */
	for (unsigned id = 0; id < THREADS; id++)
		for (unsigned r = 0; r < THREAD_ROUNDS; r++)
			calls += (id + r) % 16 ? 5 : 4; /* the tail unmap */
	torture_compare(&t, NULL, argv);
	assert_int_equal(t.status, 0);
	assert_int_equal(stream_u64(t.doc, "records"), calls);
	assert_int_equal(stream_u64(t.doc, "lost"), 0);
	assert_int_equal(stream_u64(t.doc, "malformed"), 0);
	assert_int_equal(stream_u64(t.doc, "failed_calls"), 0);
	assert_int_equal(jr_len(jr_get(t.doc, "final_checkpoints")), 1);
	assert_models_at_most_kernel(t.doc, 0);
	torture_free(&t);
}

/* Handlers that map memory, one of them jumping out of the mapping loop
 * it interrupted: every handler runs, nothing is lost or malformed. */
static void test_signal_handlers(void **state)
{
	const char *argv[] = { NULL, "sigmap", NULL };
	char want[64];
	struct torture t;
	torture_compare(&t, NULL, argv);
	snprintf(want, sizeof(want), "sigmap: %d handlers ran, %d jumped",
		 SIGNALS + SIGNALS / 10, SIGNALS / 3);
	assert_non_null(strstr(t.plain.text[0], want));
	assert_int_equal(stream_u64(t.doc, "lost"), 0);
	assert_int_equal(stream_u64(t.doc, "malformed"), 0);
	assert_int_equal(stream_u64(t.doc, "failed_calls"), 0);
	assert_int_equal(jr_len(jr_get(t.doc, "final_checkpoints")), 1);
	assert_models_at_most_kernel(t.doc, 0);
	torture_free(&t);
}

/*
 * Children forked just as new threads take call stacks through call sites
 * not seen before, in SPIN_ROUNDS images: a child that inherited a lock
 * of the unwinder's, or a slot of its cache half written, held by a thread
 * it does not have, would block at its first call stack for ever (its
 * parent kills it after CHILD_BOUND_S, and counts it).  Every child is in
 * the report.
 */
static void test_fork_while_unwinding(void **state)
{
	char rounds[16], want[64 * SPIN_ROUNDS] = "";
	snprintf(rounds, sizeof(rounds), "%d", SPIN_ROUNDS);
	const char *argv[] = { NULL, "forkspin", rounds, NULL };
	struct torture t;
	for (int i = SPIN_ROUNDS; i > 0; i--)
		snprintf(want + strlen(want), sizeof(want) - strlen(want),
			 "forkspin %d: %d of %d children exited as they should\n",
			 i, SPIN_SITES / SPINNERS, SPIN_SITES / SPINNERS);
	torture_compare(&t, NULL, argv);
	assert_string_equal(t.plain.text[0], want);
	assert_int_equal(t.status, 0);
	assert_int_equal(jr_len(jr_get(t.doc, "final_checkpoints")),
			 1 + SPIN_ROUNDS * SPIN_SITES / SPINNERS);
	assert_int_equal(stream_u64(t.doc, "lost"), 0);
	torture_free(&t);
}

/* The final checkpoints of processes with `records` records, all exact;
 * how many. */
static size_t exact_with_records(const struct jr_value *doc, uint64_t records)
{
	const struct jr_value *finals = jr_get(doc, "final_checkpoints");
	size_t n = 0;
	for (size_t i = 0; i < jr_len(finals); i++) {
		const struct jr_value *f = jr_at(finals, i);
		if (jr_path_u64(f, "records", 0) != records)
			continue;
		assert_int_equal(jr_path_i64(f, "model_kb", -1),
				 jr_path_i64(f, "vmpte_kb", -2));
		n++;
	}
	return n;
}

/*
 * vfork + exec, a vfork child whose exec fails, posix_spawn, clone without
 * CLONE_VM, clone(CLONE_VM | CLONE_VFORK) + exec, system().  Every new
 * image says HELLO by itself: the three leaves (HELLO, their mapping,
 * EXIT) and the shell.  The clone child that does not exec and the vfork
 * child whose exec failed are not in the report (docs/shim.md).
 */
static void test_spawn(void **state)
{
	const char *argv[] = { NULL, "spawn", NULL };
	struct torture t;
	torture_compare(&t, NULL, argv);
	assert_int_equal(t.status, 0);
	assert_int_equal(jr_len(jr_get(t.doc, "final_checkpoints")), 5);
	assert_int_equal(finals_untraced(t.doc, true), 0);
	assert_int_equal(exact_with_records(t.doc, 3), 3);
	assert_int_equal(stream_u64(t.doc, "lost"), 0);
	assert_models_at_most_kernel(t.doc, 0);
	torture_free(&t);
}

/*
 * fork + exec, vfork + exec and posix_spawn of path (with arg first): the
 * programs run without the shim, exactly as without ptshare.  The child
 * forked by the traced parent is in the report, `untraced`, and read from
 * /proc; the vfork and posix_spawn children never were the daemon's.
 */
static void exec_untraceable(const char *path, const char *arg,
			     const char *plain_says)
{
	const char *argv[] = { NULL, "exec", path, arg, NULL };
	struct torture t;
	torture_compare(&t, NULL, argv);
	assert_int_equal(t.status, 0);
	assert_non_null(strstr(t.plain.text[0], plain_says));
	assert_int_equal(jr_len(jr_get(t.doc, "final_checkpoints")), 2);
	assert_int_equal(finals_untraced(t.doc, true), 1);
	assert_models_at_most_kernel(t.doc, 0);
	torture_free(&t);
}

static void test_exec_static(void **state)
{
	char says[32];
	snprintf(says, sizeof(says), "fork+exec: exit %d\n", STATIC_STATUS);
	exec_untraceable(TORTURE_STATIC_PATH, NULL, says);
}

/* A copy of the subject, set-user-ID or set-group-ID to nobody (65534):
 * root runs it with AT_SECURE, and ld.so ignores LD_PRELOAD. */
static void exec_secure(mode_t mode)
{
	char dir[64];
	int in, out;
	require_root();
	tmp_make(dir, sizeof(dir));
	const char *copy = tmp_path(dir, "secure_subject");
	assert_true((in = open(TORTURE_SUBJECT_PATH, O_RDONLY)) >= 0);
	assert_true((out = open(copy, O_WRONLY | O_CREAT | O_EXCL, 0700)) >= 0);
	for (char buf[65536];;) {
		ssize_t n = read(in, buf, sizeof(buf));
		assert_true(n >= 0);
		if (!n)
			break;
		assert_int_equal(write(out, buf, (size_t)n), n);
	}
	close(in);
	assert_int_equal(fchown(out, 65534, 65534), 0);
	assert_int_equal(fchmod(out, mode), 0);
	close(out);
	assert_int_equal(chmod(dir, 0755), 0);
	exec_untraceable(copy, "secure", "AT_SECURE 1");
	const char *const files[] = { "secure_subject", NULL };
	tmp_remove(dir, files);
}

static void test_exec_setuid(void **state)
{
	exec_secure(04755);
}

static void test_exec_setgid(void **state)
{
	exec_secure(02755);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_threads, run_tmpdir_setup, run_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_signal_handlers, run_tmpdir_setup, run_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_fork_while_unwinding, run_tmpdir_setup, run_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_spawn, run_tmpdir_setup, run_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_exec_static, run_tmpdir_setup, run_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_exec_setuid, run_tmpdir_setup, run_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_exec_setgid, run_tmpdir_setup, run_tmpdir_teardown),
	};
	return test_group_status(cmocka_run_group_tests(tests, NULL, NULL));
}
