/* SPDX-License-Identifier: MIT */
/*
 * Bad pointers in every pointer argument of every function the shim
 * interposes: a PROT_NONE page, an unmapped one, and strings and arrays
 * of pointers that run into such a page.  The kernel answers EFAULT (or
 * whatever it finds first); where glibc itself reads the pointer (execvp's
 * file, posix_spawn's pid), the program crashes, and must crash the same
 * way traced.
 */
#define _GNU_SOURCE
#include "edge_table.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define PAGE 4096UL

extern char **environ;

/* text without its NUL, ending where bad begins. */
static char *string_into(const char *bad, const char *text)
{
	char *s = (char *)bad - strlen(text);
	memcpy(s, text, strlen(text));
	return s;
}

/* An environment whose array runs into bad before its NULL. */
static char **array_into(const char *bad)
{
	char **v = (char **)bad - 2;
	v[0] = "A=1";
	v[1] = "B=2";
	return v;
}

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

static void execve_path(bool raw, const char *bad)
{
	exec_said(raw ? sys_execve(bad, edge_leaf_argv, environ)
		      : execve(bad, edge_leaf_argv, environ));
}

static void execve_path_into(bool raw, const char *bad)
{
	const char *path = string_into(bad, edge_self);
	exec_said(raw ? sys_execve(path, edge_leaf_argv, environ)
		      : execve(path, edge_leaf_argv, environ));
}

static void execve_argv(bool raw, const char *bad)
{
	exec_said(raw ? sys_execve(edge_self, (char **)bad, environ)
		      : execve(edge_self, (char **)bad, environ));
}

static void execve_envp(bool raw, const char *bad)
{
	exec_said(raw ? sys_execve(edge_self, edge_leaf_argv, (char **)bad)
		      : execve(edge_self, edge_leaf_argv, (char **)bad));
}

static void execve_envp_string(bool raw, const char *bad)
{
	char *envp[] = { "A=1", (char *)bad, NULL };
	exec_said(raw ? sys_execve(edge_self, edge_leaf_argv, envp)
		      : execve(edge_self, edge_leaf_argv, envp));
}

static void execve_preload_into(bool raw, const char *bad)
{
	char *envp[] = { string_into(bad, "LD_PRELOAD=/lib/libnothing.so"), NULL };
	exec_said(raw ? sys_execve(edge_self, edge_leaf_argv, envp)
		      : execve(edge_self, edge_leaf_argv, envp));
}

static void execve_envp_into(bool raw, const char *bad)
{
	char **envp = array_into(bad);
	exec_said(raw ? sys_execve(edge_self, edge_leaf_argv, envp)
		      : execve(edge_self, edge_leaf_argv, envp));
}

static void execve_missing_envp(bool raw, const char *bad)
{
	exec_said(raw ? sys_execve("/nonexistent/leaf", edge_leaf_argv, (char **)bad)
		      : execve("/nonexistent/leaf", edge_leaf_argv, (char **)bad));
}

static void execv_path(bool raw, const char *bad)
{
	exec_said(raw ? sys_execve(bad, edge_leaf_argv, environ)
		      : execv(bad, edge_leaf_argv));
}

static void execv_argv(bool raw, const char *bad)
{
	exec_said(raw ? sys_execve(edge_self, (char **)bad, environ)
		      : execv(edge_self, (char **)bad));
}

static void execvp_file(bool raw, const char *bad)
{
	exec_said(raw ? sys_execve(bad, edge_leaf_argv, environ)
		      : execvp(bad, edge_leaf_argv));
}

static void execvpe_envp(bool raw, const char *bad)
{
	exec_said(raw ? sys_execve(edge_self, edge_leaf_argv, (char **)bad)
		      : execvpe(edge_self, edge_leaf_argv, (char **)bad));
}

static void execl_path(bool raw, const char *bad)
{
	exec_said(raw ? sys_execve(bad, edge_leaf_argv, environ)
		      : execl(bad, "edge_subject", "leaf", (char *)NULL));
}

static void execlp_file(bool raw, const char *bad)
{
	exec_said(raw ? sys_execve(bad, edge_leaf_argv, environ)
		      : execlp(bad, "edge_subject", "leaf", (char *)NULL));
}

static void execle_envp(bool raw, const char *bad)
{
	exec_said(raw ? sys_execve(edge_self, edge_leaf_argv, (char **)bad)
		      : execle(edge_self, "edge_subject", "leaf", (char *)NULL,
			       (char **)bad));
}

static void execveat_path(bool raw, const char *bad)
{
	exec_said(raw ? sys_execveat(AT_FDCWD, bad, edge_leaf_argv, environ, 0)
		      : execveat(AT_FDCWD, bad, edge_leaf_argv, environ, 0));
}

static void execveat_path_empty_flag(bool raw, const char *bad)
{
	int fd = edge_self_fd();
	exec_said(raw ? sys_execveat(fd, bad, edge_leaf_argv, environ, AT_EMPTY_PATH)
		      : execveat(fd, bad, edge_leaf_argv, environ, AT_EMPTY_PATH));
}

static void execveat_envp(bool raw, const char *bad)
{
	int fd = edge_self_fd();
	exec_said(raw ? sys_execveat(fd, "", edge_leaf_argv, (char **)bad, AT_EMPTY_PATH)
		      : execveat(fd, "", edge_leaf_argv, (char **)bad, AT_EMPTY_PATH));
}

static void fexecve_envp(bool raw, const char *bad)
{
	int fd = edge_self_fd();
	exec_said(raw ? sys_execveat(fd, "", edge_leaf_argv, (char **)bad, AT_EMPTY_PATH)
		      : fexecve(fd, edge_leaf_argv, (char **)bad));
}

static void fexecve_argv(bool raw, const char *bad)
{
	int fd = edge_self_fd();
	exec_said(raw ? sys_execveat(fd, "", (char **)bad, environ, AT_EMPTY_PATH)
		      : fexecve(fd, (char **)bad, environ));
}

static void spawned(int err, const pid_t *pid)
{
	char line[64];
	int st;
	if (err) {
		edge_said_err(err);
		return;
	}
	waitpid(*pid, &st, 0);
	snprintf(line, sizeof(line), "0, a child that %s %d",
		 WIFEXITED(st) ? "exits" : "is killed by",
		 WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	edge_said(line);
}

static void posix_spawn_envp(bool raw, const char *bad)
{
	pid_t pid;
	spawned(posix_spawn(&pid, edge_self, NULL, NULL, edge_leaf_argv,
			    (char **)bad), &pid);
}

static void posix_spawn_envp_string(bool raw, const char *bad)
{
	char *envp[] = { (char *)bad, NULL };
	pid_t pid;
	spawned(posix_spawn(&pid, edge_self, NULL, NULL, edge_leaf_argv, envp), &pid);
}

static void posix_spawn_envp_into(bool raw, const char *bad)
{
	pid_t pid;
	spawned(posix_spawn(&pid, edge_self, NULL, NULL, edge_leaf_argv,
			    array_into(bad)), &pid);
}

static void posix_spawn_path(bool raw, const char *bad)
{
	pid_t pid;
	spawned(posix_spawn(&pid, bad, NULL, NULL, edge_leaf_argv, environ), &pid);
}

static void posix_spawn_pid(bool raw, const char *bad)
{
	spawned(posix_spawn((pid_t *)bad, edge_self, NULL, NULL, edge_leaf_argv,
			    environ), (const pid_t *)bad);
}

static void posix_spawn_argv(bool raw, const char *bad)
{
	pid_t pid;
	spawned(posix_spawn(&pid, edge_self, NULL, NULL, (char **)bad, environ), &pid);
}

static void posix_spawn_actions(bool raw, const char *bad)
{
	pid_t pid;
	spawned(posix_spawn(&pid, edge_self, (posix_spawn_file_actions_t *)bad, NULL,
			    edge_leaf_argv, environ), &pid);
}

static void posix_spawn_attr(bool raw, const char *bad)
{
	pid_t pid;
	spawned(posix_spawn(&pid, edge_self, NULL, (posix_spawnattr_t *)bad,
			    edge_leaf_argv, environ), &pid);
}

static void posix_spawnp_file(bool raw, const char *bad)
{
	pid_t pid;
	spawned(posix_spawnp(&pid, bad, NULL, NULL, edge_leaf_argv, environ), &pid);
}

static void posix_spawnp_envp(bool raw, const char *bad)
{
	pid_t pid;
	spawned(posix_spawnp(&pid, edge_self, NULL, NULL, edge_leaf_argv,
			     (char **)bad), &pid);
}

/* ---- the memory calls: addresses, never read ---- */

static void *map(bool raw, const char *at, int flags)
{
	return raw ? (void *)syscall(SYS_mmap, at, PAGE, PROT_READ,
				     flags | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
		   : mmap((void *)at, PAGE, PROT_READ, flags | MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);
}

static void mmap_hint(bool raw, const char *bad)
{
	edge_said_ptr(map(raw, bad, 0), bad, NULL);
}

static void mmap_fixed(bool raw, const char *bad)
{
	edge_said_ptr(map(raw, bad, MAP_FIXED), bad, NULL);
}

static void munmap_bad(bool raw, const char *bad)
{
	edge_said_int(raw ? syscall(SYS_munmap, bad, PAGE) : munmap((void *)bad, PAGE));
}

static void mprotect_bad(bool raw, const char *bad)
{
	edge_said_int(raw ? syscall(SYS_mprotect, bad, PAGE, PROT_READ)
			  : mprotect((void *)bad, PAGE, PROT_READ));
}

static void madvise_bad(bool raw, const char *bad)
{
	edge_said_int(raw ? syscall(SYS_madvise, bad, PAGE, MADV_DONTNEED)
			  : madvise((void *)bad, PAGE, MADV_DONTNEED));
}

static void mremap_old(bool raw, const char *bad)
{
	void *r = raw ? (void *)syscall(SYS_mremap, bad, PAGE, 2 * PAGE, MREMAP_MAYMOVE)
		      : mremap((void *)bad, PAGE, 2 * PAGE, MREMAP_MAYMOVE);
	edge_said_ptr(r, NULL, bad);
}

/* From the readable page before bad: nothing else may land in the hole. */
static void mremap_to(bool raw, const char *bad)
{
	char *old = (char *)bad - PAGE;
	int flags = MREMAP_MAYMOVE | MREMAP_FIXED;
	void *r = raw ? (void *)syscall(SYS_mremap, old, PAGE, PAGE, flags, bad)
		      : mremap(old, PAGE, PAGE, flags, bad);
	edge_said_ptr(r, bad, old);
}

static void shmat_bad(bool raw, const char *bad)
{
	int id = shmget(IPC_PRIVATE, PAGE, IPC_CREAT | 0600);
	void *r = raw ? (void *)syscall(SYS_shmat, id, bad, 0) : shmat(id, bad, 0);
	int err = errno;
	shmctl(id, IPC_RMID, NULL);
	errno = err;
	edge_said_ptr(r == (void *)-1 ? MAP_FAILED : r, bad, NULL);
}

static void shmdt_bad(bool raw, const char *bad)
{
	edge_said_int(raw ? syscall(SYS_shmdt, bad) : shmdt(bad));
}

#define BAD .bad_pointer = true

const struct edge_row edge_bad_ptrs[] = {
	{ .name = "execve, path", .call = execve_path, BAD },
	{ .name = "execve, path running into the page", .call = execve_path_into, BAD },
	{ .name = "execve, argv", .call = execve_argv, BAD },
	{ .name = "execve, envp", .call = execve_envp, BAD },
	{ .name = "execve, a string of envp", .call = execve_envp_string, BAD },
	{ .name = "execve, LD_PRELOAD running into the page", .call = execve_preload_into, BAD },
	{ .name = "execve, envp running into the page", .call = execve_envp_into, BAD },
	{ .name = "execve of no file, envp", .call = execve_missing_envp, BAD },
	{ .name = "execv, path", .call = execv_path, BAD },
	{ .name = "execv, argv", .call = execv_argv, BAD },
	{ .name = "execvp, file", .call = execvp_file, BAD },
	{ .name = "execvpe, envp", .call = execvpe_envp, BAD },
	{ .name = "execl, path", .call = execl_path, BAD },
	{ .name = "execlp, file", .call = execlp_file, BAD },
	{ .name = "execle, envp", .call = execle_envp, BAD },
	{ .name = "execveat, path", .call = execveat_path, BAD },
	{ .name = "execveat AT_EMPTY_PATH, path", .call = execveat_path_empty_flag, BAD },
	{ .name = "execveat, envp", .call = execveat_envp, BAD },
	{ .name = "fexecve, envp", .call = fexecve_envp, BAD },
	{ .name = "fexecve, argv", .call = fexecve_argv, BAD },
	{ .name = "posix_spawn, envp", .call = posix_spawn_envp, BAD, .no_raw = true },
	{ .name = "posix_spawn, a string of envp", .call = posix_spawn_envp_string, BAD, .no_raw = true },
	{ .name = "posix_spawn, envp running into the page", .call = posix_spawn_envp_into, BAD, .no_raw = true },
	{ .name = "posix_spawn, path", .call = posix_spawn_path, BAD, .no_raw = true },
	{ .name = "posix_spawn, pid", .call = posix_spawn_pid, BAD, .no_raw = true },
	{ .name = "posix_spawn, argv", .call = posix_spawn_argv, BAD, .no_raw = true },
	{ .name = "posix_spawn, file actions", .call = posix_spawn_actions, BAD, .no_raw = true },
	{ .name = "posix_spawn, attributes", .call = posix_spawn_attr, BAD, .no_raw = true },
	{ .name = "posix_spawnp, file", .call = posix_spawnp_file, BAD, .no_raw = true },
	{ .name = "posix_spawnp, envp", .call = posix_spawnp_envp, BAD, .no_raw = true },
	{ .name = "mmap, hint", .call = mmap_hint, BAD },
	{ .name = "mmap MAP_FIXED, address", .call = mmap_fixed, BAD },
	{ .name = "munmap", .call = munmap_bad, BAD },
	{ .name = "mprotect", .call = mprotect_bad, BAD },
	{ .name = "madvise", .call = madvise_bad, BAD },
	{ .name = "mremap, old address", .call = mremap_old, BAD },
	{ .name = "mremap MREMAP_FIXED, new address", .call = mremap_to, BAD },
	{ .name = "shmat, address", .call = shmat_bad, BAD },
	{ .name = "shmdt", .call = shmdt_bad, BAD },
	{ .name = NULL },
};
