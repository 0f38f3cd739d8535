/* SPDX-License-Identifier: MIT */
/* What torture_subject does, as the tests that check its reports need it. */
#ifndef PTSHARE_TESTS_TORTURE_SUBJECT_H
#define PTSHARE_TESTS_TORTURE_SUBJECT_H

#define THREADS 64
#define THREAD_ROUNDS 40

#define SIGNALS 300          /* sent to the mapping thread; a tenth more raised */

#define STORM_FANOUT 10      /* 10 x 10 x 10 leaves, three forks deep */
#define STORM_DEPTH 4        /* the top is depth 1 */

#define SPINNERS 4           /* new threads mapping as the main one forks */
#define SPIN_SITES 64        /* call sites the new threads map from */
#define SPIN_ROUNDS 24       /* images, each with its call sites new */
#define CHILD_BOUND_S 10     /* a child not ended by then hangs: killed */

#define LOW_FDS 256          /* fds 0..LOW_FDS-1 dup2'ed over */

#define MIX_THREADS 8
#define MIX_ROUNDS 20
#define MIX_CHILDREN 8

#define GROUP_ROUNDS 4       /* kill(0, SIGTERM) (killgroup) */
#define GROUP_SETTLE_MS 200  /* after each */

#define STALL_MIB 64          /* shared memory faulted while the daemon */
#define STALL_FORKS 20        /* is stopped, and children forked (stalled) */
#define STALL_REGISTER_WAIT_MS 30000 /* for the daemon to register it */

#define LEAF_STATUS 11
#define SECURE_STATUS 13
#define STATIC_STATUS 7      /* torture_static's */
#define NOLIBC_STATUS 9      /* torture_nolibc's */
#define FULL_FDS 16          /* fds taken, and the soft RLIMIT_NOFILE (execfull) */

#endif
