/* SPDX-License-Identifier: MIT */
/*
 * posix_spawn() and posix_spawnp(): not traced as calls (glibc's child is
 * a clone(CLONE_VM|CLONE_VFORK) that runs its own internal execve, which
 * no interposer sees), but the environment they pass is completed like an
 * exec's, so the new image connects and says HELLO by itself.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <spawn.h>

#include "env.h"
#include "shim.h"

struct spawn_req {
	int (*real)(pid_t *, const char *, const posix_spawn_file_actions_t *,
		    const posix_spawnattr_t *, char *const[], char *const[]);
	pid_t *pid;
	const char *path;
	const posix_spawn_file_actions_t *actions;
	const posix_spawnattr_t *attr;
	char *const *argv;
};

static int spawn_real(void *arg, char *const envp[], enum env_made made)
{
	const struct spawn_req *r = arg;

	if (!r->real)
		return ENOSYS;
	return r->real(r->pid, r->path, r->actions, r->attr, r->argv, envp);
}

SHIM_EXPORT int posix_spawn(pid_t *pid, const char *path,
			    const posix_spawn_file_actions_t *actions,
			    const posix_spawnattr_t *attr, char *const argv[],
			    char *const envp[])
{
	real_resolve();
	struct spawn_req r = { shim_real.posix_spawn, pid, path, actions, attr,
			       argv };
	return env_run(envp, spawn_real, &r);
}

SHIM_EXPORT int posix_spawnp(pid_t *pid, const char *file,
			     const posix_spawn_file_actions_t *actions,
			     const posix_spawnattr_t *attr, char *const argv[],
			     char *const envp[])
{
	real_resolve();
	struct spawn_req r = { shim_real.posix_spawnp, pid, file, actions,
			       attr, argv };
	return env_run(envp, spawn_real, &r);
}
