/* SPDX-License-Identifier: MIT */
/*
 * The call site of a traced call: a few return addresses from libunwind,
 * the shim's own frames left out.
 *
 * libunwind checks addresses by writing them into a pipe it opens on first
 * use.  Opened at the lowest free numbers, that pipe would shift the
 * program's fd numbers; and were the program to close or reuse them,
 * libunwind would read from, write to and close the program's fds.  So
 * pipe2() is interposed: called by libunwind (inside backtrace_here), the
 * pipe is moved high like the connection, and before every unwinding both
 * ends are checked to be that pipe still; if not, call stacks stop in this
 * process.
 *
 * A child forked while another thread was unwinding may inherit one of
 * libunwind's locks held by a thread it does not have: it takes no call
 * stack, ever.
 */
#define _GNU_SOURCE
#define UNW_LOCAL_ONLY
#include <errno.h>
#include <link.h>
#include <libunwind.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "shim.h"

/* Frames of the shim above the call site, at most (execl unoptimized:
 * execl, exec_list, exec_run, env_run, exec_traced, shim_enter_from,
 * stack_capture, backtrace_here). */
#define OWN_FRAMES_MAX 8

/* This library's code, from its ELF header to the end of its text. */
extern const char __ehdr_start[] __attribute__((visibility("hidden")));
extern const char __etext[] __attribute__((visibility("hidden")));

static atomic_bool stack_off;

/* Threads inside unw_backtrace now.  libunwind's locks are not fork-safe
 * (nor is the dl_iterate_phdr lock it takes): a child forked while another
 * thread held one would block for ever at its first call stack. */
static atomic_int unwinding_now;

/* libunwind's code.  It calls mmap and munmap outside stack_capture too:
 * a pthread key destructor frees its per-thread cache when a thread exits.
 * Those calls are the shim's, not the program's. */
static uintptr_t unwinder_start, unwinder_end;

static struct {
	int fd[2];
	dev_t dev;
	ino_t ino;
} unwind_pipe = { { -1, -1 }, 0, 0 };

static bool pipe_intact(void)
{
	struct stat st;

	for (int i = 0; i < 2; i++)
		if (unwind_pipe.fd[i] >= 0 &&
		    (fstat(unwind_pipe.fd[i], &st) || st.st_dev != unwind_pipe.dev ||
		     st.st_ino != unwind_pipe.ino))
			return false;
	return true;
}

SHIM_EXPORT int pipe2(int fds[2], int flags)
{
	int r = (int)syscall(SYS_pipe2, fds, flags);
	struct stat st;

	if (r || !shim_tls.unwinding)
		return r;
	int err = errno;
	for (int i = 0; i < 2; i++)
		unwind_pipe.fd[i] = fds[i] = fd_move_high(fds[i]);
	if (!fstat(fds[0], &st)) {
		unwind_pipe.dev = st.st_dev;
		unwind_pipe.ino = st.st_ino;
	}
	errno = err;
	return 0;
}

static bool own(const void *ip)
{
	return (const char *)ip >= __ehdr_start && (const char *)ip < __etext;
}

/* At most max return addresses from unw_backtrace, counted (fork safety)
 * and marked (its pipe is moved high).  No deeper than asked: a frame
 * libunwind has not seen before costs it a dozen system calls (its locks
 * block all signals). */
static int backtrace_here(void **ips, int max)
{
	atomic_fetch_add(&unwinding_now, 1);
	shim_tls.unwinding = true;
	int n = unw_backtrace(ips, max);
	shim_tls.unwinding = false;
	atomic_fetch_sub(&unwinding_now, 1);
	return n;
}

void stack_capture(struct shim_call *c)
{
	void *ips[PTS_MAX_FRAMES + OWN_FRAMES_MAX];

	c->nframes = 0;
	if (!shim_cfg.stack || !shim_cfg.frames || atomic_load(&stack_off))
		return;
	if (!pipe_intact()) {
		atomic_store(&stack_off, true);
		shim_say("call stacks off: the program took libunwind's fds",
			 NULL, -1);
		return;
	}
	int n = backtrace_here(ips, (int)shim_cfg.frames + OWN_FRAMES_MAX);
	int i = 0;
	while (i < n && own(ips[i]))
		i++;
	for (; i < n && c->nframes < shim_cfg.frames; i++)
		c->frames[c->nframes++] = (uint64_t)(uintptr_t)ips[i];
}

void stack_forked(void)
{
	if (!atomic_load(&unwinding_now))
		return;
	atomic_store(&stack_off, true);
	shim_say("call stacks off: forked while another thread took one", NULL, -1);
}

bool stack_is_unwinder(const void *caller)
{
	return (uintptr_t)caller >= unwinder_start &&
	       (uintptr_t)caller < unwinder_end;
}

/* The executable segment holding unw_backtrace. */
static int find_unwinder(struct dl_phdr_info *info, size_t size, void *arg)
{
	const uintptr_t fn = (uintptr_t)unw_backtrace;

	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && fn >= start &&
		    fn < start + ph->p_memsz) {
			unwinder_start = start;
			unwinder_end = start + ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

/* libunwind sets itself up (caches, its pipe) on first use: here, in the
 * constructor, rather than in some later call.  One frame does it; the
 * constructor's deep stack (the loader's frames) would cost system calls
 * for frames no record will have. */
void stack_init(void)
{
	void *ip;

	dl_iterate_phdr(find_unwinder, NULL);
	if (!shim_cfg.stack || !shim_cfg.frames)
		return;
	shim_tls.depth++;
	backtrace_here(&ip, 1);
	shim_tls.depth--;
}
