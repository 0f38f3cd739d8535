/* SPDX-License-Identifier: MIT */
/*
 * The environment of a new image: the program's envp, plus what keeps the
 * image traced when the program left it out: LD_PRELOAD naming the shim
 * (put first when the program has an LD_PRELOAD of its own without it),
 * PTSHARE_SOCKET and PTSHARE_OPTIONS.  Built on the stack, since exec may
 * run in a vfork child or between fork and exec, where malloc is not
 * allowed; only read from shared state.  Nothing changes once tracing is
 * not wanted (no daemon): the program then runs as it would without us.
 */
#define _GNU_SOURCE
#include <string.h>

#include "env.h"
#include "shim.h"

#define PRELOAD "LD_PRELOAD="

/* LD_PRELOAD lists objects separated by colons or spaces. */
static bool names_shim(const char *list)
{
	while (*list) {
		size_t n = strcspn(list, ": ");
		const char *name = list;
		for (size_t i = 0; i < n; i++)
			if (list[i] == '/')
				name = list + i + 1;
		size_t len = n - (size_t)(name - list);
		if (len == strlen(shim_cfg.preload_name) &&
		    !strncmp(name, shim_cfg.preload_name, len))
			return true;
		list += n + (list[n] != '\0');
	}
	return false;
}

/* "LD_PRELOAD=<shim>:<theirs>" into buf (room enough: env_run sized it). */
static char *preload_with_shim(char *buf, size_t cap, const char *theirs)
{
	size_t n = str_copy(buf, cap, shim_cfg.preload_env);

	if (*theirs) {
		n += str_copy(buf + n, cap - n, ":");
		str_copy(buf + n, cap - n, theirs);
	}
	return buf;
}

int env_run(char *const envp[], env_user fn, void *arg)
{
	size_t n = 0, room = 1;

	if (!proc_tracing_wanted())
		return fn(arg, envp);
	for (; envp && envp[n]; n++)
		if (str_starts(envp[n], PRELOAD))
			room += strlen(shim_cfg.preload_env) + 1 + strlen(envp[n]);
	char *vec[n + 4];
	char buf[room];
	size_t k = 0, used = 0;
	bool preload = false, socket = false, options = false;
	for (size_t i = 0; i < n; i++) {
		char *e = envp[i];
		if (str_starts(e, PRELOAD)) {
			preload = true;
			if (!names_shim(e + strlen(PRELOAD))) {
				e = preload_with_shim(buf + used, room - used,
						      e + strlen(PRELOAD));
				used += strlen(e) + 1;
			}
		}
		socket |= str_starts(e, PTS_SOCKET_ENV "=");
		options |= str_starts(e, PTS_OPTIONS_ENV "=");
		vec[k++] = e;
	}
	if (!preload)
		vec[k++] = shim_cfg.preload_env;
	if (!socket)
		vec[k++] = shim_cfg.socket_env;
	if (!options && shim_cfg.options_env[0])
		vec[k++] = shim_cfg.options_env;
	vec[k] = NULL;
	return fn(arg, vec);
}
