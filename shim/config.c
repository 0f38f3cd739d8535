/* SPDX-License-Identifier: MIT */
/*
 * The configuration, read once by the constructor: the daemon's socket
 * (PTSHARE_SOCKET), the options (PTSHARE_OPTIONS, docs/shim.md), and the
 * environment entries an exec must keep for the new image to be traced.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

#define DEFAULT_FRAMES 4
#define DEFAULT_WAIT_MS 2000
/* The record ring: 128 KiB hold about 1,400 records of a call with four
 * frames, and pass half full (a kick) every 700. */
#define DEFAULT_RING_KIB 128

struct shim_config shim_cfg = {
	.stack = true,
	.frames = DEFAULT_FRAMES,
	.wait_ms = DEFAULT_WAIT_MS,
	.uffd = true,
	.ring_kib = DEFAULT_RING_KIB,
};

static bool number(const char *s, long min, long max, long *v)
{
	char *end;

	if (!*s)
		return false;
	*v = strtol(s, &end, 10);
	if (*end)
		return false;
	*v = *v < min ? min : *v > max ? max : *v;
	return true;
}

/* One "name" (meaning name=1) or "name=value"; complaints only when
 * report (the second pass, once verbose is known). */
static void option(char *opt, bool report)
{
	char *value = strchr(opt, '=');
	long v = 1;

	if (value)
		*value++ = '\0';
	if (value && !number(value, 0, INT_MAX, &v)) {
		if (report)
			shim_say("option ignored, not a number:", opt, -1);
		return;
	}
	if (!strcmp(opt, "stack"))
		shim_cfg.stack = v;
	else if (!strcmp(opt, "frames"))
		shim_cfg.frames = v > PTS_MAX_FRAMES ? PTS_MAX_FRAMES : (unsigned)v;
	else if (!strcmp(opt, "wait_ms"))
		shim_cfg.wait_ms = (int)v;
	else if (!strcmp(opt, "verbose"))
		shim_cfg.verbose = v;
	else if (!strcmp(opt, "uffd"))
		shim_cfg.uffd = v;
	else if (!strcmp(opt, "ring"))
		shim_cfg.ring_kib = (unsigned)(v > (1 << 20) ? 1 << 20 : v);
	else if (report)
		shim_say("unknown option ignored:", opt, -1);
}

static void options_parse(const char *list, bool report)
{
	char copy[SHIM_ENV_MAX];

	str_copy(copy, sizeof(copy), list);
	for (char *save, *opt = strtok_r(copy, ",", &save); opt;
	     opt = strtok_r(NULL, ",", &save))
		option(opt, report);
}

/* NAME=value into dst, or false when it does not fit. */
static bool env_entry(char *dst, const char *name, const char *value)
{
	size_t n = str_copy(dst, SHIM_ENV_MAX, name);

	n += str_copy(dst + n, SHIM_ENV_MAX - n, "=");
	return n + str_copy(dst + n, SHIM_ENV_MAX - n, value) == strlen(name) + 1 + strlen(value);
}

/* This library's absolute path, for LD_PRELOAD: a relative one would not
 * be found by an image that runs in another directory.  realpath() only
 * for a relative one: it costs a readlink per component of the path, in
 * every image. */
static void preload_load(void)
{
	char path[PATH_MAX];
	Dl_info di;

	if (!dladdr((void *)preload_load, &di) || !di.dli_fname)
		return;
	const char *abs = di.dli_fname[0] == '/' || !realpath(di.dli_fname, path)
				  ? di.dli_fname
				  : path;
	if (!env_entry(shim_cfg.preload_env, "LD_PRELOAD", abs)) {
		shim_cfg.preload_env[0] = '\0';
		return;
	}
	const char *slash = strrchr(shim_cfg.preload_env, '/');
	shim_cfg.preload_name = slash ? slash + 1 : shim_cfg.preload_env + 11;
}

void config_load(char **argv)
{
	const char *options = getenv(PTS_OPTIONS_ENV);
	const char *socket = getenv(PTS_SOCKET_ENV);

	shim_cfg.argv0 = argv ? argv[0] : NULL;
	if (options && !env_entry(shim_cfg.options_env, PTS_OPTIONS_ENV, options))
		shim_cfg.options_env[0] = '\0';
	if (options) {
		options_parse(options, false);
		options_parse(options, true);
	}
	if (!socket || !*socket)
		return;
	if (strlen(socket) >= sizeof(shim_cfg.socket_path)) {
		shim_say("socket path too long, not tracing:", socket, -1);
		return;
	}
	str_copy(shim_cfg.socket_path, sizeof(shim_cfg.socket_path), socket);
	env_entry(shim_cfg.socket_env, PTS_SOCKET_ENV, socket);
	preload_load();
	shim_cfg.configured = shim_cfg.preload_name != NULL;
}
