/* SPDX-License-Identifier: MIT */
/*
 * _exit() and _Exit() end the process without exit handlers, so EXIT is
 * sent here (exit() and a return from main go through the on_exit handler,
 * init.c).  In a vfork child, which typically calls _exit() after a failed
 * exec, shim_enter_exit() declines and nothing is sent.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "shim.h"

static _Noreturn void exit_now(int status)
{
	proc_exit(status);
	for (;;)
		syscall(SYS_exit_group, status);
}

SHIM_EXPORT void _exit(int status)
{
	exit_now(status);
}

SHIM_EXPORT void _Exit(int status)
{
	exit_now(status);
}
