/* SPDX-License-Identifier: MIT */
/*
 * Page faults seen on userfaultfds (docs/faults.md), end to end:
 * faults_subject under `ptshare run --faults MODE --json --record`.  The
 * subject checks its own data and registrations (exit status 0 when they
 * held); the test checks the report: exact fault counts per process in
 * `all` mode, one per span in `table` mode, what sharing avoids, the same
 * from a replay of the trace; the program unharmed when the daemon dies
 * while it waits in a fault; a user without a userfaultfd told why, and
 * reported from pagemap.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pwd.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "faults_subject.h"
#include "run_util.h"

#define MCC "mccracken-2005"
#define UNPRIVILEGED "nobody"
#define HUGE_PAGES_WANTED 8 /* 2 MiB pages the hugetlb test reserves */

static const size_t parent_writes[REGIONS] = { PARENT_WRITES };
static const size_t child_reads[REGIONS] = { CHILD_READS };

struct traced {
	char dir[64];
	struct cmd c;
	struct jr_value *doc;
	long pid[2];          /* from the subject's "@pids" or "@pid" */
};

/* subject run with args under MODE (NULL: the default mode); with
 * --daemon-timeout 0 when unwatched: the test stops and ends the daemon
 * itself. */
static void traced_start_of(struct traced *t, const char *mode,
			    const char *interval, const char *subject,
			    const char *const args[], const struct cmd_opts *o,
			    bool unwatched)
{
	const char *argv[26] = { PTSHARE_PATH, "run", "--interval", interval,
				 "--json", tmp_path(t->dir, "report.json"),
				 "--record", tmp_path(t->dir, "trace"),
				 "-o", tmp_path(t->dir, "report.txt") };
	size_t n = 10;
	if (mode) {
		argv[n++] = "--faults";
		argv[n++] = mode;
	}
	if (unwatched) {
		argv[n++] = "--daemon-timeout";
		argv[n++] = "0";
	}
	argv[n++] = "--";
	argv[n++] = subject;
	for (size_t i = 0; args[i]; i++)
		argv[n++] = args[i];
	cmd_start(&t->c, argv, o);
}

static void traced_start(struct traced *t, const char *mode,
			 const char *interval, const char *const args[],
			 const struct cmd_opts *o, bool unwatched)
{
	traced_start_of(t, mode, interval, FAULTS_SUBJECT_PATH, args, o,
			unwatched);
}

/* The subject's pids from its last "@pid..." line. */
static void read_pids(struct traced *t)
{
	const char *at = strstr(t->c.text[0], "@pid");
	if (!at || sscanf(at + strcspn(at, " "), "%ld %ld", &t->pid[0],
			  &t->pid[1]) < 1)
		fail_msg("no pids from the subject:\n%s", t->c.text[0]);
}

/* Its end: status 0 and the report read. */
static void traced_finish(struct traced *t)
{
	int status = cmd_finish(&t->c);
	assert_no_sanitizer_report(&t->c);
	if (status)
		fail_msg("status %d; stdout:\n%s\nstderr:\n%s", status, t->c.text[0],
			 t->c.text[1]);
	read_pids(t);
	t->doc = report_read(tmp_path(t->dir, "report.json"));
}

/* Runs the subject with args under MODE; status 0 and the report read. */
static void traced_run(struct traced *t, const char *mode, const char *interval,
		       const char *const args[])
{
	tmp_make(t->dir, sizeof(t->dir));
	traced_start(t, mode, interval, args, NULL, false);
	traced_finish(t);
}

/* Timer checkpoints of a process in a trace, against a count. */
struct timer_wait {
	const char *trace;
	int32_t pid;
	size_t want;
};

static bool timer_read(const void *arg)
{
	const struct timer_wait *w = arg;
	return trace_timer_checkpoints(w->trace, w->pid) >= w->want;
}

static void traced_free(struct traced *t)
{
	jr_free(t->doc);
	cmd_free(&t->c);
	const char *const made[] = { "report.json", "report.txt", "trace",
				     "replay.json", NULL };
	tmp_remove(t->dir, made);
}

/* faults.POLICY.seen of pid's last checkpoint in doc. */
static uint64_t seen(const struct jr_value *doc, long pid, const char *policy)
{
	const struct jr_value *f = report_final(doc, pid);
	if (!f)
		fail_msg("pid %ld is not in the report", pid);
	const struct jr_value *p = jr_get(jr_get(f, "faults"), policy);
	if (!p)
		fail_msg("pid %ld: no faults for %s", pid, policy);
	return jr_path_u64(p, "seen", UINT64_MAX);
}

static void assert_mode(const struct jr_value *doc, long pid, const char *mode)
{
	const struct jr_value *f = report_final(doc, pid);
	assert_non_null(f);
	assert_string_equal(jr_path_str(f, "fault_mode"), mode);
}

/* The trace replays to the same report, fault counts and all. */
static void assert_replays(struct traced *t)
{
	assert_replay_same(PTSHARE_PATH, tmp_path(t->dir, "trace"), "--json",
			   tmp_path(t->dir, "report.json"),
			   tmp_path(t->dir, "replay.json"));
}

static size_t sum(const size_t *v)
{
	size_t n = 0;
	for (int r = 0; r < REGIONS; r++)
		n += v[r];
	return n;
}

static size_t spans(size_t pages)
{
	return (pages * 4096 + (2u << 20) - 1) / (2u << 20);
}

/*
 * all: every fault over a tmpfs file, a memfd and shared anonymous memory,
 * in the parent and in its forked child.  The parent: its writes, the
 * zeros it reads, the child's pages it reads; the child: its reads of the
 * parent's pages (MINOR) and its writes.  mccracken-2005 shares the whole
 * spans the parent filled: the child faults only on its own new pages.
 */
static void test_all_counts(void **state)
{
	const char *const args[] = { "script", "all", NULL };
	struct traced t = { 0 };
	traced_run(&t, "all", "0", args);
	assert_string_equal(jr_path_str(t.doc, "stream.fault_mode"), "all");
	assert_mode(t.doc, t.pid[0], "all");
	assert_mode(t.doc, t.pid[1], "all");
	assert_int_equal(seen(t.doc, t.pid[0], "linux"),
			 sum(parent_writes) + PARENT_ZERO_READS + CHILD_WRITES);
	assert_int_equal(seen(t.doc, t.pid[1], "linux"),
			 sum(child_reads) + CHILD_WRITES);
	assert_int_equal(seen(t.doc, t.pid[1], MCC), CHILD_WRITES);
	assert_int_equal(jr_path_u64(t.doc, "stream.faults_outside", 1), 0);
	assert_finals_exact(t.doc, 2);
	assert_replays(&t);
	traced_free(&t);
}

/*
 * table: one fault per process per 2 MiB span touched, each span
 * registered once (the subject sees the spans it touched released and the
 * next one not, also after a timer checkpoint and a second round).  The
 * child's first touch of each span the parent filled is no fault under
 * mccracken-2005; that of the span it fills itself is.
 */
static void test_table_once_per_span(void **state)
{
	const char *const args[] = { "script", "table", NULL };
	struct traced t = { 0 };
	tmp_make(t.dir, sizeof(t.dir));
	traced_start(&t, "table", "1", args, NULL, false);
	const char *line;
	long pid = 0;
	while ((line = cmd_line(&t.c)) && sscanf(line, "@timer %ld", &pid) != 1)
		;
	if (!pid)
		fail_msg("no @timer from the subject:\n%s", t.c.text[0]);
	/* A timer checkpoint of it begun once it had released its spans. */
	struct timer_wait w = { tmp_path(t.dir, "trace"), (int32_t)pid, 0 };
	w.want = trace_timer_checkpoints(w.trace, w.pid) + 2;
	assert_true(eventually(timer_read, &w));
	assert_int_equal(write(t.c.in, "go\n", 3), 3);
	traced_finish(&t);
	size_t parent = 0, child = 0;
	for (int r = 0; r < REGIONS; r++) {
		parent += spans(parent_writes[r]);
		child += spans(child_reads[r]);
	}
	parent += 1; /* the span of the child's pages, which it reads */
	child += 1;  /* the span of its own pages */
	assert_string_equal(jr_path_str(t.doc, "stream.fault_mode"), "table");
	assert_int_equal(seen(t.doc, t.pid[0], "linux"), parent);
	assert_int_equal(seen(t.doc, t.pid[1], "linux"), child);
	assert_int_equal(seen(t.doc, t.pid[1], MCC), 1);
	assert_int_equal(jr_path_u64(t.doc, "stream.faults_outside", 1), 0);
	assert_replays(&t);
	traced_free(&t);
}

/* all: MADV_REMOVE, mremap, munmap and MAP_FIXED followed: each page
 * touched after them is a fault again, or moved along. */
static void test_mapping_calls(void **state)
{
	const char *const args[] = { "events", NULL };
	struct traced t = { 0 };
	traced_run(&t, "all", "0", args);
	assert_int_equal(seen(t.doc, t.pid[0], "linux"),
			 EVENTS_WRITES + EVENTS_REMOVED + EVENTS_MOVED_WRITES +
			 EVENTS_TAIL_WRITES);
	assert_int_equal(jr_path_u64(t.doc, "stream.refused", 1), 0);
	traced_free(&t);
}

/* table: mremap of a mapping a release split succeeds (the subject
 * checks); the trace shows the failed attempt and the one after. */
static void test_mremap_of_split_mapping(void **state)
{
	const char *const args[] = { "splitremap", NULL };
	struct traced t = { 0 };
	traced_run(&t, "table", "0", args);
	assert_int_equal(jr_path_u64(t.doc, "stream.failed_calls", 0), 1);
	assert_int_equal(seen(t.doc, t.pid[0], "linux"), 1);
	traced_free(&t);
}

static long read_long(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;
	if (!f || fscanf(f, "%ld", &v) != 1)
		fail_msg("cannot read %s", path);
	fclose(f);
	return v;
}

static void write_long(const char *path, long v)
{
	FILE *f = fopen(path, "w");
	if (!f || fprintf(f, "%ld\n", v) < 0 || fclose(f))
		fail_msg("cannot write %s: %s", path, strerror(errno));
}

#define NR_HUGEPAGES "/proc/sys/vm/nr_hugepages"
#define FREE_HUGEPAGES "/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages"

/* HUGE_PAGES_WANTED 2 MiB pages more for a test: how many there were,
 * to give back (huge_give_back). */
static long huge_reserve(void)
{
	long before = read_long(NR_HUGEPAGES);
	write_long(NR_HUGEPAGES, before + HUGE_PAGES_WANTED);
	if (read_long(FREE_HUGEPAGES) < (long)(HUGE_BYTES >> 21)) {
		write_long(NR_HUGEPAGES, before);
		fail_msg("cannot reserve %d huge pages", HUGE_PAGES_WANTED);
	}
	return before;
}

static void huge_give_back(long before)
{
	write_long(NR_HUGEPAGES, before);
}

/*
 * hugetlb, all: MISSING only (the subject checks no MINOR registration),
 * resolved by a copy of a zeroed huge page: the parent's two written pages
 * and its read one are faults; the child's reads of pages in the page
 * cache are not.  The 2 MiB pages are reserved for the run and given back.
 */
static void test_hugetlb(void **state)
{
	long before = huge_reserve();
	const char *const args[] = { "hugetlb", NULL };
	struct traced t = { 0 };
	traced_run(&t, "all", "0", args);
	huge_give_back(before);
	assert_int_equal(seen(t.doc, t.pid[0], "linux"), HUGE_WRITTEN + 1);
	assert_int_equal(seen(t.doc, t.pid[1], "linux"), 0);
	assert_finals_exact(t.doc, 2);
	traced_free(&t);
}

/* Ranges the processes of doc registered with a userfaultfd of their own. */
static uint64_t own_uffd_ranges(const struct jr_value *doc)
{
	const struct jr_value *finals = jr_get(doc, "final_checkpoints");
	uint64_t n = 0;
	for (size_t i = 0; i < jr_len(finals); i++)
		n += jr_path_u64(jr_at(finals, i), "own_userfaultfd.ranges", 0);
	return n;
}

/*
 * A program with a userfaultfd of its own (own_uffd_subject) registers
 * parts of shared anonymous memory (MISSING), of a memfd in the page cache
 * (MINOR) and of hugetlb memory (MISSING), and serves their faults, those
 * of a child it forks too (UFFD_FEATURE_EVENT_FORK); then unregisters
 * shared memory it never registered.  In every mode, and the default, its
 * output and status are the plain run's.  Where the daemon registers, the
 * program waits until it has: each of its four calls then meets the
 * daemon's registration (EBUSY, EINVAL: a failed call each, made once more
 * after the daemon released its own there); the report lists its three
 * ranges, and so does a replay of the trace.
 */
static void test_own_userfaultfd(void **state)
{
	static const struct {
		const char *mode, *wait;
		uint64_t failed;
	} runs[] = {
		{ "table", "wait", 4 }, { "all", "wait", 4 }, { "off", "nowait", 0 },
		{ NULL, "nowait", 0 }, /* the default: off */
	};
	long before = huge_reserve();
	const char *const plain_argv[] = { OWN_UFFD_SUBJECT_PATH, "nowait",
					   "huge", NULL };
	struct cmd plain;
	if (cmd_run(&plain, plain_argv, NULL))
		fail_msg("the plain run failed:\n%s", plain.text[1]);
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		const char *const args[] = { runs[i].wait, "huge", NULL };
		struct traced t = { 0 };
		tmp_make(t.dir, sizeof(t.dir));
		traced_start_of(&t, runs[i].mode, "1", OWN_UFFD_SUBJECT_PATH, args,
				NULL, false);
		int status = cmd_finish(&t.c);
		assert_no_sanitizer_report(&t.c);
		if (status || strcmp(t.c.text[0], plain.text[0]))
			fail_msg("--faults %s: status %d; stdout:\n%s\nstderr:\n%s",
				 runs[i].mode ? runs[i].mode : "(default)", status,
				 t.c.text[0], t.c.text[1]);
		t.doc = report_read(tmp_path(t.dir, "report.json"));
		assert_int_equal(jr_path_u64(t.doc, "stream.failed_calls", 9),
				 runs[i].failed);
		assert_int_equal(own_uffd_ranges(t.doc), 3);
		assert_replays(&t);
		traced_free(&t);
	}
	huge_give_back(before);
	cmd_free(&plain);
}

static bool waits_in_fault(const void *arg)
{
	char path[64], wchan[64] = "";
	snprintf(path, sizeof(path), "/proc/%ld/wchan", *(const long *)arg);
	FILE *f = fopen(path, "r");
	if (f) {
		if (!fgets(wchan, sizeof(wchan), f))
			wchan[0] = '\0';
		fclose(f);
	}
	return !strcmp(wchan, "handle_userfault");
}

/*
 * The daemon stopped, the program made to touch its registered memory (it
 * waits in the kernel's handle_userfault), then the daemon killed (by the
 * test: unwatched, else `ptshare run` would end it itself after a second,
 * test_torture_daemon): the kernel drops the userfaultfd and its
 * registrations, the fault completes as without ptshare, and the program,
 * a child it forks and its exit status are as they would be.
 */
static void test_daemon_killed_in_fault(void **state)
{
	const char *const args[] = { "blocked", NULL };
	struct traced t = { 0 };
	tmp_make(t.dir, sizeof(t.dir));
	traced_start(&t, "all", "0", args, NULL, true);
	const char *line = cmd_line(&t.c);
	long pid;
	if (!line || sscanf(line, "@ready %ld", &pid) != 1)
		fail_msg("no @ready from the subject: %s", line ? line : "(end)");
	pid_t daemon = daemon_of(&t.c);
	assert_int_equal(kill(daemon, SIGSTOP), 0);
	assert_int_equal(write(t.c.in, "go\n", 3), 3);
	assert_true(eventually(waits_in_fault, &pid));
	assert_int_equal(kill(daemon, SIGKILL), 0);
	assert_int_equal(cmd_finish(&t.c), 7);
	assert_non_null(strstr(t.c.text[0], "blocked done\n"));
	assert_non_null(strstr(t.c.text[1], "ptshared ended early"));
	traced_free(&t); /* no report: the files made at the daemon's start */
}

/* Whether uid may open /dev/userfaultfd (a child that becomes it tries). */
static bool may_open_uffd_dev(const struct passwd *pw)
{
	const char *argv[] = { "/usr/bin/setpriv", NULL, NULL, "--clear-groups",
			       "--", "/usr/bin/test", "-r", "/dev/userfaultfd",
			       "-a", "-w", "/dev/userfaultfd", NULL };
	char uid[32], gid[32];
	snprintf(uid, sizeof(uid), "--reuid=%u", (unsigned)pw->pw_uid);
	snprintf(gid, sizeof(gid), "--regid=%u", (unsigned)pw->pw_gid);
	argv[1] = uid;
	argv[2] = gid;
	struct cmd c;
	int status = cmd_run(&c, argv, NULL);
	cmd_free(&c);
	return status == 0;
}

/*
 * A user who may not make a userfaultfd (vm.unprivileged_userfaultfd=0 and
 * no access to /dev/userfaultfd), in a run that asks for faults (table):
 * `ptshare run` says so once, with the fix; every process runs in mode off
 * with the errno; the report is still right (the model equal to VmPTE),
 * its faults from pagemap.
 */
static void test_unprivileged(void **state)
{
	const struct passwd *pw = getpwnam(UNPRIVILEGED);
	assert_non_null(pw);
	if (read_long("/proc/sys/vm/unprivileged_userfaultfd") != 0 ||
	    may_open_uffd_dev(pw))
		fail_msg("user %s may make a userfaultfd here: nothing to test",
			 UNPRIVILEGED);
	struct traced t = { 0 };
	tmp_make(t.dir, sizeof(t.dir));
	/* Its TMPDIR and its report files, the user's. */
	assert_int_equal(chown(t.dir, pw->pw_uid, pw->pw_gid), 0);
	char uid[32], gid[32], env_tmp[96];
	snprintf(uid, sizeof(uid), "--reuid=%u", (unsigned)pw->pw_uid);
	snprintf(gid, sizeof(gid), "--regid=%u", (unsigned)pw->pw_gid);
	snprintf(env_tmp, sizeof(env_tmp), "TMPDIR=%s", t.dir);
	char *env[] = { env_tmp, "PATH=/usr/bin:/bin", NULL };
	const char *argv[] = {
		"/usr/bin/setpriv", uid, gid, "--clear-groups", "--",
		PTSHARE_PATH, "run", "--faults", "table", "--json",
		tmp_path(t.dir, "report.json"), "--record",
		tmp_path(t.dir, "trace"), "-o", tmp_path(t.dir, "report.txt"),
		"--interval", "0", "--",
		FAULTS_SUBJECT_PATH, "script", "off", NULL,
	};
	const struct cmd_opts o = { .env = env };
	cmd_start(&t.c, argv, &o);
	int status = cmd_finish(&t.c);
	assert_no_sanitizer_report(&t.c);
	if (status)
		fail_msg("status %d:\n%s\n%s", status, t.c.text[0], t.c.text[1]);
	char fix[128];
	snprintf(fix, sizeof(fix), "to allow it: setfacl -m u:%s:rw /dev/userfaultfd",
		 UNPRIVILEGED);
	assert_non_null(strstr(t.c.text[1], "cannot make a userfaultfd (Permission denied)"));
	assert_non_null(strstr(t.c.text[1], fix));
	read_pids(&t);
	t.doc = report_read(tmp_path(t.dir, "report.json"));
	assert_string_equal(jr_path_str(t.doc, "stream.fault_mode"), "table");
	for (int i = 0; i < 2; i++) {
		const struct jr_value *f = report_final(t.doc, t.pid[i]);
		assert_mode(t.doc, t.pid[i], "off");
		assert_int_equal(jr_path_i64(f, "fault_errno", 0), EACCES);
		assert_int_equal(seen(t.doc, t.pid[i], "linux"), 0);
		/* The pages it touched, and those of its program and libraries. */
		assert_true(jr_path_u64(jr_get(jr_get(f, "faults"), "linux"),
					"pagemap", 0) >
			    (i ? sum(child_reads) : sum(parent_writes)));
	}
	assert_finals_exact(t.doc, 2);
	FILE *text = fopen(tmp_path(t.dir, "report.txt"), "r");
	char line[512];
	bool told = false;
	while (text && fgets(line, sizeof(line), text))
		told |= strstr(line, "no userfaultfd: Permission denied "
			       "(docs/run.md: allowing a user /dev/userfaultfd)") != NULL;
	if (text)
		fclose(text);
	assert_true(told);
	traced_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_all_counts, run_tmpdir_setup, run_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_table_once_per_span, run_tmpdir_setup, run_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_mapping_calls, run_tmpdir_setup, run_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_mremap_of_split_mapping, run_tmpdir_setup,
						run_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_hugetlb, run_tmpdir_setup, run_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_own_userfaultfd, run_tmpdir_setup,
						run_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_daemon_killed_in_fault, run_tmpdir_setup,
						run_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_unprivileged, run_tmpdir_setup, run_tmpdir_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
