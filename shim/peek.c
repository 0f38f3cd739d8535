/* SPDX-License-Identifier: MIT */
/*
 * Reading the program's memory on its behalf: an exec's path and its
 * envp, posix_spawn's envp.  The kernel answers a bad pointer there with
 * EFAULT (or fails the call earlier for another reason); read plainly,
 * the shim would crash the program with SIGSEGV instead, and with its
 * lock held and signals blocked.  So it reads with process_vm_readv on its
 * own pid, which fails where a read would fault, and never past the page
 * where a string ends: a string that ends right before an unreadable page
 * is read whole, as the kernel reads it.  Raw system calls, no malloc:
 * exec runs in vfork children and between fork and exec.  errno is kept.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "peek.h"
#include "shim.h"

bool peek(void *dst, const void *src, size_t len)
{
	struct iovec local = { dst, len }, remote = { (void *)src, len };
	int err = errno;

	if (!len)
		return true;
	long n = syscall(SYS_process_vm_readv, shim_getpid(), &local, 1,
			 &remote, 1, 0);
	bool refused = n < 0 && (errno == ENOSYS || errno == EPERM);
	errno = err;
	/* A sandbox that refuses the call (a seccomp filter): reading
	 * plainly, as before, is all that is left. */
	if (refused)
		memcpy(dst, src, len);
	return refused || n == (long)len;
}

long peek_str(char *dst, size_t cap, const char *src)
{
	size_t n = 0;

	while (n + 1 < cap) {
		uintptr_t at = (uintptr_t)src + n;
		size_t piece = PEEK_PAGE - at % PEEK_PAGE;
		if (piece > cap - 1 - n)
			piece = cap - 1 - n;
		if (!peek(dst + n, (const void *)at, piece))
			return -1;
		const char *end = memchr(dst + n, '\0', piece);
		if (end)
			return end - dst;
		n += piece;
	}
	dst[n] = '\0';
	return (long)n;
}

long peek_strlen(const char *src)
{
	char piece[256];
	long len = 0;

	for (;;) {
		long n = peek_str(piece, sizeof(piece), (const char *)((uintptr_t)src + len));
		if (n < 0)
			return -1;
		len += n;
		if (n < (long)sizeof(piece) - 1)
			return len;
	}
}
