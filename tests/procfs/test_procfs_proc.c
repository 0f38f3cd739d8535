/* SPDX-License-Identifier: MIT */
/*
 * Processes as /proc shows them: the pid list, status and VmPTE, and what a
 * reader gets from a process that becomes a zombie, is reaped, execs, or is
 * not ours to read.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "ptshare/procfs.h"
#include "procfs_internal.h" /* to read a maps file in two parts */
#include "skip.h"
#include "subject.h"

static void test_list_pids(void **state)
{
	struct procfs_pids p = { 0 };
	struct subject s;

	assert_int_equal(subject_start(&s), 0);
	int n = procfs_list_pids(&p);
	assert_true(n > 1);
	assert_int_equal((size_t)n, p.n);
	bool self = false, child = false;
	for (size_t i = 0; i < p.n; i++) {
		if (i)
			assert_true(p.pids[i - 1] < p.pids[i]);
		self |= p.pids[i] == getpid();
		child |= p.pids[i] == s.pid;
	}
	assert_true(self);
	assert_true(child);
	procfs_pids_free(&p);
	subject_stop(&s);
}

static void test_status_self(void **state)
{
	struct procfs_status st;
	char comm[64] = "";
	FILE *f = fopen("/proc/self/comm", "r");

	assert_non_null(f);
	assert_non_null(fgets(comm, sizeof(comm), f));
	fclose(f);
	comm[strcspn(comm, "\n")] = '\0';

	assert_int_equal(procfs_status_read(getpid(), &st), 0);
	assert_string_equal(st.name, comm);
	assert_int_equal(st.tgid, getpid());
	assert_int_equal(st.pid, getpid());
	assert_int_equal(st.ppid, getppid());
	assert_int_equal(st.uid, getuid());
	assert_int_equal(st.state, 'R');
	assert_true(st.has_mm);
	assert_true(st.vmpte_kb > 0);
	assert_int_equal(st.vmpte_kb % 4, 0);
}

/*
 * Opening the pagemap of a process without an address space: -ESRCH for
 * root; another user fails the kernel's access check first.
 */
static int no_mm_pagemap_error(void)
{
	return geteuid() == 0 ? -ESRCH : -EACCES;
}

/* kthreadd, when this pid namespace shows it, has no address space. */
static void test_status_kernel_thread(void **state)
{
	struct procfs_status st;
	uint64_t kb;

	if (procfs_status_read(2, &st) || strcmp(st.name, "kthreadd"))
		test_skip("pid 2 is not kthreadd in this pid namespace");
	assert_false(st.has_mm);
	assert_int_equal(st.ppid, 0);
	assert_int_equal(procfs_vmpte_kb(2, &kb), -ENODATA);

	struct procfs_maps m = { 0 };
	assert_int_equal(procfs_maps_read(2, NULL, 0, &m), 0);
	assert_int_equal(m.n, 0);
	procfs_maps_free(&m);
	assert_int_equal(procfs_pagemap_open(2), no_mm_pagemap_error());
}

/* A child that has exited but is not reaped yet. */
static pid_t zombie_child(void)
{
	siginfo_t si;
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	assert_true(pid > 0);
	assert_int_equal(waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT), 0);
	return pid;
}

static void test_zombie_then_reaped(void **state)
{
	struct procfs_status st;
	struct procfs_maps m = { 0 };
	uint64_t kb;
	pid_t pid = zombie_child();

	assert_int_equal(procfs_status_read(pid, &st), 0);
	assert_int_equal(st.state, 'Z');
	assert_false(st.has_mm);
	assert_int_equal(procfs_vmpte_kb(pid, &kb), -ENODATA);
	assert_int_equal(procfs_maps_read(pid, NULL, 0, &m), 0);
	assert_int_equal(m.n, 0);
	assert_int_equal(procfs_pagemap_open(pid), no_mm_pagemap_error());

	assert_int_equal(waitpid(pid, NULL, 0), pid);
	assert_int_equal(procfs_status_read(pid, &st), -ESRCH);
	assert_int_equal(procfs_vmpte_kb(pid, &kb), -ESRCH);
	assert_int_equal(procfs_maps_read(pid, NULL, PROCFS_MAPS_SMAPS, &m), -ESRCH);
	assert_int_equal(procfs_pagemap_open(pid), -ESRCH);
	procfs_maps_free(&m);
}

#define MANY_BASE 0x310000000000UL
#define MANY_PAGES 4000UL

/* Alternating protections: one mapping per page, a maps file of ~300 KiB. */
static int map_many(void *arg)
{
	char *p = mmap((void *)MANY_BASE, MANY_PAGES * 4096, PROT_READ,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	if (p == MAP_FAILED)
		return -errno;
	for (unsigned long i = 0; i < MANY_PAGES; i += 2)
		if (mprotect(p + i * 4096, 4096, PROT_NONE))
			return -errno;
	return 0;
}

static int exec_sleep(void *arg)
{
	execl("/bin/sleep", "sleep", "60", (char *)NULL);
	return -errno;
}

enum mid_read_end { MID_READ_NOTHING, MID_READ_EXIT, MID_READ_EXEC };

/*
 * Reads the first part of the subject's maps, lets it exit or exec, then
 * reads the rest as procfs_maps_read() does.
 */
static int read_maps_around(enum mid_read_end what)
{
	struct subject s;
	struct procfs_text t = { 0 };
	char first[4096];
	siginfo_t si;

	assert_int_equal(subject_start(&s), 0);
	assert_int_equal(subject_run(&s, map_many, NULL, 0), 0);
	int fd = procfs_open(s.pid, "maps");
	assert_true(fd >= 0);
	assert_true(read(fd, first, sizeof(first)) > 0);
	if (what == MID_READ_EXIT) {
		kill(s.pid, SIGKILL);
		assert_int_equal(waitid(P_PID, (id_t)s.pid, &si, WEXITED | WNOWAIT), 0);
	} else if (what == MID_READ_EXEC) {
		assert_int_equal(subject_run(&s, exec_sleep, NULL, 0), -EPIPE);
		/* The pipes close on exec: the new program is running. */
	}
	int err = procfs_read_fd(fd, &t, true);
	if (!err)
		assert_true(t.len > MANY_PAGES * 40);
	close(fd);
	free(t.data);
	subject_stop(&s);
	return err;
}

static void test_maps_exit_mid_read(void **state)
{
	assert_int_equal(read_maps_around(MID_READ_NOTHING), 0);
	assert_int_equal(read_maps_around(MID_READ_EXIT), -ESRCH);
	assert_int_equal(read_maps_around(MID_READ_EXEC), -ESRCH);
}

/* What an unprivileged reader gets for another user's process (init). */
static int read_init_unprivileged(void)
{
	struct procfs_maps m = { 0 };
	struct procfs_status st;

	if (procfs_maps_read(1, NULL, 0, &m) != -EACCES)
		return 1;
	if (procfs_pagemap_open(1) != -EACCES)
		return 2;
	if (procfs_status_read(1, &st) != 0 || st.pid != 1)
		return 3;
	procfs_maps_free(&m);
	return 0;
}

static void test_unreadable_pid(void **state)
{
	int status;

	if (geteuid() != 0) {
		assert_int_equal(read_init_unprivileged(), 0);
		return;
	}
	pid_t pid = fork();
	if (pid == 0) {
		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(100);
		_exit(read_init_unprivileged());
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_bad_pid(void **state)
{
	struct procfs_status st;

	assert_int_equal(procfs_status_read(0, &st), -EINVAL);
	assert_int_equal(procfs_status_read(-5, &st), -EINVAL);
	assert_int_equal(procfs_pagemap_open(0), -EINVAL);
}

/*
 * VmPTE as the kernel counts it, read after each step of a quiet child:
 * the first page in an empty 512 GiB slot brings a PUD, a PMD and a PTE
 * table; a new 2 MiB span one PTE table; a new 1 GiB span a PMD and a PTE
 * table; munmap frees them all (docs/kernel-facts.md, VmPTE is exact).
 */
#define SLOT_BASE 0x300000000000UL
#define SLOT_SIZE (1UL << 39)

static int map_slot(void *arg)
{
	void *p = mmap((void *)SLOT_BASE, 2UL << 30, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
			       MAP_FIXED_NOREPLACE, -1, 0);

	return p == MAP_FAILED ? -errno : 0;
}

static uint64_t vmpte_after(struct subject *s, int (*fn)(void *), uint64_t addr,
			    uint64_t len)
{
	struct subject_range r = { addr, len };
	uint64_t kb;

	assert_int_equal(subject_run(s, fn, &r, sizeof(r)), 0);
	assert_int_equal(procfs_vmpte_kb(s->pid, &kb), 0);
	return kb;
}

static void test_vmpte_counts_tables(void **state)
{
	struct subject s;
	struct procfs_maps m = { 0 };
	uint64_t base;

	assert_int_equal(subject_start(&s), 0);
	assert_int_equal(subject_run(&s, map_slot, NULL, 0), 0);
	/* The slot holds our mapping alone, so every table there is ours. */
	assert_int_equal(procfs_maps_read(s.pid, NULL, 0, &m), 0);
	for (size_t i = 0; i < m.n; i++)
		if (m.vmas[i].end > SLOT_BASE && m.vmas[i].start < SLOT_BASE + SLOT_SIZE)
			assert_int_equal(m.vmas[i].start, SLOT_BASE);
	procfs_maps_free(&m);

	assert_int_equal(procfs_vmpte_kb(s.pid, &base), 0);
	uint64_t kb = vmpte_after(&s, subject_populate_write, SLOT_BASE, 4096);
	assert_int_equal(kb, base + 12);
	kb = vmpte_after(&s, subject_populate_write, SLOT_BASE + 4096, 4096);
	assert_int_equal(kb, base + 12);
	kb = vmpte_after(&s, subject_populate_read, SLOT_BASE + (2UL << 20), 4096);
	assert_int_equal(kb, base + 16);
	kb = vmpte_after(&s, subject_populate_write, SLOT_BASE + (1UL << 30), 4096);
	assert_int_equal(kb, base + 24);
	kb = vmpte_after(&s, subject_munmap, SLOT_BASE, 2UL << 30);
	assert_int_equal(kb, base);
	subject_stop(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_list_pids),
		cmocka_unit_test(test_status_self),
		cmocka_unit_test(test_status_kernel_thread),
		cmocka_unit_test(test_zombie_then_reaped),
		cmocka_unit_test(test_maps_exit_mid_read),
		cmocka_unit_test(test_unreadable_pid),
		cmocka_unit_test(test_bad_pid),
		cmocka_unit_test(test_vmpte_counts_tables),
	};

	return test_group_status(cmocka_run_group_tests(tests, NULL, NULL));
}
