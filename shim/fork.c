/* SPDX-License-Identifier: MIT */
/*
 * fork() and _Fork().  The child connects anew (HELLO with FORKED) before
 * the call returns in it; the parent sends PTS_FORK with the child's pid.
 * A fork before the daemon's first reading of this image waits for it:
 * the child's model is a copy of ours, which that reading makes whole (not
 * in a forked child: its model is its parent's copy, whole already), and
 * any fork waits a little while the daemon is behind (ring_wait_caught_up).
 * The real fork runs outside the critical section: the program's atfork
 * handlers may take locks that a thread waiting for ours holds.  A failed
 * fork changes nothing and is not sent (PTS_FORK has no errno field).
 *
 * vfork() is not interposed: its child borrows the parent's memory and
 * stack, and a wrapper's frame cannot be returned through in both.  The
 * child is seen only if it execs (exec.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <unistd.h>

#include "shim.h"

static pid_t fork_traced(pid_t (*real)(void))
{
	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	/* Not from inside the shim, nor from a process that is not this
	 * state's own (a child of a raw clone): its child would not be ours. */
	bool traced = proc_tracing_wanted() && !shim_tls.depth &&
		      shim_is_state_process();
	if (traced && !shim_proc.model_copied)
		ring_wait_read();
	if (traced)
		ring_wait_caught_up();
	pid_t child = real();
	if (!traced || child < 0)
		return child;
	int err = errno;
	if (child == 0) {
		proc_forked();
		errno = err;
		return 0;
	}
	struct shim_call c;
	if (shim_enter(&c)) {
		struct pts_fork m = { .child = child };
		rec_send(&c, PTS_FORK, &m.h, sizeof(m), NULL);
		shim_leave(&c);
	}
	return child;
}

SHIM_EXPORT pid_t fork(void)
{
	real_resolve();
	return fork_traced(shim_real.fork);
}

SHIM_EXPORT pid_t _Fork(void)
{
	real_resolve();
	return fork_traced(shim_real.fork_bare);
}
