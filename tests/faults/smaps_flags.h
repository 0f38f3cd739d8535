/* SPDX-License-Identifier: MIT */
/*
 * What the fault subjects read of their own registrations: the kernel's
 * view (/proc/self/smaps, VmFlags um: MISSING, ui: MINOR) of the mappings
 * that meet a range, and a wait for the daemon to have registered one.
 * Header-only, as tests/support/subject.h (include it first).
 */
#ifndef PTSHARE_TESTS_SMAPS_FLAGS_H
#define PTSHARE_TESTS_SMAPS_FLAGS_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#define SMAPS_WAIT_MS 60000 /* for the daemon to register a mapping */

/* Of the mappings of ours that meet [start, end): how many, and how many
 * carry each of the userfaultfd flags. */
struct uffd_flags {
	int vmas, missing, minor;
};

static inline struct uffd_flags uffd_flags(uintptr_t start, uintptr_t end)
{
	struct uffd_flags f = { 0 };
	char line[512];
	bool in = false;
	FILE *s = fopen("/proc/self/smaps", "r");
	if (!s)
		die("/proc/self/smaps");
	while (fgets(line, sizeof(line), s)) {
		unsigned long a, b;
		if (sscanf(line, "%lx-%lx ", &a, &b) == 2 && strchr(line, '-') <
		    strchr(line, ' ')) {
			in = a < end && b > start;
			f.vmas += in;
		} else if (in && !strncmp(line, "VmFlags:", 8)) {
			f.missing += strstr(line, " um") != NULL;
			f.minor += strstr(line, " ui") != NULL;
		}
	}
	fclose(s);
	return f;
}

static inline void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Whether all of [p, p + len) got registered (MINOR too unless hugetlb)
 * within SMAPS_WAIT_MS. */
static inline bool registered_within(const char *p, size_t len, bool minor)
{
	for (int waited = 0; waited < SMAPS_WAIT_MS; waited += 10) {
		struct uffd_flags f = uffd_flags((uintptr_t)p, (uintptr_t)p + len);
		if (f.vmas && f.missing == f.vmas && (f.minor == f.vmas) == minor)
			return true;
		sleep_ms(10);
	}
	return false;
}

#endif
