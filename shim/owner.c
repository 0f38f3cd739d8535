/* SPDX-License-Identifier: MIT */
/*
 * Whether a call runs in the address space this state is of, without a
 * system call on every traced call: a getpid was 78 of the 180 ns a traced
 * call added (bench/shim).  A page of private anonymous memory, marked
 * MADV_WIPEONFORK, holds a word the state's process sets.  The child of a
 * fork, by glibc or by a raw clone, finds it zero: its calls are not traced
 * until its fork made it a process of its own (proc_forked).  A vfork
 * child, or a raw clone's with CLONE_VM, shares the page with the address
 * space: its mapping calls change the memory of the state's process, and
 * are traced as that process's own, which they are.  Its exec and exit are
 * not its parent's: those ask getpid (shim_is_state_process).  Without the
 * page (no room for one more mapping), getpid decides every call.
 */
#define _GNU_SOURCE
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "shim.h"

uint32_t *shim_owner_mark;

void owner_mark(void)
{
	if (!shim_owner_mark) {
		void *p = (void *)syscall(SYS_mmap, NULL, 4096,
					  PROT_READ | PROT_WRITE,
					  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return;
		if (syscall(SYS_madvise, p, 4096, MADV_WIPEONFORK)) {
			syscall(SYS_munmap, p, 4096); /* before Linux 4.14 */
			return;
		}
		shim_owner_mark = p;
	}
	__atomic_store_n(shim_owner_mark, 1, __ATOMIC_RELAXED);
}

bool shim_is_state_process(void)
{
	return shim_getpid() == shim_proc.pid;
}
