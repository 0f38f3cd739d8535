/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "run_info.h"

#define THP_DIR "/sys/kernel/mm/transparent_hugepage/"

static int64_t realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The first line of path, into buf (cap >= 2): "" when it cannot be read. */
static void read_line(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "re");
	if (!f || !fgets(buf, (int)cap, f))
		*buf = '\0';
	if (f)
		fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
}

/* A number in path, or -1. */
static int64_t read_number(const char *path)
{
	char buf[32], *end;
	read_line(path, buf, sizeof(buf));
	long long v = strtoll(buf, &end, 10);
	return end == buf || v < 0 ? -1 : v;
}

/* A THP setting: the choice in brackets ("always [madvise] never"). */
static void read_choice(const char *path, char *out)
{
	char buf[256];
	read_line(path, buf, sizeof(buf));
	char *open = strchr(buf, '['), *close = open ? strchr(open, ']') : NULL;
	if (open && close)
		*close = '\0';
	snprintf(out, PTS_RUN_STR, "%.*s", PTS_RUN_STR - 1,
		 open && close ? open + 1 : buf);
}

void run_info_start(struct pts_run_info *i, const char *command_line)
{
	struct utsname u;
	*i = (struct pts_run_info){ .start_ns = realtime_ns(), .wait_status = -1 };
	if (gethostname(i->host, sizeof(i->host) - 1))
		i->host[0] = '\0';
	if (!uname(&u))
		snprintf(i->kernel, sizeof(i->kernel), "%s", u.release);
	snprintf(i->version, sizeof(i->version), "%s", PTSHARE_VERSION);
	i->va_space = (int32_t)read_number("/proc/sys/kernel/randomize_va_space");
	i->nr_hugepages = read_number("/proc/sys/vm/nr_hugepages");
	read_choice(THP_DIR "enabled", i->thp);
	read_choice(THP_DIR "shmem_enabled", i->shmem_thp);
	snprintf(i->command, sizeof(i->command), "%s",
		 command_line ? command_line : "");
}

void run_info_end(struct pts_run_info *i, const struct signalfd_siginfo *si)
{
	i->end_ns = realtime_ns();
	if (si->ssi_code == SI_QUEUE && (pid_t)si->ssi_pid == getppid())
		i->wait_status = si->ssi_int;
}
