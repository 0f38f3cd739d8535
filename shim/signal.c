/* SPDX-License-Identifier: MIT */
/*
 * The program's signal handlers, run outside the critical section without
 * blocking signals around it (docs/shim.md, Signals).
 *
 * A handler the program installs for an asynchronous signal is installed
 * in the kernel as wrapper(), with the program's flags and mask.  Outside
 * the critical section wrapper() calls the handler at once, with the
 * kernel's siginfo and ucontext.  Inside it, the handler must not run (its
 * thread holds the lock a traced call of the handler's would wait for, and
 * a longjmp would leave it held): wrapper() blocks the signal until the
 * section ends (in the ucontext sigreturn restores), and queues it again to
 * its thread with the same siginfo; section_end() unblocks it, and the
 * kernel delivers it there.  This costs the two rt_sigprocmask of every
 * traced call only to the calls a signal interrupts.
 *
 * The program sees its own handlers: a query is answered from the kernel
 * with the program's handler and SA_SIGINFO put back.  Synchronous signals
 * (a fault, a seccomp trap on the real call) are not wrapped: they cannot
 * wait, and their handlers find depth > 0 and go straight to the real
 * functions.  A thread with asynchronous cancellation enabled blocks
 * signals in the section as before (section.c): glibc's cancellation
 * handler, which unwinds, is not the program's to wrap.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "shim.h"

#define SIG_COUNT 65 /* 1 to 64: the kernel's signals on x86-64 */

typedef void handler_fn(int, siginfo_t *, void *);

/* The program's action for a wrapped signal, and what the kernel holds
 * for it (wrapper() in the program's place), for a reinstall. */
struct wrapped {
	_Atomic(handler_fn *) handler; /* NULL: not wrapped */
	int flags;                     /* the program's */
	struct sigaction installed;
};

static struct wrapped wrapped[SIG_COUNT];

/* Serialises updates of wrapped[] and the kernel's actions, so the two
 * agree; taken with every signal blocked, so a wrapper() on the holder's
 * thread never waits for it. */
static atomic_flag table_lock = ATOMIC_FLAG_INIT;

static bool is_wrappable(int sig)
{
	/* glibc's own (cancellation, set*id) and out of range: its
	 * sigaction refuses them, as the real call will. */
	if (sig < 1 || sig >= SIG_COUNT || (sig >= 32 && sig < SIGRTMIN))
		return false;
	return !(SHIM_SYNC_SIGNALS & shim_sig_bit(sig)) && sig != SIGKILL &&
	       sig != SIGSTOP;
}

/* Only the process the shim's state belongs to wraps: a vfork child
 * shares that state, and the handlers it installs are its own. */
static bool wraps_here(int sig)
{
	return is_wrappable(sig) && shim_proc.pid && shim_is_state_process();
}

static void table_lock_take(uint64_t *old)
{
	shim_mask(SIG_BLOCK, ~0ull, old);
	while (atomic_flag_test_and_set_explicit(&table_lock,
						 memory_order_acquire))
		;
}

static void table_lock_drop(const uint64_t *old)
{
	atomic_flag_clear_explicit(&table_lock, memory_order_release);
	shim_mask(SIG_SETMASK, *old, NULL);
}

static void queue_again(int sig, siginfo_t *info)
{
	/* A process may queue any siginfo to its own threads. */
	syscall(SYS_rt_tgsigqueueinfo, shim_getpid(), shim_tid(), sig, info);
}

static void wrapper(int sig, siginfo_t *info, void *uc)
{
	struct wrapped *w = &wrapped[sig];
	handler_fn *h = atomic_load_explicit(&w->handler, memory_order_acquire);

	if (!shim_tls.depth) {
		/* NULL only while the program installs SIG_DFL or SIG_IGN
		 * over it (the kernel is changed first): a signal that
		 * crossed the change, as it would have. */
		if (h)
			h(sig, info, uc);
		return;
	}
	int err = errno;
	uint64_t bit = shim_sig_bit(sig), old;
	/* Blocked now (SA_NODEFER) and after sigreturn, until section_end(). */
	shim_mask(SIG_BLOCK, bit, NULL);
	((ucontext_t *)uc)->uc_sigmask.__val[0] |= bit;
	shim_tls.deferred |= bit;
	if (w->flags & SA_RESETHAND) {
		/* The kernel reset it to SIG_DFL delivering this one; the
		 * handler runs once, when it comes again. */
		table_lock_take(&old);
		if (atomic_load(&w->handler) == h && h)
			shim_real.sigaction(sig, &w->installed, NULL);
		table_lock_drop(&old);
	}
	queue_again(sig, info);
	errno = err;
}

void signal_release_deferred(void)
{
	uint64_t bits = shim_tls.deferred;

	if (!bits)
		return;
	shim_tls.deferred = 0;
	int err = errno;
	shim_mask(SIG_UNBLOCK, bits, NULL);
	errno = err;
}

/* The program's view of an action the kernel holds: was, with its
 * SA_SIGINFO, where the kernel holds wrapper(); the program's SA_SIGINFO
 * also where SA_RESETHAND reset wrapper() to SIG_DFL (flags unchanged). */
static void unwrap(struct sigaction *k, handler_fn *was, int was_flags)
{
	if (!was)
		return;
	if (k->sa_sigaction == wrapper)
		k->sa_sigaction = was;
	else if (k->sa_handler != SIG_DFL || !(k->sa_flags & SA_RESETHAND))
		return;
	k->sa_flags = (k->sa_flags & ~SA_SIGINFO) | (was_flags & SA_SIGINFO);
}

static bool is_handler(const struct sigaction *a)
{
	return a->sa_handler != SIG_DFL && a->sa_handler != SIG_IGN &&
	       a->sa_handler != SIG_HOLD;
}

/*
 * Gives the kernel act for sig (old: what it held), wrapper() in the
 * place of a handler, under the table lock.  The handler is stored before
 * the kernel can call wrapper() for it; SIG_DFL or SIG_IGN is stored after
 * the kernel no longer does.
 */
static int put(int sig, const struct sigaction *act, struct sigaction *old)
{
	struct wrapped *w = &wrapped[sig];
	handler_fn *was = atomic_load(&w->handler);
	int was_flags = w->flags;
	struct sigaction k;
	const struct sigaction *give = act;

	if (act && is_handler(act)) {
		k = *act;
		k.sa_sigaction = wrapper;
		k.sa_flags |= SA_SIGINFO;
		give = &k;
		atomic_store(&w->handler, act->sa_sigaction);
		w->flags = act->sa_flags;
	}
	int r = shim_real.sigaction(sig, give, old);
	if (r) {
		atomic_store(&w->handler, was);
		w->flags = was_flags;
	} else if (give == &k) {
		w->installed = k;
	} else if (act) {
		atomic_store(&w->handler, NULL);
	}
	if (!r && old)
		unwrap(old, was, was_flags);
	return r;
}

SHIM_EXPORT int sigaction(int sig, const struct sigaction *act,
			  struct sigaction *old)
{
	real_resolve();
	if (!is_wrappable(sig))
		return shim_real.sigaction(sig, act, old);
	/* act may be old: glibc copies it first too. */
	struct sigaction copy, *given = NULL;
	if (act) {
		copy = *act;
		given = &copy;
	}
	uint64_t mask;
	int r;
	if (wraps_here(sig)) {
		table_lock_take(&mask);
		r = put(sig, given, old);
		table_lock_drop(&mask);
	} else {
		/* Not ours to wrap; what the kernel held may still be. */
		struct wrapped *w = &wrapped[sig];
		handler_fn *was = atomic_load(&w->handler);
		r = shim_real.sigaction(sig, given, old);
		if (!r && old)
			unwrap(old, was, w->flags);
	}
	return r;
}

SHIM_EXPORT int __sigaction(int sig, const struct sigaction *act,
			    struct sigaction *old)
	__THROW __attribute__((alias("sigaction")));

/*
 * signal(), sysv_signal() and sigset() install through glibc's internal
 * sigaction, with flags of their own (siginterrupt's among them): glibc
 * installs the handler, then the kernel's action is wrapped as it stands.
 * A signal between the two finds the handler itself.
 */
typedef sighandler_t legacy_fn(int, sighandler_t);

static sighandler_t legacy(legacy_fn *real, int sig, sighandler_t h)
{
	real_resolve();
	if (!real) {
		errno = ENOSYS;
		return SIG_ERR;
	}
	if (!is_wrappable(sig))
		return real(sig, h);
	struct wrapped *w = &wrapped[sig];
	handler_fn *was = atomic_load(&w->handler);
	sighandler_t prev = real(sig, h);
	if (prev == SIG_ERR)
		return prev;
	if (wraps_here(sig)) {
		uint64_t mask;
		struct sigaction now;
		table_lock_take(&mask);
		if (!shim_real.sigaction(sig, NULL, &now) &&
		    now.sa_sigaction != wrapper)
			put(sig, &now, NULL);
		table_lock_drop(&mask);
	}
	/* void (*)(void): the generic function type. */
	if ((void (*)(void))prev == (void (*)(void))wrapper)
		prev = (sighandler_t)(void (*)(void))was;
	return prev;
}

SHIM_EXPORT sighandler_t signal(int sig, sighandler_t h)
{
	return legacy(shim_real.signal, sig, h);
}

SHIM_EXPORT sighandler_t bsd_signal(int sig, sighandler_t h)
	__THROW __attribute__((alias("signal")));
SHIM_EXPORT sighandler_t ssignal(int sig, sighandler_t h)
	__THROW __attribute__((alias("signal")));

SHIM_EXPORT sighandler_t sysv_signal(int sig, sighandler_t h)
{
	return legacy(shim_real.sysv_signal, sig, h);
}

SHIM_EXPORT sighandler_t __sysv_signal(int sig, sighandler_t h)
	__THROW __attribute__((alias("sysv_signal")));

SHIM_EXPORT sighandler_t sigset(int sig, sighandler_t h)
{
	return legacy(shim_real.sigset, sig, h);
}

/* The cancellation type of this thread, for section.c. */
SHIM_EXPORT int pthread_setcanceltype(int type, int *old)
{
	real_resolve();
	int r = shim_real.setcanceltype(type, old);
	if (!r)
		shim_tls.async_cancel = type == PTHREAD_CANCEL_ASYNCHRONOUS;
	return r;
}
