/* SPDX-License-Identifier: MIT */
/* What the ptshare commands and the daemon share about their command
 * lines: numbers as options spell them, and the private files reports and
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

/* Creates or truncates path with mode 0600 for writing: reports and traces
 * may tell one user about another's processes, so only the owner may read
 * them.  A regular file already there must be ours (else EPERM) and is
 * made 0600.  NULL with errno set when it cannot. */
FILE *cli_create_private(const char *path);

/* An output as the commands name it: "-" is stdout, any other path a
 * private file (cli_create_private).  NULL with errno set. */
FILE *cli_output_open(const char *path);

/* Flushes f, and closes it unless it is stdout or stderr.  0, or the errno
 * of what failed: a write before (errno as the writes left it; set it to 0
 * before them) or the flush; EIO when nothing says more. */
int cli_output_close(FILE *f);

#endif
