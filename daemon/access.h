/* SPDX-License-Identifier: MIT */
/*
 * Who may use the daemon (docs/daemon.md, Access): the one place it is
 * decided, for the shims' socket and the live reports alike.  The kernel
 * says who a peer is (SO_PEERCRED); the socket's mode keeps other users
 * out before that, and these decisions hold when it is widened.
 *
 * By default only the daemon's own user is served (root's daemon too:
 * another user's processes are not traced unless it was told to), and a
 * report is only for the daemon's user and root: it tells of every user's
 * processes.  Configured once, from the command line, before any peer.
 */
#ifndef PTSHARED_ACCESS_H
#define PTSHARED_ACCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* --allow-users: "all", or a comma-separated list of user names and
 * numeric uids, served besides the daemon's own user.  0, or -1 with why
 * not in err. */
int access_allow_users(const char *list, char *err, size_t cap);
/* Whether users other than the daemon's own may be served: its socket is
 * then made for them (0666; the daemon checks each peer). */
bool access_others_allowed(void);
/* Whether the directory of the socket at path keeps it as private as the
 * daemon serves: the daemon's user's and 0700; with others allowed, not
 * writable by others (root's, such as /run/ptshare 0755, will do).  0, or
 * -1 with why not in err. */
int access_check_socket_dir(const char *path, char *err, size_t cap);
/* The socket at path (made 0600) opened to the users allowed: 0666 when
 * others are.  0, or -errno. */
int access_open_socket(const char *path);
/* Whether a shim whose process runs as uid is served. */
bool access_may_connect(uid_t uid);
/* Whether uid may have a report: the daemon's own user and root, never
 * another (whatever --allow-users says). */
bool access_may_report(uid_t uid);

#endif
