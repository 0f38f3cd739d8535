/* SPDX-License-Identifier: MIT */
/*
 * ptshare snapshot on processes it cannot read, or not completely: bad
 * usage, a pid that does not exist, processes of another user, processes
 * that exit while they are read, kernel threads and zombies.
 *
 * Exit status (usage text): 0 report written, 1 nothing could be read,
 * 2 usage error.  A process that cannot be read is listed in not_modelled
 * with its errno; one without an address space (kernel thread, zombie) is
 * skipped silently.
 *
 * Processes that exit mid-read are made to exit at a chosen point, not
 * hoped for: ptshare runs under ptrace, and when it opens one of the
 * victim's /proc files (before or after the open) the test SIGKILLs the
 * victim, waits until it is gone (its parent ignores SIGCHLD, so the kernel
 * reaps it at once), and lets ptshare go on untraced.  A second test reads
 * a tree that keeps forking short-lived children, repeatedly, and checks
 * only what must hold whatever the timing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "json_read.h"
#include "skip.h"
#include "snap_util.h"

#define NOBODY 65534
#define ESRCH_WHAT "exited while it was read"

/*
 * The last command's result and report.  The helpers below replace them, and
 * the teardown frees them, so that a failed assertion (a longjmp out of the
 * test) leaks nothing.
 */
static struct run last_run;
static struct jr_value *last_doc;

static int setup(void **state)
{
	snap_init();
	return 0;
}

/* A test that failed half-way leaves its subject running: stop it. */
static int teardown_test(void **state)
{
	run_free(&last_run);
	jr_free(last_doc);
	last_doc = NULL;
	return groups_stop_all();
}

/* Runs ptshare snapshot with args; fails the test on a sanitizer report. */
static void snapshot(struct run *r, int uid, const char *const *args)
{
	run_free(r);
	const char *argv[24] = { PTSHARE_PATH, "snapshot" };
	size_t n = 2;
	for (; args[n - 2] && n < 23; n++)
		argv[n] = args[n - 2];
	argv[n] = NULL;
	assert_int_equal(run_cmd(r, argv, uid), 0);
	if (run_sanitizer_report(r))
		run_dump(r, "ptshare snapshot", false);
	assert_false(run_sanitizer_report(r));
}

static struct jr_value *stdout_report(const struct run *r)
{
	jr_free(last_doc);
	struct jr_value *doc = last_doc = parse_report_text(r->out, r->outlen);
	if (!doc)
		run_dump(r, "ptshare snapshot", true);
	assert_non_null(doc);
	return doc;
}

static void expect_usage_error(const char *const *args)
{
	struct run *r = &last_run;
	snapshot(r, -1, args);
	if (r->code != 2 || !r->errlen) {
		fprintf(stderr, "args:");
		for (size_t i = 0; args[i]; i++)
			fprintf(stderr, " '%s'", args[i]);
		fprintf(stderr, "\n");
		run_dump(r, "expected a usage error", true);
	}
	assert_int_equal(r->code, 2);
	assert_true(r->errlen > 0);
	assert_int_equal(r->outlen, 0);
	/* One line of what was wrong, then where the help is. */
	const char *try = "Try 'ptshare snapshot --help' for more information.\n";
	char *nl = strchr(r->err, '\n');
	assert_int_equal(strncmp(r->err, "ptshare snapshot: ", 18), 0);
	assert_non_null(nl);
	assert_string_equal(nl + 1, try);
}

static void test_usage(void **state)
{
#define U(...) expect_usage_error((const char *const[]){ __VA_ARGS__, NULL })
	U("--bogus");
	U("--pid");
	U("--tree");
	U("--tree", "--json", "-");
	U("--pid", "abc");
	U("--pid", "12x");
	U("--pid", "");
	U("--pid", "0");
	U("--pid", "-1");
	U("--pid", "2147483648");
	U("--pid", "99999999999999999999999");
	U("--policy", "nosuch");
	U("--policy", "linux,nosuch");
	U("--policy", "mccracken-2005:pte+xyz");
	U("--top", "x");
	U("--min-mapping", "-1");
	U("unexpected");
#undef U
	struct run *r = &last_run;
	snapshot(r, -1, (const char *const[]){ "--help", NULL });
	assert_int_equal(r->code, 0);
	assert_non_null(strstr(r->out, "usage: ptshare snapshot"));
}

static void test_no_such_pid(void **state)
{
	char pid[16];
	snprintf(pid, sizeof(pid), "%d", (int)unused_pid());
	struct run *r = &last_run;
	snapshot(r, -1, (const char *const[]){ "--pid", pid, NULL });
	assert_int_equal(r->code, 1);
	assert_non_null(strstr(r->err, "no process"));
	snapshot(r, -1, (const char *const[]){ "--pid", pid, "--tree", NULL });
	assert_int_equal(r->code, 1);
}

/* The zombie is neither modelled nor listed; alone, nothing is read. */
static void test_zombie(void **state)
{
	struct pgroup g;
	assert_int_equal(subject_start(&g, (const char *const[]){ "zombie", NULL }), 0);
	long parent = g.ready[0], zombie = g.ready[1];
	char state_[16], pid[16];
	proc_status_field((pid_t)zombie, "State", state_, sizeof(state_));
	printf("zombie %ld: State %s\n", zombie, state_);
	assert_int_equal(state_[0], 'Z');

	struct run *r = &last_run;
	snprintf(pid, sizeof(pid), "%ld", parent);
	snapshot(r, -1, (const char *const[]){ "--pid", pid, "--tree", "--json", "-", NULL });
	if (r->code)
		run_dump(r, "snapshot of the zombie's parent", true);
	assert_int_equal(r->code, 0);
	struct jr_value *doc = stdout_report(r);
	assert_int_equal(jr_len(jr_get(doc, "processes")), 1);
	assert_non_null(report_proc(doc, parent));
	assert_null(report_proc(doc, zombie));
	assert_int_equal(jr_len(jr_get(doc, "not_modelled")), 0);

	snprintf(pid, sizeof(pid), "%ld", zombie);
	snapshot(r, -1, (const char *const[]){ "--pid", pid, "--json", "-", NULL });
	assert_int_equal(r->code, 1);
	assert_non_null(strstr(r->err, "no process could be read"));
	doc = stdout_report(r);
	assert_int_equal(jr_len(jr_get(doc, "processes")), 0);
	assert_int_equal(jr_len(jr_get(doc, "not_modelled")), 0);
	assert_int_equal(jr_path_u64(doc, "totals.processes", 1), 0);
	assert_int_equal(group_stop(&g), 0);
}

/* Kernel threads have no address space: skipped, not listed. */
static void test_kernel_threads(void **state)
{
	pid_t k = find_kthreadd();
	if (!k)
		test_skip("no kthreadd visible");
	char pid[16];
	snprintf(pid, sizeof(pid), "%d", (int)k);
	struct run *r = &last_run;
	snapshot(r, -1, (const char *const[]){ "--pid", pid, "--tree", "--json", "-", NULL });
	assert_int_equal(r->code, 1);
	assert_non_null(strstr(r->err, "no process could be read"));
	struct jr_value *doc = stdout_report(r);
	assert_int_equal(jr_len(jr_get(doc, "processes")), 0);
	assert_int_equal(jr_len(jr_get(doc, "not_modelled")), 0);
}

static bool permission_errno(const struct jr_value *skip)
{
	int64_t e = jr_path_i64(skip, "errno", 0);
	return e == 13 || e == 1; /* EACCES, EPERM */
}

/*
 * As uid 65534: a root process cannot be read, its child running as 65534
 * can.  Something modelled: exit 0; nothing: exit 1, the report still
 * written and listing why.
 */
static void test_permission(void **state)
{
	if (geteuid() != 0)
		test_skip("not root");
	struct pgroup g;
	assert_int_equal(subject_start(&g, (const char *const[]){ "perm", NULL }), 0);
	long root = g.ready[0], user = g.ready[1];
	char pid[16];
	snprintf(pid, sizeof(pid), "%ld", root);

	struct run *r = &last_run;
	snapshot(r, NOBODY, (const char *const[]){ "--pid", pid, "--tree", "--json", "-", NULL });
	if (r->code >= 125 && r->code <= 127 && !r->errlen && !r->outlen) {
		/* 125: setuid failed, 126-127: exec failed (a build directory
		 * uid 65534 may not enter). */
		test_skip("ptshare cannot be run as uid %d (exit %d)", NOBODY,
			  r->code);
	}
	if (r->code)
		run_dump(r, "snapshot as nobody of root and a nobody child", true);
	assert_int_equal(r->code, 0);
	struct jr_value *doc = stdout_report(r);
	const struct jr_value *u = report_proc(doc, user);
	assert_non_null(u);
	assert_int_equal(jr_path_u64(u, "uid", 0), NOBODY);
	assert_null(report_proc(doc, root));
	const struct jr_value *s = report_skip(doc, root);
	assert_non_null(s);
	printf("root process as nobody: errno %" PRId64 ", %s\n",
	       jr_path_i64(s, "errno", 0), jr_path_str(s, "what"));
	assert_true(permission_errno(s));
	assert_non_null(jr_path_str(s, "what"));
	assert_int_equal(jr_len(jr_get(doc, "processes")), 1);
	assert_int_equal(jr_len(jr_get(doc, "not_modelled")), 1);

	snapshot(r, NOBODY, (const char *const[]){ "--pid", pid, "--json", "-", NULL });
	assert_int_equal(r->code, 1);
	doc = stdout_report(r);
	assert_int_equal(jr_len(jr_get(doc, "processes")), 0);
	assert_int_equal(jr_len(jr_get(doc, "not_modelled")), 1);
	assert_true(permission_errno(report_skip(doc, root)));

	/* The whole machine as nobody: only nobody's processes are modelled;
	 * everything else listed is unreadable or gone. */
	snapshot(r, NOBODY, (const char *const[]){ "--json", "-", NULL });
	if (r->code)
		run_dump(r, "whole machine as nobody", false);
	assert_int_equal(r->code, 0);
	doc = stdout_report(r);
	assert_non_null(report_proc(doc, user));
	assert_true(permission_errno(report_skip(doc, root)));
	const struct jr_value *procs = jr_get(doc, "processes");
	for (size_t i = 0; i < jr_len(procs); i++)
		assert_int_equal(jr_path_u64(jr_at(procs, i), "uid", 0), NOBODY);
	const struct jr_value *skips = jr_get(doc, "not_modelled");
	size_t denied = 0;
	for (size_t i = 0; i < jr_len(skips); i++) {
		const struct jr_value *k = jr_at(skips, i);
		if (!permission_errno(k)) {
			printf("not modelled: pid %" PRId64 " errno %" PRId64 ": %s\n",
			       jr_path_i64(k, "pid", 0), jr_path_i64(k, "errno", 0),
			       jr_path_str(k, "what"));
			assert_int_equal(jr_path_i64(k, "errno", 0), ESRCH);
		} else {
			denied++;
		}
	}
	printf("whole machine as nobody: %zu modelled, %zu denied\n",
	       jr_len(procs), denied);
	/* The text says them in one line, not one each. */
	snapshot(r, NOBODY, (const char *const[]){ "--top", "1", NULL });
	assert_int_equal(r->code, 0);
	/* (Root's processes come and go between the two readings, but
	 * never down to 3.) */
	assert_true(denied > 3);
	size_t said = 0;
	for (const char *p = r->out; (p = strstr(p, "permission denied")); p++)
		said++;
	if (said != 1 || !strstr(r->out, " processes: permission denied"))
		run_dump(r, "whole machine as nobody, in text", true);
	assert_int_equal(said, 1);
	assert_int_equal(group_stop(&g), 0);
}

/* ---- Processes that exit while they are read ------------------------- */

struct stage {
	const char *file; /* the victim's /proc file */
	int nth;          /* which open of it */
	bool at_exit;     /* once open, rather than before */
	/* The victim may also be skipped silently: it died before ptshare
	 * saw it with an address space, as a zombie would be. */
	bool may_be_absent;
};

/*
 * ptshare reads a process's status when it lists the tree (1st open), then
 * status (2nd), maps, pagemap and status again for VmPTE (through the 2nd
 * open's fd: no open to stop at).
 */
static const struct stage stages[] = {
	{ "status", 2, false, false }, /* gone: the open fails */
	{ "status", 2, true, true },   /* status shows no address space */
	{ "maps", 1, false, false },
	{ "maps", 1, true, false },    /* the read finds the mm gone */
	{ "pagemap", 1, false, false },
	{ "pagemap", 1, true, false }, /* the scan finds the mm gone */
};

static void kill_victim(void *arg)
{
	pid_t pid = *(pid_t *)arg;
	kill(pid, SIGKILL);
	/* Reaped by the kernel (SIGCHLD ignored): wait until it is gone. */
	for (int i = 0; i < 100000 && pid_exists(pid); i++)
		usleep(100);
}

static void test_exit_while_read(void **state)
{
	for (size_t i = 0; i < sizeof(stages) / sizeof(stages[0]); i++) {
		const struct stage *st = &stages[i];
		struct pgroup g;
		assert_int_equal(subject_start(&g, (const char *const[]){ "victim", NULL }), 0);
		long parent = g.ready[0];
		pid_t victim = (pid_t)g.ready[1];
		char pid[16], path[64];
		snprintf(pid, sizeof(pid), "%ld", parent);
		snprintf(path, sizeof(path), "/proc/%d/%s", (int)victim, st->file);
		struct trace_trigger t = { .path = path, .nth = st->nth,
					   .at_exit = st->at_exit,
					   .hook = kill_victim, .arg = &victim };
		const char *argv[] = { PTSHARE_PATH, "snapshot", "--pid", pid,
				       "--tree", "--json", "-", NULL };
		struct run *r = &last_run;
		run_free(r);
		assert_int_equal(run_traced(r, argv, &t), 0);
		printf("victim killed %s open #%d of %s: %s; exit %d\n",
		       st->at_exit ? "after" : "before", st->nth, st->file,
		       t.fired ? "done" : "NOT REACHED", r->code);
		if (r->code || run_sanitizer_report(r))
			run_dump(r, "ptshare snapshot", true);
		assert_true(t.fired);
		assert_false(pid_exists(victim));
		assert_false(run_sanitizer_report(r));
		assert_int_equal(r->code, 0);
		struct jr_value *doc = stdout_report(r);
		assert_non_null(report_proc(doc, parent));
		assert_null(report_proc(doc, victim));
		const struct jr_value *s = report_skip(doc, victim);
		if (s)
			printf("  not_modelled: errno %" PRId64 ", %s\n",
			       jr_path_i64(s, "errno", 0), jr_path_str(s, "what"));
		else
			printf("  not listed\n");
		if (!s && !st->may_be_absent)
			fail_msg("the victim is neither modelled nor listed");
		if (s) {
			assert_int_equal(jr_path_i64(s, "errno", 0), ESRCH);
			assert_string_equal(jr_path_str(s, "what"), ESRCH_WHAT);
		}
		assert_int_equal(jr_len(jr_get(doc, "not_modelled")), s ? 1 : 0);
				assert_int_equal(group_stop(&g), 0);
	}
}

/*
 * A tree that forks a child every 5 ms, each living up to 100 ms, read 20
 * times: ptshare must not fail, every process it lists is modelled or gone
 * while it was read, each reading models the tree's steady child, and the
 * readings catch churning children (how many depends on the machine's
 * load, but not one in 20 readings would mean the tree is not walked).
 */
static void test_churn(void **state)
{
	struct pgroup g;
	assert_int_equal(subject_start(&g, (const char *const[]){ "churn", NULL }), 0);
	long parent = g.ready[0], steady = g.ready[1];
	char pid[16];
	snprintf(pid, sizeof(pid), "%ld", parent);
	size_t modelled = 0, gone = 0;
	for (int i = 0; i < 20; i++) {
		struct run *r = &last_run;
		snapshot(r, -1, (const char *const[]){ "--pid", pid, "--tree",
							"--json", "-", NULL });
		if (r->code)
			run_dump(r, "snapshot of the churning tree", false);
		assert_int_equal(r->code, 0);
		struct jr_value *doc = stdout_report(r);
		assert_non_null(report_proc(doc, parent));
		assert_non_null(report_proc(doc, steady));
		const struct jr_value *procs = jr_get(doc, "processes");
		const struct jr_value *skips = jr_get(doc, "not_modelled");
		for (size_t k = 0; k < jr_len(procs); k++) {
			const struct jr_value *p = jr_at(procs, k);
			long id = (long)jr_path_i64(p, "pid", 0);
			if (id != parent)
				assert_int_equal(jr_path_i64(p, "ppid", 0), parent);
			assert_null(report_skip(doc, id));
		}
		for (size_t k = 0; k < jr_len(skips); k++) {
			const struct jr_value *s = jr_at(skips, k);
			if (jr_path_i64(s, "errno", 0) != ESRCH)
				printf("not modelled: pid %" PRId64 " errno %" PRId64
				       ": %s\n", jr_path_i64(s, "pid", 0),
				       jr_path_i64(s, "errno", 0), jr_path_str(s, "what"));
			assert_int_equal(jr_path_i64(s, "errno", 0), ESRCH);
			assert_string_equal(jr_path_str(s, "what"), ESRCH_WHAT);
		}
		modelled += jr_len(procs) - 2;
		gone += jr_len(skips);
			}
	printf("churn: 20 snapshots, %zu churning children modelled, %zu exited "
	       "while read\n", modelled, gone);
	if (!modelled && !gone)
		fail_msg("20 snapshots caught no churning child");
	assert_int_equal(group_stop(&g), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_usage, teardown_test),
		cmocka_unit_test_teardown(test_no_such_pid, teardown_test),
		cmocka_unit_test_teardown(test_zombie, teardown_test),
		cmocka_unit_test_teardown(test_kernel_threads, teardown_test),
		cmocka_unit_test_teardown(test_permission, teardown_test),
		cmocka_unit_test_teardown(test_exit_while_read, teardown_test),
		cmocka_unit_test_teardown(test_churn, teardown_test),
	};
	return test_group_status(cmocka_run_group_tests_name("snapshot_errors", tests, setup, NULL));
}
