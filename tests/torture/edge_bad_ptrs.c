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

static void execve_path(bool raw, const char *bad)
{
	edge_said_int(raw ? edge_sys_execve(bad, edge_leaf_argv, environ)
			  : execve(bad, edge_leaf_argv, environ));
}

static void execve_path_into(bool raw, const char *bad)
{
	const char *path = string_into(bad, edge_self);
	edge_said_int(raw ? edge_sys_execve(path, edge_leaf_argv, environ)
			  : execve(path, edge_leaf_argv, environ));
}

static void execve_argv(bool raw, const char *bad)
{
	edge_said_int(raw ? edge_sys_execve(edge_self, (char **)bad, environ)
			  : execve(edge_self, (char **)bad, environ));
}

static void execve_envp(bool raw, const char *bad)
{
	edge_said_int(raw ? edge_sys_execve(edge_self, edge_leaf_argv, (char **)bad)
			  : execve(edge_self, edge_leaf_argv, (char **)bad));
}

static void execve_envp_string(bool raw, const char *bad)
{
	char *envp[] = { "A=1", (char *)bad, NULL };
	edge_said_int(raw ? edge_sys_execve(edge_self, edge_leaf_argv, envp)
			  : execve(edge_self, edge_leaf_argv, envp));
}

static void execve_preload_into(bool raw, const char *bad)
{
	char *envp[] = { string_into(bad, "LD_PRELOAD=/lib/libnothing.so"), NULL };
	edge_said_int(raw ? edge_sys_execve(edge_self, edge_leaf_argv, envp)
			  : execve(edge_self, edge_leaf_argv, envp));
}

static void execve_envp_into(bool raw, const char *bad)
{
	char **envp = array_into(bad);
	edge_said_int(raw ? edge_sys_execve(edge_self, edge_leaf_argv, envp)
			  : execve(edge_self, edge_leaf_argv, envp));
}

static void execve_missing_envp(bool raw, const char *bad)
{
	edge_said_int(raw ? edge_sys_execve("/nonexistent/leaf", edge_leaf_argv, (char **)bad)
			  : execve("/nonexistent/leaf", edge_leaf_argv, (char **)bad));
}

static void execv_path(bool raw, const char *bad)
{
	edge_said_int(raw ? edge_sys_execve(bad, edge_leaf_argv, environ)
			  : execv(bad, edge_leaf_argv));
}

static void execv_argv(bool raw, const char *bad)
{
	edge_said_int(raw ? edge_sys_execve(edge_self, (char **)bad, environ)
			  : execv(edge_self, (char **)bad));
}

static void execvp_file(bool raw, const char *bad)
{
	edge_said_int(raw ? edge_sys_execve(bad, edge_leaf_argv, environ)
			  : execvp(bad, edge_leaf_argv));
}

static void execvpe_envp(bool raw, const char *bad)
{
	edge_said_int(raw ? edge_sys_execve(edge_self, edge_leaf_argv, (char **)bad)
			  : execvpe(edge_self, edge_leaf_argv, (char **)bad));
}

static void execl_path(bool raw, const char *bad)
{
	edge_said_int(raw ? edge_sys_execve(bad, edge_leaf_argv, environ)
			  : execl(bad, "edge_subject", "leaf", (char *)NULL));
}

static void execlp_file(bool raw, const char *bad)
{
	edge_said_int(raw ? edge_sys_execve(bad, edge_leaf_argv, environ)
			  : execlp(bad, "edge_subject", "leaf", (char *)NULL));
}

static void execle_envp(bool raw, const char *bad)
{
	edge_said_int(raw ? edge_sys_execve(edge_self, edge_leaf_argv, (char **)bad)
			  : execle(edge_self, "edge_subject", "leaf", (char *)NULL,
			       (char **)bad));
}

static void execveat_path(bool raw, const char *bad)
{
	edge_said_int(raw ? edge_sys_execveat(AT_FDCWD, bad, edge_leaf_argv, environ, 0)
			  : execveat(AT_FDCWD, bad, edge_leaf_argv, environ, 0));
}

static void execveat_path_empty_flag(bool raw, const char *bad)
{
	int fd = edge_self_fd();
	edge_said_int(raw ? edge_sys_execveat(fd, bad, edge_leaf_argv, environ, AT_EMPTY_PATH)
			  : execveat(fd, bad, edge_leaf_argv, environ, AT_EMPTY_PATH));
}

static void execveat_envp(bool raw, const char *bad)
{
	int fd = edge_self_fd();
	edge_said_int(raw ? edge_sys_execveat(fd, "", edge_leaf_argv, (char **)bad, AT_EMPTY_PATH)
			  : execveat(fd, "", edge_leaf_argv, (char **)bad, AT_EMPTY_PATH));
}

static void fexecve_envp(bool raw, const char *bad)
{
	int fd = edge_self_fd();
	edge_said_int(raw ? edge_sys_execveat(fd, "", edge_leaf_argv, (char **)bad, AT_EMPTY_PATH)
			  : fexecve(fd, edge_leaf_argv, (char **)bad));
}

static void fexecve_argv(bool raw, const char *bad)
{
	int fd = edge_self_fd();
	edge_said_int(raw ? edge_sys_execveat(fd, "", (char **)bad, environ, AT_EMPTY_PATH)
			  : fexecve(fd, (char **)bad, environ));
}

static void posix_spawn_envp(bool raw, const char *bad)
{
	pid_t pid;
	edge_said_spawn(posix_spawn(&pid, edge_self, NULL, NULL, edge_leaf_argv,
			    (char **)bad), &pid);
}

static void posix_spawn_envp_string(bool raw, const char *bad)
{
	char *envp[] = { (char *)bad, NULL };
	pid_t pid;
	edge_said_spawn(posix_spawn(&pid, edge_self, NULL, NULL, edge_leaf_argv, envp), &pid);
}

static void posix_spawn_envp_into(bool raw, const char *bad)
{
	pid_t pid;
	edge_said_spawn(posix_spawn(&pid, edge_self, NULL, NULL, edge_leaf_argv,
			    array_into(bad)), &pid);
}

static void posix_spawn_path(bool raw, const char *bad)
{
	pid_t pid;
	edge_said_spawn(posix_spawn(&pid, bad, NULL, NULL, edge_leaf_argv, environ), &pid);
}

static void posix_spawn_pid(bool raw, const char *bad)
{
	edge_said_spawn(posix_spawn((pid_t *)bad, edge_self, NULL, NULL, edge_leaf_argv,
			    environ), (const pid_t *)bad);
}

static void posix_spawn_argv(bool raw, const char *bad)
{
	pid_t pid;
	edge_said_spawn(posix_spawn(&pid, edge_self, NULL, NULL, (char **)bad, environ), &pid);
}

static void posix_spawn_actions(bool raw, const char *bad)
{
	pid_t pid;
	edge_said_spawn(posix_spawn(&pid, edge_self, (posix_spawn_file_actions_t *)bad, NULL,
			    edge_leaf_argv, environ), &pid);
}

static void posix_spawn_attr(bool raw, const char *bad)
{
	pid_t pid;
	edge_said_spawn(posix_spawn(&pid, edge_self, NULL, (posix_spawnattr_t *)bad,
			    edge_leaf_argv, environ), &pid);
}

static void posix_spawnp_file(bool raw, const char *bad)
{
	pid_t pid;
	edge_said_spawn(posix_spawnp(&pid, bad, NULL, NULL, edge_leaf_argv, environ), &pid);
}

static void posix_spawnp_envp(bool raw, const char *bad)
{
	pid_t pid;
	edge_said_spawn(posix_spawnp(&pid, edge_self, NULL, NULL, edge_leaf_argv,
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

const struct edge_row edge_bad_ptrs[] = {
	{ "execve, path", execve_path, EDGE_BAD },
	{ "execve, path running into the page", execve_path_into, EDGE_BAD },
	{ "execve, argv", execve_argv, EDGE_BAD },
	{ "execve, envp", execve_envp, EDGE_BAD },
	{ "execve, a string of envp", execve_envp_string, EDGE_BAD },
	{ "execve, LD_PRELOAD running into the page", execve_preload_into, EDGE_BAD },
	{ "execve, envp running into the page", execve_envp_into, EDGE_BAD },
	{ "execve of no file, envp", execve_missing_envp, EDGE_BAD },
	{ "execv, path", execv_path, EDGE_BAD },
	{ "execv, argv", execv_argv, EDGE_BAD },
	{ "execvp, file", execvp_file, EDGE_BAD },
	{ "execvpe, envp", execvpe_envp, EDGE_BAD },
	{ "execl, path", execl_path, EDGE_BAD },
	{ "execlp, file", execlp_file, EDGE_BAD },
	{ "execle, envp", execle_envp, EDGE_BAD },
	{ "execveat, path", execveat_path, EDGE_BAD },
	{ "execveat AT_EMPTY_PATH, path", execveat_path_empty_flag, EDGE_BAD },
	{ "execveat, envp", execveat_envp, EDGE_BAD },
	{ "fexecve, envp", fexecve_envp, EDGE_BAD },
	{ "fexecve, argv", fexecve_argv, EDGE_BAD },
	{ "posix_spawn, envp", posix_spawn_envp, EDGE_BAD | EDGE_NO_RAW },
	{ "posix_spawn, a string of envp", posix_spawn_envp_string, EDGE_BAD | EDGE_NO_RAW },
	{ "posix_spawn, envp running into the page", posix_spawn_envp_into, EDGE_BAD | EDGE_NO_RAW },
	{ "posix_spawn, path", posix_spawn_path, EDGE_BAD | EDGE_NO_RAW },
	{ "posix_spawn, pid", posix_spawn_pid, EDGE_BAD | EDGE_NO_RAW },
	{ "posix_spawn, argv", posix_spawn_argv, EDGE_BAD | EDGE_NO_RAW },
	{ "posix_spawn, file actions", posix_spawn_actions, EDGE_BAD | EDGE_NO_RAW },
	{ "posix_spawn, attributes", posix_spawn_attr, EDGE_BAD | EDGE_NO_RAW },
	{ "posix_spawnp, file", posix_spawnp_file, EDGE_BAD | EDGE_NO_RAW },
	{ "posix_spawnp, envp", posix_spawnp_envp, EDGE_BAD | EDGE_NO_RAW },
	{ "mmap, hint", mmap_hint, EDGE_BAD },
	{ "mmap MAP_FIXED, address", mmap_fixed, EDGE_BAD },
	{ "munmap", munmap_bad, EDGE_BAD },
	{ "mprotect", mprotect_bad, EDGE_BAD },
	{ "madvise", madvise_bad, EDGE_BAD },
	{ "mremap, old address", mremap_old, EDGE_BAD },
	{ "mremap MREMAP_FIXED, new address", mremap_to, EDGE_BAD },
	{ "shmat, address", shmat_bad, EDGE_BAD },
	{ "shmdt", shmdt_bad, EDGE_BAD },
	{ NULL, NULL, 0 },
};
