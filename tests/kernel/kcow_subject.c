/* SPDX-License-Identifier: MIT */
/*
 * The workload of kernel_cow (built without sanitizers): a control child
 * forked first, then 1 GiB of private anonymous memory at a 512 GiB
 * boundary (alone in its PGD slot: a PUD page, a PMD page and 512 PTE
 * tables of its own), every page written, and 4 children forked, child i
 * writing PERCENT% of it, its i-th slice (26,214 pages at 10%).  The
 * parent writes its pages with MADV_POPULATE_WRITE, 64 MiB a call (what a
 * record may populate): the model has them from the records, and forks
 * the parent whole whenever ptshared's timer last read it (a memset's
 * pages it learns only at a reading, which a loaded machine made come
 * after the forks: 503 tables linked instead of 516).  Each
 * child says "child PID" (the control "control PID") on stdout once it
 * has written, then waits until the parent closes their pipe: the parent
 * does so SETTLE_S seconds after the last has written, so that ptshared's
 * timer reads every child after its writes.  No allocation after the
 * control's fork but the memory itself.
 *
 * usage: kcow_subject PERCENT
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define REGION ((void *)0x300000000000UL)
#define LEN (1UL << 30)
#define PAGE 4096UL
#define KIDS 4
#define SETTLE_S 3
#define POPULATE_CHUNK (64UL << 20)
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

static int go[2], done[2];

static void say(const char *what)
{
	char line[64];
	int n = snprintf(line, sizeof(line), "%s %d\n", what, (int)getpid());
	if (write(1, line, (size_t)n) != n)
		_exit(2);
}

/* In a child: the writes, then said, then the wait for the parent. */
static void child(char *p, unsigned long first, unsigned long pages,
		  const char *what)
{
	char c;
	close(go[1]);
	for (unsigned long i = first; i < first + pages; i++)
		p[i * PAGE] = 2;
	say(what);
	if (write(done[1], "x", 1) != 1 || read(go[0], &c, 1) < 0)
		exit(2);
	exit(0);
}

int main(int argc, char **argv)
{
	unsigned long percent = argc == 2 ? strtoul(argv[1], NULL, 10) : 101;
	if (percent > 100 || pipe(go) || pipe(done))
		return 2;
	unsigned long slice = (LEN / PAGE) * percent / 100;
	pid_t kids[KIDS + 1];
	if (!(kids[0] = fork()))
		child(NULL, 0, 0, "control");
	char *p = mmap(REGION, LEN, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p != REGION || madvise(p, LEN, MADV_NOHUGEPAGE))
		return 3;
	for (unsigned long off = 0; off < LEN; off += POPULATE_CHUNK)
		if (madvise(p + off, POPULATE_CHUNK, MADV_POPULATE_WRITE))
			return 3;
	for (int i = 1; i <= KIDS; i++)
		if (!(kids[i] = fork()))
			child(p, (unsigned long)(i - 1) * slice, slice, "child");
	char c;
	for (int i = 0; i <= KIDS; i++)
		if (read(done[0], &c, 1) != 1)
			return 4;
	sleep(SETTLE_S);
	close(go[1]);
	int bad = 0;
	for (int i = 0; i <= KIDS; i++) {
		int st;
		bad |= waitpid(kids[i], &st, 0) < 0 || st;
	}
	return bad ? 5 : 0;
}
