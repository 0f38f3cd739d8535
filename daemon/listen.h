/* SPDX-License-Identifier: MIT */
/* The daemon's listening sockets: the shims', and the live reports'. */
#ifndef PTSHARED_LISTEN_H
#define PTSHARED_LISTEN_H

/* A unix socket of type (SOCK_SEQPACKET, SOCK_STREAM) listening at path,
 * close-on-exec, the file mode 0600.  Returns the fd, or -errno
 * (-ENAMETOOLONG: the path does not fit a socket address; -EADDRINUSE:
 * something is there). */
int listen_open(const char *path, int type);

#endif
