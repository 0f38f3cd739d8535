/* SPDX-License-Identifier: MIT */
/*
 * The programs the fault tests trace (tests/faults/test_faults.c), one
 * scenario per argv[1].  Built without sanitizers: the shim is preloaded
 * into it, and its faults must be its own.  It checks what it sees: every
 * page holds what was written to it (or zeros), and the kernel's view of
 * its registrations (/proc/self/smaps: VmFlags um, ui) is what the mode
 * promises.  Lines starting with '@' carry pids.  Exit status: 0 when all
 * held (blocked: 7), else the number of the check that failed (100 up:
 * a system call failed).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../support/subject.h"

#include "faults_subject.h"
#include "smaps_flags.h"

#define PAGE 4096UL
#define SPAN (2UL << 20)

/* A check that failed: exit with its number. */
static _Noreturn void failed(int check, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static _Noreturn void failed(int check, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("faults_subject: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(check);
}

/* What page i of region r holds once written by the process w. */
static unsigned char pattern(int r, size_t i, int w)
{
	return (unsigned char)(1 + r * 31 + i * 7 + w * 101);
}

static void write_pages(char *base, int r, size_t from, size_t to, int w)
{
	for (size_t i = from; i < to; i++)
		((volatile char *)base)[i * PAGE] = (char)pattern(r, i, w);
}

static void check_pages(const char *base, int r, size_t from, size_t to, int w,
			int check)
{
	for (size_t i = from; i < to; i++) {
		unsigned char got = ((const volatile unsigned char *)base)[i * PAGE];
		unsigned char want = w < 0 ? 0 : pattern(r, i, w);
		if (got != want)
			failed(check, "region %d page %zu holds %u, not %u", r, i,
			       got, want);
	}
}

/* Until the daemon has registered all of [p, p + len) (MINOR too unless
 * hugetlb), or the bound: then the check fails. */
static void wait_registered(const char *p, size_t len, bool minor, int check)
{
	if (!registered_within(p, len, minor))
		failed(check, "%p (+%zu) not registered within %d ms", (void *)p,
		       len, SMAPS_WAIT_MS);
}

/* [p, p + len) is registered (want) or not, entirely. */
static void check_registered(const char *p, size_t len, bool want, int check)
{
	struct uffd_flags f = uffd_flags((uintptr_t)p, (uintptr_t)p + len);
	if (!f.vmas || (want ? f.missing != f.vmas : f.missing != 0))
		failed(check, "%p (+%zu): %d of %d mappings registered, wanted %s",
		       (void *)p, len, f.missing, f.vmas, want ? "all" : "none");
}

static void *map_shared(int fd, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | (fd < 0 ? MAP_ANONYMOUS : 0), fd, 0);
	if (p == MAP_FAILED)
		die("mmap");
	return p;
}

/* A tmpfs file (POSIX shared memory), a memfd, shared anonymous memory. */
static char *map_region(int r)
{
	char name[64];
	int fd = -1;
	if (r == REGION_SHM) {
		snprintf(name, sizeof(name), "/ptshare-faults-%d", (int)getpid());
		fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
		if (fd >= 0)
			shm_unlink(name);
	} else if (r == REGION_MEMFD) {
		fd = memfd_create("ptshare-faults", MFD_CLOEXEC);
	}
	if (r != REGION_ANON && (fd < 0 || ftruncate(fd, REGION_BYTES)))
		die("shared memory");
	char *p = map_shared(fd, REGION_BYTES);
	if (fd >= 0)
		close(fd);
	return p;
}

static char *span_up(char *p)
{
	return (char *)(((uintptr_t)p + SPAN - 1) & ~(SPAN - 1));
}

static size_t spans_of(size_t pages)
{
	return (pages * PAGE + SPAN - 1) / SPAN;
}

/* table: the spans touched are no longer registered, the next one is.
 * Every span touched has two pages touched at least: the daemon releases a
 * span just after it resolves its first fault, and the second waits for
 * that. */
static void check_released(char *const a[], const size_t pages[], int check)
{
	for (int r = 0; r < REGIONS; r++) {
		check_registered(a[r], spans_of(pages[r]) * SPAN, false, check);
		check_registered(a[r] + spans_of(pages[r]) * SPAN, SPAN, true,
				 check + 1);
	}
}

/* The child: reads what its parent wrote, writes pages of its own. */
static _Noreturn void script_child(char *const base[], char *const a[],
				   const char *mode)
{
	bool table = !strcmp(mode, "table");
	static const size_t reads[REGIONS] = { CHILD_READS };
	/* Its fork() returned: its registrations must be there already. */
	for (int r = 0; r < REGIONS && strcmp(mode, "off"); r++)
		check_registered(base[r], REGION_BYTES, true, 20);
	for (int r = 0; r < REGIONS; r++)
		check_pages(a[r], r, 0, reads[r], 0, 21);
	write_pages(a[REGION_ANON], REGION_ANON, PARENT_WRITES_ANON,
		    PARENT_WRITES_ANON + CHILD_WRITES, 1);
	if (table) {
		const size_t touched[REGIONS] = {
			reads[0], reads[1], PARENT_WRITES_ANON + CHILD_WRITES,
		};
		check_released(a, touched, 22);
	}
	exit(0);
}

/*
 * scripted faults (faults_subject.h has the counts): three regions, each
 * registered before it is touched (the daemon registers a mapping once it
 * has its record); the parent writes, reads a few untouched pages (zeros),
 * forks; the child reads and writes; the parent reads the child's pages.
 * table: the spans touched are released and stay so past a timer
 * checkpoint (the subject says "@timer PID" and waits for a line on stdin,
 * which the test sends once the trace holds a timer checkpoint of PID
 * begun after), through a second round of the same touches.
 */
static int script(const char *mode)
{
	static const size_t writes[REGIONS] = { PARENT_WRITES };
	bool table = !strcmp(mode, "table"), off = !strcmp(mode, "off");
	char *base[REGIONS], *a[REGIONS];
	for (int r = 0; r < REGIONS; r++) {
		base[r] = map_region(r);
		a[r] = span_up(base[r]);
		if (!off)
			wait_registered(base[r], REGION_BYTES, true, 10);
	}
	for (int r = 0; r < REGIONS; r++)
		write_pages(a[r], r, 0, writes[r], 0);
	check_pages(a[REGION_MEMFD], REGION_MEMFD, writes[REGION_MEMFD],
		    writes[REGION_MEMFD] + PARENT_ZERO_READS, -1, 11);
	if (table)
		check_released(a, writes, 12);
	fflush(stdout);
	pid_t child = fork();
	if (child < 0)
		die("fork");
	if (!child)
		script_child(base, a, mode);
	int st = wait_child(child);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		failed(WIFEXITED(st) ? WEXITSTATUS(st) : 30, "the child failed");
	check_pages(a[REGION_ANON], REGION_ANON, PARENT_WRITES_ANON,
		    PARENT_WRITES_ANON + CHILD_WRITES, 1, 31);
	if (table) {
		/* A timer checkpoint (--interval 1) registers what the model
		 * has anew: not the spans released. */
		const size_t touched[REGIONS] = {
			writes[0], writes[1], PARENT_WRITES_ANON + CHILD_WRITES,
		};
		char line[16];
		say("@timer %d\n", (int)getpid());
		if (!fgets(line, sizeof(line), stdin))
			failed(33, "no word from the test after a timer checkpoint");
		for (int r = 0; r < REGIONS; r++)
			write_pages(a[r], r, 0, writes[r], 0);
		check_released(a, touched, 32);
	}
	for (int r = 0; r < REGIONS; r++)
		check_pages(a[r], r, 0, writes[r], 0, 34);
	say("@pids %d %d\nscript done\n", (int)getpid(), (int)child);
	return 0;
}

/*
 * For the daemon killed while the program waits in a fault: a region
 * registered, then, once the test says so (having stopped the daemon),
 * written (the first write waits), and read back, by the process and by
 * a child it forks.
 */
static int blocked(void)
{
	char *p = map_region(REGION_ANON);
	wait_registered(p, REGION_BYTES, true, 40);
	say("@ready %d\n", (int)getpid());
	char line[16];
	if (!fgets(line, sizeof(line), stdin))
		return 41;
	size_t pages = REGION_BYTES / PAGE;
	write_pages(p, REGION_ANON, 0, pages, 0);
	fflush(stdout);
	pid_t child = fork();
	if (child < 0)
		die("fork");
	if (!child) {
		check_pages(p, REGION_ANON, 0, pages, 0, 42);
		write_pages(p, REGION_ANON, 0, pages / 2, 1);
		exit(0);
	}
	int st = wait_child(child);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		return 43;
	check_pages(p, REGION_ANON, 0, pages / 2, 1, 44);
	check_pages(p, REGION_ANON, pages / 2, pages, 0, 45);
	say("blocked done\n");
	return 7;
}

/* A hole of len bytes, aligned to a span, to move or map things into. */
static char *hole(size_t len)
{
	char *p = mmap(NULL, len + SPAN, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		die("mmap hole");
	munmap(p, len + SPAN);
	return span_up(p);
}

/*
 * The mapping calls the daemon follows (all mode; faults_subject.h has the
 * counts): a memfd written, part of it punched (MADV_REMOVE: zeros, which
 * fault again), moved (mremap: its pages go with it, the new place is
 * registered anew), its tail unmapped and shared anonymous memory mapped
 * over it (MAP_FIXED: registered anew); each step waits for the daemon's
 * registration before touching.
 */
static int events(void)
{
	char *p = map_region(REGION_MEMFD);
	wait_registered(p, REGION_BYTES, true, 50);
	char *a = span_up(p);
	write_pages(a, 0, 0, EVENTS_WRITES, 0);
	if (madvise(a, EVENTS_REMOVED * PAGE, MADV_REMOVE))
		die("madvise");
	check_pages(a, 0, 0, EVENTS_REMOVED, -1, 51);
	char *q = mremap(p, REGION_BYTES, REGION_BYTES, MREMAP_MAYMOVE | MREMAP_FIXED,
			 hole(REGION_BYTES));
	if (q == MAP_FAILED)
		die("mremap");
	wait_registered(q, REGION_BYTES, true, 52);
	a = q + (a - p);
	check_pages(a, 0, EVENTS_REMOVED, EVENTS_WRITES, 0, 53);
	write_pages(a, 0, EVENTS_WRITES, EVENTS_WRITES + EVENTS_MOVED_WRITES, 0);
	char *tail = q + REGION_BYTES / 2;
	if (munmap(tail, REGION_BYTES / 2) ||
	    mmap(tail, REGION_BYTES / 2, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != tail)
		die("map over the tail");
	wait_registered(tail, REGION_BYTES / 2, true, 54);
	write_pages(tail, 1, 0, EVENTS_TAIL_WRITES, 0);
	check_pages(tail, 1, 0, EVENTS_TAIL_WRITES, 0, 55);
	say("@pid %d\nevents done\n", (int)getpid());
	return 0;
}

/*
 * table: one span released splits the mapping's VMA in three, which
 * mremap cannot move as one; the shim has the daemon release the range
 * and tries again: the program sees mremap succeed, as without us.
 */
static int splitremap(void)
{
	char *p = map_region(REGION_ANON);
	wait_registered(p, REGION_BYTES, true, 60);
	char *a = span_up(p) + SPAN;
	/* Two pages: the daemon releases the span just after it resolves the
	 * first fault, and the second waits for that. */
	write_pages(a, 0, 0, 2, 0);
	struct uffd_flags f = uffd_flags((uintptr_t)p, (uintptr_t)p + REGION_BYTES);
	if (f.vmas < 3 || f.missing != f.vmas - 1)
		failed(61, "%d mappings, %d registered: not split by a release",
		       f.vmas, f.missing);
	char *q = mremap(p, REGION_BYTES, REGION_BYTES,
			 MREMAP_MAYMOVE | MREMAP_FIXED, hole(REGION_BYTES));
	if (q == MAP_FAILED)
		failed(62, "mremap of a split mapping: %s", strerror(errno));
	check_pages(q + (a - p), 0, 0, 2, 0, 63);
	say("@pid %d\nsplitremap done\n", (int)getpid());
	return 0;
}

/*
 * hugetlb (a memfd of 2 MiB pages): registered for MISSING only (MINOR
 * would switch the kernel's own PMD sharing off).  The parent writes two
 * huge pages and reads a third (zeros); the child reads the first two,
 * which are in the page cache: no fault comes to the daemon.
 */
static int hugetlb(void)
{
	int fd = memfd_create("ptshare-faults-huge", MFD_CLOEXEC | MFD_HUGETLB);
	if (fd < 0 || ftruncate(fd, HUGE_BYTES))
		die("hugetlb memfd");
	char *p = map_shared(fd, HUGE_BYTES);
	close(fd);
	wait_registered(p, HUGE_BYTES, false, 70);
	for (size_t h = 0; h < HUGE_WRITTEN; h++)
		write_pages(p + h * SPAN, (int)h, 0, SPAN / PAGE, 0);
	check_pages(p + HUGE_WRITTEN * SPAN, 0, 0, SPAN / PAGE, -1, 71);
	fflush(stdout);
	pid_t child = fork();
	if (child < 0)
		die("fork");
	if (!child) {
		check_registered(p, HUGE_BYTES, true, 72);
		for (size_t h = 0; h < HUGE_WRITTEN; h++)
			check_pages(p + h * SPAN, (int)h, 0, SPAN / PAGE, 0, 73);
		exit(0);
	}
	int st = wait_child(child);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		failed(WIFEXITED(st) ? WEXITSTATUS(st) : 74, "the child failed");
	say("@pids %d %d\nhugetlb done\n", (int)getpid(), (int)child);
	return 0;
}

int main(int argc, char **argv)
{
	const char *s = argc > 1 ? argv[1] : "";
	if (!strcmp(s, "script") && argc > 2)
		return script(argv[2]);
	if (!strcmp(s, "blocked"))
		return blocked();
	if (!strcmp(s, "events"))
		return events();
	if (!strcmp(s, "splitremap"))
		return splitremap();
	if (!strcmp(s, "hugetlb"))
		return hugetlb();
	fprintf(stderr, "usage: faults_subject script all|table|off|blocked|"
		"events|splitremap|hugetlb\n");
	return 2;
}
