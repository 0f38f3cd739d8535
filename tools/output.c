/* SPDX-License-Identifier: MIT */
/* Writing a report where the user asked: text on stdout, JSON to a file. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"

int write_reports(const struct report *r, const char *json, size_t top)
{
	bool json_stdout = json && !strcmp(json, "-");
	if (!json_stdout)
		report_text(stdout, r, top);
	if (!json)
		return 0;
	FILE *f = json_stdout ? stdout : cli_create_private(json);
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
