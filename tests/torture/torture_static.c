/* SPDX-License-Identifier: MIT */
/*
 * A statically linked program the torture subject execs from a preloaded
 * parent: LD_PRELOAD cannot follow it, so it runs untraced, and it must
 * run exactly as it would without ptshare.  It maps, fills and checks some
 * memory and says what it found.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "torture_subject.h"

int main(int argc, char **argv)
{
	const size_t len = 1u << 20;
	unsigned char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t sum = 0;

	if (p == MAP_FAILED) {
		perror("torture_static: mmap");
		return 100;
	}
	for (size_t i = 0; i < len; i++)
		p[i] = (unsigned char)(i * 7 + 3);
	for (size_t i = 0; i < len; i++)
		sum = sum * 31 + p[i];
	munmap(p, len);
	printf("static %s sum %016llx\n", argc > 1 ? argv[1] : "-",
	       (unsigned long long)sum);
	return STATIC_STATUS;
}
