/* SPDX-License-Identifier: MIT */
/* /proc/PID/stat: when the process started, which tells it from a later
 * one given its pid; /proc/PID/schedstat: how long it has run. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "procfs_internal.h"

/* starttime is the 22nd field; the 2nd, (comm), may hold blanks and
 * parentheses, so fields are counted from its last ')'. */
#define START_FIELD 22

int procfs_start_parse(const char *text, size_t len, uint64_t *ticks)
{
	const char *rp = NULL;
	for (const char *p = text; p < text + len; p++)
		if (*p == ')')
			rp = p;
	if (!rp)
		return -EPROTO;
	struct procfs_cursor c = { rp + 1, text + len };
	for (int field = 3; field < START_FIELD; field++) {
		procfs_skip_blanks(&c);
		while (c.p < c.end && *c.p != ' ')
			c.p++;
	}
	procfs_skip_blanks(&c);
	return procfs_parse_dec(&c, ticks) ? 0 : -EPROTO;
}

int procfs_start_time(int pid, uint64_t *ticks)
{
	struct procfs_text t = { 0 };
	int err = procfs_read_file(pid, "stat", &t, false);
	if (!err)
		err = procfs_start_parse(t.data, t.len, ticks);
	free(t.data);
	return err;
}

int procfs_runtime_ns(int pid, uint64_t *ns)
{
	struct procfs_text t = { 0 };
	int err = procfs_read_file(pid, "schedstat", &t, false);
	if (!err) {
		struct procfs_cursor c = { t.data, t.data + t.len };
		err = procfs_parse_dec(&c, ns) ? 0 : -EPROTO;
	}
	free(t.data);
	return err;
}
