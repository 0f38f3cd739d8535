/* SPDX-License-Identifier: MIT */
/*
 * hugetlb-pmd against the kernel: the distinct table pages the policy
 * reports for a forked hugetlb workload equal the rise of PageTables in
 * /proc/meminfo while the workload holds its memory.
 *
 * The workload (kh_subject, built without sanitizers) maps 2 GiB of a
 * hugetlb memfd, MAP_SHARED, at a 512 GiB-aligned address alone in its
 * PGD slot, and forks KIDS children, which inherit the mapping.  Then the
 * parent and each child touch one 2 MiB page in each GiB.  Mainline
 * shares the PMD pages (huge_pmd_share): the parent allocates a PUD page
 * and two PMD pages; each child a PUD page of its own, linking the
 * parent's PMD pages.  /proc/meminfo's PageTables (NR_PAGETABLE, counted
 * once per table page, at its allocation) rises by 3 + KIDS pages, while
 * every process's VmPTE rises by 3 pages (mm_inc_nr_pmds() in
 * huge_pmd_share() charges each sharer).  The same operations fed to a
 * hugetlb-pmd world give its distinct tables; they must equal the rise
 * (and a linux world's, 3 × (1 + KIDS), must not: the test tells sharing
 * from none).
 *
 * Keeping other processes' tables out of the difference.  PageTables is
 * the whole machine's, and other programs allocate and free tables all
 * the time (on the development VM, a build beside: about 70% of 4 ms
 * windows see it change).  So:
 * - the workload only touches between the two readings: its processes,
 *   pipes and huge pages are made and warmed up before (the "w" command:
 *   the two huge pages put in the file, a round trip on every pipe), and
 *   this driver reads /proc with raw system calls into static buffers
 *   (no allocation, so no table of its own, although it runs under ASan);
 * - each reading first folds every CPU's pending counts into the global
 *   counter (a write to /proc/sys/vm/stat_refresh), so the figure is exact;
 * - a reading is taken only in a quiet moment: PageTables unchanged over
 *   2 ms before the touches, and over 2 ms after them (else the attempt
 *   does not count);
 * - the measurement is repeated: the workload unmaps and maps its 2 GiB
 *   again between attempts (every table of the slot freed), up to
 *   MAX_ATTEMPTS times, until WANT_MATCHES quiet attempts rose by the
 *   model's figure; the most frequent quiet rise must be the model's.
 * The VmPTE of each process, which other processes cannot disturb, must
 * rise by the model's figure in every attempt.
 *
 * vm.nr_hugepages is raised by HUGE_EXTRA for the test and restored after
 * it, on failure too (cmocka's teardown; an alarm and a SIGABRT handler
 * restore it and kill the workload if the test hangs or aborts).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "kh_proto.h"
#include "ptshare/mm.h"
#include "skip.h"

#define KIDS 4
#define HUGE_EXTRA 4
#define MAX_ATTEMPTS 300
#define WANT_MATCHES 5
#define NR_HUGEPAGES "/proc/sys/vm/nr_hugepages"
#define FREE_HUGEPAGES "/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages"

static long nr_before = -1;           /* vm.nr_hugepages to restore */
static volatile pid_t subject = -1;   /* the workload's parent */
static FILE *to_subject, *from_subject;

static char buf[8192];

/* A /proc or /sys file into buf, without allocating. */
static ssize_t slurp(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n >= 0)
		buf[n] = 0;
	return n;
}

static long field_kb(const char *path, const char *key)
{
	if (slurp(path) < 0)
		return -1;
	const char *p = strstr(buf, key);
	return p ? atol(p + strlen(key)) : -1;
}

static void put_long(const char *path, long v)
{
	char s[32];
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	int len = snprintf(s, sizeof(s), "%ld\n", v);
	if (fd < 0 || write(fd, s, (size_t)len) != len)
		fprintf(stderr, "kernel_hugetlb: cannot write %s: %s\n", path,
			strerror(errno));
	if (fd >= 0)
		close(fd);
}

/* PageTables in kB, every CPU's pending counts folded in first. */
static long page_tables_kb(void)
{
	int fd = open("/proc/sys/vm/stat_refresh", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, "1", 1) < 0) { /* folded or not, read on */ }
		close(fd);
	}
	return field_kb("/proc/meminfo", "\nPageTables:");
}

static long vmpte_kb(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	return field_kb(path, "\nVmPTE:");
}

/* The workload ends (its children die with it), then the pool is as it
 * was.  Safe to call twice, and from a signal handler. */
static void cleanup(void)
{
	if (subject > 0) {
		kill(subject, SIGKILL);
		waitpid(subject, NULL, 0);
		subject = -1;
	}
	if (nr_before >= 0) {
		put_long(NR_HUGEPAGES, nr_before);
		nr_before = -1;
	}
}

static void on_signal(int sig)
{
	cleanup();
	signal(sig, SIG_DFL);
	raise(sig);
}

static long read_long(const char *path)
{
	return slurp(path) < 0 ? -1 : atol(buf);
}

static int setup(void **state)
{
	(void)state;
	signal(SIGALRM, on_signal);
	signal(SIGABRT, on_signal);
	alarm(240);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (to_subject)
		fclose(to_subject);
	if (from_subject)
		fclose(from_subject);
	to_subject = from_subject = NULL;
	cleanup();
	alarm(0);
	return 0;
}

/* The workload's answer to cmd, which must be want. */
static void command(const char *cmd, const char *want)
{
	char line[256];
	if (fprintf(to_subject, "%s\n", cmd) < 0 || fflush(to_subject) ||
	    !fgets(line, sizeof(line), from_subject))
		fail_msg("the workload did not answer '%s'", cmd);
	if (strncmp(line, want, strlen(want)))
		fail_msg("the workload answered '%s' to '%s'", line, cmd);
}

/* kh_subject with KIDS children; their pids into pids[0..KIDS]. */
static void start(pid_t pids[1 + KIDS])
{
	int in[2], out[2];
	char line[256], kids[8];
	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC))
		fail_msg("pipe: %s", strerror(errno));
	snprintf(kids, sizeof(kids), "%d", KIDS);
	pid_t pid = fork();
	if (pid < 0)
		fail_msg("fork: %s", strerror(errno));
	if (!pid) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		execl(KH_SUBJECT_PATH, "kh_subject", kids, (char *)NULL);
		_exit(127);
	}
	subject = pid;
	close(in[0]);
	close(out[1]);
	to_subject = fdopen(in[1], "w");
	from_subject = fdopen(out[0], "r");
	if (!to_subject || !from_subject ||
	    !fgets(line, sizeof(line), from_subject))
		fail_msg("the workload did not start");
	char *p = line;
	if (strncmp(p, "ready ", 6))
		fail_msg("the workload said '%s'", line);
	p += 6;
	for (int i = 0; i <= KIDS; i++)
		pids[i] = (pid_t)strtol(p, &p, 10);
	if (pids[0] != pid)
		fail_msg("the workload is %d, says %d", (int)pid, (int)pids[0]);
}

/* The model of the same operations: tables distinct and linked (the sum of
 * every process's view) after the touches, under a policy. */
static void model(const struct mm_policy *pol, uint64_t *distinct,
		  uint64_t *linked)
{
	struct mm_world *w = mm_world_new(pol);
	struct mm_mapping m = {
		.addr = KH_ADDR, .len = 2 * KH_GIB,
		.obj = { MM_OBJ_HUGETLB, 1, 1 },
		.prot = MM_PROT_READ | MM_PROT_WRITE,
		.flags = MM_VMA_SHARED, .huge_shift = 21,
	};
	assert_non_null(w);
	assert_int_equal(mm_create(w, 1), 0);
	assert_int_equal(mm_map(w, 1, &m), 0);
	for (uint32_t k = 0; k < KIDS; k++)
		assert_int_equal(mm_fork(w, 1, 2 + k), 0);
	for (uint32_t k = 0; k <= KIDS; k++) {
		int fault = !k || pol->scope == MM_SCOPE_NONE;
		assert_int_equal(mm_fault(w, 1 + k, KH_ADDR, true), fault);
		assert_int_equal(mm_fault(w, 1 + k, KH_ADDR + KH_GIB, true),
				 fault);
		assert_int_equal(mm_check(w), 0);
	}
	struct mm_world_totals t;
	struct mm_proc_stats s[1 + KIDS];
	mm_world_stats(w, s, 1 + KIDS, &t);
	*distinct = t.distinct[PT_PTE] + t.distinct[PT_PMD] + t.distinct[PT_PUD];
	*linked = t.linked[PT_PTE] + t.linked[PT_PMD] + t.linked[PT_PUD];
	mm_world_free(w);
}

/* Two equal readings 2 ms apart (at most 2 s of trying); the reading. */
static long quiet_reading(void)
{
	long a = page_tables_kb();
	for (int i = 0; i < 1000; i++) {
		struct timespec ts = { 0, 2000000 };
		nanosleep(&ts, NULL);
		long b = page_tables_kb();
		if (a == b)
			return a;
		a = b;
	}
	return -1;
}

static void hugetlb_pmd_rise(void **state)
{
	(void)state;
	if (geteuid())
		test_skip("needs root: vm.nr_hugepages, stat_refresh");
	uint64_t want, linked, linux_distinct, linux_linked;
	model(&mm_policy_hugetlb_pmd, &want, &linked);
	model(&mm_policy_linux, &linux_distinct, &linux_linked);
	printf("model: hugetlb-pmd %llu distinct table pages (%llu in the sum "
	       "of VmPTE), linux %llu\n", (unsigned long long)want,
	       (unsigned long long)linked, (unsigned long long)linux_distinct);
	assert_int_equal(want, 3 + KIDS);
	assert_int_equal(linked, 3 * (1 + KIDS));
	assert_int_equal(linux_distinct, 3 * (1 + KIDS));

	nr_before = read_long(NR_HUGEPAGES);
	if (nr_before < 0)
		test_skip("no %s", NR_HUGEPAGES);
	put_long(NR_HUGEPAGES, nr_before + HUGE_EXTRA);
	if (read_long(FREE_HUGEPAGES) < 2)
		fail_msg("cannot reserve %d huge pages", HUGE_EXTRA);

	pid_t pids[1 + KIDS];
	start(pids);
	command("w", "warm");
	long rises[MAX_ATTEMPTS];
	int quiet = 0, matched = 0, attempts = 0;
	for (; attempts < MAX_ATTEMPTS && matched < WANT_MATCHES; attempts++) {
		long before[1 + KIDS], after[1 + KIDS];
		for (int i = 0; i <= KIDS; i++)
			before[i] = vmpte_kb(pids[i]);
		long p = quiet_reading();
		command("t", "touched");
		long q = page_tables_kb();
		struct timespec ts = { 0, 2000000 };
		nanosleep(&ts, NULL);
		bool still = page_tables_kb() == q;
		for (int i = 0; i <= KIDS; i++) {
			after[i] = vmpte_kb(pids[i]);
			if (after[i] - before[i] != 4 * 3)
				fail_msg("process %d (%d): VmPTE %ld kB, then %ld kB", i,
					 (int)pids[i], before[i], after[i]);
		}
		command("u", "unmapped");
		if (p < 0 || !still)
			continue;
		rises[quiet++] = (q - p) / 4;
		matched += (q - p) / 4 == (long)want;
	}
	/* The most frequent quiet rise. */
	long mode = -1;
	int best = 0;
	printf("PageTables rise in %d quiet attempts of %d (pages):", quiet,
	       attempts);
	for (int i = 0; i < quiet; i++) {
		int n = 0;
		printf(" %ld", rises[i]);
		for (int j = 0; j < quiet; j++)
			n += rises[j] == rises[i];
		if (n > best || (n == best && rises[i] == (long)want)) {
			best = n;
			mode = rises[i];
		}
	}
	printf("\nmodel: %llu; matched %d times, most frequent %ld (%d times)\n",
	       (unsigned long long)want, matched, mode, best);
	int status = -1;
	if (fprintf(to_subject, "q\n") < 0 || fflush(to_subject) ||
	    waitpid(subject, &status, 0) != subject || status)
		fail_msg("the workload ended with status %#x", status);
	subject = -1;
	if (matched < WANT_MATCHES)
		fail_msg("only %d quiet attempts of %d rose by the model's %llu "
			 "table pages", matched, attempts,
			 (unsigned long long)want);
	assert_int_equal(mode, (long)want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(hugetlb_pmd_rise, setup, teardown),
	};
	return test_group_status(cmocka_run_group_tests(tests, NULL, NULL));
}
