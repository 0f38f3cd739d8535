/* SPDX-License-Identifier: MIT */
/*
 * Pipe protocol between the kernel cross-check driver (kernel_crosscheck.c,
 * which holds the model) and the measured processes (kc_subject.c: the
 * parent it execs and the child that parent forks).  Every message is one
 * fixed-size struct, smaller than PIPE_BUF, so each write(2) is atomic.
 */
#ifndef PTSHARE_KC_PROTO_H
#define PTSHARE_KC_PROTO_H

#include <stdint.h>

/* The scripted region: one whole 512 GiB PGD slot (index 64), so every
 * PUD, PMD and PTE table inside it belongs to the script and to nothing
 * else of the process. */
#define KC_SLOT_BASE 0x200000000000ULL
#define KC_SLOT_SIZE (1ULL << 39)

enum kc_op {
	KC_OP_READY = 1,  /* reply only: a process is set up and measured */
	KC_OP_MMAP,       /* addr len prot flags fd off; NOREPLACE unless MAP_FIXED */
	KC_OP_MUNMAP,     /* addr len */
	KC_OP_MPROTECT,   /* addr len prot */
	KC_OP_MREMAP,     /* addr len -> addr2 len2, flags */
	KC_OP_MADVISE,    /* addr len, flags = advice */
	KC_OP_TOUCH,      /* addr len, len2 = stride, prot = 1: write */
	KC_OP_SHMAT,      /* fd = shmid, addr */
	KC_OP_SHMDT,      /* addr */
	KC_OP_FORK,       /* parent: probe child, then the real child */
	KC_OP_EXIT,       /* child: reply, then _exit(0) */
	KC_OP_REAP,       /* parent: waitpid(fd) */
	KC_OP_PRETOUCH,   /* pre-touch everything outside the slot again */
	KC_OP_QUIT,       /* parent: reply, then _exit(0) */
	/* len prot flags fd off, mapped with no address: every gap above
	 * addr + len (up to the stack) is held by a placeholder meanwhile,
	 * so that the kernel's top-down search puts it at addr.  For what
	 * refuses an address (io_uring's rings). */
	KC_OP_MMAP_TOPDOWN,
};

struct kc_cmd {
	uint32_t op;
	int32_t fd;
	int32_t prot;
	int32_t flags;
	uint64_t addr, len;
	uint64_t addr2, len2;
	uint64_t off;
};

struct kc_reply {
	uint32_t op;
	int32_t err;      /* errno of a failed call, 0 on success */
	int64_t ret;      /* the call's return value (an address for mmap...) */
	int32_t pid;      /* READY, FORK: the process concerned */
	int32_t pad;
	int64_t vmpte_kb; /* READY of the probe: its VmPTE */
	char msg[200];    /* why a READY failed */
};

#endif
