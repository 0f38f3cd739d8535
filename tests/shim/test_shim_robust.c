/* SPDX-License-Identifier: MIT */
/*
 * The program must never notice: fds taken over (the shim stops using
 * them), no daemon at all, a daemon that dies or stops reading (records
 * dropped and counted), threads racing (every record, in the order the
 * calls took effect), signal handlers that map memory (no deadlock, even
 * when the handler runs inside an interposed call).
 */
#define _GNU_SOURCE
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

#include "subject_proto.h"
#include "traced.h"

#define PAGE 4096u

/* The subject dup2s over every fd up to 1100, the shim's included, then
 * maps memory: the shim goes quiet instead of writing into the program's
 * pipe (or reading from it, waiting for its EXIT's ack), and leaves fd 1000
 * to the program.  What it maps after the take goes into its record ring,
 * which the daemon reads until the socket's end tells it the connection is
 * over: HELLO, the first map_unmap, then at most the other 12 map_unmaps'
 * records and the EXIT (whose ack is not waited for), in order; the last
 * perhaps half of a pair: the end came between them. */
static void test_fds_taken_over(void **state)
{
	const char *argv[] = { NULL, "closefds", NULL };
	const struct fake_rec *r[32];
	struct traced t;

	traced_run(&t, NULL, NULL, argv);
	assert_int_equal(WEXITSTATUS(t.status), 0);
	assert_string_equal(t.run.text, "pipe holds \"abcdef\"\n");
	size_t n = recs_of(t.d, t.run.pid, r, 32);
	assert_true(n >= 3 && n <= 3 + 2 * 12 + 1);
	assert_int_equal(r[0]->r.h.type, PTS_HELLO);
	for (size_t i = 1; i < n; i++)
		if (r[i]->r.h.type != PTS_EXIT || i + 1 < n)
			assert_int_equal(r[i]->r.h.type, i % 2 ? PTS_MMAP : PTS_MUNMAP);
	traced_free(&t);
}

/* Without a daemon (PTSHARE_SOCKET unset, or naming nothing), the shim
 * changes nothing: same output, same status, no environment added. */
static void test_no_daemon(void **state)
{
	static const char *const scenarios[][4] = {
		{ "script", "/etc/passwd" }, { "fork" }, { "exec", "empty-env" },
		{ "exec-fail" }, { "vfork" }, { "spawn" }, { "threads", "200" },
		{ "exit", "_exit", "4" }, { "closefds" }, { "sigsys" },
		{ "sigdefer" }, { "sigview" }, { "rtsignals", "2000" },
	};
	static const char *const sockets[] = { NULL, "/nonexistent/ptshare.sock" };

	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++) {
		const char *argv[6] = { SUBJECT_PATH };
		struct run_env env;
		struct run plain;

		for (size_t k = 0; k < 4 && scenarios[i][k]; k++)
			argv[k + 1] = scenarios[i][k];
		run_env(&env, false, NULL, NULL);
		run_start(&plain, argv, env.v, NULL);
		int status = run_finish(&plain);
		char *want = run_stable_text(&plain);
		for (size_t s = 0; s < 2; s++) {
			struct run lonely;
			run_env(&env, true, sockets[s], NULL);
			run_start(&lonely, argv, env.v, NULL);
			assert_int_equal(run_finish(&lonely), status);
			char *got = run_stable_text(&lonely);
			assert_string_equal(got, want);
			if (!strcmp(argv[2] ? argv[2] : "", "empty-env"))
				assert_null(strstr(lonely.text, "@env"));
			free(got);
			run_free(&lonely);
		}
		free(want);
		run_free(&plain);
	}
}

/* The daemon dies between two rounds of calls: the program completes. */
static void test_daemon_killed(void **state)
{
	const char *argv[] = { NULL, "rounds", "50", "50", "50", NULL };
	char line[64];
	struct traced t;

	traced_start(&t, NULL, NULL, argv, NULL);
	assert_true(run_line(&t.run, line, sizeof(line)));
	assert_string_equal(line, "ready");
	fake_kill(t.d);
	run_send(&t.run, "x");
	assert_true(run_line(&t.run, line, sizeof(line)));
	run_send(&t.run, "x");
	traced_finish(&t);
	assert_int_equal(t.status, 0);
	assert_string_equal(t.run.text, "ready\nready\ndone\n");
	assert_int_equal(count_of(t.d, t.run.pid, PTS_MMAP), 50);
	assert_int_equal(count_of(t.d, t.run.pid, PTS_EXIT), 0);
	traced_free(&t);
}

/* A daemon that stops reading: the shim drops what does not fit, and
 * tells how many with PTS_LOST once it can send again. */
static void test_lost_records(void **state)
{
	const struct fake_opts opts = { .allow_gaps = true };
	const char *argv[] = { NULL, "rounds", "0", "20000", "10", NULL };
	char line[64];
	struct traced t;

	traced_start(&t, &opts, NULL, argv, NULL);
	assert_true(run_line(&t.run, line, sizeof(line)));
	fake_pause(t.d, true);
	run_send(&t.run, "x");
	assert_true(run_line(&t.run, line, sizeof(line)));
	size_t before = fake_count(t.d);
	fake_pause(t.d, false);
	/* What the pause left in the ring is read before the last round,
	 * whose records, PTS_LOST and EXIT then find room: a shim that found
	 * the daemon late waits for none (test_shim_exit). */
	for (int i = 0; i < 3000 && fake_count(t.d) == before; i++)
		usleep(10000);
	assert_true(fake_count(t.d) > before);
	run_send(&t.run, "x");
	traced_finish(&t);
	assert_int_equal(t.status, 0);
	assert_true(fake_gaps(t.d) > 0);
	assert_int_equal(fake_gaps(t.d), fake_lost(t.d));
	assert_true(count_of(t.d, t.run.pid, PTS_LOST) >= 1);
	assert_int_equal(count_of(t.d, t.run.pid, PTS_EXIT), 1);
	traced_free(&t);
}

/* Per address, maps and unmaps must alternate in the order received. */
struct slot {
	uint64_t addr;
	bool used, mapped;
};

static bool flip(struct slot *table, size_t cap, uint64_t addr, bool map)
{
	size_t i = (addr >> 12) % cap;

	while (table[i].used && table[i].addr != addr)
		i = (i + 1) % cap;
	table[i].used = true;
	table[i].addr = addr;
	if (table[i].mapped == map)
		return false;
	table[i].mapped = map;
	return true;
}

/* Niced, so that the daemon gets the CPU it needs to keep up with 8
 * threads on 2 cores: a daemon that falls behind makes the shim drop
 * records (test_lost_records), and here every one must arrive. */
static void test_threads_in_order(void **state)
{
	enum { ITERATIONS = 2000, CAP = 1 << 16 };
	const char *argv[] = { NULL, "threads", "2000", NULL };
	const struct run_limits lim = { .nice = 19 };
	struct slot *table = calloc(CAP, sizeof(*table));
	struct traced t;

	traced_start(&t, NULL, NULL, argv, &lim);
	traced_finish(&t);
	assert_int_equal(WEXITSTATUS(t.status), 0);
	int32_t pid = t.run.pid;
	size_t total = fake_count(t.d), maps = 0, unmaps = 0;
	for (size_t i = 0; i < total; i++) {
		const struct fake_rec *r = fake_rec(t.d, i);
		if (r->pid != pid)
			continue;
		if (r->r.h.type == PTS_MMAP) {
			assert_true(flip(table, CAP, r->r.mmap.addr, true));
			maps++;
		} else if (r->r.h.type == PTS_MUNMAP) {
			assert_true(flip(table, CAP, r->r.range.addr, false));
			unmaps++;
		}
	}
	assert_int_equal(maps, SUBJECT_THREADS * ITERATIONS);
	assert_int_equal(unmaps, SUBJECT_THREADS * ITERATIONS);
	free(table);
	traced_free(&t);
}

/* A thread maps and unmaps while another keeps signalling it; the handler
 * maps too.  Every call of both is recorded. */
static void test_signal_handlers(void **state)
{
	const char *argv[] = { NULL, "signals", "3000", NULL };
	struct traced t;
	size_t handled = 0, maps = 0;

	traced_run(&t, NULL, NULL, argv);
	assert_int_equal(WEXITSTATUS(t.status), 0);
	assert_non_null(strstr(t.run.text, "signals done"));
	/* One pass: the records are many (every signal the handler took
	 * maps), and nth_of() would make it their square. */
	for (size_t i = 0, total = fake_count(t.d); i < total; i++) {
		const struct fake_rec *r = fake_rec(t.d, i);
		if (r->pid != t.run.pid || r->r.h.type != PTS_MMAP)
			continue;
		maps++;
		handled += r->r.mmap.len == SUBJECT_HANDLER_LEN;
	}
	assert_int_equal(handled, run_number(&t.run, "handled", 0));
	assert_int_equal(maps, 3000 + handled);
	traced_free(&t);
}

/* 20,000 real-time signals with values, sent to a thread that maps and
 * unmaps: each reaches the handler once (some held back to the end of a
 * traced call, queued again with their siginfo), none lost, none twice. */
static void test_rt_signals(void **state)
{
	const char *argv[] = { NULL, "rtsignals", "20000", NULL };
	struct traced t;

	traced_run(&t, NULL, NULL, argv);
	assert_int_equal(t.status, 0);
	assert_string_equal(t.run.text, "rt signals: 20000 received, values "
					"summing to 199990000\n");
	traced_free(&t);
}

/* A seccomp trap turns the real mmap into a SIGSYS whose handler maps
 * memory: the handler runs inside the interposed call, holding nothing it
 * would wait for.  The trapped call is recorded with the handler's
 * result; the handler's own call goes straight through. */
static void test_handler_inside_call(void **state)
{
	const char *argv[] = { NULL, "sigsys", NULL };
	struct traced t;

	traced_run(&t, NULL, NULL, argv);
	assert_int_equal(WEXITSTATUS(t.status), 0);
	assert_non_null(strstr(t.run.text, "sigsys mapped memory"));
	assert_int_equal(count_of(t.d, t.run.pid, PTS_MMAP), 1);
	const struct fake_rec *r = nth_of(t.d, t.run.pid, PTS_MMAP, 0);
	assert_int_equal(r->r.mmap.len, SUBJECT_SIGSYS_LEN);
	assert_int_equal(r->r.mmap.addr, run_number(&t.run, "sigsys", 0));
	assert_int_equal(r->r.h.flags, 0);
	traced_free(&t);
}

/* A signal sent to the program from inside a traced call (by the SIGSYS
 * handler of a trapped mmap) waits for the end of the call: its handler
 * runs once, with the siginfo it was sent with, and its own map and unmap
 * are recorded after the call's record. */
static void test_signal_in_call(void **state)
{
	const char *argv[] = { NULL, "sigdefer", NULL };
	const struct fake_rec *r[8];
	struct traced t;

	traced_run(&t, NULL, NULL, argv);
	assert_int_equal(WEXITSTATUS(t.status), 0);
	assert_non_null(strstr(t.run.text, "sigdefer: mapped memory, handler "
				"ran 1, value 4242, code SI_QUEUE, from self 1"));
	size_t n = recs_of(t.d, t.run.pid, r, 8);
	assert_int_equal(n, 5); /* HELLO, three calls, EXIT */
	assert_int_equal(r[1]->r.h.type, PTS_MMAP);
	assert_int_equal(r[1]->r.mmap.len, SUBJECT_SIGSYS_LEN);
	assert_int_equal(r[2]->r.h.type, PTS_MMAP);
	assert_int_equal(r[2]->r.mmap.len, SUBJECT_HANDLER_LEN);
	assert_int_equal(r[3]->r.h.type, PTS_MUNMAP);
	assert_int_equal(r[3]->r.range.len, SUBJECT_HANDLER_LEN);
	traced_free(&t);
}

/* The shim installs its own function in place of the program's handlers:
 * what the program sees of them (sigaction, signal, sysv_signal, sigset,
 * siginterrupt, SA_RESETHAND after a delivery, siginfo) is what it sees
 * without the shim. */
static void test_handlers_as_installed(void **state)
{
	const char *argv[] = { SUBJECT_PATH, "sigview", NULL };
	struct run_env env;
	struct run plain;
	struct traced t;

	run_env(&env, false, NULL, NULL);
	run_start(&plain, argv, env.v, NULL);
	assert_int_equal(run_finish(&plain), 0);
	traced_run(&t, NULL, NULL, argv);
	assert_int_equal(t.status, 0);
	assert_string_equal(t.run.text, plain.text);
	assert_non_null(strstr(plain.text, "info got 77\n"));
	assert_non_null(strstr(plain.text, "after one delivery: SIG_DFL"));
	run_free(&plain);
	traced_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fds_taken_over),
		cmocka_unit_test(test_no_daemon),
		cmocka_unit_test(test_daemon_killed),
		cmocka_unit_test(test_lost_records),
		cmocka_unit_test(test_threads_in_order),
		cmocka_unit_test(test_signal_handlers),
		cmocka_unit_test(test_handler_inside_call),
		cmocka_unit_test(test_rt_signals),
		cmocka_unit_test(test_signal_in_call),
		cmocka_unit_test(test_handlers_as_installed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
