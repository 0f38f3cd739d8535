/* SPDX-License-Identifier: MIT */
/*
 * A program with a userfaultfd of its own, as QEMU's postcopy or a
 * garbage collector has (docs/faults.md, The program's own userfaultfd),
 * run by tests/faults/test_faults.c plainly and under `ptshare run` in
 * every fault mode: its output must be the same.  It registers the middle
 * of shared memory the daemon may have registered first (with "wait", it
 * waits until the daemon has: its registration then meets the daemon's),
 * and serves its own faults from a thread: shared anonymous memory
 * (MISSING: a page of a pattern copied in), a memfd whose pages are in the
 * page cache (MINOR: mapped as they are), and with "huge" a hugetlb memfd
 * (MISSING: a huge page copied in).  Its userfaultfd asks for
 * UFFD_FEATURE_EVENT_FORK: a child it forks has the registrations too,
 * and the thread serves the child's faults on the userfaultfd the fork
 * event brings.  At the end it unregisters shared memory it never
 * registered, which the daemon may hold (a no-op without ptshare).  It
 * checks every page it reads and says how many faults it served.  Exit
 * status 0 when all held, else the number of the check that failed (100:
 * a system call failed).
 *
 * usage: own_uffd_subject wait|nowait [huge]
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../support/subject.h"

#include "smaps_flags.h"

#define PAGE SUBJECT_PAGE
#define SPAN (2UL << 20)
#define REGION (8 * SPAN)
#define OWN_FROM (2 * SPAN) /* the part of a region the program registers */
#define OWN_LEN (3 * SPAN)
#define TOUCHED 64          /* pages the parent touches in that part */
#define CHILD_TOUCHED 16    /* pages the child touches after them */
#define HUGE_REGION (4 * SPAN)
#define SPARE (2 * SPAN)    /* shared memory the program never registers */

enum region { ANON, MEMFD, HUGE, REGIONS };
static const char *const region_name[REGIONS] = { "anon", "memfd", "hugetlb" };

/* What the program's thread serves: its userfaultfds (the parent's, then
 * its child's from the fork event), and the faults served, per region and
 * process. */
struct server {
	char *base[REGIONS];
	int fd[2];
	atomic_int nfd;
	atomic_uint served[2][REGIONS];
	int stop[2]; /* a pipe: the thread ends when it closes */
	char *page, *huge;
};

static struct server srv;

/* What page i of a region holds: written by the program before it maps
 * the memfd, copied in by its thread elsewhere. */
static char pattern(enum region r, size_t i)
{
	return (char)(7 + r * 50 + i * 3);
}

static enum region region_of(uint64_t addr)
{
	for (int r = 0; r < REGIONS; r++)
		if (srv.base[r] && addr >= (uintptr_t)srv.base[r] &&
		    addr < (uintptr_t)srv.base[r] + REGION)
			return (enum region)r;
	fprintf(stderr, "own_uffd_subject: a fault at %#llx, in no region\n",
		(unsigned long long)addr);
	exit(40);
}

/* A fault let go as the kernel would have, with the program's own data;
 * counted first: the faulting thread runs on once it is resolved. */
static void serve(int who, const struct uffd_msg *m)
{
	uint64_t addr = m->arg.pagefault.address;
	enum region r = region_of(addr);
	int fd = srv.fd[who];
	int err;
	atomic_fetch_add(&srv.served[who][r], 1);
	if (m->arg.pagefault.flags & UFFD_PAGEFAULT_FLAG_MINOR) {
		struct uffdio_continue c = {
			.range = { addr & ~(PAGE - 1), PAGE },
		};
		err = ioctl(fd, UFFDIO_CONTINUE, &c);
	} else {
		uint64_t size = r == HUGE ? SPAN : PAGE;
		uint64_t at = addr & ~(size - 1);
		char *src = r == HUGE ? srv.huge : srv.page;
		size_t page = (at - (uintptr_t)srv.base[r]) / PAGE;
		memset(src, pattern(r, page), size);
		struct uffdio_copy c = {
			.dst = at, .src = (uintptr_t)src, .len = size,
		};
		err = ioctl(fd, UFFDIO_COPY, &c);
	}
	if (err && errno != EEXIST)
		die("resolving a fault");
}

/* The fork event's userfaultfd is the child's: served as the parent's. */
static void *server_thread(void *arg)
{
	(void)arg;
	for (;;) {
		struct pollfd p[3] = { { .fd = srv.stop[0], .events = POLLIN } };
		int n = atomic_load(&srv.nfd);
		for (int i = 0; i < n; i++)
			p[1 + i] = (struct pollfd){ srv.fd[i], POLLIN, 0 };
		if (poll(p, (nfds_t)n + 1, -1) < 0 && errno != EINTR)
			die("poll");
		if (p[0].revents)
			return NULL;
		for (int i = 0; i < n; i++) {
			struct uffd_msg m;
			while (p[1 + i].revents &&
			       read(srv.fd[i], &m, sizeof(m)) == sizeof(m)) {
				if (m.event == UFFD_EVENT_PAGEFAULT)
					serve(i, &m);
				else if (m.event == UFFD_EVENT_FORK && n < 2)
					srv.fd[atomic_fetch_add(&srv.nfd, 1)] =
						(int)m.arg.fork.ufd;
			}
		}
	}
}

static char *map_region(enum region r)
{
	int fd = -1;
	size_t len = r == HUGE ? HUGE_REGION : REGION;
	if (r != ANON) {
		fd = memfd_create(region_name[r],
				  MFD_CLOEXEC | (r == HUGE ? MFD_HUGETLB : 0));
		if (fd < 0 || ftruncate(fd, (off_t)len))
			die("memfd");
	}
	/* The memfd's pages in the page cache: its faults are MINOR. */
	for (size_t i = 0; r == MEMFD && i < len / PAGE; i++) {
		char c = pattern(r, i);
		if (pwrite(fd, &c, 1, (off_t)(i * PAGE)) != 1)
			die("pwrite");
	}
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | (fd < 0 ? MAP_ANONYMOUS : 0), fd, 0);
	if (p == MAP_FAILED)
		die("mmap");
	if (fd >= 0)
		close(fd);
	return p;
}

static void own_register(enum region r, bool wait)
{
	char *p = srv.base[r];
	size_t len = r == HUGE ? HUGE_REGION : REGION;
	if (wait && !registered_within(p, len, r != HUGE)) {
		fprintf(stderr, "own_uffd_subject: %s not registered by the "
			"daemon\n", region_name[r]);
		exit(10 + r);
	}
	struct uffdio_register reg = {
		.range = { (uintptr_t)p + (r == HUGE ? SPAN : OWN_FROM),
			   r == HUGE ? 2 * SPAN : OWN_LEN },
		.mode = r == MEMFD ? UFFDIO_REGISTER_MODE_MINOR
				   : UFFDIO_REGISTER_MODE_MISSING,
	};
	if (ioctl(srv.fd[0], UFFDIO_REGISTER, &reg)) {
		fprintf(stderr, "own_uffd_subject: UFFDIO_REGISTER of %s: %s\n",
			region_name[r], strerror(errno));
		exit(20 + r);
	}
}

/* Reads pages [from, from + n) of the program's part of region r (every
 * 2 MiB for hugetlb): each a fault the program serves. */
static void check_own(enum region r, size_t from, size_t n, int check)
{
	size_t step = r == HUGE ? SPAN / PAGE : 1;
	char *own = srv.base[r] + (r == HUGE ? SPAN : OWN_FROM);
	for (size_t i = from; i < from + n; i++) {
		size_t page = (size_t)(own - srv.base[r]) / PAGE + i * step;
		char got = ((volatile char *)own)[i * step * PAGE];
		if (got != pattern(r, page)) {
			fprintf(stderr, "own_uffd_subject: %s page %zu holds %d, "
				"not %d\n", region_name[r], page, got, pattern(r, page));
			exit(check);
		}
	}
}

/* The pages outside the program's part: the kernel's (or the daemon's). */
static void check_others(int check)
{
	volatile char *anon = srv.base[ANON], *memfd = srv.base[MEMFD];
	anon[0] = 1;
	anon[REGION - PAGE] = 2;
	if (anon[0] != 1 || anon[REGION - PAGE] != 2 ||
	    memfd[0] != pattern(MEMFD, 0) ||
	    memfd[REGION - PAGE] != pattern(MEMFD, REGION / PAGE - 1))
		exit(check);
}

static int regions(bool huge)
{
	return huge ? REGIONS : HUGE;
}

static void report(const char *who, int w, bool huge)
{
	say("%s:", who);
	for (int r = 0; r < regions(huge); r++)
		say(" %s %u", region_name[r], atomic_load(&srv.served[w][r]));
	say(" faults served\n");
}

/* Shared memory it never registered, unregistered all the same (as a
 * program may give up more than it took): no error without us. */
static void unregister_spare(char *spare)
{
	struct uffdio_range r = { (uintptr_t)spare, SPARE };
	if (ioctl(srv.fd[0], UFFDIO_UNREGISTER, &r)) {
		fprintf(stderr, "own_uffd_subject: UFFDIO_UNREGISTER: %s\n",
			strerror(errno));
		exit(70);
	}
}

int main(int argc, char **argv)
{
	if (argc < 2 || (strcmp(argv[1], "wait") && strcmp(argv[1], "nowait"))) {
		fputs("usage: own_uffd_subject wait|nowait [huge]\n", stderr);
		return 2;
	}
	bool wait = !strcmp(argv[1], "wait");
	bool huge = argc > 2 && !strcmp(argv[2], "huge");
	srv.page = map_anon(PAGE, MAP_PRIVATE);
	srv.huge = huge ? map_anon(SPAN, MAP_PRIVATE) : NULL;
	for (int r = 0; r < regions(huge); r++)
		srv.base[r] = map_region((enum region)r);
	char *spare = map_anon(SPARE, MAP_SHARED);
	srv.fd[0] = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	struct uffdio_api api = {
		.api = UFFD_API,
		.features = UFFD_FEATURE_EVENT_FORK | UFFD_FEATURE_MISSING_SHMEM |
			    UFFD_FEATURE_MINOR_SHMEM |
			    UFFD_FEATURE_MISSING_HUGETLBFS,
	};
	if (srv.fd[0] < 0 || ioctl(srv.fd[0], UFFDIO_API, &api) ||
	    pipe2(srv.stop, O_CLOEXEC))
		die("userfaultfd");
	atomic_store(&srv.nfd, 1);
	for (int r = 0; r < regions(huge); r++)
		own_register((enum region)r, wait);
	pthread_t t;
	if (pthread_create(&t, NULL, server_thread, NULL))
		die("pthread_create");
	for (int r = 0; r < regions(huge); r++)
		check_own((enum region)r, 0, r == HUGE ? 1 : TOUCHED, 30 + r);
	check_others(33);
	report("parent", 0, huge);
	/* The child has the registrations (EVENT_FORK): its first touches
	 * of pages not in the page cache yet are faults the thread serves. */
	pid_t child = fork();
	if (child < 0)
		die("fork");
	if (!child) {
		check_own(ANON, TOUCHED, CHILD_TOUCHED, 50);
		check_own(MEMFD, 0, TOUCHED + CHILD_TOUCHED, 51);
		if (huge)
			check_own(HUGE, 0, 2, 52);
		exit(0);
	}
	int st = wait_child(child);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		return WIFEXITED(st) ? WEXITSTATUS(st) : 60;
	report("child", 1, huge);
	if (wait && !registered_within(spare, SPARE, true))
		exit(15);
	unregister_spare(spare);
	close(srv.stop[1]);
	pthread_join(t, NULL);
	say("own userfaultfd done\n");
	return 0;
}
