/* SPDX-License-Identifier: MIT */
/*
 * ptshared watched by `ptshare run` (docs/run.md, A daemon that stops).  A
 * daemon that is stopped (SIGSTOP, a debugger), frozen or starved holds
 * every fault of the program on registered shared memory in the kernel,
 * and has every fork and exit wait for its ACK: past the bound it is
 * ended, and the kernel lets the faults go with its userfaultfds.
 *
 * The daemon counts the turns of its loop in a page we share (an idle loop
 * turns every PTS_HEARTBEAT_IDLE_MS).  A check every CHECK_MS finds it
 * alive when its loop turned, or it got CPU time (one step may be long: a
 * reading of 65,000 mappings took 0.9 s of CPU under AddressSanitizer), or
 * it waits in the kernel uninterruptibly (a read of /proc waiting for a
 * process's mmap lock: 0.7 s measured on a loaded machine), unless that
 * wait is a cgroup freezer's (its task shows 'D' too), or it is runnable
 * and no CPU was idle meanwhile: it waits its turn behind others (1,111
 * processes of the program forked at once, on 2 cores, kept one from the
 * CPU for a second), it is not held back (a cgroup's CPU quota).  The bound is
 * counted in checks, not in time: when we are late (a machine so loaded
 * that we are not scheduled), so is the daemon, and it is not blamed.  A
 * loop that handles no event at all, however busy, is stuck: ended after
 * STUCK_S.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "ptshare/procfs.h"
#include "run.h"
#include "lib/clock.h"

#define CHECK_MS 100
/* Ten times the longest turn of a loop measured (9 s: readings of 65,000
 * mappings, AddressSanitizer, a load average of 50 on 2 cores). */
#define STUCK_S 90

int watch_init(struct watch *w, const char *who, unsigned bound_s)
{
	*w = (struct watch){ .fd = -1, .bound = bound_s * 1000 / CHECK_MS };
	/* Unwatched (bound 0), the page still says how far the run is. */
	w->fd = memfd_create("ptshared-heartbeat", MFD_CLOEXEC);
	void *p = MAP_FAILED;
	if (w->fd >= 0 && !ftruncate(w->fd, PTS_HEARTBEAT_SIZE))
		p = mmap(NULL, PTS_HEARTBEAT_SIZE, PROT_READ, MAP_SHARED, w->fd, 0);
	if (p == MAP_FAILED) {
		fprintf(stderr, "%s: the daemon's heartbeat: %s\n", who,
			strerror(errno));
		watch_free(w);
		return -1;
	}
	w->hb = p;
	return 0;
}

/* Its CPU time so far (ns), or -1 when it cannot be read (a zombie). */
static int64_t cpu_ns(const struct watch *w)
{
	struct timespec ts;
	if (clock_gettime(w->cpu, &ts))
		return -1;
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The time (jiffies) the CPUs were idle so far, from /proc/stat's first
 * line ("cpu  user nice system idle iowait ..."); 0 when unreadable. */
static uint64_t cpus_idle(void)
{
	char line[256];
	unsigned long long user, nice, sys, idle = 0, iowait = 0;
	int fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, line, sizeof(line) - 1);
	if (fd >= 0)
		close(fd);
	line[n > 0 ? n : 0] = '\0';
	if (sscanf(line, "cpu %llu %llu %llu %llu %llu", &user, &nice, &sys,
		   &idle, &iowait) != 5)
		return 0;
	return idle + iowait;
}

void watch_start(struct watch *w, pid_t daemon)
{
	if (!w->hb)
		return;
	close(w->fd); /* the daemon has its copy */
	w->fd = -1;
	w->pid = daemon;
	if (clock_getcpuclockid(daemon, &w->cpu))
		w->cpu = -1;
	w->beats = __atomic_load_n(&w->hb->beats, __ATOMIC_RELAXED);
	w->cpu_ns = cpu_ns(w);
	w->idle = cpus_idle();
	w->next_ms = now_ms() + CHECK_MS;
}

int watch_wait_ms(const struct watch *w)
{
	if (!w->hb || !w->bound)
		return -1;
	int64_t left = w->next_ms - now_ms();
	return left > 0 ? (int)left : 0;
}

/* Whether pid waits in a cgroup freezer (v1: in the kernel's
 * __refrigerator, its state 'D'; v2's frozen tasks sleep, 'S'). */
static bool frozen(pid_t pid)
{
	char path[64], wchan[64];
	snprintf(path, sizeof(path), "/proc/%d/wchan", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, wchan, sizeof(wchan) - 1);
	if (fd >= 0)
		close(fd);
	wchan[n > 0 ? n : 0] = '\0';
	return !strcmp(wchan, "__refrigerator");
}

/* What state c (of /proc/PID/status) says of a daemon that does not run. */
static const char *state_text(char c, bool is_frozen)
{
	if (is_frozen)
		return "frozen";
	switch (c) {
	case 'T':
		return "stopped";
	case 't':
		return "stopped by a debugger";
	case 'R':
		return "runnable, given no CPU time while CPUs were idle";
	case 'S':
		return "asleep (in a frozen cgroup?)";
	default:
		return "not running";
	}
}

bool watch_stalled(struct watch *w, char *why, size_t cap)
{
	int64_t now = now_ms();
	if (!w->hb || !w->bound || now < w->next_ms)
		return false;
	w->next_ms = now + CHECK_MS;
	uint64_t beats = __atomic_load_n(&w->hb->beats, __ATOMIC_RELAXED);
	int64_t cpu = cpu_ns(w);
	bool turned = beats != w->beats, ran = cpu != w->cpu_ns;
	uint64_t idle = cpus_idle();
	bool cpus_busy = idle == w->idle;
	w->beats = beats;
	w->cpu_ns = cpu;
	w->idle = idle;
	struct procfs_status st = { .state = '?' };
	if (!turned && !ran)
		procfs_status_read(w->pid, &st);
	bool is_frozen = st.state == 'D' && frozen(w->pid);
	/* Uninterruptibly in the kernel, it works; runnable while every CPU
	 * was busy, it waits its turn; a zombie ends anyway. */
	bool alive = turned || ran || (st.state == 'D' && !is_frozen) ||
		     (st.state == 'R' && cpus_busy) || st.state == 'Z';
	w->quiet = alive ? 0 : w->quiet + 1;
	w->still = turned ? 0 : w->still + 1;
	if (w->quiet >= w->bound) {
		snprintf(why, cap, "its loop did not turn, and it got no CPU "
			 "time, for %u s (state %c: %s)", w->bound * CHECK_MS / 1000,
			 st.state, state_text(st.state, is_frozen));
		return true;
	}
	if (w->still >= STUCK_S * 1000 / CHECK_MS) {
		snprintf(why, cap, "its loop did not turn for %d s, though it "
			 "ran (stuck)", STUCK_S);
		return true;
	}
	return false;
}

void watch_free(struct watch *w)
{
	if (w->hb)
		munmap(w->hb, PTS_HEARTBEAT_SIZE);
	if (w->fd >= 0)
		close(w->fd);
	*w = (struct watch){ .fd = -1 };
}
