/* SPDX-License-Identifier: MIT */
/*
 * Whether a new image could load the shim.  The dynamic loader opens each
 * preloaded object, and each library it needs, at the lowest free fd, one
 * at a time: it needs one fd below the soft RLIMIT_NOFILE, once the exec
 * has closed the close-on-exec ones.  Without it, it says "object ...
 * cannot be preloaded" on the program's stderr, where the program, run
 * without ptshare, says nothing of the sort.  Asked at the exec itself: a
 * child may have lowered its limit or filled its fd table since its fork.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "env.h"

/* Looks from fd 0 up for one that is free or close-on-exec: a few fds in
 * most programs (0, 1, 2, then a free one).  Raw system calls, no fd of
 * its own (there may be none to take), errno kept. */
bool exec_fd_room(void)
{
	struct rlimit rl;
	int err = errno;
	bool room = true;

	if (!syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &rl)) {
		room = false;
		for (rlim_t fd = 0; fd < rl.rlim_cur && !room; fd++) {
			long flags = syscall(SYS_fcntl, (int)fd, F_GETFD);
			room = flags < 0 || (flags & FD_CLOEXEC);
		}
	}
	errno = err;
	return room;
}
