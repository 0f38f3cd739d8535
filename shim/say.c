/* SPDX-License-Identifier: MIT */
/*
 * What the shim tells a user who asked (PTSHARE_OPTIONS=verbose): one line
 * per event on stderr, written at once.  Silent otherwise: the program's
 * output must not change.
 */
#define _GNU_SOURCE
#include <sys/syscall.h>
#include <unistd.h>

#include "shim.h"

void shim_say(const char *what, const char *detail, long n)
{
	char line[512];
	size_t k;

	if (!shim_cfg.verbose)
		return;
	k = str_copy(line, sizeof(line), "ptshare[");
	k += fmt_ulong(line + k, sizeof(line) - k, (unsigned long)shim_getpid());
	k += str_copy(line + k, sizeof(line) - k, "]: ");
	k += str_copy(line + k, sizeof(line) - k, what);
	if (detail) {
		k += str_copy(line + k, sizeof(line) - k, " ");
		k += str_copy(line + k, sizeof(line) - k, detail);
	}
	if (n >= 0) {
		k += str_copy(line + k, sizeof(line) - k, " ");
		k += fmt_ulong(line + k, sizeof(line) - k, (unsigned long)n);
	}
	k += str_copy(line + k, sizeof(line) - k, "\n");
	syscall(SYS_write, 2, line, k);
}
