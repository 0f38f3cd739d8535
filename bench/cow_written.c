/* SPDX-License-Identifier: MIT */
/*
 * bench/cow_written: how ptshare may learn which private pages a process
 * wrote after a fork (cow-pte copies a shared PTE table when one side
 * first writes in its span; docs/model.md, "cow-pte").  Two ways:
 *   (a) pagemap: after a fork every anonymous page is mapped by both sides;
 *       one a side wrote is its own copy, mapped once: PM_MMAP_EXCLUSIVE
 *       (bit 56 of its /proc/PID/pagemap entry) turns set.  The daemon
 *       reads 8 bytes per page of the private mappings at a checkpoint;
 *       the program does nothing.
 *   (b) userfaultfd write-protect in async mode (UFFD_FEATURE_WP_ASYNC,
 *       6.7): the process registers its private memory with a userfaultfd
 *       and write-protects it after the fork; each first write then takes
 *       a write-protect fault the kernel resolves itself, and
 *       PAGEMAP_SCAN's PAGE_IS_WRITTEN says, by ranges, what was written.
 *       The program pays the registration and a fault per page it writes.
 * A parent with --mib MiB of private anonymous memory, every page written,
 * forks a child which writes --percent of its pages (spread evenly); each
 * figure the median of --rounds rounds, with its spread.  Printed: what
 * each way costs the reader per GiB, what (b) costs the program (its
 * registration and write-protection, and its writes against the same
 * writes without), and how many pages each way names, against those
 * written.
 *
 * usage: cow_written [--mib N] [--percent P] [--rounds N]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_rounds.h"
#include "procfs/pagemap_scan.h"

/* linux/userfaultfd.h since 6.4 and 6.7, for older installed headers. */
#ifndef UFFD_FEATURE_WP_UNPOPULATED
#define UFFD_FEATURE_WP_UNPOPULATED (1 << 13)
#endif
#ifndef UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_ASYNC (1 << 15)
#endif

#define PAGE 4096UL
#define PM_EXCLUSIVE (1ULL << 56)
#define PM_PRESENT (1ULL << 63)

static unsigned long mib = 1024, percent = 10;
static int rounds = 5;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void die(const char *what)
{
	fprintf(stderr, "bench/cow_written: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* Pages [0, n) of which the child writes: every step-th. */
static size_t step(void)
{
	return percent ? 100 / percent : 0;
}

static int pagemap_of(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		die(path);
	return fd;
}

/* (a): the pages of [p, p + len) that pid maps exclusively, by pread of
 * its pagemap, 4096 entries at a time. */
static size_t exclusive_pages(pid_t pid, const char *p, size_t len)
{
	int fd = pagemap_of(pid);
	static uint64_t e[4096];
	size_t n = 0, pages = len / PAGE;
	for (size_t at = 0; at < pages;) {
		size_t want = pages - at < 4096 ? pages - at : 4096;
		off_t off = (off_t)(((uintptr_t)p / PAGE + at) * 8);
		ssize_t r = pread(fd, e, want * 8, off);
		if (r <= 0)
			die("pread pagemap");
		for (size_t i = 0; i < (size_t)r / 8; i++)
			n += (e[i] & (PM_PRESENT | PM_EXCLUSIVE)) ==
			     (PM_PRESENT | PM_EXCLUSIVE);
		at += (size_t)r / 8;
	}
	close(fd);
	return n;
}

/* (b): the pages of [p, p + len) PAGEMAP_SCAN finds written, by ranges. */
static size_t written_pages(pid_t pid, const char *p, size_t len)
{
	int fd = pagemap_of(pid);
	static struct page_region vec[512];
	size_t n = 0;
	for (uint64_t at = (uintptr_t)p, end = at + len; at < end;) {
		struct pm_scan_arg a = {
			.size = sizeof(a), .start = at, .end = end,
			.vec = (uintptr_t)vec, .vec_len = 512,
			.category_mask = PAGE_IS_WRITTEN,
			.return_mask = PAGE_IS_WRITTEN,
		};
		long r = ioctl(fd, PAGEMAP_SCAN, &a);
		if (r < 0)
			die("PAGEMAP_SCAN");
		for (long i = 0; i < r; i++)
			n += (vec[i].end - vec[i].start) / PAGE;
		at = a.walk_end;
	}
	close(fd);
	return n;
}

/* (b) in the child: its memory registered and write-protected, async. */
static void protect(char *p, size_t len)
{
	int uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0)
		die("userfaultfd");
	struct uffdio_api api = {
		.api = UFFD_API,
		.features = UFFD_FEATURE_WP_ASYNC | UFFD_FEATURE_WP_UNPOPULATED,
	};
	struct uffdio_register reg = {
		.range = { (uintptr_t)p, len }, .mode = UFFDIO_REGISTER_MODE_WP,
	};
	struct uffdio_writeprotect wp = {
		.range = { (uintptr_t)p, len }, .mode = UFFDIO_WRITEPROTECT_MODE_WP,
	};
	if (ioctl(uffd, UFFDIO_API, &api) || ioctl(uffd, UFFDIO_REGISTER, &reg) ||
	    ioctl(uffd, UFFDIO_WRITEPROTECT, &wp))
		die("userfaultfd write-protect");
	/* the fd stays open: closing it would unregister the range */
}

struct round {
	double protect_s, write_s, read_a_s, read_b_s;
	size_t written, named_a, named_b, parent_a;
};

/*
 * One round: the parent's memory, a child (with or without (b)) writing,
 * and the readings.  The child reports its times through a pipe and waits
 * to be read and killed.
 */
static void one_round(bool uffd, struct round *out)
{
	size_t len = mib << 20, pages = len / PAGE;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		die("mmap");
	madvise(p, len, MADV_NOHUGEPAGE); /* 4 KiB pages, as the model's */
	memset(p, 1, len);
	int fds[2];
	if (pipe(fds))
		die("pipe");
	pid_t child = fork();
	if (child < 0)
		die("fork");
	if (!child) {
		double t[2] = { 0, 0 }, t0 = now();
		if (uffd)
			protect(p, len);
		t[0] = now() - t0;
		t0 = now();
		for (size_t i = 0; step() && i < pages; i += step())
			p[i * PAGE] = 2;
		t[1] = now() - t0;
		if (write(fds[1], t, sizeof(t)) != sizeof(t))
			_exit(1);
		pause();
		_exit(0);
	}
	double t[2];
	if (read(fds[0], t, sizeof(t)) != sizeof(t))
		die("the child's times");
	close(fds[0]);
	close(fds[1]);
	*out = (struct round){ .protect_s = t[0], .write_s = t[1],
			       .written = step() ? (pages + step() - 1) / step() : 0 };
	double t0 = now();
	out->named_a = exclusive_pages(child, p, len);
	out->read_a_s = now() - t0;
	out->parent_a = exclusive_pages(getpid(), p, len);
	if (uffd) {
		t0 = now();
		out->named_b = written_pages(child, p, len);
		out->read_b_s = now() - t0;
	}
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	munmap(p, len);
}

static void usage(void)
{
	fprintf(stderr, "usage: cow_written [--mib N] [--percent P (1 to 100)] "
		"[--rounds N (1 to %d)]\n", BENCH_MAX_ROUNDS);
	exit(2);
}

static void parse(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		char *end = NULL;
		long v = i + 1 < argc ? strtol(argv[i + 1], &end, 10) : 0;
		if (!end || *end || v <= 0)
			usage();
		if (!strcmp(argv[i], "--mib") && v <= 65536)
			mib = (unsigned long)v;
		else if (!strcmp(argv[i], "--percent") && v <= 100)
			percent = (unsigned long)v;
		else if (!strcmp(argv[i], "--rounds") && v <= BENCH_MAX_ROUNDS)
			rounds = (int)v;
		else
			usage();
		i++;
	}
}

int main(int argc, char **argv)
{
	parse(argc, argv);
	double prot[BENCH_MAX_ROUNDS], wr_b[BENCH_MAX_ROUNDS], wr[BENCH_MAX_ROUNDS],
	       ra[BENCH_MAX_ROUNDS], rb[BENCH_MAX_ROUNDS];
	struct round plain, wp;
	for (int i = 0; i < rounds; i++) {
		one_round(false, &plain);
		one_round(true, &wp);
		wr[i] = plain.write_s;
		ra[i] = plain.read_a_s;
		prot[i] = wp.protect_s;
		wr_b[i] = wp.write_s;
		rb[i] = wp.read_b_s;
	}
	double gib = mib / 1024.0, m_ra = bench_median(ra, rounds),
	       m_rb = bench_median(rb, rounds), m_wr = bench_median(wr, rounds),
	       m_wb = bench_median(wr_b, rounds), m_pr = bench_median(prot, rounds);
	printf("bench/cow_written: %lu MiB private, the child writes %lu%% "
	       "(%zu pages); medians of %d rounds, +- their spread\n", mib,
	       percent, plain.written, rounds);
	printf("(a) pagemap, PM_MMAP_EXCLUSIVE: read %.2f ms/GiB +-%.1f%%; "
	       "names %zu pages in the child, %zu in the parent\n",
	       1e3 * m_ra / gib, 100 * bench_noise(ra, rounds), plain.named_a,
	       plain.parent_a);
	printf("(b) uffd-wp async, PAGE_IS_WRITTEN: read %.2f ms/GiB +-%.1f%%; "
	       "names %zu pages in the child\n", 1e3 * m_rb / gib,
	       100 * bench_noise(rb, rounds), wp.named_b);
	printf("(b) costs the program: register and write-protect %.2f ms/GiB "
	       "+-%.1f%%; its writes %.2f ms against %.2f ms without "
	       "(+-%.1f%%, +-%.1f%%)\n", 1e3 * m_pr / gib,
	       100 * bench_noise(prot, rounds), 1e3 * m_wb, 1e3 * m_wr,
	       100 * bench_noise(wr_b, rounds), 100 * bench_noise(wr, rounds));
	printf("ratios: reading (a)/(b) %.2f; the program's writes under (b) "
	       "%.2fx; (b)'s cost to the program over (a)'s to the reader %.2f\n",
	       m_ra / m_rb, m_wb / m_wr, (m_pr + m_wb - m_wr) / m_ra);
	return 0;
}
