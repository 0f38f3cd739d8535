/* SPDX-License-Identifier: MIT */
/*
 * The outputs of `ptshare run` and ptshared, when they cannot be written:
 * a disk that fills up under --record is told as such (ENOSPC, not the
 * EIO of a close with nothing left to write).  Run as root (CI is): the
 * full disk is a small tmpfs mounted here.  And --openmetrics FILE: the
 * daemon's totals for Prometheus, put in place whole (0644) at the end,
 * per group with --group-by, the JSON report's figures.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "om_read.h"
#include "run_util.h"

/* The tmpfs of a test, mounted until its teardown. */
static char full[128];

/* A tmpfs of 16 KiB at DIR/full, filled up. */
static void mount_full(const char *dir)
{
	char filler[160], block[4096] = { 0 };
	snprintf(full, sizeof(full), "%s/full", dir);
	assert_int_equal(mkdir(full, 0700), 0);
	if (mount("ptshare-test", full, "tmpfs", MS_NOSUID | MS_NODEV,
		  "size=16k,mode=0700"))
		fail_msg("mount tmpfs on %s: %s", full, strerror(errno));
	snprintf(filler, sizeof(filler), "%s/filler", full);
	int fd = open(filler, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	while (write(fd, block, sizeof(block)) > 0)
		;
	assert_int_equal(errno, ENOSPC);
	close(fd);
}

/* Unmounted before its directory goes, with TMPDIR's. */
static int unmount_full(void **state)
{
	if (*full && umount2(full, MNT_DETACH))
		print_error("umount %s: %s\n", full, strerror(errno));
	*full = '\0';
	return run_tmpdir_teardown(state);
}

static void expect_said(const struct cmd *c, const char *says)
{
	if (!strstr(c->text[1], says))
		fail_msg("no '%s' in:\n%s", says, c->text[1]);
	assert_no_sanitizer_report(c);
}

/* A trace, then a report, onto the full disk: each says ENOSPC. */
static void test_full_disk(void **state)
{
	char dir[64], said[256], trace[160], json[160];
	struct cmd c;
	require_root();
	tmp_make(dir, sizeof(dir));
	mount_full(dir);
	snprintf(trace, sizeof(trace), "%s/trace", full);
	snprintf(json, sizeof(json), "%s/report.json", full);
	const char *run[] = { PTSHARE_PATH, "run", "--record", trace, "-o", "/dev/null",
			      "--", RUN_SUBJECT_PATH, "exit", "0", NULL };
	cmd_run(&c, run, NULL);
	snprintf(said, sizeof(said), "ptshared: writing %s: No space left on device",
		 trace);
	expect_said(&c, said);
	cmd_free(&c);

	char whole[PATH_MAX + 8];
	snprintf(whole, sizeof(whole), "%s", tmp_path(dir, "trace"));
	const char *record[] = { PTSHARE_PATH, "run", "--record", whole, "-o",
				 "/dev/null", "--", RUN_SUBJECT_PATH, "exit", "0", NULL };
	assert_int_equal(cmd_run(&c, record, NULL), 0);
	cmd_free(&c);
	const char *replay[] = { PTSHARE_PATH, "replay", whole, "--json", json, NULL };
	assert_int_equal(cmd_run(&c, replay, NULL), 1);
	snprintf(said, sizeof(said), "ptshare: writing %s: No space left on device",
		 json);
	expect_said(&c, said);
	cmd_free(&c);
}

static int64_t om(const struct om_doc *m, const char *series)
{
	int64_t v;
	if (!om_value(m, series, &v))
		fail_msg("no %s", series);
	return v;
}

/* ptshare run --openmetrics FILE --group-by command: FILE in place whole
 * (0644 less the umask, no temporary file left), promtool takes it, and
 * its figures are the JSON report's, under the command's group. */
static void test_openmetrics(void **state)
{
	char dir[64], prom[PATH_MAX + 8], json[PATH_MAX + 8], err[256];
	struct cmd c;
	tmp_make(dir, sizeof(dir));
	snprintf(prom, sizeof(prom), "%s", tmp_path(dir, "run.prom"));
	snprintf(json, sizeof(json), "%s", tmp_path(dir, "run.json"));
	const char *run[] = { PTSHARE_PATH, "run", "--no-record", "--json", json,
			      "--openmetrics", prom, "--group-by", "command",
			      "-o", "/dev/null", "--", RUN_SUBJECT_PATH, "exit",
			      "0", NULL };
	assert_int_equal(cmd_run(&c, run, NULL), 0);
	assert_no_sanitizer_report(&c);
	cmd_free(&c);
	struct stat st;
	assert_int_equal(stat(prom, &st), 0);
	mode_t mask = umask(0);
	umask(mask);
	assert_int_equal(st.st_mode & 07777, 0644 & ~mask);
	assert_int_equal(dir_entries(dir), 2);
	const char *check[] = { "/bin/sh", "-c", "exec promtool check metrics "
				"<\"$1\"", "sh", prom, NULL };
	assert_int_equal(cmd_run(&c, check, NULL), 0);
	cmd_free(&c);
	struct om_doc m;
	if (om_parse_file(prom, &m, err, sizeof(err)))
		fail_msg("%s: %s", prom, err);
	struct jr_value *doc = report_read(json);
	const struct jr_value *g = jr_at(jr_get(doc, "groups"), 0);
	assert_string_equal(jr_path_str(doc, "group_by"), "command");
	assert_string_equal(jr_path_str(g, "group"), "run_subject");
	assert_int_equal(om(&m, "ptshare_processes{group=\"run_subject\"}"),
			 jr_path_i64(doc, "totals.processes", -1));
	assert_int_equal(om(&m, "ptshare_kernel_page_table_bytes{group="
			    "\"run_subject\"}"),
			 jr_path_i64(g, "kernel_vmpte_kb", -1) * 1024);
	assert_int_equal(om(&m, "ptshare_page_table_bytes{policy=\"linux\","
			    "group=\"run_subject\"}"),
			 llround(jr_path_double(g, "policies.linux.pss_bytes", -1)));
	assert_int_equal(om(&m, "ptshare_page_table_bytes{policy=\"linux\","
			    "group=\"run_subject\"}"),
			 jr_path_i64(doc, "totals.policies.linux.bytes", -1));
	om_free(&m);
	jr_free(doc);
	const char *files[] = { "run.prom", "run.json", NULL };
	tmp_remove(dir, files);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_openmetrics),
		cmocka_unit_test_setup_teardown(test_full_disk, run_tmpdir_setup, unmount_full),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
