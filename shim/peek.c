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

/* One process_vm_readv for a batch of string heads: each piece stops at
 * the page its string starts in, so a string that ends before an
 * unreadable page is never read past it.  The kernel stops at the first
 * piece it cannot read; that one, and any cut by its page, are read again
 * alone (peek_str), which tells an unreadable string from a long one. */
#define HEADS_BATCH 64

bool peek_heads(char *dst, size_t cap, char *const *src, size_t n)
{
	struct iovec local[HEADS_BATCH], remote[HEADS_BATCH];
	pid_t pid = shim_getpid();
	bool refused = false;

	for (size_t i = 0, k; i < n; i += k) {
		k = n - i < HEADS_BATCH ? n - i : HEADS_BATCH;
		for (size_t j = 0; j < k; j++) {
			uintptr_t at = (uintptr_t)src[i + j];
			size_t room = PEEK_PAGE - at % PEEK_PAGE;
			size_t len = room < cap - 1 ? room : cap - 1;
			local[j] = (struct iovec){ dst + (i + j) * cap, len };
			remote[j] = (struct iovec){ src[i + j], len };
		}
		int err = errno;
		long got = refused ? -1 :
			   syscall(SYS_process_vm_readv, pid, local, k, remote, k, 0);
		refused |= got < 0 && (errno == ENOSYS || errno == EPERM);
		errno = err;
		for (size_t j = 0; j < k; j++) {
			char *d = local[j].iov_base;
			size_t len = local[j].iov_len;
			bool whole = got >= (long)len;
			if (whole) {
				got -= (long)len;
				d[len] = '\0';
				if (len == cap - 1 || memchr(d, '\0', len))
					continue;
			}
			if (peek_str(d, cap, src[i + j]) < 0)
				return false;
			if (!whole && !refused) {
				k = j + 1; /* the kernel read nothing after it */
				break;
			}
		}
	}
	return true;
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
