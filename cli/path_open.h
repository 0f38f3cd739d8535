/* SPDX-License-Identifier: MIT */
/*
 * Opening a path other users may have a hand in (docs/promises.md,
 * Outputs).  A root run told to write /tmp/x/report must not write where
 * another user's symbolic link points: the path is walked one component
 * at a time, each opened relative to the directory before it, and a
 * symbolic link is followed only when it is the caller's (its effective
 * uid) or root's, wherever it is on the way.  That is stricter than
 * fs.protected_symlinks, which covers only links in sticky world-writable
 * directories, and only when the sysctl is set.  What is opened is what
 * was checked: no name is looked up twice.
 */
#ifndef PTSHARE_PATH_OPEN_H
#define PTSHARE_PATH_OPEN_H

#include <stdbool.h>
#include <sys/stat.h>

enum path_rule {
	/* Every directory on the way is the caller's or root's, and one
	 * others may write is sticky: no other user can rename what is in
	 * it (a private directory's parent, whose path others will use). */
	PATH_DIRS_OURS = 1u << 0,
};

struct path_open {
	const char *path;
	int flags;      /* open(2)'s; O_NOFOLLOW and O_CLOEXEC are added */
	mode_t mode;
	unsigned rules; /* enum path_rule */
	/* Out: */
	bool held;      /* path named one of our own fds (/dev/fd/N,
			 * /dev/stderr, /proc/self/fd/N): the fd is a dup of it */
	struct stat st; /* what was opened; after ENXIO (a FIFO with no
			 * reader), what is there */
	char why[256];  /* after a failure: why, as a sentence */
};

/* The fd, or -1 with errno and o->why set. */
int cli_path_open(struct path_open *o);

/* Whether no other user can change what dir holds, nor where its path
 * leads: dir and every directory on the way are the caller's or root's,
 * sticky when others may write them, and no other user's link is
 * followed.  For a private directory made in dir, whose path other
 * processes will use (`ptshare run`'s sockets).  0, or -1 with why. */
int cli_path_dir_kept(const char *dir, char *why, size_t cap);

#endif
