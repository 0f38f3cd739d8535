/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/*
 * A file that was there keeps its owner and mode through open(): a report
 * written over another user's file, or over one of ours that others may
 * read, would be read by them.  So a regular file is made ours and 0600
 * before anything is written (and truncated only then: a file of another
 * user's, a root daemon's symlinked target say, is left as it was); a
 * pipe or a terminal is written as it is.
 */
FILE *cli_create_private(const char *path)
{
	struct stat st;
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return NULL;
	int err = fstat(fd, &st) ? errno : 0;
	if (!err && S_ISREG(st.st_mode)) {
		if (st.st_uid != geteuid())
			err = EPERM;
		else if (fchmod(fd, 0600) || ftruncate(fd, 0))
			err = errno;
	}
	FILE *f = err ? NULL : fdopen(fd, "w");
	if (!f) {
		err = err ? err : errno;
		close(fd);
		errno = err;
	}
	return f;
}

FILE *cli_output_open(const char *path)
{
	return strcmp(path, "-") ? cli_create_private(path) : stdout;
}

int cli_output_close(FILE *f)
{
	bool standard = f == stdout || f == stderr;
	bool failed = ferror(f);
	if (standard ? fflush(f) : fclose(f))
		failed = true;
	return failed ? (errno ? errno : EIO) : 0;
}
