/* SPDX-License-Identifier: MIT */
/*
 * The children of `ptshare run`: the program, and every process of it
 * whose parent died, handed to us as their subreaper.  A process of the
 * program that still runs is always reachable through them: a dying parent
 * hands its children over before it becomes a zombie, and a zombie stays
 * our child until we reap it.  So "no child but the daemon" means the
 * whole program is gone.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "ptshare/procfs.h"
#include "run.h"

/* From /proc/self/task/TID/children (CONFIG_PROC_CHILDREN; each pid is
 * followed by a space): -1 when the kernel has no such file. */
static long from_children_file(pid_t skip, void (*fn)(pid_t, void *), void *arg)
{
	char path[64], buf[4096];
	snprintf(path, sizeof(path), "/proc/self/task/%d/children", gettid());
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	long n = 0, pid = 0;
	ssize_t len;
	while ((len = read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < len; i++) {
			if (buf[i] >= '0' && buf[i] <= '9') {
				pid = pid * 10 + (buf[i] - '0');
				continue;
			}
			if (pid && pid != skip) {
				n++;
				if (fn)
					fn((pid_t)pid, arg);
			}
			pid = 0;
		}
	close(fd);
	return n;
}

/* From every process's PPid. */
static long from_every_process(pid_t skip, void (*fn)(pid_t, void *), void *arg)
{
	struct procfs_pids all = { 0 };
	long n = 0;
	if (procfs_list_pids(&all))
		return 0;
	for (size_t i = 0; i < all.n; i++) {
		struct procfs_status st;
		if (all.pids[i] != skip && !procfs_status_read(all.pids[i], &st) &&
		    st.ppid == getpid()) {
			n++;
			if (fn)
				fn(all.pids[i], arg);
		}
	}
	procfs_pids_free(&all);
	return n;
}

size_t children_each(pid_t skip, void (*fn)(pid_t pid, void *arg), void *arg)
{
	long n = from_children_file(skip, fn, arg);
	return (size_t)(n >= 0 ? n : from_every_process(skip, fn, arg));
}

/* Deeper than any process tree: a loop of parents (pids reused as the
 * line is read) ends here. */
#define LINEAGE_MAX 4096

bool descends_from_us(pid_t pid, pid_t skip)
{
	pid_t self = getpid();
	for (int depth = 0; depth < LINEAGE_MAX && pid > 1 && pid != skip; depth++) {
		struct procfs_status st;
		if (procfs_status_read(pid, &st))
			return false;
		if (st.ppid == self)
			return true;
		pid = st.ppid;
	}
	return false;
}
