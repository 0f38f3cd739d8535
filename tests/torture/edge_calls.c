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

static void exec_said(long r)
{
	edge_said_int(r);
}

static long sys_execve(const char *path, char *const argv[], char *const envp[])
{
	return syscall(SYS_execve, path, argv, envp);
}

static long sys_execveat(int fd, const char *path, char *const argv[],
			 char *const envp[], int flags)
{
	return syscall(SYS_execveat, fd, path, argv, envp, flags);
}

static void execve_null_envp(bool raw, const char *bad)
{
	exec_said(raw ? sys_execve(edge_self, edge_leaf_argv, NULL)
		      : execve(edge_self, edge_leaf_argv, NULL));
}

static void execve_null_argv(bool raw, const char *bad)
{
	exec_said(raw ? sys_execve(edge_self, NULL, edge_leaf_envp)
		      : execve(edge_self, null_vec, edge_leaf_envp));
}

static void execve_not_executable(bool raw, const char *bad)
{
	exec_said(raw ? sys_execve("/dev/null", edge_leaf_argv, environ)
		      : execve("/dev/null", edge_leaf_argv, environ));
}

static void execve_directory(bool raw, const char *bad)
{
	exec_said(raw ? sys_execve("/", edge_leaf_argv, environ)
		      : execve("/", edge_leaf_argv, environ));
}

static void execve_empty_path(bool raw, const char *bad)
{
	exec_said(raw ? sys_execve("", edge_leaf_argv, environ)
		      : execve("", edge_leaf_argv, environ));
}

static void execv_script(bool raw, const char *bad)
{
	exec_said(raw ? sys_execve(edge_script, edge_leaf_argv, environ)
		      : execv(edge_script, edge_leaf_argv));
}

static void execvp_script(bool raw, const char *bad)
{
	exec_said(raw ? sys_execve(edge_script, edge_leaf_argv, environ)
		      : execvp(edge_script, edge_leaf_argv));
}

static void execvp_empty(bool raw, const char *bad)
{
	exec_said(raw ? sys_execve("", edge_leaf_argv, environ)
		      : execvp("", edge_leaf_argv));
}

static void execvp_long_name(bool raw, const char *bad)
{
	char name[NAME_MAX + 2];
	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	exec_said(raw ? sys_execve(name, edge_leaf_argv, environ)
		      : execvp(name, edge_leaf_argv));
}

static void execvpe_not_found(bool raw, const char *bad)
{
	const char *name = "ptshare-edge-no-such-program";
	exec_said(raw ? sys_execve(name, edge_leaf_argv, edge_leaf_envp)
		      : execvpe(name, edge_leaf_argv, edge_leaf_envp));
}

static void execl_leaf(bool raw, const char *bad)
{
	exec_said(raw ? sys_execve(edge_self, edge_leaf_argv, environ)
		      : execl(edge_self, "edge_subject", "leaf", (char *)NULL));
}

static void execle_leaf(bool raw, const char *bad)
{
	exec_said(raw ? sys_execve(edge_self, edge_leaf_argv, edge_leaf_envp)
		      : execle(edge_self, "edge_subject", "leaf", (char *)NULL,
			       edge_leaf_envp));
}

static void execlp_shell(bool raw, const char *bad)
{
	char *const argv[] = { "sh", "-c", "exit 5", NULL };
	exec_said(raw ? sys_execve("/bin/sh", argv, environ)
		      : execlp("sh", "sh", "-c", "exit 5", (char *)NULL));
}

static void execveat_empty_path(bool raw, const char *bad)
{
	int fd = edge_self_fd();
	exec_said(raw ? sys_execveat(fd, "", edge_leaf_argv, environ, AT_EMPTY_PATH)
		      : execveat(fd, "", edge_leaf_argv, environ, AT_EMPTY_PATH));
}

static void execveat_empty_no_flag(bool raw, const char *bad)
{
	int fd = edge_self_fd();
	exec_said(raw ? sys_execveat(fd, "", edge_leaf_argv, environ, 0)
		      : execveat(fd, "", edge_leaf_argv, environ, 0));
}

static void execveat_unknown_flag(bool raw, const char *bad)
{
	exec_said(raw ? sys_execveat(AT_FDCWD, edge_self, edge_leaf_argv, environ, 0x40000)
		      : execveat(AT_FDCWD, edge_self, edge_leaf_argv, environ, 0x40000));
}

static void execveat_bad_dirfd(bool raw, const char *bad)
{
	exec_said(raw ? sys_execveat(4000, "leaf", edge_leaf_argv, environ, 0)
		      : execveat(4000, "leaf", edge_leaf_argv, environ, 0));
}

static void fexecve_leaf(bool raw, const char *bad)
{
	int fd = edge_self_fd();
	exec_said(raw ? sys_execveat(fd, "", edge_leaf_argv, environ, AT_EMPTY_PATH)
		      : fexecve(fd, edge_leaf_argv, environ));
}

static void fexecve_null_envp(bool raw, const char *bad)
{
	int fd = edge_self_fd();
	exec_said(raw ? sys_execveat(fd, "", edge_leaf_argv, NULL, AT_EMPTY_PATH)
		      : fexecve(fd, edge_leaf_argv, NULL));
}

static void fexecve_null_argv(bool raw, const char *bad)
{
	int fd = edge_self_fd();
	exec_said(raw ? sys_execveat(fd, "", NULL, environ, AT_EMPTY_PATH)
		      : fexecve(fd, null_vec, environ));
}

static void fexecve_negative_fd(bool raw, const char *bad)
{
	exec_said(raw ? sys_execveat(-1, "", edge_leaf_argv, environ, AT_EMPTY_PATH)
		      : fexecve(-1, edge_leaf_argv, environ));
}

/* ---- posix_spawn, posix_spawnp: no system call of their own ---- */

static void spawned(int err, const pid_t *pid)
{
	char line[64];
	int st;
	if (err) {
		edge_said_err(err);
		return;
	}
	waitpid(*pid, &st, 0);
	snprintf(line, sizeof(line), "0, a child that exits %d",
		 WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	edge_said(line);
}

static void posix_spawn_leaf(bool raw, const char *bad)
{
	pid_t pid;
	spawned(posix_spawn(&pid, edge_self, NULL, NULL, edge_leaf_argv, environ), &pid);
}

static void posix_spawn_null_envp(bool raw, const char *bad)
{
	pid_t pid;
	spawned(posix_spawn(&pid, edge_self, NULL, NULL, edge_leaf_argv, NULL), &pid);
}

static void posix_spawn_not_found(bool raw, const char *bad)
{
	pid_t pid;
	spawned(posix_spawn(&pid, "/nonexistent/leaf", NULL, NULL, edge_leaf_argv,
			    environ), &pid);
}

static void posix_spawn_script(bool raw, const char *bad)
{
	pid_t pid;
	spawned(posix_spawn(&pid, edge_script, NULL, NULL, edge_leaf_argv, environ),
		&pid);
}

static void posix_spawnp_empty(bool raw, const char *bad)
{
	pid_t pid;
	spawned(posix_spawnp(&pid, "", NULL, NULL, edge_leaf_argv, environ), &pid);
}

static void posix_spawnp_shell(bool raw, const char *bad)
{
	char *const argv[] = { "sh", "-c", "exit 6", NULL };
	pid_t pid;
	spawned(posix_spawnp(&pid, "sh", NULL, NULL, argv, environ), &pid);
}

const struct edge_row edge_calls[] = {
	{ .name = "mmap of length 0", .call = mmap_len0 },
	{ .name = "mmap at a free hint", .call = mmap_hint },
	{ .name = "mmap MAP_FIXED at an unaligned address", .call = mmap_fixed_unaligned },
	{ .name = "mmap without MAP_PRIVATE or MAP_SHARED", .call = mmap_no_type },
	{ .name = "mmap MAP_PRIVATE|MAP_SHARED", .call = mmap_both_types },
	{ .name = "mmap MAP_FIXED_NOREPLACE over a mapping", .call = mmap_noreplace },
	{ .name = "mmap at an unaligned offset", .call = mmap_off_unaligned },
	{ .name = "mmap at a negative offset", .call = mmap_off_negative },
	{ .name = "mmap of an fd not open", .call = mmap_bad_fd },
	{ .name = "mmap MAP_SHARED writable of a read-only fd", .call = mmap_write_readonly_fd },
	{ .name = "mmap64 at a free hint", .call = mmap64_hint },
	{ .name = "munmap at an unaligned address", .call = munmap_unaligned },
	{ .name = "munmap of length 0", .call = munmap_len0 },
	{ .name = "munmap where nothing is mapped", .call = munmap_nothing },
	{ .name = "munmap of a kernel address", .call = munmap_kernel },
	{ .name = "mprotect with an unknown bit", .call = mprotect_unknown_bit },
	{ .name = "mprotect where nothing is mapped", .call = mprotect_nothing },
	{ .name = "mprotect at an unaligned address", .call = mprotect_unaligned },
	{ .name = "mprotect PROT_GROWSDOWN|PROT_GROWSUP", .call = mprotect_grows_both },
	{ .name = "madvise with an unknown advice", .call = madvise_unknown },
	{ .name = "madvise where nothing is mapped", .call = madvise_nothing },
	{ .name = "madvise of length 0", .call = madvise_len0 },
	{ .name = "mremap MREMAP_DONTUNMAP to a free hint", .call = mremap_dontunmap },
	{ .name = "mremap MREMAP_DONTUNMAP to an unaligned hint", .call = mremap_dontunmap_unaligned },
	{ .name = "mremap MREMAP_DONTUNMAP growing", .call = mremap_dontunmap_grow },
	{ .name = "mremap MREMAP_DONTUNMAP without MREMAP_MAYMOVE", .call = mremap_dontunmap_alone },
	{ .name = "mremap MREMAP_FIXED to a free address", .call = mremap_fixed },
	{ .name = "mremap MREMAP_FIXED to an unaligned address", .call = mremap_fixed_unaligned },
	{ .name = "mremap MREMAP_FIXED without MREMAP_MAYMOVE", .call = mremap_fixed_alone },
	{ .name = "mremap MREMAP_FIXED|MREMAP_DONTUNMAP", .call = mremap_fixed_dontunmap },
	{ .name = "mremap MREMAP_MAYMOVE with a fifth argument", .call = mremap_maymove_hint },
	{ .name = "mremap shrinking with a fifth argument", .call = mremap_shrink_hint },
	{ .name = "mremap with an unknown flag", .call = mremap_unknown_flag },
	{ .name = "mremap with flags -1", .call = mremap_negative_flags },
	{ .name = "mremap to length 0", .call = mremap_len0 },
	{ .name = "shmat of a bad id", .call = shmat_bad_id },
	{ .name = "shmat read-only at a free address", .call = shmat_hint },
	{ .name = "shmat at an unaligned address", .call = shmat_unaligned },
	{ .name = "shmat SHM_RND at an unaligned address", .call = shmat_unaligned_rnd },
	{ .name = "shmat over a mapping", .call = shmat_over_mapping },
	{ .name = "shmat SHM_REMAP without an address", .call = shmat_remap_no_addr },
	{ .name = "shmdt of memory not attached", .call = shmdt_not_attached },
	{ .name = "fork", .call = fork_child },
	{ .name = "_Fork", .call = fork_bare_child },
	{ .name = "_exit(263)", .call = exit_263 },
	{ .name = "_Exit(-1)", .call = exit_negative },
	{ .name = "execve with a NULL envp", .call = execve_null_envp },
	{ .name = "execve with a NULL argv", .call = execve_null_argv },
	{ .name = "execve of /dev/null", .call = execve_not_executable },
	{ .name = "execve of a directory", .call = execve_directory },
	{ .name = "execve of \"\"", .call = execve_empty_path },
	{ .name = "execv of a script without #!", .call = execv_script },
	{ .name = "execvp of a script without #!", .call = execvp_script },
	{ .name = "execvp of \"\"", .call = execvp_empty },
	{ .name = "execvp of a name longer than NAME_MAX", .call = execvp_long_name },
	{ .name = "execvpe of a name PATH does not have", .call = execvpe_not_found },
	{ .name = "execl", .call = execl_leaf },
	{ .name = "execle", .call = execle_leaf },
	{ .name = "execlp of sh", .call = execlp_shell },
	{ .name = "execveat AT_EMPTY_PATH", .call = execveat_empty_path },
	{ .name = "execveat of \"\" without AT_EMPTY_PATH", .call = execveat_empty_no_flag },
	{ .name = "execveat with an unknown flag", .call = execveat_unknown_flag },
	{ .name = "execveat from an fd not open", .call = execveat_bad_dirfd },
	{ .name = "fexecve", .call = fexecve_leaf },
	{ .name = "fexecve with a NULL envp", .call = fexecve_null_envp },
	{ .name = "fexecve with a NULL argv", .call = fexecve_null_argv },
	{ .name = "fexecve of fd -1", .call = fexecve_negative_fd },
	{ .name = "posix_spawn", .call = posix_spawn_leaf, .no_raw = true },
	{ .name = "posix_spawn with a NULL envp", .call = posix_spawn_null_envp, .no_raw = true },
	{ .name = "posix_spawn of a path that does not exist", .call = posix_spawn_not_found, .no_raw = true },
	{ .name = "posix_spawn of a script without #!", .call = posix_spawn_script, .no_raw = true },
	{ "posix_spawnp of \"\"", posix_spawnp_empty, .no_raw = true },
	{ .name = "posix_spawnp of sh", .call = posix_spawnp_shell, .no_raw = true },
	{ .name = NULL },
};
