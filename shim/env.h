/* SPDX-License-Identifier: MIT */
/* The environment a new image gets (env.c), for exec and posix_spawn. */
#ifndef PTSHARE_SHIM_ENV_H
#define PTSHARE_SHIM_ENV_H

#include <stdbool.h>

/* What env_run gave the new image. */
enum env_made {
	ENV_AS_IS,  /* the program's envp: not traced, or not readable */
	ENV_TRACED, /* completed with what keeps it traced */
	ENV_NO_FD,  /* the shim taken out of LD_PRELOAD: no fd to load it */
};

/* Calls fn(arg, env, made) with env the program's envp, completed on the
 * stack with what keeps the new image traced, or without the shim when
 * the image could not load it; returns what fn returned. */
typedef int (*env_user)(void *arg, char *const envp[], enum env_made made);
int env_run(char *const envp[], env_user fn, void *arg);

/* exec_room.c: whether an image exec'd now finds an fd for the dynamic
 * loader to open the shim with. */
bool exec_fd_room(void);

#endif
