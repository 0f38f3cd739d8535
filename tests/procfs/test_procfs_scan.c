/* SPDX-License-Identifier: MIT */
/*
 * Page presence: the exact runs PAGEMAP_SCAN reports for pages this test
 * populated itself (with MADV_POPULATE_*, so no access of its own touches
 * anything else), the same through the 8-byte pagemap entries, the
 * walk_end quirk past 512 regions, THP, a process that goes away, and the
 * probe of whether a read maps the zero page, against smaps.
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
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "ptshare/procfs.h"
#include "subject.h"

#define PAGE 4096UL
#define BASE 0x320000000000UL
#define AT(page) (BASE + (page) * PAGE)

struct want_run {
	uint64_t start, end; /* pages from BASE */
	bool huge;
	uint8_t pages;
};

static void assert_runs(const struct procfs_runs *r, const struct want_run *w,
			size_t n)
{
	for (size_t i = 0; i < r->n; i++)
		print_message("run %#lx-%#lx huge %d pages %#x\n",
			      (unsigned long)(r->runs[i].start - BASE) / PAGE,
			      (unsigned long)(r->runs[i].end - BASE) / PAGE,
			      r->runs[i].huge, r->pages[i]);
	assert_int_equal(r->n, n);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(r->runs[i].start, AT(w[i].start));
		assert_int_equal(r->runs[i].end, AT(w[i].end));
		assert_int_equal(r->runs[i].huge, w[i].huge);
		assert_int_equal(r->pages[i], w[i].pages);
	}
}

static void populate(uint64_t first, uint64_t last, int advice)
{
	assert_int_equal(madvise((void *)AT(first), (last - first) * PAGE, advice), 0);
}

/* What the tests of the mixed mappings hold, released by the teardown
 * however the test ends (a failed assertion leaves it at once). */
struct mixed {
	int fd; /* our pagemap */
	struct procfs_runs runs;
	struct procfs_maps maps;
	int zero_page; /* procfs_zero_page(): no answer without PAGEMAP_SCAN */
};

/* What a read of private anonymous memory maps here: the zero page, or
 * an anonymous page (no bit) on a kernel without one. */
static uint8_t read_anon(const struct mixed *m)
{
	assert_true(m->zero_page >= 0);
	return m->zero_page ? PROCFS_PAGE_ZERO : 0;
}

/*
 * Pages 0-63 private anonymous, 64-79 a memfd (shared), 80-83 a private
 * mapping of a 4-page file: the whole file is mapped, so the kernel's fault
 * around (which maps cached neighbours of a faulting page) adds nothing.
 */
static int mixed_setup(void **state)
{
	struct mixed *m = calloc(1, sizeof(*m));
	assert_non_null(m);
	*state = m;
	m->fd = procfs_pagemap_open(getpid());
	assert_true(m->fd >= 0);
	m->zero_page = procfs_zero_page();

	char path[] = "/tmp/ptshare-scan-XXXXXX";
	char data[4 * PAGE];
	int memfd = memfd_create("scan", MFD_CLOEXEC);
	int file = mkostemp(path, O_CLOEXEC);

	assert_true(memfd >= 0 && file >= 0);
	assert_int_equal(unlink(path), 0);
	memset(data, 'f', sizeof(data));
	assert_int_equal(write(file, data, sizeof(data)), sizeof(data));
	assert_int_equal(ftruncate(memfd, 16 * PAGE), 0);
	assert_true(mmap((void *)AT(0), 64 * PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) ==
		    (void *)AT(0));
	assert_true(mmap((void *)AT(64), 16 * PAGE, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED_NOREPLACE, memfd, 0) == (void *)AT(64));
	assert_true(mmap((void *)AT(80), 4 * PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_FIXED_NOREPLACE, file, 0) == (void *)AT(80));
	close(memfd);
	close(file);

	populate(0, 3, MADV_POPULATE_WRITE);
	populate(5, 6, MADV_POPULATE_READ); /* the zero page, if any */
	populate(10, 20, MADV_POPULATE_WRITE);
	populate(63, 64, MADV_POPULATE_WRITE);
	populate(64, 68, MADV_POPULATE_WRITE);
	populate(68, 72, MADV_POPULATE_READ);
	populate(80, 84, MADV_POPULATE_READ);
	populate(82, 83, MADV_POPULATE_WRITE); /* copied on write: anonymous */
	return 0;
}

static int mixed_teardown(void **state)
{
	struct mixed *m = *state;
	munmap((void *)AT(0), 84 * PAGE);
	if (m) {
		procfs_runs_free(&m->runs);
		procfs_maps_free(&m->maps);
		if (m->fd >= 0)
			close(m->fd);
		free(m);
	}
	return 0;
}

/* [1].pages is read_anon(). */
static const struct want_run mixed_want[] = {
	{ 0, 3, false, 0 },
	{ 5, 6, false, 0 },
	{ 10, 20, false, 0 },
	{ 63, 64, false, 0 },
	{ 64, 72, false, PROCFS_PAGE_FILE },
	{ 80, 82, false, PROCFS_PAGE_FILE },
	{ 82, 83, false, 0 },
	{ 83, 84, false, PROCFS_PAGE_FILE },
};

static void test_exact_runs(void **state)
{
	struct mixed *m = *state;
	struct procfs_runs *r = &m->runs;
	struct want_run want[sizeof(mixed_want) / sizeof(mixed_want[0])];

	memcpy(want, mixed_want, sizeof(want));
	want[1].pages = read_anon(m);
	assert_int_equal(procfs_scan(m->fd, AT(0), AT(96), 0, r), 0);
	assert_true(r->exact);
	assert_runs(r, want, sizeof(want) / sizeof(want[0]));

	/* Runs are clipped to the range; the struct is refilled. */
	static const struct want_run clipped[] = {
		{ 12, 15, false, 0 },
	};
	assert_int_equal(procfs_scan(m->fd, AT(12), AT(15), 0, r), 0);
	assert_runs(r, clipped, 1);
	assert_int_equal(procfs_scan(m->fd, AT(20), AT(63), 0, r), 0);
	assert_int_equal(r->n, 0);
}

/* Without the file bit, runs differ only where the rest differs. */
static void test_runs_without_file(void **state)
{
	struct mixed *m = *state;
	struct want_run want[] = {
		{ 0, 3, false, 0 },
		{ 5, 6, false, read_anon(m) },
		{ 10, 20, false, 0 },
		{ 63, 72, false, 0 },
		{ 80, 84, false, 0 },
	};

	assert_int_equal(procfs_scan(m->fd, AT(0), AT(96), PROCFS_SCAN_NO_FILE,
				     &m->runs), 0);
	assert_runs(&m->runs, want, 5);

	/* The entries cannot see the zero page: it reads as anonymous. */
	want[1].pages = 0;
	assert_int_equal(procfs_scan(m->fd, AT(0), AT(96),
				     PROCFS_SCAN_NO_FILE | PROCFS_SCAN_PAGEMAP_ENTRIES,
				     &m->runs), 0);
	assert_runs(&m->runs, want, 5);
}

/*
 * The probe against smaps, which counts a page as anonymous by its struct
 * page: the fixture's private anonymous mapping holds 14 written pages
 * and page 5, read, which is anonymous exactly where the probe says the
 * kernel has no zero page.
 */
static void test_zero_page_probe(void **state)
{
	struct mixed *m = *state;
	const struct procfs_vma *v = NULL;

	print_message("a read of private anonymous memory maps %s\n",
		      read_anon(m) ? "the zero page" : "an anonymous page");
	assert_int_equal(procfs_maps_read(getpid(), NULL, PROCFS_MAPS_SMAPS,
					  &m->maps), 0);
	for (size_t i = 0; i < m->maps.n && !v; i++)
		if (m->maps.vmas[i].start == AT(0))
			v = &m->maps.vmas[i];
	assert_non_null(v);
	assert_int_equal(v->end, AT(64));
	assert_int_equal(v->smaps.anonymous, (m->zero_page ? 14 : 15) * PAGE);
}

/* Page by page: 0 absent, else 1 | what the page is << 1. */
static uint8_t *page_map(const struct procfs_runs *r, uint64_t start,
			 uint64_t end, uint8_t ignore)
{
	uint8_t *map = calloc((end - start) / PAGE, 1);

	assert_non_null(map);
	for (size_t i = 0; i < r->n; i++)
		for (uint64_t a = r->runs[i].start; a < r->runs[i].end; a += PAGE)
			map[(a - start) / PAGE] = 1 | (uint8_t)((r->pages[i] & ~ignore) << 1);
	return map;
}

/* The 8-byte entries see the same pages, less the zero page. */
static void test_entries_match_ioctl(void **state)
{
	struct procfs_runs scan = { 0 }, entries = { 0 };
	int fd = procfs_pagemap_open(getpid());

	assert_true(fd >= 0);
	assert_int_equal(procfs_scan(fd, AT(0), AT(96), 0, &scan), 0);
	assert_int_equal(procfs_scan(fd, AT(0), AT(96), PROCFS_SCAN_PAGEMAP_ENTRIES,
				     &entries), 0);
	assert_false(entries.exact);
	uint8_t *a = page_map(&scan, AT(0), AT(96), PROCFS_PAGE_ZERO);
	uint8_t *b = page_map(&entries, AT(0), AT(96), 0);
	assert_memory_equal(a, b, 96);
	for (size_t i = 0; i < entries.n; i++)
		assert_false(entries.runs[i].huge);
	free(a);
	free(b);
	procfs_runs_free(&scan);
	procfs_runs_free(&entries);
	close(fd);
}

/*
 * More than 512 regions in one range: the kernel's walk_end comes back short
 * when vec_len > 512 (docs/kernel-facts.md, the walk_end quirk).  Every
 * other page of a child's mapping is populated: exactly one run per
 * populated page.
 */
#define QUIRK_PAGES 2100UL

static int map_alternating(void *arg)
{
	char *p = mmap((void *)BASE, QUIRK_PAGES * PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	if (p == MAP_FAILED)
		return -errno;
	for (unsigned long i = 0; i < QUIRK_PAGES; i += 2)
		if (madvise(p + i * PAGE, PAGE, MADV_POPULATE_WRITE))
			return -errno;
	return 0;
}

static void test_over_512_runs(void **state)
{
	struct procfs_runs r = { 0 };
	struct subject s;
	unsigned flags[] = { 0, PROCFS_SCAN_PAGEMAP_ENTRIES };

	assert_int_equal(subject_start(&s), 0);
	assert_int_equal(subject_run(&s, map_alternating, NULL, 0), 0);
	int fd = procfs_pagemap_open(s.pid);
	assert_true(fd >= 0);
	for (int f = 0; f < 2; f++) {
		/* Past the mapping's end too: nothing is there. */
		assert_int_equal(procfs_scan(fd, AT(0), AT(QUIRK_PAGES + 512), flags[f], &r), 0);
		assert_int_equal(r.n, QUIRK_PAGES / 2);
		for (size_t i = 0; i < r.n; i++) {
			assert_int_equal(r.runs[i].start, AT(2 * i));
			assert_int_equal(r.runs[i].end, AT(2 * i + 1));
			assert_false(r.runs[i].huge);
			assert_int_equal(r.pages[i], 0);
		}
	}
	/* A range starting mid-way resumes on the same grid. */
	assert_int_equal(procfs_scan(fd, AT(1001), AT(QUIRK_PAGES), 0, &r), 0);
	assert_int_equal(r.n, (QUIRK_PAGES - 1002) / 2);
	assert_int_equal(r.runs[0].start, AT(1002));
	assert_int_equal(r.runs[r.n - 1].start, AT(QUIRK_PAGES - 2));
	procfs_runs_free(&r);
	close(fd);
	subject_stop(&s);
}

/*
 * An anonymous 2 MiB span populated at once under MADV_HUGEPAGE: a THP when
 * the kernel had one to give (smaps AnonHugePages says), and the scan must
 * agree with smaps either way.
 */
#define THP_BASE 0x330000000000UL
#define THP_SIZE (2UL << 20)

static void test_thp_run(void **state)
{
	struct procfs_runs r = { 0 };
	struct procfs_maps m = { 0 };
	char *p = mmap((void *)THP_BASE, 2 * THP_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	assert_true(p == (void *)THP_BASE);
	assert_int_equal(madvise(p, 2 * THP_SIZE, MADV_HUGEPAGE), 0);
	assert_int_equal(madvise(p, THP_SIZE, MADV_POPULATE_WRITE), 0);

	assert_int_equal(procfs_maps_read(getpid(), NULL, PROCFS_MAPS_SMAPS, &m), 0);
	const struct procfs_vma *v = NULL;
	for (size_t i = 0; i < m.n && !v; i++)
		if (m.vmas[i].start == THP_BASE)
			v = &m.vmas[i];
	assert_non_null(v);
	assert_true(v->smaps.vmflags & PROCFS_VMF_HUGEPAGE);
	bool thp = v->smaps.anon_huge_pages == THP_SIZE;
	print_message("THP %s\n", thp ? "allocated" : "not allocated");

	int fd = procfs_pagemap_open(getpid());
	assert_true(fd >= 0);
	assert_int_equal(procfs_scan(fd, THP_BASE, THP_BASE + 2 * THP_SIZE, 0, &r), 0);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.runs[0].start, THP_BASE);
	assert_int_equal(r.runs[0].end, THP_BASE + THP_SIZE);
	assert_int_equal(r.runs[0].huge, thp);
	assert_int_equal(r.pages[0], 0);

	/* Clipped, a huge run is no longer leaf-aligned. */
	assert_int_equal(procfs_scan(fd, THP_BASE + THP_SIZE / 2, THP_BASE + THP_SIZE, 0, &r), 0);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.runs[0].start, THP_BASE + THP_SIZE / 2);
	assert_int_equal(r.runs[0].huge, thp);

	assert_int_equal(procfs_scan(fd, THP_BASE, THP_BASE + 2 * THP_SIZE,
				     PROCFS_SCAN_PAGEMAP_ENTRIES, &r), 0);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.runs[0].end, THP_BASE + THP_SIZE);
	assert_false(r.runs[0].huge);

	procfs_runs_free(&r);
	procfs_maps_free(&m);
	close(fd);
	munmap(p, 2 * THP_SIZE);
}

/*
 * [vdso] holds ordinary kernel pages, which scan as file pages (never
 * anonymous); [vvar] is PFN-mapped, and the kernel's walk skips it.
 */
static void test_special_mappings(void **state)
{
	struct procfs_maps m = { 0 };
	struct procfs_runs r = { 0 };
	int fd = procfs_pagemap_open(getpid());
	int vdso = 0, vvar = 0;
	struct timespec ts;

	/* The vdso's clock reads its data page in [vvar]: it is mapped now. */
	assert_int_equal(clock_gettime(CLOCK_MONOTONIC, &ts), 0);
	assert_true(fd >= 0);
	assert_int_equal(procfs_maps_read(getpid(), NULL, 0, &m), 0);
	for (size_t i = 0; i < m.n; i++) {
		const struct procfs_vma *v = &m.vmas[i];
		if (v->special != PROCFS_SPECIAL_VDSO && v->special != PROCFS_SPECIAL_VVAR)
			continue;
		assert_int_equal(procfs_scan(fd, v->start, v->end, 0, &r), 0);
		if (v->special == PROCFS_SPECIAL_VVAR) {
			assert_int_equal(r.n, 0);
			vvar++;
			continue;
		}
		/* The loader has read the vdso's ELF header at least. */
		assert_true(r.n >= 1);
		for (size_t j = 0; j < r.n; j++) {
			assert_int_equal(r.pages[j], PROCFS_PAGE_FILE);
			assert_false(r.runs[j].huge);
		}
		vdso++;
	}
	assert_int_equal(vdso, 1);
	assert_true(vvar >= 1);
	procfs_maps_free(&m);
	procfs_runs_free(&r);
	close(fd);
}

static void test_bad_range(void **state)
{
	struct procfs_runs r = { 0 };
	int fd = procfs_pagemap_open(getpid());

	assert_true(fd >= 0);
	assert_int_equal(procfs_scan(fd, AT(0) + 1, AT(4), 0, &r), -EINVAL);
	assert_int_equal(procfs_scan(fd, AT(0), AT(4) - 1, 0, &r), -EINVAL);
	assert_int_equal(procfs_scan(fd, AT(4), AT(4), 0, &r), -EINVAL);
	assert_int_equal(procfs_scan(fd, AT(4), AT(0), 0, &r), -EINVAL);
	/* [vsyscall] and above: no user address space to scan. */
	assert_int_equal(procfs_scan(fd, 0xffffffffff600000UL, 0xffffffffff601000UL, 0, &r),
			 -EINVAL);
	assert_int_equal(procfs_scan(fd, MM_TASK_SIZE - PAGE, MM_TASK_SIZE, 0, &r), 0);
	assert_int_equal(procfs_scan(-1, AT(0), AT(4), 0, &r), -EBADF);
	procfs_runs_free(&r);
	close(fd);
}

static void test_scan_gone_process(void **state)
{
	struct procfs_runs r = { 0 };
	struct subject s;
	siginfo_t si;

	assert_int_equal(subject_start(&s), 0);
	assert_int_equal(subject_run(&s, map_alternating, NULL, 0), 0);
	int fd = procfs_pagemap_open(s.pid);
	assert_true(fd >= 0);
	assert_int_equal(procfs_scan(fd, AT(0), AT(8), 0, &r), 0);
	assert_int_equal(r.n, 4);

	kill(s.pid, SIGKILL);
	assert_int_equal(waitid(P_PID, (id_t)s.pid, &si, WEXITED | WNOWAIT), 0);
	assert_int_equal(procfs_scan(fd, AT(0), AT(8), 0, &r), -ESRCH);
	assert_int_equal(r.n, 0);
	assert_int_equal(procfs_scan(fd, AT(0), AT(8), PROCFS_SCAN_PAGEMAP_ENTRIES, &r),
			 -ESRCH);
	subject_stop(&s);
	assert_int_equal(procfs_scan(fd, AT(0), AT(8), 0, &r), -ESRCH);
	assert_int_equal(procfs_scan(fd, AT(0), AT(8), PROCFS_SCAN_PAGEMAP_ENTRIES, &r),
			 -ESRCH);
	procfs_runs_free(&r);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_exact_runs, mixed_setup,
						mixed_teardown),
		cmocka_unit_test_setup_teardown(test_runs_without_file,
						mixed_setup, mixed_teardown),
		cmocka_unit_test_setup_teardown(test_zero_page_probe,
						mixed_setup, mixed_teardown),
		cmocka_unit_test_setup_teardown(test_entries_match_ioctl,
						mixed_setup, mixed_teardown),
		cmocka_unit_test(test_over_512_runs),
		cmocka_unit_test(test_thp_run),
		cmocka_unit_test(test_special_mappings),
		cmocka_unit_test(test_bad_range),
		cmocka_unit_test(test_scan_gone_process),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
