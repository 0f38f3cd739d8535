/* SPDX-License-Identifier: MIT */
/*
 * The torture suite's scenarios about the daemon (docs/promises.md): a
 * mixed workload for a daemon killed at random moments, a program started
 * before the daemon, one that signals its own process group, and faults and
 * forks while the daemon is stopped.  As every scenario of torture_subject,
 * what they print is deterministic, or on an "@" line the test reads aside.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
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

#include "torture_subject.h"
#include "torture_scene.h"

/* ---- a short mixed workload, for the daemon killed at random moments ---- */

static uint64_t mix_sums[MIX_THREADS];

static void *mix_thread(void *arg)
{
	uint64_t h = FNV_START;
	for (unsigned r = 0; r < MIX_ROUNDS; r++)
		h = fnv(h, &(uint64_t){ scratch_sum(PAGE * (1 + r % 8),
						    (uintptr_t)arg + r) }, 8);
	mix_sums[(uintptr_t)arg] = h;
	return NULL;
}

int mix(void)
{
	pthread_t t[MIX_THREADS];
	pid_t kids[MIX_CHILDREN];
	uint64_t h = FNV_START;
	char *const ps[] = { (char *)self, "leaf", "mix", NULL };
	for (uintptr_t i = 0; i < MIX_THREADS; i++)
		if ((errno = pthread_create(&t[i], NULL, mix_thread, (void *)i)))
			die("pthread_create");
	for (int i = 0; i < MIX_CHILDREN; i++)
		kids[i] = fork_summing_child((uint64_t)i);
	pid_t sp;
	if ((errno = posix_spawn(&sp, self, NULL, NULL, ps, environ)))
		die("posix_spawn");
	for (int i = 0; i < MIX_THREADS; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < MIX_THREADS; i++)
		h = fnv(h, &mix_sums[i], 8);
	for (int i = 0; i < MIX_CHILDREN; i++) {
		int st = wait_child(kids[i]);
		h = fnv(h, &st, sizeof(st));
	}
	int st = wait_child(sp);
	say("mix: threads and children sum %016llx, spawned leaf %s\n",
	    (unsigned long long)h, status_text(st));
	return 0;
}

/* ---- started before the daemon ---- */

/* Says it started, waits for a line on stdin (the test starts the daemon
 * meanwhile), then maps, forks and execs. */
int late(void)
{
	char line[16];
	char *const argv[] = { (char *)self, "leaf", "late", NULL };
	say("late: started\n");
	if (!fgets(line, sizeof(line), stdin))
		die("stdin");
	uint64_t h = scratch_sum(4 * MIB, 8);
	pid_t pid = fork_summing_child(9);
	say("late: sum %016llx, forked child %s\n", (unsigned long long)h,
	    status_text(wait_child(pid)));
	fflush(stdout);
	if ((pid = fork()) < 0)
		die("fork");
	if (!pid) {
		execv(self, argv);
		_exit(127);
	}
	say("late: exec'd child %s\n", status_text(wait_child(pid)));
	return 0;
}

/* ---- a program that signals its own process group ---- */

static volatile sig_atomic_t terms, terms_resent;
static pid_t group_sender;

/* A SIGTERM; one that did not come from the process that signalled the
 * group was sent again by someone (`ptshare run`, passing it on). */
static void on_term(int sig, siginfo_t *si, void *uc)
{
	terms++;
	terms_resent += si->si_pid != group_sender;
}

/* Long enough for a signal sent again to have come: a tracer that passed
 * the group's signal on once more would show here. */
static void settle(void)
{
	struct timespec ts = { 0, GROUP_SETTLE_MS * 1000000L };
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * kill(0, SIGTERM) by a process of the program, as a server's master does
 * at its shutdown (here its child, GROUP_ROUNDS times): every process of
 * the group handles each once (the child tells by its exit status).  The
 * parent waits for them, then goes on, mapping and forking, as a master
 * goes on waiting for its children.
 */
int killgroup(void)
{
	struct sigaction sa = { .sa_sigaction = on_term,
				.sa_flags = SA_SIGINFO | SA_RESTART };
	sigset_t term, before;
	sigemptyset(&sa.sa_mask);
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	if (sigaction(SIGTERM, &sa, NULL) || sigprocmask(SIG_BLOCK, &term, &before))
		die("sigaction");
	fflush(stdout);
	pid_t child = fork();
	if (child < 0)
		die("fork");
	if (!child) {
		group_sender = getpid();
		sigprocmask(SIG_SETMASK, &before, NULL);
		for (int i = 0; i < GROUP_ROUNDS; i++) {
			if (kill(0, SIGTERM))
				die("kill");
			settle();
		}
		_exit(terms + 10 * terms_resent);
	}
	group_sender = child;
	while (terms < GROUP_ROUNDS)
		sigsuspend(&before);
	settle();
	sigprocmask(SIG_SETMASK, &before, NULL);
	int st = wait_child(child);
	uint64_t h = scratch_sum(4 * MIB, 12);
	pid_t after = fork_summing_child(13);
	say("killgroup: handled %d (%d sent again), child %s, ", (int)terms,
	    (int)terms_resent, status_text(st));
	say("after it sum %016llx, forked child %s\n", (unsigned long long)h,
	    status_text(wait_child(after)));
	return 0;
}

/* ---- faults and forks while the daemon is stopped ---- */

static int64_t mono_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Whether the mapping at p is registered with a userfaultfd for missing
 * pages (VmFlags "um" in /proc/self/smaps). */
static bool uffd_registered(const void *p)
{
	char line[512];
	bool at = false, um = false;
	FILE *f = fopen("/proc/self/smaps", "re");
	if (!f)
		die("/proc/self/smaps");
	while (!um && fgets(line, sizeof(line), f)) {
		unsigned long start, end;
		if (sscanf(line, "%lx-%lx ", &start, &end) == 2)
			at = start == (uintptr_t)p;
		else if (at && !strncmp(line, "VmFlags:", 8))
			um = strstr(line, " um") != NULL;
	}
	fclose(f);
	return um;
}

/*
 * Shared memory mapped (traced, it waits until the daemon has registered
 * it with the process's userfaultfd), then, at the test's word (it stops the daemon meanwhile),
 * touched, a fault in every 2 MiB span, and STALL_FORKS children forked
 * one after the other, each reading a page of it: a stopped daemon holds
 * every fault in the kernel and every fork's and exit's ACK.  Says its pid
 * first and last its wall time from the word to its end (the "@" lines:
 * the rest is compared).
 */
int stalled(void)
{
	const size_t len = STALL_MIB * MIB;
	unsigned char *p = map_anon(len, MAP_SHARED);
	char line[16];
	int good = 0;
	for (int waited = 0; getenv("PTSHARE_SOCKET") && !uffd_registered(p);
	     waited++) {
		if (waited == STALL_REGISTER_WAIT_MS)
			die("the daemon did not register the shared memory");
		usleep(1000);
	}
	say("@ready %d\n", (int)getpid());
	if (!fgets(line, sizeof(line), stdin))
		die("stdin");
	int64_t start = mono_us();
	uint64_t h = fill_sum(p, len, 21);
	for (size_t i = 0; i < STALL_FORKS; i++) {
		unsigned char *page = p + i * len / STALL_FORKS;
		uint64_t want = fnv(FNV_START, page, PAGE);
		fflush(stdout);
		pid_t pid = fork();
		if (pid < 0)
			die("fork");
		if (!pid)
			_exit(fnv(FNV_START, page, PAGE) == want);
		good += WEXITSTATUS(wait_child(pid)) == 1;
	}
	say("stalled: sum %016llx, %d of %d children read it\n",
	    (unsigned long long)h, good, STALL_FORKS);
	say("@wall_us %lld\n", (long long)(mono_us() - start));
	return 0;
}
