/* SPDX-License-Identifier: MIT */
/* The environment a new image gets (env.c), for exec and posix_spawn. */
#ifndef PTSHARE_SHIM_ENV_H
#define PTSHARE_SHIM_ENV_H

/* Calls fn(arg, env) with env the program's envp, completed on the stack
 * with what keeps the new image traced; returns what fn returned. */
typedef int (*env_user)(void *arg, char *const envp[]);
int env_run(char *const envp[], env_user fn, void *arg);

#endif
