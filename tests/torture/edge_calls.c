/* SPDX-License-Identifier: MIT */
/*
 * Edge-case arguments for every function the shim interposes: flags the
 * kernel rejects, lengths and offsets it refuses, the variadic argument of
 * mremap with each flag, the checks glibc makes before the system call
 * (fexecve's, execvp's), exit statuses out of range.  Each row calls the
 * function (raw false) or the system call it makes (raw true).
 */
#define _GNU_SOURCE
#include "edge_table.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define PAGE 4096UL

extern char **environ;

/* ---- mmap, mmap64 ---- */

static void *map(bool raw, void *addr, size_t len, int prot, int flags, int fd,
		 off_t off)
{
	return raw ? (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off)
		   : mmap(addr, len, prot, flags, fd, off);
}

static void map_anon_at(bool raw, size_t len, int flags, size_t slide)
{
	char *hint = edge_free_range(2) + slide;
	edge_said_ptr(map(raw, hint, len, PROT_READ | PROT_WRITE,
			  flags | MAP_ANONYMOUS, -1, 0), hint, NULL);
}

static void mmap_len0(bool raw, const char *bad)
{
	map_anon_at(raw, 0, MAP_PRIVATE, 0);
}

static void mmap_hint(bool raw, const char *bad)
{
	map_anon_at(raw, PAGE, MAP_PRIVATE, 0);
}

static void mmap_fixed_unaligned(bool raw, const char *bad)
{
	map_anon_at(raw, PAGE, MAP_PRIVATE | MAP_FIXED, 1);
}

static void mmap_no_type(bool raw, const char *bad)
{
	map_anon_at(raw, PAGE, 0, 0);
}

static void mmap_both_types(bool raw, const char *bad)
{
	map_anon_at(raw, PAGE, MAP_PRIVATE | MAP_SHARED, 0);
}

static void mmap_noreplace(bool raw, const char *bad)
{
	char *p = edge_anon(1);
	edge_said_ptr(map(raw, p, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS |
			  MAP_FIXED_NOREPLACE, -1, 0), p, NULL);
}

static void mmap_file(bool raw, off_t off, int fd)
{
	edge_said_ptr(map(raw, NULL, PAGE, PROT_READ, MAP_PRIVATE, fd, off), NULL,
		      NULL);
}

static void mmap_off_unaligned(bool raw, const char *bad)
{
	mmap_file(raw, 100, open("/dev/zero", O_RDONLY));
}

static void mmap_off_negative(bool raw, const char *bad)
{
	mmap_file(raw, -(off_t)PAGE, open("/dev/zero", O_RDONLY));
}

static void mmap_bad_fd(bool raw, const char *bad)
{
	mmap_file(raw, 0, 4000);
}

static void mmap_write_readonly_fd(bool raw, const char *bad)
{
	int fd = open("/dev/zero", O_RDONLY);
	edge_said_ptr(map(raw, NULL, PAGE, PROT_WRITE, MAP_SHARED, fd, 0), NULL,
		      NULL);
}

static void mmap64_hint(bool raw, const char *bad)
{
	char *hint = edge_free_range(1);
	void *r = raw ? (void *)syscall(SYS_mmap, hint, PAGE, PROT_READ,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
		      : mmap64(hint, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);
	edge_said_ptr(r, hint, NULL);
}

/* ---- munmap, mprotect, madvise ---- */

static long unmap(bool raw, void *addr, size_t len)
{
	return raw ? syscall(SYS_munmap, addr, len) : munmap(addr, len);
}

static void munmap_unaligned(bool raw, const char *bad)
{
	edge_said_int(unmap(raw, edge_anon(2) + 1, PAGE));
}

static void munmap_len0(bool raw, const char *bad)
{
	edge_said_int(unmap(raw, edge_anon(1), 0));
}

static void munmap_nothing(bool raw, const char *bad)
{
	edge_said_int(unmap(raw, edge_free_range(4), 4 * PAGE));
}

static void munmap_kernel(bool raw, const char *bad)
{
	edge_said_int(unmap(raw, (void *)0xffff800000000000UL, PAGE));
}

static long protect(bool raw, void *addr, size_t len, int prot)
{
	return raw ? syscall(SYS_mprotect, addr, len, prot)
		   : mprotect(addr, len, prot);
}

static void mprotect_unknown_bit(bool raw, const char *bad)
{
	edge_said_int(protect(raw, edge_anon(1), PAGE, PROT_READ | 0x100));
}

static void mprotect_nothing(bool raw, const char *bad)
{
	edge_said_int(protect(raw, edge_free_range(1), PAGE, PROT_READ));
}

static void mprotect_unaligned(bool raw, const char *bad)
{
	edge_said_int(protect(raw, edge_anon(1) + 8, PAGE, PROT_READ));
}

static void mprotect_grows_both(bool raw, const char *bad)
{
	edge_said_int(protect(raw, edge_anon(1), PAGE,
			      PROT_READ | PROT_GROWSDOWN | PROT_GROWSUP));
}

static long advise(bool raw, void *addr, size_t len, int advice)
{
	return raw ? syscall(SYS_madvise, addr, len, advice)
		   : madvise(addr, len, advice);
}

static void madvise_unknown(bool raw, const char *bad)
{
	edge_said_int(advise(raw, edge_anon(1), PAGE, 12345));
}

static void madvise_nothing(bool raw, const char *bad)
{
	edge_said_int(advise(raw, edge_free_range(1), PAGE, MADV_DONTNEED));
}

static void madvise_len0(bool raw, const char *bad)
{
	edge_said_int(advise(raw, edge_anon(1), 0, MADV_DONTNEED));
}

/* ---- mremap: the fifth argument, each flag ---- */

static void remap(bool raw, size_t old_len, size_t new_len, int flags,
		  size_t slide)
{
	char *old = edge_anon(1);
	char *want = edge_free_range(2) + slide;
	void *r = raw ? (void *)syscall(SYS_mremap, old, old_len, new_len, flags, want)
		      : mremap(old, old_len, new_len, flags, want);
	edge_said_ptr(r, want, old);
}

static void mremap_dontunmap(bool raw, const char *bad)
{
	remap(raw, PAGE, PAGE, MREMAP_MAYMOVE | MREMAP_DONTUNMAP, 0);
}

static void mremap_dontunmap_unaligned(bool raw, const char *bad)
{
	remap(raw, PAGE, PAGE, MREMAP_MAYMOVE | MREMAP_DONTUNMAP, 8);
}

static void mremap_dontunmap_grow(bool raw, const char *bad)
{
	remap(raw, PAGE, 2 * PAGE, MREMAP_MAYMOVE | MREMAP_DONTUNMAP, 0);
}

static void mremap_dontunmap_alone(bool raw, const char *bad)
{
	remap(raw, PAGE, PAGE, MREMAP_DONTUNMAP, 0);
}

static void mremap_fixed(bool raw, const char *bad)
{
	remap(raw, PAGE, PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, 0);
}

static void mremap_fixed_unaligned(bool raw, const char *bad)
{
	remap(raw, PAGE, PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, 8);
}

static void mremap_fixed_alone(bool raw, const char *bad)
{
	remap(raw, PAGE, PAGE, MREMAP_FIXED, 0);
}

static void mremap_fixed_dontunmap(bool raw, const char *bad)
{
	remap(raw, PAGE, PAGE, MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP, 0);
}

static void mremap_maymove_hint(bool raw, const char *bad)
{
	remap(raw, PAGE, 64 * PAGE, MREMAP_MAYMOVE, 0);
}

static void mremap_shrink_hint(bool raw, const char *bad)
{
	remap(raw, PAGE, PAGE / 2, 0, 0);
}

static void mremap_unknown_flag(bool raw, const char *bad)
{
	remap(raw, PAGE, PAGE, MREMAP_MAYMOVE | 8, 0);
}

static void mremap_negative_flags(bool raw, const char *bad)
{
	remap(raw, PAGE, PAGE, -1, 0);
}

static void mremap_len0(bool raw, const char *bad)
{
	remap(raw, PAGE, 0, MREMAP_MAYMOVE, 0);
}

/* ---- shmat, shmdt ---- */

static int segment(void)
{
	int id = shmget(IPC_PRIVATE, 2 * PAGE, IPC_CREAT | 0600);
	if (id < 0)
		_exit(120);
	return id;
}

static void attach(bool raw, int id, const char *at, int flags)
{
	void *r = raw ? (void *)syscall(SYS_shmat, id, at, flags) : shmat(id, at, flags);
	int err = errno;
	if (id >= 0)
		shmctl(id, IPC_RMID, NULL);
	errno = err;
	edge_said_ptr(r == (void *)-1 ? MAP_FAILED : r,
		      (const void *)((unsigned long)at & ~(SHMLBA - 1)), NULL);
}

static void shmat_bad_id(bool raw, const char *bad)
{
	attach(raw, -1, NULL, 0);
}

static void shmat_hint(bool raw, const char *bad)
{
	attach(raw, segment(), edge_free_range(2), SHM_RDONLY);
}

static void shmat_unaligned(bool raw, const char *bad)
{
	attach(raw, segment(), edge_free_range(2) + 8, 0);
}

static void shmat_unaligned_rnd(bool raw, const char *bad)
{
	attach(raw, segment(), edge_free_range(2) + 8, SHM_RND);
}

static void shmat_over_mapping(bool raw, const char *bad)
{
	attach(raw, segment(), edge_anon(2), 0);
}

static void shmat_remap_no_addr(bool raw, const char *bad)
{
	attach(raw, segment(), NULL, SHM_REMAP);
}

static void shmdt_not_attached(bool raw, const char *bad)
{
	char *p = edge_anon(1);
	edge_said_int(raw ? syscall(SYS_shmdt, p) : shmdt(p));
}

/* ---- fork, _Fork, _exit, _Exit ---- */

static void forked(bool raw, pid_t (*fn)(void))
{
	pid_t pid = raw ? (pid_t)syscall(SYS_fork) : fn();
	if (pid < 0) {
		edge_said_int(-1);
		return;
	}
	if (!pid && raw)
		syscall(SYS_exit_group, 3);
	if (!pid)
		_exit(3);
	int st;
	waitpid(pid, &st, 0);
	edge_said(WIFEXITED(st) && WEXITSTATUS(st) == 3 ? "a child that exits 3"
							 : "a child that failed");
}

static void fork_child(bool raw, const char *bad)
{
	forked(raw, fork);
}

static void fork_bare_child(bool raw, const char *bad)
{
	forked(raw, _Fork);
}

static void exit_263(bool raw, const char *bad)
{
	if (raw)
		syscall(SYS_exit_group, 263);
	_exit(263);
}

static void exit_negative(bool raw, const char *bad)
{
	if (raw)
		syscall(SYS_exit_group, -1);
	_Exit(-1);
}

/* ---- the exec family ---- */

/* NULL, where glibc's prototypes say it may not be: opaque to the compiler. */
static char **volatile null_vec;

static void execve_null_envp(bool raw, const char *bad)
{
	edge_said_int(raw ? edge_sys_execve(edge_self, edge_leaf_argv, NULL)
			  : execve(edge_self, edge_leaf_argv, NULL));
}

static void execve_null_argv(bool raw, const char *bad)
{
	edge_said_int(raw ? edge_sys_execve(edge_self, NULL, edge_leaf_envp)
			  : execve(edge_self, null_vec, edge_leaf_envp));
}

static void execve_not_executable(bool raw, const char *bad)
{
	edge_said_int(raw ? edge_sys_execve("/dev/null", edge_leaf_argv, environ)
			  : execve("/dev/null", edge_leaf_argv, environ));
}

static void execve_directory(bool raw, const char *bad)
{
	edge_said_int(raw ? edge_sys_execve("/", edge_leaf_argv, environ)
			  : execve("/", edge_leaf_argv, environ));
}

static void execve_empty_path(bool raw, const char *bad)
{
	edge_said_int(raw ? edge_sys_execve("", edge_leaf_argv, environ)
			  : execve("", edge_leaf_argv, environ));
}

static void execv_script(bool raw, const char *bad)
{
	edge_said_int(raw ? edge_sys_execve(edge_script, edge_leaf_argv, environ)
			  : execv(edge_script, edge_leaf_argv));
}

static void execvp_script(bool raw, const char *bad)
{
	edge_said_int(raw ? edge_sys_execve(edge_script, edge_leaf_argv, environ)
			  : execvp(edge_script, edge_leaf_argv));
}

static void execvp_empty(bool raw, const char *bad)
{
	edge_said_int(raw ? edge_sys_execve("", edge_leaf_argv, environ)
			  : execvp("", edge_leaf_argv));
}

static void execvp_long_name(bool raw, const char *bad)
{
	char name[NAME_MAX + 2];
	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	edge_said_int(raw ? edge_sys_execve(name, edge_leaf_argv, environ)
			  : execvp(name, edge_leaf_argv));
}

static void execvpe_not_found(bool raw, const char *bad)
{
	const char *name = "ptshare-edge-no-such-program";
	edge_said_int(raw ? edge_sys_execve(name, edge_leaf_argv, edge_leaf_envp)
			  : execvpe(name, edge_leaf_argv, edge_leaf_envp));
}

static void execl_leaf(bool raw, const char *bad)
{
	edge_said_int(raw ? edge_sys_execve(edge_self, edge_leaf_argv, environ)
			  : execl(edge_self, "edge_subject", "leaf", (char *)NULL));
}

static void execle_leaf(bool raw, const char *bad)
{
	edge_said_int(raw ? edge_sys_execve(edge_self, edge_leaf_argv, edge_leaf_envp)
			  : execle(edge_self, "edge_subject", "leaf", (char *)NULL,
			       edge_leaf_envp));
}

static void execlp_shell(bool raw, const char *bad)
{
	char *const argv[] = { "sh", "-c", "exit 5", NULL };
	edge_said_int(raw ? edge_sys_execve("/bin/sh", argv, environ)
			  : execlp("sh", "sh", "-c", "exit 5", (char *)NULL));
}

static void execveat_empty_path(bool raw, const char *bad)
{
	int fd = edge_self_fd();
	edge_said_int(raw ? edge_sys_execveat(fd, "", edge_leaf_argv, environ, AT_EMPTY_PATH)
			  : execveat(fd, "", edge_leaf_argv, environ, AT_EMPTY_PATH));
}

static void execveat_empty_no_flag(bool raw, const char *bad)
{
	int fd = edge_self_fd();
	edge_said_int(raw ? edge_sys_execveat(fd, "", edge_leaf_argv, environ, 0)
			  : execveat(fd, "", edge_leaf_argv, environ, 0));
}

static void execveat_unknown_flag(bool raw, const char *bad)
{
	edge_said_int(raw ? edge_sys_execveat(AT_FDCWD, edge_self, edge_leaf_argv, environ, 0x40000)
			  : execveat(AT_FDCWD, edge_self, edge_leaf_argv, environ, 0x40000));
}

static void execveat_bad_dirfd(bool raw, const char *bad)
{
	edge_said_int(raw ? edge_sys_execveat(4000, "leaf", edge_leaf_argv, environ, 0)
			  : execveat(4000, "leaf", edge_leaf_argv, environ, 0));
}

static void fexecve_leaf(bool raw, const char *bad)
{
	int fd = edge_self_fd();
	edge_said_int(raw ? edge_sys_execveat(fd, "", edge_leaf_argv, environ, AT_EMPTY_PATH)
			  : fexecve(fd, edge_leaf_argv, environ));
}

static void fexecve_null_envp(bool raw, const char *bad)
{
	int fd = edge_self_fd();
	edge_said_int(raw ? edge_sys_execveat(fd, "", edge_leaf_argv, NULL, AT_EMPTY_PATH)
			  : fexecve(fd, edge_leaf_argv, NULL));
}

static void fexecve_null_argv(bool raw, const char *bad)
{
	int fd = edge_self_fd();
	edge_said_int(raw ? edge_sys_execveat(fd, "", NULL, environ, AT_EMPTY_PATH)
			  : fexecve(fd, null_vec, environ));
}

static void fexecve_negative_fd(bool raw, const char *bad)
{
	edge_said_int(raw ? edge_sys_execveat(-1, "", edge_leaf_argv, environ, AT_EMPTY_PATH)
			  : fexecve(-1, edge_leaf_argv, environ));
}

/* ---- posix_spawn, posix_spawnp: no system call of their own ---- */

/* The versions that programs linked before glibc 2.15 call: they run a
 * file without #! with /bin/sh. */
typedef int spawn_fn(pid_t *, const char *, const posix_spawn_file_actions_t *,
		     const posix_spawnattr_t *, char *const[], char *const[]);
spawn_fn posix_spawn_old, posix_spawnp_old;
__asm__(".symver posix_spawn_old, posix_spawn@GLIBC_2.2.5");
__asm__(".symver posix_spawnp_old, posix_spawnp@GLIBC_2.2.5");

static void posix_spawn_leaf(bool raw, const char *bad)
{
	pid_t pid;
	edge_said_spawn(posix_spawn(&pid, edge_self, NULL, NULL, edge_leaf_argv, environ), &pid);
}

static void posix_spawn_null_envp(bool raw, const char *bad)
{
	pid_t pid;
	edge_said_spawn(posix_spawn(&pid, edge_self, NULL, NULL, edge_leaf_argv, NULL), &pid);
}

static void posix_spawn_not_found(bool raw, const char *bad)
{
	pid_t pid;
	edge_said_spawn(posix_spawn(&pid, "/nonexistent/leaf", NULL, NULL, edge_leaf_argv,
			    environ), &pid);
}

static void posix_spawn_script(bool raw, const char *bad)
{
	pid_t pid;
	edge_said_spawn(posix_spawn(&pid, edge_script, NULL, NULL, edge_leaf_argv, environ),
		&pid);
}

static void posix_spawn_old_script(bool raw, const char *bad)
{
	pid_t pid;
	edge_said_spawn(posix_spawn_old(&pid, edge_script, NULL, NULL, edge_leaf_argv,
					environ), &pid);
}

static void posix_spawnp_old_script(bool raw, const char *bad)
{
	pid_t pid;
	edge_said_spawn(posix_spawnp_old(&pid, edge_script, NULL, NULL, edge_leaf_argv,
					 environ), &pid);
}

static void posix_spawnp_empty(bool raw, const char *bad)
{
	pid_t pid;
	edge_said_spawn(posix_spawnp(&pid, "", NULL, NULL, edge_leaf_argv, environ), &pid);
}

static void posix_spawnp_shell(bool raw, const char *bad)
{
	char *const argv[] = { "sh", "-c", "exit 6", NULL };
	pid_t pid;
	edge_said_spawn(posix_spawnp(&pid, "sh", NULL, NULL, argv, environ), &pid);
}

const struct edge_row edge_calls[] = {
	{ "mmap of length 0", mmap_len0, 0 },
	{ "mmap at a free hint", mmap_hint, 0 },
	{ "mmap MAP_FIXED at an unaligned address", mmap_fixed_unaligned, 0 },
	{ "mmap without MAP_PRIVATE or MAP_SHARED", mmap_no_type, 0 },
	{ "mmap MAP_PRIVATE|MAP_SHARED", mmap_both_types, 0 },
	{ "mmap MAP_FIXED_NOREPLACE over a mapping", mmap_noreplace, 0 },
	{ "mmap at an unaligned offset", mmap_off_unaligned, 0 },
	{ "mmap at a negative offset", mmap_off_negative, 0 },
	{ "mmap of an fd not open", mmap_bad_fd, 0 },
	{ "mmap MAP_SHARED writable of a read-only fd", mmap_write_readonly_fd, 0 },
	{ "mmap64 at a free hint", mmap64_hint, 0 },
	{ "munmap at an unaligned address", munmap_unaligned, 0 },
	{ "munmap of length 0", munmap_len0, 0 },
	{ "munmap where nothing is mapped", munmap_nothing, 0 },
	{ "munmap of a kernel address", munmap_kernel, 0 },
	{ "mprotect with an unknown bit", mprotect_unknown_bit, 0 },
	{ "mprotect where nothing is mapped", mprotect_nothing, 0 },
	{ "mprotect at an unaligned address", mprotect_unaligned, 0 },
	{ "mprotect PROT_GROWSDOWN|PROT_GROWSUP", mprotect_grows_both, 0 },
	{ "madvise with an unknown advice", madvise_unknown, 0 },
	{ "madvise where nothing is mapped", madvise_nothing, 0 },
	{ "madvise of length 0", madvise_len0, 0 },
	{ "mremap MREMAP_DONTUNMAP to a free hint", mremap_dontunmap, 0 },
	{ "mremap MREMAP_DONTUNMAP to an unaligned hint", mremap_dontunmap_unaligned, 0 },
	{ "mremap MREMAP_DONTUNMAP growing", mremap_dontunmap_grow, 0 },
	{ "mremap MREMAP_DONTUNMAP without MREMAP_MAYMOVE", mremap_dontunmap_alone, 0 },
	{ "mremap MREMAP_FIXED to a free address", mremap_fixed, 0 },
	{ "mremap MREMAP_FIXED to an unaligned address", mremap_fixed_unaligned, 0 },
	{ "mremap MREMAP_FIXED without MREMAP_MAYMOVE", mremap_fixed_alone, 0 },
	{ "mremap MREMAP_FIXED|MREMAP_DONTUNMAP", mremap_fixed_dontunmap, 0 },
	{ "mremap MREMAP_MAYMOVE with a fifth argument", mremap_maymove_hint, 0 },
	{ "mremap shrinking with a fifth argument", mremap_shrink_hint, 0 },
	{ "mremap with an unknown flag", mremap_unknown_flag, 0 },
	{ "mremap with flags -1", mremap_negative_flags, 0 },
	{ "mremap to length 0", mremap_len0, 0 },
	{ "shmat of a bad id", shmat_bad_id, 0 },
	{ "shmat read-only at a free address", shmat_hint, 0 },
	{ "shmat at an unaligned address", shmat_unaligned, 0 },
	{ "shmat SHM_RND at an unaligned address", shmat_unaligned_rnd, 0 },
	{ "shmat over a mapping", shmat_over_mapping, 0 },
	{ "shmat SHM_REMAP without an address", shmat_remap_no_addr, 0 },
	{ "shmdt of memory not attached", shmdt_not_attached, 0 },
	{ "fork", fork_child, 0 },
	{ "_Fork", fork_bare_child, 0 },
	{ "_exit(263)", exit_263, 0 },
	{ "_Exit(-1)", exit_negative, 0 },
	{ "execve with a NULL envp", execve_null_envp, 0 },
	{ "execve with a NULL argv", execve_null_argv, 0 },
	{ "execve of /dev/null", execve_not_executable, 0 },
	{ "execve of a directory", execve_directory, 0 },
	{ "execve of \"\"", execve_empty_path, 0 },
	{ "execv of a script without #!", execv_script, 0 },
	{ "execvp of a script without #!", execvp_script, 0 },
	{ "execvp of \"\"", execvp_empty, 0 },
	{ "execvp of a name longer than NAME_MAX", execvp_long_name, 0 },
	{ "execvpe of a name PATH does not have", execvpe_not_found, 0 },
	{ "execl", execl_leaf, 0 },
	{ "execle", execle_leaf, 0 },
	{ "execlp of sh", execlp_shell, 0 },
	{ "execveat AT_EMPTY_PATH", execveat_empty_path, 0 },
	{ "execveat of \"\" without AT_EMPTY_PATH", execveat_empty_no_flag, 0 },
	{ "execveat with an unknown flag", execveat_unknown_flag, 0 },
	{ "execveat from an fd not open", execveat_bad_dirfd, 0 },
	{ "fexecve", fexecve_leaf, 0 },
	{ "fexecve with a NULL envp", fexecve_null_envp, 0 },
	{ "fexecve with a NULL argv", fexecve_null_argv, 0 },
	{ "fexecve of fd -1", fexecve_negative_fd, 0 },
	{ "posix_spawn", posix_spawn_leaf, EDGE_NO_RAW },
	{ "posix_spawn with a NULL envp", posix_spawn_null_envp, EDGE_NO_RAW },
	{ "posix_spawn of a path that does not exist", posix_spawn_not_found, EDGE_NO_RAW },
	{ "posix_spawn of a script without #!", posix_spawn_script, EDGE_NO_RAW },
	{ "posix_spawn@GLIBC_2.2.5 of a script without #!", posix_spawn_old_script,
	  EDGE_NO_RAW },
	{ "posix_spawnp@GLIBC_2.2.5 of a script without #!", posix_spawnp_old_script,
	  EDGE_NO_RAW },
	{ "posix_spawnp of \"\"", posix_spawnp_empty, EDGE_NO_RAW },
	{ "posix_spawnp of sh", posix_spawnp_shell, EDGE_NO_RAW },
	{ NULL, NULL, 0 },
};
