/* SPDX-License-Identifier: MIT */
/*
 * The memory calls: mmap/mmap64, munmap, mprotect, mremap, madvise, shmat
 * and shmdt.  Each runs the real call inside the critical section and sends
 * its arguments and result; a failed call goes out flagged, with its errno,
 * which the program then gets back unchanged.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/stat.h>

#include "shim.h"

/* What the daemon classifies a file mapping by (its device and inode);
 * nothing for anonymous memory. */
static void backing(int fd, int flags, uint64_t *dev, uint64_t *ino)
{
	struct stat st;

	if (fd < 0 || (flags & MAP_ANONYMOUS) || fstat(fd, &st))
		return;
	*dev = st.st_dev;
	*ino = st.st_ino;
}

SHIM_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd,
		       off_t off)
{
	struct shim_call c;

	if (!shim_enter(&c))
		return shim_real.mmap(addr, len, prot, flags, fd, off);
	void *r = shim_real.mmap(addr, len, prot, flags, fd, off);
	shim_returned(&c, r == MAP_FAILED);
	struct pts_mmap m = {
		.addr = (uintptr_t)r,
		.len = len,
		.offset = (uint64_t)off,
		.prot = prot,
		.flags = flags,
		.fd = fd,
		.result_errno = shim_errno(&c),
	};
	backing(fd, flags, &m.dev, &m.ino);
	rec_send(&c, PTS_MMAP, &m.h, sizeof(m), NULL);
	shim_leave(&c);
	return r;
}

/* One function on x86-64, where off_t is 64 bits. */
SHIM_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd,
			 off64_t off) __attribute__((alias("mmap")));

/* munmap, mprotect, madvise, shmdt: r is the real call's result. */
static void range_done(struct shim_call *c, int r, uint16_t type,
		       const void *addr, size_t len, int arg)
{
	shim_returned(c, r != 0);
	struct pts_range m = {
		.addr = (uintptr_t)addr,
		.len = len,
		.arg = arg,
		.result_errno = shim_errno(c),
	};
	rec_send(c, type, &m.h, sizeof(m), NULL);
	shim_leave(c);
}

SHIM_EXPORT int munmap(void *addr, size_t len)
{
	struct shim_call c;

	if (!shim_enter(&c))
		return shim_real.munmap(addr, len);
	int r = shim_real.munmap(addr, len);
	range_done(&c, r, PTS_MUNMAP, addr, len, 0);
	return r;
}

SHIM_EXPORT int mprotect(void *addr, size_t len, int prot)
{
	struct shim_call c;

	if (!shim_enter(&c))
		return shim_real.mprotect(addr, len, prot);
	int r = shim_real.mprotect(addr, len, prot);
	range_done(&c, r, PTS_MPROTECT, addr, len, prot);
	return r;
}

SHIM_EXPORT int madvise(void *addr, size_t len, int advice)
{
	struct shim_call c;

	if (!shim_enter(&c))
		return shim_real.madvise(addr, len, advice);
	int r = shim_real.madvise(addr, len, advice);
	range_done(&c, r, PTS_MADVISE, addr, len, advice);
	return r;
}

SHIM_EXPORT int shmdt(const void *addr)
{
	struct shim_call c;

	if (!shim_enter(&c))
		return shim_real.shmdt(addr);
	int r = shim_real.shmdt(addr);
	range_done(&c, r, PTS_SHMDT, addr, 0, 0);
	return r;
}

/* The real call and its record.  EFAULT: the range spans several VMAs,
 * perhaps because the daemon split one by registering part of it with the
 * userfaultfd (docs/faults.md); it acks such a record once it has released
 * the range, and *again says to try once more. */
static void *mremap_sent(struct shim_call *c, void *old, size_t old_len,
			 size_t new_len, int flags, void *want, bool *again)
{
	ring_call_begin(); /* again, for a second try */
	void *r = shim_real.mremap(old, old_len, new_len, flags, want);
	shim_returned(c, r == MAP_FAILED);
	struct pts_mremap m = {
		.old_addr = (uintptr_t)old,
		.old_len = old_len,
		.new_addr = (uintptr_t)r,
		.new_len = new_len,
		.flags = flags,
		.result_errno = shim_errno(c),
	};
	rec_send(c, PTS_MREMAP, &m.h, sizeof(m), NULL);
	if (again)
		*again = r == MAP_FAILED && c->err == EFAULT && shim_cfg.uffd &&
			 atomic_load(&shim_proc.active) && conn_wait_ack(m.h.seq);
	return r;
}

/* As glibc 2.36 (with the fix of its bug 31968, which Debian's has):
 * new_address is read with MREMAP_FIXED, where it is the address, and
 * with MREMAP_DONTUNMAP, where the kernel takes it as a hint (and fails
 * an unaligned one); never otherwise, where the caller may not pass it. */
SHIM_EXPORT void *mremap(void *old, size_t old_len, size_t new_len, int flags,
			 ...)
{
	void *want = NULL;
	struct shim_call c;
	bool again;

	if (flags & (MREMAP_FIXED | MREMAP_DONTUNMAP)) {
		va_list ap;
		va_start(ap, flags);
		want = va_arg(ap, void *);
		va_end(ap);
	}
	if (!shim_enter(&c))
		return shim_real.mremap(old, old_len, new_len, flags, want);
	void *r = mremap_sent(&c, old, old_len, new_len, flags, want, &again);
	if (again)
		r = mremap_sent(&c, old, old_len, new_len, flags, want, NULL);
	shim_leave(&c);
	return r;
}

static uint64_t segment_size(int id)
{
	struct shmid_ds ds;

	return shmctl(id, IPC_STAT, &ds) ? 0 : ds.shm_segsz;
}

SHIM_EXPORT void *shmat(int id, const void *addr, int flags)
{
	struct shim_call c;

	if (!shim_enter(&c))
		return shim_real.shmat(id, addr, flags);
	void *r = shim_real.shmat(id, addr, flags);
	shim_returned(&c, r == (void *)-1);
	struct pts_shmat m = {
		.addr = (uintptr_t)r,
		.len = segment_size(id),
		.shmid = id,
		.shmflg = flags,
		.result_errno = shim_errno(&c),
	};
	rec_send(&c, PTS_SHMAT, &m.h, sizeof(m), NULL);
	shim_leave(&c);
	return r;
}
