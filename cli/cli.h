/* SPDX-License-Identifier: MIT */
/* What the ptshare commands and the daemon share about their command
 * lines: numbers as options spell them, and the outputs reports and
 * traces go to. */
#ifndef PTSHARE_CLI_H
#define PTSHARE_CLI_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* A non-negative decimal number: 0, or -1 when s is not one. */
int cli_u64(const char *s, uint64_t *out);

/* --faults: "table", "all" or "off" as enum pts_faults; 0, or -1 when s is
 * none of them (docs/faults.md). */
int cli_faults(const char *s, uint32_t *out);

/* --group-by: one of CLI_GROUP_BY_NAMES (cli_options.h), as 1 + its index
 * (enum report_group_by); 0, or -1 when s is none of them. */
int cli_group_by(const char *s, uint32_t *out);

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

/*
 * An output replaced whole, for a reader that must never see half of it
 * (node_exporter's textfile collector, docs/fleet.md): written to a new
 * file of mode (less the umask) beside path, fsync'ed, then renamed over
 * path.  The directory is opened as cli_path_open() opens it (no other
 * user's symbolic link followed on the way); what is at path is replaced,
 * never followed.  A path that is not a regular file nor absent ("-", a
 * link, a FIFO, a device, /dev/fd/N) is opened as cli_output_open()
 * opens it and written where it stands.  The stream, or NULL with why.
 */
struct cli_replace {
	int dir;                  /* -1: written where it stands */
	int fd;                   /* the new file's */
	char tmp[256], name[256]; /* in dir */
};
FILE *cli_replace_open(struct cli_replace *o, const char *path, mode_t mode,
		       char *why, size_t cap);
/* Flushes f, and unless a write failed puts it in place: 0, or the errno
 * of what failed (the new file is then removed, path left as it was). */
int cli_replace_close(struct cli_replace *o, FILE *f);
/* Closes f and removes the new file: path is left as it was. */
void cli_replace_abandon(struct cli_replace *o, FILE *f);

#endif
