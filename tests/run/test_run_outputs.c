/* SPDX-License-Identifier: MIT */
/*
 * The outputs of `ptshare run` and ptshared, when they cannot be written:
 * a disk that fills up under --record is told as such (ENOSPC, not the
 * EIO of a close with nothing left to write).  Run as root (CI is): the
 * full disk is a small tmpfs mounted here.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_full_disk, run_tmpdir_setup, unmount_full),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
