/* SPDX-License-Identifier: MIT */
/* Writing a report where the user asked: text on stdout, JSON to a file. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"

/* Reports may tell one user about another's processes: only the owner may
 * read them. */
static FILE *create_private(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return NULL;
	FILE *f = fdopen(fd, "w");
	if (!f)
		close(fd);
	return f;
}

int write_reports(const struct report *r, const char *json, size_t top)
{
	bool json_stdout = json && !strcmp(json, "-");
	if (!json_stdout)
		report_text(stdout, r, top);
	if (!json)
		return 0;
	FILE *f = json_stdout ? stdout : create_private(json);
	if (!f) {
		fprintf(stderr, "ptshare: cannot write %s: %s\n", json,
			strerror(errno));
		return 1;
	}
	report_json(f, r);
	if (json_stdout ? fflush(f) : fclose(f)) {
		fprintf(stderr, "ptshare: writing %s: %s\n", json, strerror(errno));
		return 1;
	}
	return 0;
}
