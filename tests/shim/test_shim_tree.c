/* SPDX-License-Identifier: MIT */
/*
 * Following a process tree: fork (the child's HELLO before fork returns in
 * it, the parent's FORK), every exec function (EXEC, then the new image's
 * HELLO from the same pid, with the environment kept even when the program
 * passes one without it), failed execs, vfork and posix_spawn children, and
 * a shell running a pipeline.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/clock.h"
#include "traced.h"

#define MAX_RECS 64

static void test_fork(void **state)
{
	const char *argv[] = { NULL, "fork", NULL };
	struct traced t;

	traced_run(&t, NULL, NULL, argv);
	assert_int_equal(WEXITSTATUS(t.status), 0);
	assert_non_null(strstr(t.run.text, "child exit 7"));
	int32_t parent = t.run.pid, child = (int32_t)run_number(&t.run, "forked", 0);
	assert_int_equal(run_number(&t.run, "child-returned", 1), child);

	const struct fake_rec *fork = nth_of(t.d, parent, PTS_FORK, 0);
	assert_non_null(fork);
	assert_int_equal(fork->r.fork.child, child);

	/* The child: its own connection, HELLO with FORKED first. */
	const struct fake_rec *r[MAX_RECS];
	size_t n = recs_of(t.d, child, r, MAX_RECS);
	assert_int_equal(n, 4);
	assert_int_equal(r[0]->r.h.type, PTS_HELLO);
	assert_int_equal(r[0]->r.hello.flags & ~(PTS_HELLO_UFFD | PTS_HELLO_RING), PTS_HELLO_FORKED);
	assert_int_equal(r[0]->r.hello.ppid, parent);
	assert_int_not_equal(r[0]->conn, fork->conn);
	assert_true(r[0]->state == 'S' || r[0]->state == 'R');
	assert_int_not_equal(r[0]->ack_ns, 0);
	assert_int_equal(r[1]->r.h.type, PTS_MMAP);
	assert_int_equal(r[2]->r.h.type, PTS_MUNMAP);
	assert_int_equal(r[3]->r.h.type, PTS_EXIT);
	assert_int_equal(r[3]->r.exit.status, 7);

	/* The parent: nothing of the child's on its connection. */
	n = recs_of(t.d, parent, r, MAX_RECS);
	assert_int_equal(n, 5);
	assert_int_equal(r[1]->r.h.type, PTS_FORK);
	assert_int_equal(r[4]->r.h.type, PTS_EXIT);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(r[i]->conn, r[0]->conn);
	traced_free(&t);
}

/* A forked child with a ring (and no userfaultfd) runs on without its
 * HELLO's ACK: its model is its parent's copy until the daemon reads it
 * between its calls.  A daemon that never answers it costs nothing: the
 * run takes far less than the wait the child would have made. */
static void test_fork_runs_on(void **state)
{
	const char *argv[] = { NULL, "fork", NULL };
	const struct fake_opts opts = { .hold_forked = true };
	struct traced t;
	(void)state;

	uint64_t t0 = now_ns();
	traced_run(&t, &opts, "uffd=0,wait_ms=20000", argv);
	uint64_t took_ms = (now_ns() - t0) / 1000000;
	assert_int_equal(WEXITSTATUS(t.status), 0);
	assert_non_null(strstr(t.run.text, "child exit 7"));
	int32_t child = (int32_t)run_number(&t.run, "forked", 0);
	const struct fake_rec *h = nth_of(t.d, child, PTS_HELLO, 0);
	assert_non_null(h);
	assert_true(h->r.hello.flags & PTS_HELLO_RING);
	assert_int_equal(h->ack_ns, 0);
	assert_int_equal(count_of(t.d, child, PTS_EXIT), 1);
	print_message("the run took %llu ms, its child's wait would be 20000\n",
		      (unsigned long long)took_ms);
	assert_true(took_ms < 10000);
	traced_free(&t);
}

/* The first HELLO of a process other than the traced program's first. */
static const struct fake_rec *first_other_hello(struct fake_daemon *d,
						int32_t parent)
{
	for (size_t i = 0; i < fake_count(d); i++) {
		const struct fake_rec *r = fake_rec(d, i);
		if (r->pid != parent && r->r.h.type == PTS_HELLO)
			return r;
	}
	return NULL;
}

/* How long after the program's HELLO the first process it made said its
 * own, in ms, the fake daemon saying it is behind for behind_ms. */
static uint64_t made_after_ms(const char *mode, int behind_ms,
			      const char *options)
{
	const char *argv[] = { NULL, mode, NULL };
	const struct fake_opts opts = { .behind_ms = behind_ms };
	struct traced t;

	traced_run(&t, &opts, options, argv);
	assert_int_equal(WEXITSTATUS(t.status), 0);
	const struct fake_rec *parent = nth_of(t.d, t.run.pid, PTS_HELLO, 0);
	const struct fake_rec *child = first_other_hello(t.d, t.run.pid);
	assert_non_null(parent);
	assert_non_null(child);
	assert_true(parent->r.hello.flags & PTS_HELLO_RING);
	assert_true(child->ack_ns > parent->ack_ns);
	uint64_t ms = (child->ack_ns - parent->ack_ns) / 1000000;
	print_message("%s: the first new process %llu ms after its parent\n",
		      mode, (unsigned long long)ms);
	traced_free(&t);
	return ms;
}

/* While the daemon says it is behind, a fork or a posix_spawn waits for it
 * to catch up: the processes the program makes cannot pile up at their
 * exits faster than they are read.  A daemon that stays behind is waited
 * for 100 ms at most (CAUGHT_UP_WAIT_MS), wait_ms if that is less.
 * The program's HELLO waits for its ACK (it has a userfaultfd), which the
 * fake daemon sends once it says it is behind. */
static void test_new_process_waits_while_behind(void **state)
{
	(void)state;
	assert_true(made_after_ms("fork", 60, NULL) >= 60);
	assert_true(made_after_ms("spawn", 60, NULL) >= 60);
	uint64_t ms = made_after_ms("fork", 60000, "wait_ms=20000");
	assert_true(ms >= 100 && ms < 10000);
	/* wait_ms bounds the program's HELLO's wait too: one that ran out
	 * on a loaded machine (40 ms did, once in five runs of the suite
	 * beside others) ends every later wait; and a deadline in whole ms
	 * may end up to 1 ms early. */
	ms = made_after_ms("fork", 60000, "wait_ms=80");
	assert_true(ms >= 79 && ms < 10000);
}

/* A daemon killed while it holds the program's calls for a reading (the
 * ring's hold) never lets them go: the call waiting goes on as soon as the
 * connection is gone, not after wait_ms.  So does any wait on a ring word. */
static void test_calls_go_on_when_daemon_dies_holding(void **state)
{
	const char *argv[] = { NULL, "fork", NULL };
	const struct fake_opts opts = { .hold_calls = true };
	struct traced t;
	(void)state;

	uint64_t t0 = now_ns();
	traced_start(&t, &opts, "wait_ms=20000", argv, NULL);
	usleep(300 * 1000); /* its first call waits by now */
	fake_kill(t.d);
	traced_finish(&t);
	uint64_t took_ms = (now_ns() - t0) / 1000000;
	assert_int_equal(WEXITSTATUS(t.status), 0);
	assert_non_null(strstr(t.run.text, "child exit 7"));
	assert_int_equal(count_of(t.d, t.run.pid, PTS_FORK), 0);
	print_message("the run took %llu ms, the call's wait would be 20000\n",
		      (unsigned long long)took_ms);
	assert_true(took_ms < 10000);
	traced_free(&t);
}

/* Children forked while 4 threads keep mapping: each connects (the lock a
 * mapping thread held at the fork is not held in the child) and is
 * announced by a FORK.  The threads may fill the socket of a daemon slower
 * than they are (a loaded machine): what they drop is told by PTS_LOST. */
static void test_fork_while_threads_map(void **state)
{
	enum { CHILDREN = 40 };
	const char *argv[] = { NULL, "fork-threads", "40", NULL };
	const struct run_limits lim = { .nice = 19 };
	const struct fake_opts opts = { .allow_gaps = true };
	int32_t forked[CHILDREN + 1];
	struct traced t;

	traced_start(&t, &opts, NULL, argv, &lim);
	traced_finish(&t);
	assert_int_equal(fake_gaps(t.d), fake_lost(t.d));
	assert_int_equal(WEXITSTATUS(t.status), 0);
	assert_string_equal(t.run.text, "children ok 40\n");
	assert_int_equal(count_of(t.d, t.run.pid, PTS_FORK), CHILDREN);
	assert_int_equal(hellos(t.d, PTS_HELLO_FORKED, forked, CHILDREN + 1),
			 CHILDREN);
	for (size_t i = 0; i < CHILDREN; i++) {
		const struct fake_rec *r[8];
		assert_int_equal(recs_of(t.d, forked[i], r, 8), 4);
		assert_int_equal(r[3]->r.h.type, PTS_EXIT);
	}
	traced_free(&t);
}

/* The new image's environment as it printed it. */
static bool child_env_has(const struct run *run, const char *entry)
{
	char want[4200];

	snprintf(want, sizeof(want), "@env %s\n", entry);
	return strstr(run->text, want) != NULL;
}

static void check_exec(const char *how, const char *path_prefix)
{
	const char *argv[] = { NULL, "exec", how, NULL };
	const struct fake_rec *r[MAX_RECS];
	char want[4200];
	struct traced t;

	traced_run(&t, NULL, "frames=3", argv);
	assert_int_equal(WEXITSTATUS(t.status), 0);
	int32_t pid = t.run.pid;
	size_t n = recs_of(t.d, pid, r, MAX_RECS);
	/* HELLO MMAP MUNMAP EXEC | HELLO MMAP MUNMAP EXIT */
	assert_int_equal(n, 8);
	assert_int_equal(r[3]->r.h.type, PTS_EXEC);
	assert_memory_equal(r[3]->r.exec.path, path_prefix, strlen(path_prefix));
	/* All asked for: the shim's own frames above an exec fit in what
	 * stack.c looks at beyond frames= (unoptimized too). */
	assert_int_equal(r[3]->r.h.nframes, 3);
	assert_int_equal(r[4]->r.h.type, PTS_HELLO);
	assert_int_equal(r[4]->r.hello.flags & ~(PTS_HELLO_UFFD | PTS_HELLO_RING), PTS_HELLO_EXECED);
	assert_true(r[4]->conn > r[3]->conn);
	assert_int_equal(r[4]->r.h.seq, 1);
	assert_int_equal(r[5]->r.h.nframes, 3); /* PTSHARE_OPTIONS came along */
	assert_int_equal(r[7]->r.h.type, PTS_EXIT);
	assert_int_equal(count_of(t.d, pid, PTS_EXEC_FAILED), 0);

	snprintf(want, sizeof(want), "LD_PRELOAD=%s", SHIM_PATH);
	if (!strcmp(how, "foreign-preload"))
		strcat(want, ":/nonexistent/libother.so");
	assert_true(child_env_has(&t.run, want));
	snprintf(want, sizeof(want), "PTSHARE_SOCKET=%s", fake_socket(t.d));
	assert_true(child_env_has(&t.run, want));
	assert_true(child_env_has(&t.run, "PTSHARE_OPTIONS=frames=3"));
	traced_free(&t);
}

static void test_exec_family(void **state)
{
	static const char *const paths[] = { "execve", "empty-env",
		"sandboxed", "foreign-preload", "execv", "execvp", "execvpe",
		"execl", "execlp", "execle" };

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		check_exec(paths[i], SUBJECT_PATH);
	check_exec("fexecve", "/proc/self/fd/");
	check_exec("execveat", "/proc/self/fd/");
}

static void test_exec_fails(void **state)
{
	const char *argv[] = { NULL, "exec-fail", NULL };
	const struct fake_rec *r[MAX_RECS];
	struct traced t;

	traced_run(&t, NULL, NULL, argv);
	assert_non_null(strstr(t.run.text, "execve failed ENOENT"));
	assert_non_null(strstr(t.run.text, "execvp failed ENOENT"));
	size_t n = recs_of(t.d, t.run.pid, r, MAX_RECS);
	assert_int_equal(n, 8);
	assert_int_equal(r[1]->r.h.type, PTS_EXEC);
	assert_string_equal(r[1]->r.exec.path, "/nonexistent/x");
	assert_int_equal(r[2]->r.h.type, PTS_EXEC_FAILED);
	assert_int_equal(r[2]->r.exec.result_errno, ENOENT);
	assert_int_equal(r[3]->r.h.type, PTS_EXEC);
	assert_string_equal(r[3]->r.exec.path, "ptshare-no-such-command");
	assert_int_equal(r[4]->r.h.type, PTS_EXEC_FAILED);
	assert_int_equal(r[7]->r.h.type, PTS_EXIT);
	traced_free(&t);
}

/* Who said HELLO: the subject and the pids listed, nobody else. */
static void assert_hellos(struct fake_daemon *d, const int32_t *pids, size_t n)
{
	int32_t seen[16];
	size_t k = hellos(d, 0, seen, 16);

	assert_int_equal(k, n);
	for (size_t i = 0; i < n; i++) {
		bool found = false;
		for (size_t j = 0; j < k; j++)
			found |= seen[j] == pids[i];
		assert_true(found);
	}
}

/* The vfork child's mapping is its parent's (their memory is one), and
 * goes out as the parent's; its exec and exit send nothing; the image it
 * execs says HELLO itself; a child whose exec fails _exits silently. */
static void test_vfork(void **state)
{
	const char *argv[] = { NULL, "vfork", NULL };
	const struct fake_rec *r[MAX_RECS];
	struct traced t;

	traced_run(&t, NULL, NULL, argv);
	assert_int_equal(WEXITSTATUS(t.status), 0);
	assert_non_null(strstr(t.run.text, "vfork child exit 0"));
	assert_non_null(strstr(t.run.text, "vfork failed exec exit 42"));
	int32_t child = (int32_t)run_number(&t.run, "vforked", 0);
	int32_t pids[] = { t.run.pid, child };
	assert_hellos(t.d, pids, 2);
	size_t n = recs_of(t.d, t.run.pid, r, MAX_RECS);
	/* HELLO, MMAP, MUNMAP, the child's MMAP, MMAP, MUNMAP, EXIT */
	assert_int_equal(n, 7);
	assert_int_equal(r[3]->r.h.type, PTS_MMAP);
	assert_int_equal(r[3]->r.mmap.addr, run_number(&t.run, "vfork-mapped", 0));
	assert_int_equal(count_of(t.d, t.run.pid, PTS_EXEC), 0);
	assert_int_equal(nth_of(t.d, child, PTS_HELLO, 0)->r.hello.flags &
			 ~(PTS_HELLO_UFFD | PTS_HELLO_RING), PTS_HELLO_EXECED);
	assert_int_equal(count_of(t.d, child, PTS_EXIT), 1);
	traced_free(&t);
}

/* posix_spawn children say HELLO by themselves, even with an empty envp. */
static void test_posix_spawn(void **state)
{
	const char *argv[] = { NULL, "spawn", NULL };
	struct traced t;

	traced_run(&t, NULL, NULL, argv);
	assert_int_equal(WEXITSTATUS(t.status), 0);
	assert_non_null(strstr(t.run.text, "spawned exit 0 0"));
	int32_t pids[] = { t.run.pid, (int32_t)run_number(&t.run, "spawned", 0),
			   (int32_t)run_number(&t.run, "spawned", 1) };
	assert_hellos(t.d, pids, 3);
	for (size_t i = 1; i < 3; i++)
		assert_int_equal(count_of(t.d, pids[i], PTS_MMAP), 1);
	traced_free(&t);
}

/* dash forks and execs through glibc: every child is followed, and the
 * output and status are the shell's own. */
static void test_shell_pipeline(void **state)
{
	const char *argv[] = { "/bin/sh", "-c",
			       "echo one; /bin/echo two | /bin/cat; "
			       "(/bin/true); exit 3", NULL };
	struct run plain;
	struct run_env env;
	struct traced t;

	traced_run(&t, NULL, NULL, argv);
	run_env(&env, false, NULL, NULL);
	run_start(&plain, argv, env.v, NULL);
	int status = run_finish(&plain);
	assert_string_equal(t.run.text, plain.text);
	assert_int_equal(t.status, status);
	assert_int_equal(WEXITSTATUS(status), 3);

	int32_t forked[16];
	size_t n = hellos(t.d, PTS_HELLO_FORKED, forked, 16);
	assert_true(n >= 2);
	assert_true(hellos(t.d, PTS_HELLO_EXECED, forked + 8, 8) >= 4);
	n = hellos(t.d, PTS_HELLO_FORKED, forked, 16);
	for (size_t i = 0; i < n; i++) {
		/* each forked child was announced by its parent */
		const struct fake_rec *h = nth_of(t.d, forked[i], PTS_HELLO, 0);
		bool announced = false;
		for (size_t k = 0; nth_of(t.d, h->r.hello.ppid, PTS_FORK, k); k++)
			announced |= nth_of(t.d, h->r.hello.ppid, PTS_FORK, k)
					     ->r.fork.child == forked[i];
		assert_true(announced);
	}
	run_free(&plain);
	traced_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fork),
		cmocka_unit_test(test_fork_runs_on),
		cmocka_unit_test(test_new_process_waits_while_behind),
		cmocka_unit_test(test_calls_go_on_when_daemon_dies_holding),
		cmocka_unit_test(test_fork_while_threads_map),
		cmocka_unit_test(test_exec_family),
		cmocka_unit_test(test_exec_fails),
		cmocka_unit_test(test_vfork),
		cmocka_unit_test(test_posix_spawn),
		cmocka_unit_test(test_shell_pipeline),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
