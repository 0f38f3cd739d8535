/* SPDX-License-Identifier: MIT */
/* /proc/PID/cgroup: the process's cgroup v2 path ("0::/system.slice/x"). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "procfs_internal.h"

int procfs_cgroup_parse(const char *text, size_t len, char *path, size_t cap)
{
	const char *pos = text;
	struct procfs_cursor line;
	while (procfs_next_line(&pos, text + len, &line)) {
		size_t n = (size_t)(line.end - line.p);
		if (n < 3 || memcmp(line.p, "0::", 3))
			continue;
		if (n - 3 >= cap)
			return -ENAMETOOLONG;
		memcpy(path, line.p + 3, n - 3);
		path[n - 3] = '\0';
		return 0;
	}
	return -ENODATA;
}

int procfs_cgroup_read(int pid, char *path, size_t cap)
{
	struct procfs_text t = { 0 };
	int err = procfs_read_file(pid, "cgroup", &t, false);
	if (!err)
		err = procfs_cgroup_parse(t.data, t.len, path, cap);
	free(t.data);
	return err;
}
