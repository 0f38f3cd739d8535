/* SPDX-License-Identifier: MIT */
/*
 * The critical section of a traced call.  One lock per process orders the
 * real calls of all threads with their records' sequence numbers and sends,
 * so the daemon applies them in the order they took effect.
 *
 * The program's handlers of asynchronous signals do not run inside it
 * (signal.c holds them back to its end): a handler can then neither run in
 * the middle of it (its own thread holds the lock it would wait for) nor
 * longjmp out of it (the lock would stay held for ever), and a handler
 * that maps memory is traced like any other caller, after the interrupted
 * call.  A thread with asynchronous cancellation enabled blocks signals
 * instead, as every thread once did: glibc's cancellation handler is not
 * the program's to hold back.  Synchronous signals (a fault, a seccomp
 * trap on the real call) cannot wait; their handlers find depth > 0 and go
 * straight to the real functions.  The same depth lets the shim's own
 * helpers (dlsym) map memory without records.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "shim.h"

__thread struct shim_thread shim_tls;

/* 0 free, 1 held, 2 held and waited for (a futex). */
static atomic_int lock_word;

/* Raw rt_sigprocmask: glibc's wrapper would refuse to block its own
 * cancellation signal, whose handler could unwind us with the lock held. */
void shim_mask(int how, uint64_t set, uint64_t *old)
{
	syscall(SYS_rt_sigprocmask, how, &set, old, sizeof(set));
}

static void lock(void)
{
	int expected = 0;

	if (atomic_compare_exchange_strong(&lock_word, &expected, 1))
		return;
	while (atomic_exchange(&lock_word, 2) != 0)
		syscall(SYS_futex, &lock_word, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
}

static void unlock(void)
{
	if (atomic_exchange(&lock_word, 0) == 2)
		syscall(SYS_futex, &lock_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void inside(struct shim_call *c)
{
	c->masked = shim_tls.async_cancel;
	if (c->masked)
		shim_mask(SIG_BLOCK, ~SHIM_SYNC_SIGNALS, &c->mask);
	shim_tls.depth++;
	c->failed = false;
	c->nframes = 0;
}

pid_t shim_getpid(void)
{
	return (pid_t)syscall(SYS_getpid);
}

pid_t shim_tid(void)
{
	if (!shim_tls.tid)
		shim_tls.tid = (pid_t)syscall(SYS_gettid);
	return shim_tls.tid;
}

bool shim_enter_call(struct shim_call *c, bool stack, bool process)
{
	c->err = errno;
	/* A forked child not yet its own (a raw clone's) writes nothing in
	 * the state it copied, and a vfork child sends no exec or exit of
	 * its parent's: a process's call asks the pid, a mapping call the
	 * address space (owner.c). */
	if (!atomic_load_explicit(&shim_proc.active, memory_order_acquire) ||
	    shim_tls.depth ||
	    !(process ? shim_is_state_process() : shim_owns_mm()))
		return false;
	inside(c);
	if (stack)
		stack_capture(c); /* before the lock: other threads need not wait */
	lock();
	ring_call_begin();
	errno = c->err;
	return true;
}

void shim_returned(struct shim_call *c, bool failed)
{
	c->err = errno;
	c->failed = failed;
}

void section_begin(struct shim_call *c)
{
	inside(c);
	lock();
}

void section_end(struct shim_call *c)
{
	ring_call_end();
	unlock();
	shim_tls.depth--;
	if (c->masked)
		shim_mask(SIG_SETMASK, c->mask, NULL);
	else
		signal_release_deferred();
}

void shim_leave(struct shim_call *c)
{
	section_end(c);
	errno = c->err;
}

void section_reset_in_child(void)
{
	atomic_store(&lock_word, 0);
	shim_tls.tid = 0;
}
