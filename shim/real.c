/* SPDX-License-Identifier: MIT */
/*
 * The functions the interposers stand in for, found with
 * dlsym(RTLD_NEXT, ...) by the constructor: never lazily inside an
 * interposer that may run in a signal handler.  The memory calls and ioctl
 * start out as the raw system calls glibc's wrappers make, so a call made
 * before the constructor ran (another library's constructor runs first)
 * still works.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "shim.h"

static void *raw_mmap(void *addr, size_t len, int prot, int flags, int fd,
		      off_t off)
{
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

static int raw_munmap(void *addr, size_t len)
{
	return (int)syscall(SYS_munmap, addr, len);
}

static int raw_mprotect(void *addr, size_t len, int prot)
{
	return (int)syscall(SYS_mprotect, addr, len, prot);
}

/* The interposer always passes new_address, read as glibc reads it (NULL
 * unless MREMAP_FIXED or MREMAP_DONTUNMAP).  glibc also fails unknown
 * flags with EINVAL before the call: the kernel fails the same ones. */
static void *raw_mremap(void *old, size_t old_len, size_t new_len, int flags,
			...)
{
	va_list ap;

	va_start(ap, flags);
	void *new_addr = va_arg(ap, void *);
	va_end(ap);
	return (void *)syscall(SYS_mremap, old, old_len, new_len, flags,
			       new_addr);
}

static int raw_madvise(void *addr, size_t len, int advice)
{
	return (int)syscall(SYS_madvise, addr, len, advice);
}

static void *raw_shmat(int id, const void *addr, int flags)
{
	return (void *)syscall(SYS_shmat, id, addr, flags);
}

static int raw_shmdt(const void *addr)
{
	return (int)syscall(SYS_shmdt, addr);
}

/* The interposer always passes one argument, as glibc's wrapper reads. */
static int raw_ioctl(int fd, unsigned long request, ...)
{
	va_list ap;

	va_start(ap, request);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	return (int)syscall(SYS_ioctl, fd, request, arg);
}

struct shim_real shim_real = {
	.mmap = raw_mmap,
	.munmap = raw_munmap,
	.mprotect = raw_mprotect,
	.mremap = raw_mremap,
	.madvise = raw_madvise,
	.shmat = raw_shmat,
	.shmdt = raw_shmdt,
	.ioctl = raw_ioctl,
};

static atomic_bool resolved;

/* slot keeps its value when the symbol is missing (execveat on an old
 * glibc: its interposer then fails with ENOSYS). */
static void lookup(void *slot, const char *name)
{
	void *fn = dlsym(RTLD_NEXT, name);

	if (fn)
		memcpy(slot, &fn, sizeof(fn));
}

/* The same for one version of name. */
static void lookup_version(void *slot, const char *name, const char *version)
{
	void *fn = dlvsym(RTLD_NEXT, name, version);

	if (fn)
		memcpy(slot, &fn, sizeof(fn));
}

void real_resolve(void)
{
	if (atomic_load(&resolved))
		return;
	lookup(&shim_real.mmap, "mmap");
	lookup(&shim_real.munmap, "munmap");
	lookup(&shim_real.mprotect, "mprotect");
	lookup(&shim_real.mremap, "mremap");
	lookup(&shim_real.madvise, "madvise");
	lookup(&shim_real.shmat, "shmat");
	lookup(&shim_real.shmdt, "shmdt");
	lookup(&shim_real.ioctl, "ioctl");
	lookup(&shim_real.fork, "fork");
	lookup(&shim_real.fork_bare, "_Fork");
	lookup(&shim_real.execve, "execve");
	lookup(&shim_real.execvpe, "execvpe");
	lookup(&shim_real.execveat, "execveat");
	lookup(&shim_real.fexecve, "fexecve");
	lookup_version(&shim_real.posix_spawn, "posix_spawn", GLIBC_SPAWN);
	lookup_version(&shim_real.posix_spawnp, "posix_spawnp", GLIBC_SPAWN);
	lookup_version(&shim_real.posix_spawn_old, "posix_spawn", GLIBC_SPAWN_OLD);
	lookup_version(&shim_real.posix_spawnp_old, "posix_spawnp", GLIBC_SPAWN_OLD);
	lookup(&shim_real.sigaction, "sigaction");
	lookup(&shim_real.signal, "signal");
	lookup(&shim_real.sysv_signal, "sysv_signal");
	lookup(&shim_real.sigset, "sigset");
	lookup(&shim_real.setcanceltype, "pthread_setcanceltype");
	atomic_store(&resolved, true);
}
