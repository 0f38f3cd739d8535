/* SPDX-License-Identifier: MIT */
/*
 * The kernel cross-check's script: what the parent and its children do in
 * the slot, step by step, with the hand analysis of each (method and
 * kernel facts: kernel_crosscheck.c).
 */
#define _GNU_SOURCE
#include <linux/io_uring.h>
#include <sys/mman.h>

#include "kc_script.h"

#define R(x) (KC_SLOT_BASE + (x))

#define RW (PROT_READ | PROT_WRITE)
#define MMAP(w, o, a, l, pr, fl, of, d) \
	{ .who = w, .op = KC_OP_MMAP, .obj = o, .addr = R(a), .len = l, \
	  .prot = pr, .flags = fl, .off = of, .what = d }
#define TOUCH(w, a, l, stride, wr, d) \
	{ .who = w, .op = KC_OP_TOUCH, .addr = R(a), .len = l, .len2 = stride, \
	  .prot = wr, .what = d }
#define MUNMAP(w, a, l, d) \
	{ .who = w, .op = KC_OP_MUNMAP, .addr = R(a), .len = l, .what = d }
#define MPROTECT(w, a, l, pr, d) \
	{ .who = w, .op = KC_OP_MPROTECT, .addr = R(a), .len = l, .prot = pr, \
	  .what = d }
#define MREMAP(w, a, l, na, nl, fl, d) \
	{ .who = w, .op = KC_OP_MREMAP, .addr = R(a), .len = l, .addr2 = R(na), \
	  .len2 = nl, .flags = fl, .what = d }
#define MADVISE(w, a, l, adv, d) \
	{ .who = w, .op = KC_OP_MADVISE, .addr = R(a), .len = l, .flags = adv, \
	  .what = d }
#define MOVE_FIXED (MREMAP_MAYMOVE | MREMAP_FIXED)
/* The ring, at a (it refuses any address: KC_OP_MMAP_TOPDOWN places it). */
#define MMAP_RING(w, a, d) \
	{ .who = w, .op = KC_OP_MMAP_TOPDOWN, .obj = O_RING, .addr = R(a), \
	  .len = 4 * KiB, .prot = RW, .flags = MAP_SHARED, \
	  .off = IORING_OFF_SQ_RING, .what = d }

/*
 * The script.  The bracketed note after each description is the author's
 * hand analysis of the change, for the reader; the test itself compares
 * the model with the kernel and asserts nothing else.
 */
const struct step kc_script[] = {
	/* Private anonymous memory: zero page, anon_vma, merging. */
	MMAP('P', O_ANON, A_ANON, 8 * MiB, RW, MAP_PRIVATE, 0,
	     "mmap anon private rw 8 MiB @anon [no table]"),
	TOUCH('P', A_ANON, 2 * MiB, 4 * KiB, READ,
	      "read every page of anon span 0 (the zero page, no anon_vma; without "
	      "it, anonymous pages and the anon_vma) [+PUD +PMD +PTE]"),
	TOUCH('P', A_ANON + 2 * MiB, 2 * MiB, 64 * KiB, WRITE,
	      "write anon span 1 (the VMA gets an anon_vma, where the read gave "
	      "it none) [+PTE]"),
	MMAP('P', O_ANON, A_ANON + 8 * MiB, 4 * MiB, RW, MAP_PRIVATE, 0,
	     "mmap anon rw 4 MiB right after it (merges, shares the anon_vma) [0]"),
	TOUCH('P', A_ANON + 8 * MiB + 4 * KiB, 4 * KiB, 4 * KiB, READ,
	      "read one page of the merged-in part (the zero page, or an "
	      "anonymous page) [+PTE]"),
	TOUCH('P', A_ANON + 4 * MiB, 64 * KiB, 4 * KiB, WRITE,
	      "write 64 KiB of anon span 2 [+PTE]"),
	MMAP('P', O_ANON, A_ANON + 64 * MiB, 2 * MiB, RW, MAP_PRIVATE, 0,
	     "mmap anon rw 2 MiB @anon+64M, not adjacent [0]"),
	TOUCH('P', A_ANON + 64 * MiB, 2 * MiB, 256 * KiB, READ,
	      "read it only (the zero page: no anon_vma, not copied at fork; "
	      "without it, an anon_vma: copied) [+PTE]"),
	MMAP('P', O_ANON, A_MISC, 2 * MiB, RW, MAP_PRIVATE, 0,
	     "mmap anon rw 2 MiB @misc (own 1 GiB) [0]"),
	TOUCH('P', A_MISC, 4 * KiB, 4 * KiB, WRITE,
	      "write one page of it [+PMD +PTE]"),
	MADVISE('P', A_MISC, 2 * MiB, MADV_DONTNEED,
		"MADV_DONTNEED its whole aligned span (one VMA) [-PTE; PMD stays]"),
	MMAP_RING('P', A_MISC + 16 * MiB,
		  "mmap an io_uring SQ ring @misc+16M (VM_MIXEDMAP: its page is "
		  "inserted by mmap, and fork copies its table) [+PTE]"),

	/* Shared memory: shmem, memfd, regular file, SysV. */
	MMAP('P', O_SHMEM, A_SHM, 4 * MiB, RW, MAP_SHARED, 0,
	     "mmap shared anonymous (shmem) rw 4 MiB @shm [0]"),
	TOUCH('P', A_SHM, 4 * MiB, 1 * MiB, WRITE,
	      "write 4 pages of it, 2 spans [+PMD +2 PTE]"),
	MMAP('P', O_MEMFD, A_SHM + 16 * MiB, 8 * MiB, RW, MAP_SHARED, 0,
	     "mmap memfd shared rw 8 MiB @shm+16M [0]"),
	TOUCH('P', A_SHM + 16 * MiB, 8 * MiB, 2 * MiB, WRITE,
	      "write one page per span of the memfd [+4 PTE]"),
	MMAP('P', O_FILE, A_FILE, 8 * MiB, RW, MAP_SHARED, 4 * KiB,
	     "mmap file shared rw 8 MiB, offset 4K, @file [0]"),
	TOUCH('P', A_FILE, 2 * MiB, 4 * KiB, READ,
	      "read every page of its span 0 [+PMD +PTE]"),
	TOUCH('P', A_FILE + 2 * MiB + 8 * KiB, 4 * KiB, 4 * KiB, WRITE,
	      "write one page of its span 1 [+PTE]"),
	MMAP('P', O_FILE, A_FILE + 16 * MiB, 4 * MiB, PROT_READ, MAP_PRIVATE, 4 * KiB,
	     "mmap file private read-only 4 MiB, offset 4K, @file+16M [0]"),
	TOUCH('P', A_FILE + 16 * MiB, 4 * MiB, 64 * KiB, READ,
	      "read it (no anon_vma) [+2 PTE]"),
	MMAP('P', O_FILE, A_FILE + 32 * MiB, 4 * MiB, RW, MAP_PRIVATE, 4 * MiB + 4 * KiB,
	     "mmap file private rw 4 MiB, offset 4M+4K, @file+32M [0]"),
	TOUCH('P', A_FILE + 32 * MiB, 4 * MiB, 1 * MiB, WRITE,
	      "write 4 pages of it (copy-on-write: anon_vma) [+2 PTE]"),
	{ .who = 'P', .op = KC_OP_SHMAT, .obj = O_SYSV, .addr = R(A_SYSV),
	  .len = SYSV_SIZE, .what = "shmat SysV 4 MiB @sysv [0]" },
	TOUCH('P', A_SYSV, 4 * MiB, 1 * MiB, WRITE,
	      "write 4 pages of the SysV segment [+PMD +2 PTE]"),

	/* fork, and the child working while the parent holds the mappings. */
	{ .who = 'P', .op = KC_OP_FORK,
	  .what = "fork: child copies anon_vma and VM_MIXEDMAP VMAs only "
		  "[child: PUD, PMD anon + 4 PTE (incl. the merged-in span, only "
		  "read), PMD misc + the ring's PTE (the anon one empty), PMD file "
		  "+ 2 PTE (private written); without the zero page also the PTE "
		  "of the anon VMA only read]" },
	TOUCH('C', A_SHM, 4 * MiB, 2 * MiB, WRITE,
	      "child writes shmem, 2 spans (not copied: faults its own) [C +PMD +2 PTE]"),
	TOUCH('C', A_FILE, 4 * KiB, 4 * KiB, READ,
	      "child reads the shared file [C +PTE]"),
	TOUCH('C', A_FILE + 16 * MiB, 4 * KiB, 4 * KiB, READ,
	      "child reads the private read-only file [C +PTE]"),
	TOUCH('C', A_SYSV + 2 * MiB, 4 * KiB, 4 * KiB, WRITE,
	      "child writes the SysV segment [C +PMD +PTE]"),
	TOUCH('C', A_ANON + 64 * MiB, 4 * KiB, 4 * KiB, READ,
	      "child reads the anon VMA only read [C +PTE; without the zero "
	      "page +0: copied at fork]"),
	MUNMAP('C', A_ANON + 8 * MiB, 4 * MiB,
	       "child munmaps the merged-in 4 MiB (spans 4-5 left empty) [C -PTE]"),
	MREMAP('C', A_FILE + 32 * MiB, 4 * MiB, A_MOVE, 4 * MiB, MOVE_FIXED,
	       "child mremaps the private written file to @move, both 2 MiB aligned "
	       "(PTE tables move) [C +PMD]"),
	MREMAP('C', A_SHM, 4 * MiB, A_SHM, 2 * MiB, 0,
	       "child shrinks the shmem mapping in place to 2 MiB [C -PTE]"),

	/* The parent alone: mprotect, munmap, MADV_DONTNEED, mremap. */
	TOUCH('P', A_ANON + 6 * MiB, 4 * KiB, 4 * KiB, WRITE,
	      "parent writes anon span 3 [+PTE]"),
	MPROTECT('P', A_ANON + 3 * MiB, 2 * MiB, PROT_READ,
		 "mprotect anon +3M..+5M read-only (splits in 3) [0]"),
	MPROTECT('P', A_ANON + 3 * MiB, 2 * MiB, RW,
		 "mprotect it back rw (merges again) [0]"),
	MUNMAP('P', A_ANON + 1 * MiB, 1 * MiB,
	       "munmap half of anon span 0 (a VMA stays in the span) [0]"),
	MUNMAP('P', A_ANON + 4 * MiB, 2 * MiB,
	       "munmap the whole anon span 2 (span left empty) [-PTE]"),
	MADVISE('P', A_ANON + 6 * MiB, 1 * MiB, MADV_DONTNEED,
		"MADV_DONTNEED half of anon span 3 [0]"),
	MADVISE('P', A_ANON + 2 * MiB, 2 * MiB, MADV_DONTNEED,
		"MADV_DONTNEED the whole anon span 1, inside one VMA [-PTE]"),
	MPROTECT('P', A_SHM + 17 * MiB, 2 * MiB, PROT_READ,
		 "mprotect memfd +1M..+3M read-only (splits its span 0 in 2 VMAs) [0]"),
	MADVISE('P', A_SHM + 16 * MiB, 2 * MiB, MADV_DONTNEED,
		"MADV_DONTNEED memfd span 0: whole span but two VMAs [0]"),
	MADVISE('P', A_SHM + 20 * MiB, 2 * MiB, MADV_DONTNEED,
		"MADV_DONTNEED memfd span 2, whole and inside one VMA [-PTE]"),
	MREMAP('P', A_ANON + 6 * MiB, 6 * MiB, A_ANON + 6 * MiB, 2 * MiB, 0,
	       "mremap shrink anon +6M 6 MiB -> 2 MiB in place [-PTE span 4]"),
	MREMAP('P', A_ANON + 6 * MiB, 2 * MiB, A_ANON + 6 * MiB, 4 * MiB, 0,
	       "mremap grow it in place back to 4 MiB [0]"),
	TOUCH('P', A_ANON + 9 * MiB, 4 * KiB, 4 * KiB, WRITE,
	      "write in the grown part [+PTE]"),
	MREMAP('P', A_FILE + 32 * MiB, 4 * MiB, A_MOVE + 64 * MiB, 4 * MiB, MOVE_FIXED,
	       "mremap the private written file to @move+64M, aligned (tables move) [+PMD]"),
	MREMAP('P', A_ANON + 6 * MiB, 4 * MiB, A_MOVE + 129 * MiB, 4 * MiB, MOVE_FIXED,
	       "mremap anon +6M 4 MiB to @move+129M, unaligned (entries move) "
	       "[+3 PTE at dest, -2 at source]"),
	TOUCH('P', A_ANON + 2 * MiB, 2 * MiB, 512 * KiB, WRITE,
	      "write anon span 1 again [+PTE]"),
	MREMAP('P', A_ANON + 2 * MiB, 2 * MiB, A_MOVE + 300 * MiB, 2 * MiB,
	       MOVE_FIXED | MREMAP_DONTUNMAP,
	       "mremap it to @move+300M with MREMAP_DONTUNMAP, aligned (the table "
	       "moves; the old VMA stays, empty, and loses its anon_vma) [0]"),
	TOUCH('P', A_ANON + 2 * MiB, 4 * KiB, 4 * KiB, READ,
	      "read the old range [+PTE; the zero page: not copied at the next "
	      "fork; without it, an anon_vma again: copied]"),
	MMAP('P', O_ANON, A_SHM, 2 * MiB, RW, MAP_PRIVATE | MAP_FIXED, 0,
	     "mmap anon MAP_FIXED over the shmem's first 2 MiB (the replaced span "
	     "is left with no old VMA: its table is freed) [-PTE]"),
	{ .who = 'P', .op = KC_OP_SHMDT, .obj = O_SYSV, .addr = R(A_SYSV),
	  .len = SYSV_SIZE, .what = "shmdt the SysV segment [-PMD -2 PTE]" },
	MUNMAP('P', A_FILE, 8 * MiB,
	       "munmap the whole shared file mapping (PMD stays: private one left) [-2 PTE]"),

	/* The child's baseline check, exit, a second child. */
	MUNMAP('C', 0, KC_SLOT_SIZE,
	       "child munmaps the whole slot (delta must be 0: checks the probe baseline)"),
	{ .who = 'C', .op = KC_OP_EXIT, .what = "child exits" },
	{ .who = 'P', .op = KC_OP_FORK,
	  .what = "fork a second child [child: PUD, PMD anon + PTE, PMD misc + "
		  "the ring's PTE, PMD move + 6 PTE; without the zero page also the "
		  "PTE of the anon VMA only read and the old range read]" },
	MREMAP('C', A_MOVE + 129 * MiB, 4 * MiB, A_MOVE + 259 * MiB, 4 * MiB, MOVE_FIXED,
	       "child 2 mremaps the moved anon block to @move+259M: edges move "
	       "entries, the middle 2 MiB is aligned on both sides and moves its "
	       "table [0]"),
	MADVISE('C', A_MOVE + 64 * MiB, 2 * MiB, MADV_DONTNEED,
		"child 2 MADV_DONTNEED a whole span of the moved private file [C -PTE]"),
	TOUCH('C', A_SHM + 16 * MiB, 8 * MiB, 1 * MiB, READ,
	      "child 2 reads the memfd (not copied at fork) [C +PMD +4 PTE]"),
	{ .who = 'C', .op = KC_OP_EXIT, .what = "child 2 exits" },
	MUNMAP('P', 0, KC_SLOT_SIZE,
	       "parent munmaps the whole slot (delta must be 0: checks the baseline)"),
};

const size_t kc_nsteps = sizeof kc_script / sizeof kc_script[0];
