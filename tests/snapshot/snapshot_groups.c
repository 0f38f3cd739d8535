/* SPDX-License-Identifier: MIT */
/*
 * ptshare snapshot --group-by: the workload of snapshot_workload (a parent
 * and its workers, one command, one user), one worker moved into a cgroup
 * of its own (as a container or a systemd service is).  By cgroup there
 * are two groups, of 1 and NPROCS - 1 processes; by command and by user
 * one; by process one a process.  In every case each group's figures are
 * its processes' summed (JSON), the groups' shares (pss) sum to each
 * policy's total, the OpenMetrics file gives every group's figures under
 * a `group` label (promtool checks it) and the text report lists them.
 * And ptshare run --group-by cgroup, with its replay (test_run_and_replay).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <pwd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "json_read.h"
#include "om_read.h"
#include "skip.h"
#include "snap_proto.h"
#include "snap_util.h"

#define NPROCS (1 + WORKERS)

static struct {
	char dir[128], data[160], cgroup[1200], home[1100];
	struct pgroup subject;
	long pids[NPROCS];
} t = { .subject = { .pid = -1, .in_fd = -1 } };

/* The cgroup v2 mount point, from /proc/self/mountinfo: 0, or -1. */
static int cgroup2_mount(char *out, size_t cap)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[1024];
	int r = -1;
	while (f && r && fgets(line, sizeof(line), f)) {
		char mnt[512];
		const char *sep = strstr(line, " - ");
		if (sep && !strncmp(sep, " - cgroup2 ", 11) &&
		    sscanf(line, "%*s %*s %*s %*s %511s", mnt) == 1) {
			snprintf(out, cap, "%s", mnt);
			r = 0;
		}
	}
	if (f)
		fclose(f);
	return r;
}

/* pid's cgroup v2 path as /proc shows it ("" when none). */
static void cgroup_of(long pid, char *out, size_t cap)
{
	char path[64], line[512];
	snprintf(path, sizeof(path), "/proc/%ld/cgroup", pid);
	FILE *f = fopen(path, "re");
	*out = '\0';
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = '\0';
			size_t n = strlen(line + 3);
			if (n < cap)
				memcpy(out, line + 3, n + 1);
		}
	if (f)
		fclose(f);
}

static int write_pid(const char *dir, long pid)
{
	char path[1300], num[32];
	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	snprintf(num, sizeof(num), "%ld\n", pid);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : write(fd, num, strlen(num));
	if (fd >= 0)
		close(fd);
	return n == (ssize_t)strlen(num) ? 0 : -1;
}

static int setup(void **state)
{
	snap_init();
	if (make_temp_dir(t.dir, sizeof(t.dir), "snapgrp"))
		return -1;
	snprintf(t.data, sizeof(t.data), "%s/data", t.dir);
	int fd = open(t.data, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, D_LEN) || close(fd))
		return -1;
	snap_cleanup_path(t.data);
	const char *args[] = { "workload", t.data, "--timeout", "600", NULL };
	if (subject_start(&t.subject, args) || t.subject.nready != 2 + WORKERS)
		return -1;
	t.pids[0] = t.subject.ready[0];
	for (int i = 0; i < WORKERS; i++)
		t.pids[1 + i] = t.subject.ready[2 + i];
	char mnt[512];
	if (cgroup2_mount(mnt, sizeof(mnt)))
		return 0; /* the cgroup test says so */
	char home[256];
	cgroup_of(t.pids[1], home, sizeof(home));
	snprintf(t.home, sizeof(t.home), "%s%s", mnt, home);
	snprintf(t.cgroup, sizeof(t.cgroup), "%s/ptshare-test-%ld", t.home,
		 (long)getpid());
	if (mkdir(t.cgroup, 0755) || write_pid(t.cgroup, t.pids[1])) {
		fprintf(stderr, "%s: %s\n", t.cgroup, strerror(errno));
		rmdir(t.cgroup);
		t.cgroup[0] = '\0';
	}
	return 0;
}

static int teardown(void **state)
{
	int bad = group_stop(&t.subject) ? 1 : 0;
	/* The worker is gone: its cgroup is empty. */
	if (t.cgroup[0] && rmdir(t.cgroup)) {
		fprintf(stderr, "rmdir %s: %s\n", t.cgroup, strerror(errno));
		bad = 1;
	}
	snap_cleanup_paths();
	return bad ? -1 : 0;
}

/* ptshare snapshot of the workload grouped by by: the JSON report, with
 * the OpenMetrics file parsed into m and the text report into text. */
static struct jr_value *snapshot(const char *by, struct om_doc *m,
				 char **text)
{
	char pid[16], json[192], prom[192];
	snprintf(pid, sizeof(pid), "%ld", t.pids[0]);
	snprintf(json, sizeof(json), "%s/%s.json", t.dir, by);
	snprintf(prom, sizeof(prom), "%s/%s.prom", t.dir, by);
	snap_cleanup_path(json);
	snap_cleanup_path(prom);
	const char *argv[] = { PTSHARE_PATH, "snapshot", "--pid", pid, "--tree",
			       "--group-by", by, "--json", json,
			       "--openmetrics", prom, "--top", "0", "-o",
			       "/dev/stdout", NULL };
	struct run r;
	assert_int_equal(run_cmd(&r, argv, -1), 0);
	if (r.code || run_sanitizer_report(&r))
		run_dump(&r, "ptshare snapshot", true);
	assert_int_equal(r.code, 0);
	*text = strdup(r.out);
	run_free(&r);
	char err[256];
	if (om_parse_file(prom, m, err, sizeof(err)))
		fail_msg("%s: %s", prom, err);
	const char *check[] = { "/bin/sh", "-c", "exec promtool check metrics "
				"<\"$1\"", "sh", prom, NULL };
	assert_int_equal(run_cmd(&r, check, -1), 0);
	if (r.code)
		run_dump(&r, "promtool check metrics", true);
	assert_int_equal(r.code, 0);
	run_free(&r);
	struct jr_value *doc = parse_report_file(json);
	assert_non_null(doc);
	return doc;
}

static int64_t om(const struct om_doc *d, const char *name, const char *policy,
		  const char *group)
{
	char series[512];
	int64_t v = 0;
	if (policy)
		snprintf(series, sizeof(series), "%s{policy=\"%s\",group=\"%s\"}",
			 name, policy, group);
	else
		snprintf(series, sizeof(series), "%s{group=\"%s\"}", name, group);
	if (!om_value(d, series, &v))
		fail_msg("no %s", series);
	return v;
}

/* The group of key in the JSON report; NULL when there is none. */
static const struct jr_value *group(const struct jr_value *doc, const char *key)
{
	const struct jr_value *g = jr_get(doc, "groups");
	for (size_t i = 0; i < jr_len(g); i++)
		if (!strcmp(jr_path_str(jr_at(g, i), "group"), key))
			return jr_at(g, i);
	return NULL;
}

/* Every group of doc against its processes (the key of each from
 * key_of), the policies' totals, the OpenMetrics file and the text. */
static void check_groups(const struct jr_value *doc, const struct om_doc *m,
			 const char *text, const char *by,
			 void (*key_of)(const struct jr_value *proc, char *key,
					size_t cap))
{
	const struct jr_value *procs = jr_get(doc, "processes");
	const struct jr_value *groups = jr_get(doc, "groups");
	const struct jr_value *pols = jr_get(doc, "policies");
	assert_string_equal(jr_path_str(doc, "group_by"), by);
	size_t nprocs = 0;
	for (size_t i = 0; i < jr_len(groups); i++) {
		const struct jr_value *g = jr_at(groups, i);
		const char *key = jr_path_str(g, "group");
		uint64_t n = 0, model = 0, vmpte = 0;
		for (size_t p = 0; p < jr_len(procs); p++) {
			const struct jr_value *proc = jr_at(procs, p);
			char k[256];
			key_of(proc, k, sizeof(k));
			if (strcmp(k, key))
				continue;
			n++;
			model += report_linux_kb(proc);
			vmpte += jr_path_u64(proc, "vmpte_kb", 0);
		}
		assert_int_equal(jr_path_u64(g, "processes", 0), n);
		assert_int_equal(jr_path_u64(g, "model_kb", 0), model);
		assert_int_equal(jr_path_u64(g, "kernel_vmpte_kb", 0), vmpte);
		assert_int_equal(om(m, "ptshare_processes", NULL, key), (int64_t)n);
		assert_int_equal(om(m, "ptshare_kernel_page_table_bytes", NULL, key),
				 (int64_t)vmpte * 1024);
		for (size_t k = 0; k < jr_len(pols); k++) {
			const char *l = jr_path_str(jr_at(pols, k), "label");
			double pss = jr_path_double(jr_get(jr_get(g, "policies"), l),
						    "pss_bytes", -1);
			assert_int_equal(om(m, "ptshare_page_table_bytes", l, key),
					 llround(pss));
			if (k)
				assert_int_equal(om(m, "ptshare_saved_bytes", l, key),
						 (int64_t)model * 1024 - llround(pss));
		}
		nprocs += n;
		char line[300];
		snprintf(line, sizeof(line), "\n%-30.30s %5" PRIu64 " ", key, n);
		assert_non_null(strstr(text, line));
	}
	assert_int_equal(nprocs, NPROCS);
	/* The groups' shares are the policies' totals. */
	for (size_t k = 0; k < jr_len(pols); k++) {
		const char *l = jr_path_str(jr_at(pols, k), "label");
		double sum = 0;
		for (size_t i = 0; i < jr_len(groups); i++)
			sum += jr_path_double(jr_get(jr_get(jr_at(groups, i),
							    "policies"), l),
					      "pss_bytes", 0);
		double total = (double)jr_path_u64(jr_get(jr_path(doc,
					"totals.policies"), l), "bytes", 0);
		assert_true(fabs(sum - total) < 1.0);
	}
	char head[64];
	snprintf(head, sizeof(head), "groups by %s (%zu, ", by, jr_len(groups));
	assert_non_null(strstr(text, head));
}

static void key_cgroup(const struct jr_value *proc, char *key, size_t cap)
{
	const char *c = jr_path_str(proc, "cgroup");
	snprintf(key, cap, "%s", c ? c : "?");
}

static void key_command(const struct jr_value *proc, char *key, size_t cap)
{
	snprintf(key, cap, "%s", jr_path_str(proc, "command"));
}

/* The user's name, or the uid where the machine has none. */
static void key_user(const struct jr_value *proc, char *key, size_t cap)
{
	uint64_t uid = jr_path_u64(proc, "uid", 0);
	struct passwd *pw = getpwuid((uid_t)uid);
	if (pw)
		snprintf(key, cap, "%s", pw->pw_name);
	else
		snprintf(key, cap, "%" PRIu64, uid);
}

static void key_pid(const struct jr_value *proc, char *key, size_t cap)
{
	snprintf(key, cap, "%" PRIu64, jr_path_u64(proc, "pid", 0));
}

/* A container or a service is its cgroup: the moved worker alone in its
 * own, the others in theirs. */
static void test_cgroup(void **state)
{
	if (!t.cgroup[0])
		test_skip("no cgroup v2 this test may make a cgroup in");
	struct om_doc m;
	char *text;
	struct jr_value *doc = snapshot("cgroup", &m, &text);
	char moved[256], home[256];
	cgroup_of(t.pids[1], moved, sizeof(moved));
	cgroup_of(t.pids[0], home, sizeof(home));
	assert_string_not_equal(moved, home);
	assert_int_equal(jr_len(jr_get(doc, "groups")), 2);
	assert_int_equal(jr_path_u64(group(doc, moved), "processes", 0), 1);
	assert_int_equal(jr_path_u64(group(doc, home), "processes", 0), NPROCS - 1);
	assert_string_equal(jr_path_str(report_proc(doc, t.pids[1]), "cgroup"),
			    moved);
	check_groups(doc, &m, text, "cgroup", key_cgroup);
	om_free(&m);
	free(text);
	jr_free(doc);
}

/* The snapshot grouped by by has ngroups groups, each its processes'. */
static void grouped(const char *by, size_t ngroups,
		    void (*key_of)(const struct jr_value *proc, char *key,
				   size_t cap))
{
	struct om_doc m;
	char *text;
	struct jr_value *doc = snapshot(by, &m, &text);
	assert_int_equal(jr_len(jr_get(doc, "groups")), ngroups);
	check_groups(doc, &m, text, by, key_of);
	om_free(&m);
	free(text);
	jr_free(doc);
}

/* One command (fork: the workers are snap_subject too), one user. */
static void test_command(void **state)
{
	grouped("command", 1, key_command);
}

static void test_user(void **state)
{
	grouped("user", 1, key_user);
}

static void test_process(void **state)
{
	grouped("process", NPROCS, key_pid);
}

/* The groups of doc, "key=processes;..." in their order. */
static void groups_text(const struct jr_value *doc, char *out, size_t cap)
{
	const struct jr_value *g = jr_get(doc, "groups");
	size_t n = 0;
	out[0] = '\0';
	for (size_t i = 0; i < jr_len(g) && n < cap; i++)
		n += (size_t)snprintf(out + n, cap - n, "%s=%" PRIu64 ";",
				      jr_path_str(jr_at(g, i), "group"),
				      jr_path_u64(jr_at(g, i), "processes", 0));
}

/* ptshare run --group-by cgroup: a process of the program that moved
 * itself into a cgroup of its own (before its exec) is counted there, the
 * others where they were; the trace keeps the cgroups, so that its replay
 * has the same groups. */
static void test_run_and_replay(void **state)
{
	if (!t.cgroup[0])
		test_skip("no cgroup v2 this test may make a cgroup in");
	char cg[1300], json[192], replayed[192], trace[192], moved[300];
	snprintf(cg, sizeof(cg), "%s-run", t.cgroup);
	assert_int_equal(mkdir(cg, 0755), 0);
	snprintf(json, sizeof(json), "%s/run.json", t.dir);
	snprintf(replayed, sizeof(replayed), "%s/replay.json", t.dir);
	snprintf(trace, sizeof(trace), "%s/run.trace", t.dir);
	snap_cleanup_path(json);
	snap_cleanup_path(replayed);
	snap_cleanup_path(trace);
	const char *run[] = {
		PTSHARE_PATH, "run", "--group-by", "cgroup", "--json", json,
		"--record", trace, "-o", "/dev/null", "--", "/bin/sh", "-c",
		"/bin/sh -c 'echo $$ >\"$0/cgroup.procs\" && exec sleep 2' \"$0\" &"
		" sleep 2.5; wait", cg, NULL };
	struct run r;
	assert_int_equal(run_cmd(&r, run, -1), 0);
	if (r.code || run_sanitizer_report(&r))
		run_dump(&r, "ptshare run", true);
	assert_int_equal(r.code, 0);
	run_free(&r);
	assert_int_equal(rmdir(cg), 0);
	const char *replay[] = { PTSHARE_PATH, "replay", trace, "--group-by",
				 "cgroup", "--json", replayed, "-o", "/dev/null",
				 NULL };
	assert_int_equal(run_cmd(&r, replay, -1), 0);
	assert_int_equal(r.code, 0);
	run_free(&r);
	struct jr_value *a = parse_report_file(json), *b = parse_report_file(replayed);
	assert_non_null(a);
	assert_non_null(b);
	char ga[1024], gb[1024];
	groups_text(a, ga, sizeof(ga));
	groups_text(b, gb, sizeof(gb));
	printf("groups: %s\n", ga);
	assert_string_equal(ga, gb);
	/* /proc shows the path from the cgroup2 root, not the mount point. */
	snprintf(moved, sizeof(moved), "%s=1;", strrchr(cg, '/'));
	const struct jr_value *g = jr_get(a, "groups");
	assert_int_equal(jr_len(g), 2);
	assert_non_null(strstr(ga, moved));
	jr_free(a);
	jr_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cgroup),
		cmocka_unit_test(test_command),
		cmocka_unit_test(test_user),
		cmocka_unit_test(test_process),
		cmocka_unit_test(test_run_and_replay),
	};
	return test_group_status(cmocka_run_group_tests_name("snapshot_groups",
							     tests, setup,
							     teardown));
}
