/* SPDX-License-Identifier: MIT */
/* Trace files as ptshare keeps them: plain (docs/wire-protocol.md, Trace
 * files) or compressed with zstd, told apart by their first bytes. */
#ifndef PTSHARE_TRACE_FILE_H
#define PTSHARE_TRACE_FILE_H

#include <stdbool.h>
#include <stdio.h>

/* path ("-": stdin) opened for reading, as the plain trace: decompressed
 * as it is read when it is zstd.  NULL with errno set. */
FILE *trace_file_open(const char *path);

/* Whether a trace kept at path is compressed: its name ends in ".zst". */
bool trace_file_compressed(const char *path);

/* The plain trace at src written into dst, compressed (zstd, level 3);
 * dst is left open.  0, or an errno. */
int trace_file_save(const char *src, FILE *dst);

#endif
