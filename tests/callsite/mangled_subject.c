/* SPDX-License-Identifier: MIT */
/*
 * Maps shared memory from two functions whose symbols are named as a C++
 * compiler and a Rust compiler (v0) name theirs, 4 MiB from the first and
 * 6 MiB from the second, touches it, and exits.  Built without debug info
 * (-g0): the call sites are named from the symbol table, mangled, and the
 * report must demangle them.  Never sanitized: the shim is preloaded.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#define MIB (1ul << 20)

/* ns::Pool::make(unsigned long) */
void *cxx_make(unsigned long len) __asm__("_ZN2ns4Pool4makeEm");
/* mycrate::pool::make */
void *rust_make(unsigned long len) __asm__("_RNvNtCs1234_7mycrate4pool4make");

/* Inlined even at -O0: the mmap's return address is in its caller. */
static inline __attribute__((always_inline)) void *shared(unsigned long len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		return NULL;
	}
	return memset(p, 1, len);
}

__attribute__((noinline)) void *cxx_make(unsigned long len)
{
	return shared(len);
}

__attribute__((noinline)) void *rust_make(unsigned long len)
{
	return shared(len);
}

int main(void)
{
	return cxx_make(4 * MIB) && rust_make(6 * MIB) ? 0 : 1;
}
