/* SPDX-License-Identifier: MIT */
/*
 * A dynamically linked program that needs no library: the dynamic loader
 * runs it with no fd free (it opens nothing), where an LD_PRELOAD it could
 * not open would make it say so on stderr.  It says what LD_PRELOAD it
 * was given and exits NOLIBC_STATUS, by system calls of its own.
 */
#include <stddef.h>
#include <sys/syscall.h>

#include "torture_subject.h"

#define PRELOAD "LD_PRELOAD="

static long syscall3(long nr, long a, long b, long c)
{
	long r;
	__asm__ volatile("syscall" : "=a"(r) : "a"(nr), "D"(a), "S"(b), "d"(c)
			 : "rcx", "r11", "memory");
	return r;
}

static size_t length(const char *s)
{
	size_t n = 0;
	while (s[n])
		n++;
	return n;
}

static void put(const char *s)
{
	syscall3(SYS_write, 1, (long)s, (long)length(s));
}

static int starts(const char *s, const char *prefix)
{
	while (*prefix)
		if (*s++ != *prefix++)
			return 0;
	return 1;
}

/* sp: the stack as the kernel left it (argc, argv, NULL, envp, NULL). */
void nolibc_main(long *sp);
void nolibc_main(long *sp)
{
	char **envp = (char **)(sp + 1) + sp[0] + 1;
	const char *preload = NULL;
	for (; *envp; envp++)
		if (starts(*envp, PRELOAD))
			preload = *envp;
	put("nolibc: ran, ");
	put(preload ? preload : "no LD_PRELOAD");
	put("\n");
	for (;;)
		syscall3(SYS_exit_group, NOLIBC_STATUS, 0, 0);
}

__asm__(".globl _start\n"
	"_start:\n"
	"	mov %rsp, %rdi\n"
	"	and $-16, %rsp\n"
	"	call nolibc_main\n");
