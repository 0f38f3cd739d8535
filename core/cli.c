/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "ptshare/wire.h"

int cli_u64(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-')
		return -1;
	*out = v;
	return 0;
}

int cli_faults(const char *s, uint32_t *out)
{
	static const char *const names[] = {
		[PTS_FAULTS_OFF] = "off", [PTS_FAULTS_TABLE] = "table",
		[PTS_FAULTS_ALL] = "all",
	};
	for (uint32_t m = 0; m < sizeof(names) / sizeof(names[0]); m++)
		if (!strcmp(s, names[m])) {
			*out = m;
			return 0;
		}
	return -1;
}

FILE *cli_create_private(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return NULL;
	FILE *f = fdopen(fd, "w");
	if (!f) {
		int err = errno;
		close(fd);
		errno = err;
	}
	return f;
}
