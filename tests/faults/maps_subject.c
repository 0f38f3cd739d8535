/* SPDX-License-Identifier: MIT */
/*
 * A program that prints its own /proc/self/maps, as a server reporting its
 * layout does, or a test of one (docs/faults.md, Modes): a parent over
 * shared anonymous memory, a memfd mapped in two halves one after the
 * other (which the kernel merges into one VMA) and a /dev/shm file, and
 * two workers it forks one after the other.  Each touches two pages in a
 * few 2 MiB spans of each region, a moment after they were mapped (a
 * daemon that registers them has done so by then), then prints "@maps
 * WHO", its maps and "@end"; the parent says where the regions are first
 * ("@region NAME ADDR LEN").  tests/faults/test_maps.c compares what a
 * plain run and a traced one print.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>

#include "../support/subject.h"

#define SPAN (2UL << 20)
#define REGION (8 * SPAN)
#define SETTLE_US 300000 /* between mapping and touching */

enum { ANON, MEMFD, SHM, REGIONS };
static const char *const region_name[REGIONS] = { "anon", "memfd", "shm" };

static char *map_fd(int fd, char *at, size_t len, off_t off)
{
	char *p = mmap(at, len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | (at ? MAP_FIXED : 0), fd, off);
	if (p == MAP_FAILED)
		die("mmap");
	return p;
}

static char *map_region(int r)
{
	char name[64];
	if (r == ANON)
		return map_anon(REGION, MAP_SHARED);
	int fd;
	if (r == MEMFD) {
		fd = memfd_create("maps-subject", MFD_CLOEXEC);
	} else {
		snprintf(name, sizeof(name), "/ptshare-maps-%d", (int)getpid());
		fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
		shm_unlink(name);
	}
	if (fd < 0 || ftruncate(fd, REGION))
		die("shared memory");
	char *p = map_fd(fd, NULL, REGION, 0);
	if (r == MEMFD) /* the second half mapped again over itself, at once */
		map_fd(fd, p + REGION / 2, REGION / 2, REGION / 2);
	close(fd);
	return p;
}

/* Two pages in each of the spans given (the second after the first's
 * fault was served: a daemon that releases spans has released it). */
static void touch_spans(char *const base[], const int spans[], int n)
{
	for (int r = 0; r < REGIONS; r++)
		for (int i = 0; i < n; i++) {
			volatile char *p = base[r] + (size_t)spans[i] * SPAN;
			p[0] = 1;
			p[SUBJECT_PAGE] = 2;
		}
}

static void print_maps(const char *who)
{
	char line[4096];
	FILE *f = fopen("/proc/self/maps", "r");
	if (!f)
		die("/proc/self/maps");
	say("@maps %s\n", who);
	while (fgets(line, sizeof(line), f))
		say("%s", line);
	fclose(f);
	say("@end\n");
}

int main(void)
{
	static const int parent_spans[] = { 1, 3 };
	char *base[REGIONS];
	for (int r = 0; r < REGIONS; r++) {
		base[r] = map_region(r);
		say("@region %s %#lx %#lx\n", region_name[r], (unsigned long)base[r],
		    REGION);
	}
	usleep(SETTLE_US);
	touch_spans(base, parent_spans, 2);
	for (int w = 0; w < 2; w++) {
		pid_t pid = fork();
		if (pid < 0)
			die("fork");
		if (!pid) {
			const int spans[] = { 5 + w };
			char who[16];
			usleep(SETTLE_US);
			touch_spans(base, spans, 1);
			snprintf(who, sizeof(who), "worker%d", w);
			print_maps(who);
			exit(0);
		}
		int st = wait_child(pid);
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			return 1;
	}
	print_maps("parent");
	return 0;
}
