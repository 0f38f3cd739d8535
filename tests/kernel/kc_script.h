/* SPDX-License-Identifier: MIT */
/*
 * The kernel cross-check's script (kc_script.c): the steps the measured
 * processes and the `linux` model both take, and the objects they map.
 */
#ifndef PTSHARE_KC_SCRIPT_H
#define PTSHARE_KC_SCRIPT_H

#include <stddef.h>
#include <stdint.h>

#include "kc_proto.h"

#define KiB (1024ULL)
#define MiB (1024ULL * KiB)
#define GiB (1024ULL * MiB)

/* Areas of the slot, one 1 GiB PMD span each. */
#define A_ANON (0 * GiB)
#define A_SHM (1 * GiB)
#define A_FILE (2 * GiB)
#define A_SYSV (3 * GiB)
#define A_MOVE (4 * GiB)
#define A_MISC (5 * GiB)

#define FILE_SIZE (16 * MiB)
#define MEMFD_SIZE (8 * MiB)
#define SYSV_SIZE (4 * MiB)

enum obj {
	O_NONE,
	O_ANON,  /* MAP_PRIVATE | MAP_ANONYMOUS */
	O_SHMEM, /* MAP_SHARED | MAP_ANONYMOUS: a new shmem object per mmap */
	O_MEMFD,
	O_FILE,
	O_SYSV,
	O_RING,  /* io_uring's SQ ring: VM_MIXEDMAP, populated by mmap itself */
};

struct step {
	char who;          /* 'P': the parent, 'C': the current child */
	enum kc_op op;
	enum obj obj;      /* mmap, shmat */
	uint64_t addr, len;
	uint64_t addr2, len2; /* mremap: new address and length; touch: stride */
	uint64_t off;      /* mmap: file offset */
	int prot;          /* mmap, mprotect; touch: 1 = write */
	int flags;         /* mmap: MAP_SHARED/MAP_PRIVATE; mremap flags; advice */
	const char *what;
};

/* touch: prot */
#define READ 0
#define WRITE 1

extern const struct step kc_script[];
extern const size_t kc_nsteps;

#endif
