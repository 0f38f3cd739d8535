/* SPDX-License-Identifier: MIT */
/*
 * posix_spawn() and posix_spawnp(): not traced as calls (glibc's child is
 * a clone(CLONE_VM|CLONE_VFORK) that runs its own internal execve, which
 * no interposer sees), but the environment they pass is completed like an
 * exec's, so the new image connects and says HELLO by itself.  Like a
 * fork, a spawn waits a little while the daemon is behind
 * (ring_wait_caught_up).
 *
 * glibc has two of each: the one since 2.15, and the one that programs
 * linked before it call, which also runs a file without #! with /bin/sh.
 * One unversioned interposer would stand in for both and make the new
 * call for all; so each version has its own, which makes the call it
 * stands in for.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <spawn.h>

#include "env.h"
#include "shim.h"

struct spawn_req {
	spawn_fn *real;
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

/* real: the slot of the function to call, filled by real_resolve(). */
static int spawn_run(spawn_fn *const *real, pid_t *pid, const char *path,
		     const posix_spawn_file_actions_t *actions,
		     const posix_spawnattr_t *attr, char *const argv[],
		     char *const envp[])
{
	real_resolve();
	if (proc_tracing_wanted() && shim_is_state_process())
		ring_wait_caught_up();
	struct spawn_req r = { *real, pid, path, actions, attr, argv };
	return env_run(envp, spawn_real, &r);
}

/* The interposer fn of one version of posix_spawn or posix_spawnp
 * (symbol: name@version; @@ for the default one), which calls the same
 * version, in shim_real.slot. */
#define SPAWN_INTERPOSER(fn, slot, symbol)                                  \
	SHIM_EXPORT spawn_fn fn;                                             \
	int fn(pid_t *pid, const char *path,                                 \
	       const posix_spawn_file_actions_t *actions,                    \
	       const posix_spawnattr_t *attr, char *const argv[],            \
	       char *const envp[])                                           \
	{                                                                    \
		return spawn_run(&shim_real.slot, pid, path, actions, attr,  \
				 argv, envp);                                \
	}                                                                    \
	__asm__(".symver " #fn ", " symbol ", remove")

SPAWN_INTERPOSER(spawn_now, posix_spawn, "posix_spawn@@" GLIBC_SPAWN);
SPAWN_INTERPOSER(spawn_old, posix_spawn_old, "posix_spawn@" GLIBC_SPAWN_OLD);
SPAWN_INTERPOSER(spawnp_now, posix_spawnp, "posix_spawnp@@" GLIBC_SPAWN);
SPAWN_INTERPOSER(spawnp_old, posix_spawnp_old, "posix_spawnp@" GLIBC_SPAWN_OLD);
