/* SPDX-License-Identifier: MIT */
/* What the ptshare commands and the daemon share about their command
 * lines: numbers as options spell them, and the outputs reports and
 * traces go to. */
#ifndef PTSHARE_CLI_H
#define PTSHARE_CLI_H

#include <stdint.h>
#include <stdio.h>

/* A non-negative decimal number: 0, or -1 when s is not one. */
int cli_u64(const char *s, uint64_t *out);

/* --faults: "table", "all" or "off" as enum pts_faults; 0, or -1 when s is
 * none of them (docs/faults.md). */
int cli_faults(const char *s, uint32_t *out);

/*
 * An output as the commands name it, opened for writing (docs/promises.md,
 * Outputs): "-" is stdout; a path naming an fd of the caller's
 * (/dev/stderr, /dev/fd/N) is that fd, as it is; else, through
 * cli_path_open() (no other user's symbolic link is followed), a new file
 * (0600), or one there already that is the caller's with one name (made
 * 0600 and emptied), or the caller's (or root's) FIFO with a reader or
 * character device.  Anything else is refused, left as it was: NULL with
 * errno set and why, a sentence, in why.
 */
FILE *cli_output_open(const char *path, char *why, size_t cap);

/* Flushes f, and closes it unless it is stdout or stderr.  0, or the errno
 * of what failed: on a file of cli_output_open's, the first write that
 * failed (ENOSPC, not the EIO of a close with nothing left to write); on
 * stdout or stderr, errno as the writes left it (set it to 0 before them),
 * EIO when nothing says more. */
int cli_output_close(FILE *f);

#endif
