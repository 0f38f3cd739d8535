/* SPDX-License-Identifier: MIT */
/*
 * The constructor of every image the shim is preloaded into: configuration,
 * the real functions, the unwinder's setup, then the connection and HELLO
 * (EXECED: every image starts with an exec).  Without PTSHARE_SOCKET the
 * shim stays out of the way: every interposer then goes straight through.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>

#include "shim.h"

/*
 * exit() and a return from main both run this: it receives the status
 * either way, and runs after the program's own atexit handlers (registered
 * later, run earlier), as late as a handler can.  _exit() and _Exit() skip
 * it and are interposed instead (exit.c).
 */
static void at_exit(int status, void *arg)
{
	proc_exit(status);
}

__attribute__((constructor)) static void shim_init(int argc, char **argv)
{
	int err = errno;

	real_resolve();
	config_load(argv);
	if (shim_cfg.configured) {
		stack_init();
		proc_start(PTS_HELLO_EXECED, 0);
		on_exit(at_exit, NULL);
	}
	errno = err;
}
