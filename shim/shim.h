/* SPDX-License-Identifier: MIT */
/*
 * Inside libptshare.so, the preloaded shim (docs/shim.md): its
 * configuration, the state of this process's connection, and the critical
 * section every traced call runs in.
 *
 * Everything here may run in a signal handler or between fork and exec of
 * a multi-threaded program: no malloc, no stdio, no glibc locks, no
 * cancellation points.  Only the constructor may do more.
 */
#ifndef PTSHARE_SHIM_H
#define PTSHARE_SHIM_H

#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/un.h>

#include "ptshare/wire.h"

/* The library is built with hidden visibility; interposers are exported. */
#define SHIM_EXPORT __attribute__((visibility("default")))

#define SHIM_ENV_MAX 4096 /* a NAME=value kept for the environment of execs */

/* Read-only once the constructor has run. */
struct shim_config {
	bool configured;      /* PTSHARE_SOCKET names a usable socket path */
	char socket_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	/* PTSHARE_OPTIONS (docs/shim.md) */
	bool stack;
	unsigned frames;      /* <= PTS_MAX_FRAMES */
	int wait_ms;          /* bound of every wait for the daemon */
	bool verbose;
	bool uffd;
	unsigned ring_kib;    /* the record ring's size; 0: records by the socket */
	/* What an exec must keep in the new image's environment. */
	char socket_env[SHIM_ENV_MAX];  /* "PTSHARE_SOCKET=..." */
	char options_env[SHIM_ENV_MAX]; /* "PTSHARE_OPTIONS=...", or "" */
	char preload_env[SHIM_ENV_MAX]; /* "LD_PRELOAD=/abs/path/libptshare.so" */
	const char *preload_name;       /* its last path component */
	const char *argv0;              /* read again at every HELLO */
};
extern struct shim_config shim_cfg;

/* This process's connection.  Written under the lock, or where only one
 * thread exists (the constructor, the child of fork). */
struct shim_proc {
	atomic_bool active;   /* records are being sent */
	bool daemon_gone;     /* unreachable: new processes stay untraced */
	/* The daemon let a wait run out (wait_ms): it is stopped or hung, so
	 * this process, and the children it forks (which copy this), wait
	 * for it no more; they still send what fits. */
	bool daemon_late;
	pid_t pid;            /* the process this state belongs to */
	int fd;               /* the connection, -1 when none */
	uint64_t fd_dev, fd_ino;
	uint32_t seq;         /* of the last record numbered */
	uint64_t lost;        /* records dropped since the last PTS_LOST */
	bool uffd_sent;       /* HELLO brought the daemon a userfaultfd */
	/* A forked child: the daemon's model of it is its parent's, copied,
	 * whole before any reading of it (its forks need not wait for one;
	 * its exec waits for its first, ring_wait_read). */
	bool model_copied;
	struct pts_ring *ring; /* the record ring, or NULL (ring.c) */
	uint64_t ring_head;   /* what we published: ring->head */
};
extern struct shim_proc shim_proc;

/* Per thread (initial-exec TLS: no allocation on first use). */
struct shim_thread {
	unsigned depth;       /* > 0: inside the shim, calls go straight through */
	pid_t tid;            /* cached; 0 until first needed */
	uint64_t deferred;    /* signals held back until the section ends */
	bool async_cancel;    /* PTHREAD_CANCEL_ASYNCHRONOUS: signals blocked */
};
extern __thread struct shim_thread shim_tls;

/*
 * One traced call: shim_enter() captures the call stack and takes the
 * per-process lock, so the real call, its sequence number and its send are
 * one step for the other threads; the program's signal handlers wait for
 * the end of it (signal.c).  shim_leave() undoes that and gives the program
 * the errno the real call left.
 */
struct shim_call {
	bool masked;          /* signals blocked (async_cancel): */
	uint64_t mask;        /* the signal mask to restore */
	int err;              /* errno as the program must see it */
	bool failed;
	uint16_t nframes;
	uint64_t frames[PTS_MAX_FRAMES];
};

/* False: the call is not traced here (quiet, nested in the shim, or not
 * in this state's address space: a forked child not yet its own); run the
 * real call and nothing else.  stack: take the call site's return
 * addresses.  process: the call is the process's, not its memory's (an
 * exec, an exit): not traced in a vfork child either. */
bool shim_enter_call(struct shim_call *c, bool stack, bool process);
#define shim_enter(c) shim_enter_call((c), true, false)
/* An exec's: a vfork child's is not its parent's. */
#define shim_enter_process(c) shim_enter_call((c), true, true)
/* Without the call stack, for a record whose call site nothing reads
 * (EXIT: the exit handlers' frames would be unwound for nothing). */
#define shim_enter_exit(c) shim_enter_call((c), false, true)
/* Right after the real call: keeps its errno and whether it failed. */
void shim_returned(struct shim_call *c, bool failed);
void shim_leave(struct shim_call *c);

/* The critical section without the checks and the stack, for the shim's own
 * records (HELLO, EXIT); section_end() does not touch errno. */
void section_begin(struct shim_call *c);
void section_end(struct shim_call *c);
/* The child of fork: the lock may have been held by a thread that does not
 * exist there. */
void section_reset_in_child(void);

pid_t shim_tid(void);
pid_t shim_getpid(void);

/* owner.c: the address space of this state (a vfork child's is), or the
 * process itself (a vfork child is not). */
extern uint32_t *shim_owner_mark;
/* The state's process, once it has its pid: the mark set. */
void owner_mark(void);
bool shim_is_state_process(void);
static inline bool shim_owns_mm(void)
{
	const uint32_t *m = shim_owner_mark;
	return m ? __atomic_load_n(m, __ATOMIC_RELAXED) != 0
		 : shim_is_state_process();
}

typedef int spawn_fn(pid_t *, const char *, const posix_spawn_file_actions_t *,
		     const posix_spawnattr_t *, char *const[], char *const[]);
/* glibc's versions of posix_spawn and posix_spawnp on x86-64: since 2.15,
 * and before (libptshare.map). */
#define GLIBC_SPAWN "GLIBC_2.15"
#define GLIBC_SPAWN_OLD "GLIBC_2.2.5"

/* real.c: the functions the interposers stand in for.  The memory calls
 * and ioctl start as raw system calls (what glibc's wrappers do), so that a
 * call made before the constructor ran (another library's constructor)
 * works; the others are looked up by real_resolve(). */
struct shim_real {
	void *(*mmap)(void *, size_t, int, int, int, off_t);
	int (*munmap)(void *, size_t);
	int (*mprotect)(void *, size_t, int);
	void *(*mremap)(void *, size_t, size_t, int, ...);
	int (*madvise)(void *, size_t, int);
	void *(*shmat)(int, const void *, int);
	int (*shmdt)(const void *);
	int (*ioctl)(int, unsigned long, ...);
	pid_t (*fork)(void);
	pid_t (*fork_bare)(void); /* _Fork: no atfork handlers */
	int (*execve)(const char *, char *const[], char *const[]);
	int (*execvpe)(const char *, char *const[], char *const[]);
	int (*execveat)(int, const char *, char *const[], char *const[], int);
	int (*fexecve)(int, char *const[], char *const[]);
	spawn_fn *posix_spawn, *posix_spawnp;
	/* The versions programs linked before glibc 2.15 call (spawn.c). */
	spawn_fn *posix_spawn_old, *posix_spawnp_old;
	int (*sigaction)(int, const struct sigaction *, struct sigaction *);
	__sighandler_t (*signal)(int, __sighandler_t);
	__sighandler_t (*sysv_signal)(int, __sighandler_t);
	__sighandler_t (*sigset)(int, __sighandler_t);
	int (*setcanceltype)(int, int *);
};
extern struct shim_real shim_real;
/* Idempotent.  The constructor calls it; a process call reached before the
 * constructor (from another library's constructor) calls it too. */
void real_resolve(void);

/* File descriptors a record brings (SCM_RIGHTS): HELLO's. */
struct fd_pass {
	int fd[2];
	int n;
};

/* record.c: numbers, stamps and sends one record (body and frames of c, or
 * none when c is NULL), with the fds of pass (or none: NULL): into the
 * ring once there is one, else (and HELLO always) on the socket.  Whether
 * it was sent: only then may an ACK be waited for. */
bool rec_send(struct shim_call *c, uint16_t type, struct pts_hdr *h,
	      size_t size, const struct fd_pass *pass);
/* Stop sending: the daemon is gone, or the fd is no longer ours (a vfork
 * child's finding is its own: it changes nothing). */
void shim_quiet(const char *why, bool daemon_gone);

/* The errno a record carries: the call's, when it failed. */
static inline int32_t shim_errno(const struct shim_call *c)
{
	return c->failed ? c->err : 0;
}

/* conn.c: every wait for the daemon is bounded by wait_ms, and by
 * nothing once it let one run out (daemon_late). */
int conn_open(void);                    /* a connected fd, moved high */
bool conn_is_ours(void);
bool conn_gone(void);                   /* the daemon closed it, or it is not ours */
/* 0 or -errno; wait: for room in the socket. */
int conn_send(const struct iovec *iov, int n, const struct fd_pass *pass,
	      bool wait);
bool conn_wait_ack(uint32_t seq);
int64_t conn_deadline(void);            /* when a wait that starts now ends */
bool conn_late(void);                   /* a wait ran out: false */
/* A wait for the daemon's answer ran out: late (false) only if it has
 * not even read what we sent; one that reads, and works on it, lags. */
bool conn_unread_late(void);

/* ring.c: the record ring.  ring_make() maps one and returns its memfd
 * (for HELLO), or -1; ring_drop() unmaps it.  ring_put() is 0, or -EAGAIN
 * when no room came within the wait. */
int ring_make(void);
void ring_drop(void);
int ring_put(const struct iovec *iov, int n);
void ring_kick(void);          /* PTS_RING_KICK on the socket, known ours */
void ring_kick_if_ours(void);   /* the same, the fd checked first */
bool ring_unread(void);                 /* the daemon has not taken all */
/* Around a traced call's real call and its record: the daemon reads a
 * process's /proc between calls (docs/wire-protocol.md, Readings between
 * calls), and a call waits (bounded) for the reading to end. */
void ring_call_begin(void);
void ring_call_end(void);
void ring_wait_read(void);      /* before a fork: the image read once;
				 * takes the critical section if it waits */
void ring_wait_caught_up(void); /* before a new process, in the process
				 * the state is of: the daemon not behind */
int fd_move_high(int fd);               /* fd, or a high copy (fd closed) */

/* proc.c: this process's lifecycle. */
/* connect and say HELLO (parent_seq: FORKED's, else 0) */
void proc_start(uint32_t hello_flags, uint32_t parent_seq);
void proc_forked(void);                 /* in the child, before fork returns */
void proc_exit(int status);             /* EXIT, wait for the ACK, quiet */
bool proc_tracing_wanted(void);         /* new processes should be traced */

/* signal.c: at the end of a section, the signals wrapper() held back are
 * unblocked, and their handlers run. */
void signal_release_deferred(void);
/* section.c: this thread's signal mask, as the kernel's 64-bit set. */
void shim_mask(int how, uint64_t set, uint64_t *old);
static inline uint64_t shim_sig_bit(int sig)
{
	return 1ull << (sig - 1);
}
/* The signals a fault or a trap of the thread's own sends: they cannot
 * wait, and are neither blocked nor held back. */
#define SHIM_SYNC_SIGNALS                                                   \
	(shim_sig_bit(SIGSEGV) | shim_sig_bit(SIGBUS) | shim_sig_bit(SIGILL) | \
	 shim_sig_bit(SIGFPE) | shim_sig_bit(SIGTRAP) | shim_sig_bit(SIGSYS))

/* stack.c */
void stack_init(void);
void stack_capture(struct shim_call *c);

/* config.c: PTSHARE_SOCKET, PTSHARE_OPTIONS and what execs must keep. */
void config_load(char **argv);

/* say.c: one line on stderr with PTSHARE_OPTIONS=verbose. */
void shim_say(const char *what, const char *detail, long n);

/* text.c: strings without allocation.  str_copy() copies at most cap - 1
 * bytes, always terminates (cap > 0), and returns the length copied. */
size_t str_copy(char *dst, size_t cap, const char *src);
bool str_starts(const char *s, const char *prefix);
size_t fmt_ulong(char *dst, size_t cap, unsigned long v);

#endif
