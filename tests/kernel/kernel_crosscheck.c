/* SPDX-License-Identifier: MIT */
/*
 * Kernel cross-check: the `linux` model against the real kernel's VmPTE.
 *
 * A scripted sequence of steps is performed by a real parent process and a
 * real forked child (mmap of private anonymous memory, shared anonymous
 * memory, a memfd, a regular file mapped shared, private read-only and
 * private written, a SysV segment; touches; fork; munmap; mprotect; mremap;
 * MADV_DONTNEED; steps run by the child while the parent holds the same
 * mappings; one MAP_FIXED replacement and one MREMAP_DONTUNMAP as well).
 * The same steps are fed to a `linux` model world (pid 1 is the
 * parent, 2 and 3 the children), told what procfs_zero_page() says of this
 * kernel (whether a read of private anonymous memory maps the zero page:
 * that decides what fork copies), and after EVERY step the model's table
 * count of each live process must equal the kernel's, exactly, and
 * mm_check() must pass.  One line per step and process shows model against
 * kernel.
 *
 * Method.
 *
 * 1. Deltas in a private PGD slot.  A process's libraries, heap and stack
 *    have page tables too, so the whole script lives in one 512 GiB PGD
 *    slot of its own, [KC_SLOT_BASE, +512 GiB) = [0x200000000000, ...):
 *    every PUD, PMD and PTE table in it belongs to the script.  The subject
 *    checks from /proc/self/maps that nothing else lives in the slot (and
 *    fails loudly otherwise), and every mapping is made at an exact address
 *    (MAP_FIXED_NOREPLACE, or MAP_FIXED where a step replaces a mapping;
 *    MREMAP_FIXED; shmat at an address).  The check is
 *        VmPTE(process) - baseline(process) == model (PTE+PMD+PUD) * 4 kB.
 *
 * 2. The measured processes are not this one.  This program is built with
 *    ASan/UBSan and holds the model, which allocates as it goes: the
 *    sanitizer's allocator, quarantine and shadow memory would keep
 *    creating page tables outside the slot, and the baseline would drift.
 *    So the parent is a separate small program, kc_subject (built without
 *    sanitizers, linked with -z now, no malloc or stdio, static buffers and
 *    raw system calls), which this driver fork+execs and commands over a
 *    pipe: one command is one system call or one touch loop, answered by
 *    one reply.  The driver reads /proc/PID/status of the parent and the
 *    child itself, so reading the figures changes nothing in them.
 *
 * 3. Baselines that do not drift.  Before its baseline, the subject grows
 *    its stack by 256 KiB and then reads every page of every readable
 *    mapping outside the slot (skipping [vvar], [vvar_vclock], [vsyscall]
 *    and the pages of a file mapping beyond the end of its file), so that
 *    nothing it does later outside the slot can allocate a table.  The
 *    driver takes the parent's baseline, has the subject pre-touch again
 *    and checks that VmPTE did not move (step 0).  The subject also sets
 *    PR_SET_THP_DISABLE (inherited by its children): the script is about
 *    small pages, and this keeps it so whatever the THP settings are.
 *
 * 4. The child's baseline, without the model.  Right after fork the child
 *    already holds the region tables fork copied, so its baseline cannot be
 *    read from it.  Right before the real fork, the parent forks a PROBE
 *    child that munmaps the whole slot (which frees every table in it,
 *    down to the slot's PUD page), pre-touches outside the slot exactly as
 *    the real child will, reports its own VmPTE and exits: that is the
 *    child's baseline.  The real child then pre-touches the same way and
 *    serves commands over its own pipe.  Nothing between the two forks
 *    touches memory outside the slot, and fork copies the same tables
 *    outside the slot into both, so the two have the same tables there.
 *    The script ends each child by having it munmap the whole slot: the
 *    kernel delta must then be 0, which checks this baseline against the
 *    kernel alone.  The parent's script ends the same way.
 *
 * Scripting notes (kernel facts the steps rely on; see docs/kernel-facts.md
 * and docs/model.md): a read fault in private anonymous memory maps the
 * zero page and creates no anon_vma, a write does (a kernel without the
 * zero page allocates a page on the read and creates the anon_vma, as on
 * the write: the notes say what each kind of kernel does); adjacent private
 * anonymous mappings merge and share the anon_vma; fork copies the tables
 * of VMAs with an anon_vma only; a table is freed at munmap only when no
 * VMA is left in its span (MAP_FIXED over a mapping frees like munmap);
 * MADV_DONTNEED frees a PTE table only when it covers the table's whole
 * 2 MiB span inside one VMA; mremap moves a whole PTE table for each 2 MiB
 * extent aligned on both sides (even inside an otherwise unaligned move)
 * and moves entries into new tables elsewhere; MREMAP_DONTUNMAP leaves the
 * old VMA empty and without its anon_vma.  Baselines differ from run to
 * run (ASLR moves the stack and libraries across 2 MiB boundaries); they
 * are measured every time, never assumed.  The regular file is
 * written with 4 KiB write()s (small page-cache folios, no readahead) and
 * mapped at file offsets that are not 2 MiB-congruent with the address, so
 * that the kernel can never map it by PMD (no PTE table at all).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/io_uring.h>

#include "ptshare/mm.h"
#include "ptshare/policy.h"
#include "ptshare/procfs.h"

#include "kc_proto.h"
#include "kc_script.h"

#ifndef KC_SUBJECT_PATH
#error "KC_SUBJECT_PATH must name the kc_subject executable"
#endif

#define REPLY_TIMEOUT_MS 60000

/* ------------------------------------------------------------------ */

static struct {
	pid_t subject;      /* the parent (kc_subject) */
	pid_t child;        /* the current child, 0 when none */
	uint32_t child_mpid; /* its pid in the model */
	long base_p, base_c; /* baselines, kB */
	int pcmd, preply, ccmd, creply;
	int memfd, filefd, shmid, ringfd;
	struct mm_object_id memfd_id, file_id, ring_id;
	char dir[64], path[96];
	int failures;
	int first_failure;
} kc = { .memfd = -1, .filefd = -1, .shmid = -1, .ringfd = -1, .pcmd = -1,
	 .ccmd = -1,
	 .preply = -1, .creply = -1 };

static void cleanup(void)
{
	if (kc.child > 0)
		kill(kc.child, SIGKILL);
	if (kc.subject > 0) {
		kill(kc.subject, SIGKILL);
		waitpid(kc.subject, NULL, 0);
		kc.subject = 0;
	}
	kc.child = 0;
	if (kc.shmid >= 0)
		shmctl(kc.shmid, IPC_RMID, NULL);
	kc.shmid = -1;
	if (kc.path[0])
		unlink(kc.path);
	if (kc.dir[0])
		rmdir(kc.dir);
	kc.path[0] = kc.dir[0] = '\0';
}

/* Interrupted (ctest timeout, ^C, output pipe closed): do not leave the
 * processes, the SysV segment or the temporary file behind.  cleanup()
 * only makes async-signal-safe calls. */
static void on_signal(int sig)
{
	cleanup();
	_exit(128 + sig);
}

static _Noreturn __attribute__((format(printf, 1, 2))) void fatal(const char *fmt, ...)
{
	va_list ap;
	fflush(stdout);
	fprintf(stderr, "kernel_crosscheck: FATAL: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	cleanup();
	exit(1);
}

static long vmpte_kb(pid_t pid)
{
	char path[64], buf[8192];
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		fatal("open %s: %s", path, strerror(errno));
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		fatal("read %s: %s", path, strerror(errno));
	buf[n] = '\0';
	char *p = strstr(buf, "\nVmPTE:");
	if (!p)
		fatal("%s has no VmPTE line (process gone?)", path);
	return strtol(p + 7, NULL, 10);
}

static void send_cmd(int fd, const struct kc_cmd *c)
{
	if (write(fd, c, sizeof *c) != (ssize_t)sizeof *c)
		fatal("write command: %s", strerror(errno));
}

static void get_reply(int fd, struct kc_reply *r, const char *from)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int n = poll(&p, 1, REPLY_TIMEOUT_MS);
	if (n == 0)
		fatal("no reply from %s within %d ms", from, REPLY_TIMEOUT_MS);
	if (n < 0)
		fatal("poll: %s", strerror(errno));
	ssize_t got = read(fd, r, sizeof *r);
	if (got != (ssize_t)sizeof *r)
		fatal("%s died or sent a short reply (%zd bytes)", from, got);
}

static uint32_t mm_prot(int prot)
{
	return ((prot & PROT_READ) ? MM_PROT_READ : 0) |
	       ((prot & PROT_WRITE) ? MM_PROT_WRITE : 0) |
	       ((prot & PROT_EXEC) ? MM_PROT_EXEC : 0);
}

static struct mm_object_id fd_id(int fd, uint32_t kind)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		fatal("fstat: %s", strerror(errno));
	return (struct mm_object_id){ .kind = kind, .dev = st.st_dev,
				      .ino = st.st_ino };
}

/* ------------------------------------------------------------------ */

/* Whether this kernel maps the zero page on a read of private anonymous
 * memory.  A kernel that cannot say (no PAGEMAP_SCAN) is taken as a stock
 * one: if it is not, the first fork's step says so. */
static bool kernel_zero_page(void)
{
	int zp = procfs_zero_page();
	if (zp < 0 && zp != -EOPNOTSUPP)
		fatal("procfs_zero_page: %s", strerror(-zp));
	printf("kernel: a read of private anonymous memory maps %s%s\n",
	       zp ? "the zero page" : "an anonymous page",
	       zp < 0 ? " (taken: the kernel cannot say)" : "");
	return zp != 0;
}

static void setup_objects(void)
{
	/* A regular file on /tmp, written in 4 KiB write()s so that its page
	 * cache is in small folios (readahead would use large ones, which
	 * the kernel may map by PMD). */
	snprintf(kc.dir, sizeof kc.dir, "/tmp/ptshare-kc-XXXXXX");
	if (!mkdtemp(kc.dir))
		fatal("mkdtemp: %s", strerror(errno));
	snprintf(kc.path, sizeof kc.path, "%s/data", kc.dir);
	kc.filefd = open(kc.path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (kc.filefd < 0)
		fatal("open %s: %s", kc.path, strerror(errno));
	static char page[4096];
	for (uint64_t off = 0; off < FILE_SIZE; off += sizeof page) {
		memset(page, (int)(off >> 12), sizeof page);
		if (write(kc.filefd, page, sizeof page) != (ssize_t)sizeof page)
			fatal("write %s: %s", kc.path, strerror(errno));
	}
	kc.file_id = fd_id(kc.filefd, MM_OBJ_FILE);
	struct statfs sfs;
	if (fstatfs(kc.filefd, &sfs) == 0 && sfs.f_type != 0xEF53)
		printf("note: %s is not on ext4 (f_type %#lx)\n", kc.dir,
		       (unsigned long)sfs.f_type);

	kc.memfd = memfd_create("ptshare-kc", MFD_CLOEXEC);
	if (kc.memfd < 0)
		fatal("memfd_create: %s", strerror(errno));
	if (ftruncate(kc.memfd, MEMFD_SIZE) < 0)
		fatal("ftruncate memfd: %s", strerror(errno));
	kc.memfd_id = fd_id(kc.memfd, MM_OBJ_SHMEM);

	kc.shmid = shmget(IPC_PRIVATE, SYSV_SIZE, IPC_CREAT | 0600);
	if (kc.shmid < 0)
		fatal("shmget: %s", strerror(errno));

	/* 8 entries: the SQ ring (the CQ ring in the same mmap) fits a page. */
	struct io_uring_params p = { 0 };
	kc.ringfd = (int)syscall(SYS_io_uring_setup, 8, &p);
	if (kc.ringfd < 0)
		fatal("io_uring_setup: %s", strerror(errno));
	if (p.sq_off.array + p.sq_entries * sizeof(uint32_t) > 4 * KiB ||
	    !(p.features & IORING_FEAT_SINGLE_MMAP))
		fatal("io_uring's SQ ring does not fit one page here");
	kc.ring_id = fd_id(kc.ringfd, MM_OBJ_FILE);
}

static void start_subject(void)
{
	int pc[2], pr[2], cc[2], cr[2];
	if (pipe2(pc, O_CLOEXEC) || pipe2(pr, O_CLOEXEC) || pipe2(cc, O_CLOEXEC) ||
	    pipe2(cr, O_CLOEXEC))
		fatal("pipe2: %s", strerror(errno));
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		fatal("fork: %s", strerror(errno));
	if (pid == 0) {
		int keep[] = { pc[0], pr[1], cc[0], cr[1], kc.memfd, kc.filefd,
			       kc.ringfd };
		for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++)
			if (fcntl(keep[i], F_SETFD, 0) < 0)
				_exit(98);
		char a[4][16];
		snprintf(a[0], sizeof a[0], "%d", pc[0]);
		snprintf(a[1], sizeof a[1], "%d", pr[1]);
		snprintf(a[2], sizeof a[2], "%d", cc[0]);
		snprintf(a[3], sizeof a[3], "%d", cr[1]);
		execl(KC_SUBJECT_PATH, "kc_subject", a[0], a[1], a[2], a[3],
		      (char *)NULL);
		_exit(97);
	}
	kc.subject = pid;
	close(pc[0]);
	close(pr[1]);
	close(cc[0]);
	close(cr[1]);
	kc.pcmd = pc[1];
	kc.preply = pr[0];
	kc.ccmd = cc[1];
	kc.creply = cr[0];

	struct kc_reply r;
	get_reply(kc.preply, &r, "the parent (kc_subject " KC_SUBJECT_PATH ")");
	if (r.op != KC_OP_READY || r.err)
		fatal("the parent could not set up: %s", r.msg);
}

/* ------------------------------------------------------------------ */

/* The model's tables of pid as kB, with the per-level split. */
static long model_kb(struct mm_world *w, uint32_t pid, char *split, size_t cap)
{
	struct mm_proc_stats st;
	int err = mm_proc_stats(w, pid, &st);
	if (err < 0) {
		snprintf(split, cap, "mm_proc_stats: %s", mm_world_error(w));
		return -1;
	}
	snprintf(split, cap, "pte %" PRIu64 " pmd %" PRIu64 " pud %" PRIu64,
		 st.tables[PT_PTE], st.tables[PT_PMD], st.tables[PT_PUD]);
	return (long)((st.tables[PT_PTE] + st.tables[PT_PMD] + st.tables[PT_PUD]) * 4);
}

static void fail_step(unsigned n)
{
	kc.failures++;
	if (!kc.first_failure)
		kc.first_failure = (int)n;
}

/* Compares model and kernel for one process and prints the line. */
static void compare(struct mm_world *w, unsigned n, const char *name, uint32_t mpid,
		    pid_t pid, long base, long *prev_k, long *prev_m)
{
	char split[96];
	long m = model_kb(w, mpid, split, sizeof split);
	long k = vmpte_kb(pid) - base;
	bool ok = m == k && m >= 0;
	printf("    %-6s model %6ld kB (%-21s %+5ld)   kernel %6ld kB (%+5ld)   %s\n",
	       name, m, split, m - *prev_m, k, k - *prev_k,
	       ok ? "ok" : "MISMATCH");
	if (!ok)
		fail_step(n);
	*prev_k = k;
	*prev_m = m;
}

static int model_touch(struct mm_world *w, uint32_t pid, const struct step *s)
{
	for (uint64_t a = s->addr; a < s->addr + s->len; a += s->len2) {
		int err = mm_fault(w, pid, a, s->prot == WRITE);
		if (err < 0)
			return err;
	}
	return 0;
}

static int model_map(struct mm_world *w, uint32_t pid, const struct step *s,
		     unsigned n)
{
	struct mm_mapping m = {
		.addr = s->addr,
		.len = s->len,
		.prot = mm_prot(s->prot),
		.fixed = (s->flags & MAP_FIXED) != 0,
	};
	switch (s->obj) {
	case O_ANON:
		m.obj.kind = MM_OBJ_ANON;
		break;
	case O_SHMEM:
		/* A new shmem object per mmap; any unique identity will do. */
		m.obj = (struct mm_object_id){ .kind = MM_OBJ_SHMEM, .dev = 0,
					       .ino = (1ULL << 40) + n };
		m.flags = MM_VMA_SHARED;
		break;
	case O_MEMFD:
		m.obj = kc.memfd_id;
		m.offset = s->off;
		m.flags = MM_VMA_SHARED;
		break;
	case O_FILE:
		m.obj = kc.file_id;
		m.offset = s->off;
		m.flags = (s->flags & MAP_SHARED) ? MM_VMA_SHARED : 0;
		break;
	case O_SYSV:
		m.obj = (struct mm_object_id){ .kind = MM_OBJ_SYSV, .dev = 0,
					       .ino = (uint64_t)kc.shmid };
		m.flags = MM_VMA_SHARED;
		m.prot = MM_PROT_READ | MM_PROT_WRITE;
		break;
	case O_RING: {
		/* The ring's pages are inserted by mmap (vm_insert_pages). */
		m.obj = kc.ring_id;
		m.offset = s->off;
		m.flags = MM_VMA_SHARED | MM_VMA_PFNMAP;
		int err = mm_map(w, pid, &m);
		return err ? err : mm_fault_range(w, pid, s->addr, s->len, false);
	}
	case O_NONE:
		return -EINVAL;
	}
	return mm_map(w, pid, &m);
}

static const char *op_name(enum kc_op op)
{
	switch (op) {
	case KC_OP_MMAP:
	case KC_OP_MMAP_TOPDOWN: return "mmap";
	case KC_OP_MUNMAP: return "munmap";
	case KC_OP_MPROTECT: return "mprotect";
	case KC_OP_MREMAP: return "mremap";
	case KC_OP_MADVISE: return "madvise";
	case KC_OP_TOUCH: return "touch";
	case KC_OP_SHMAT: return "shmat";
	case KC_OP_SHMDT: return "shmdt";
	case KC_OP_FORK: return "fork";
	case KC_OP_EXIT: return "exit";
	default: return "?";
	}
}

/* Step n in the kernel: the command to the process it is for, and its
 * reply (fatal if the kernel refuses the step: the script is wrong).  A
 * fork's new child becomes the current one; an exit's child is reaped.
 * Returns the address the step must give (mmap, shmat, mremap), or 0. */
static uint64_t kernel_step(unsigned n, const struct step *s,
			    uint32_t *next_mpid)
{
	bool child = s->who == 'C';
	if (child && !kc.child)
		fatal("step %u is for the child, but there is none", n);
	int cmd = child ? kc.ccmd : kc.pcmd;
	int rep = child ? kc.creply : kc.preply;
	const char *who = child ? "the child" : "the parent";
	struct kc_reply r;
	struct kc_cmd c = {
		.op = s->op, .fd = -1, .prot = s->prot, .flags = s->flags,
		.addr = s->addr, .len = s->len, .addr2 = s->addr2,
		.len2 = s->len2, .off = s->off,
	};
	uint64_t expect = 0;

	switch (s->op) {
	case KC_OP_MMAP:
		switch (s->obj) {
		case O_ANON: c.flags = MAP_PRIVATE | MAP_ANONYMOUS | (s->flags & MAP_FIXED); break;
		case O_SHMEM: c.flags = MAP_SHARED | MAP_ANONYMOUS; break;
		case O_MEMFD: c.flags = MAP_SHARED; c.fd = kc.memfd; break;
		case O_FILE: c.fd = kc.filefd; break;
		default: fatal("step %u: bad object", n);
		}
		expect = s->addr;
		break;
	case KC_OP_MMAP_TOPDOWN:
		c.fd = kc.ringfd;
		expect = s->addr;
		break;
	case KC_OP_SHMAT:
		c.fd = kc.shmid;
		expect = s->addr;
		break;
	case KC_OP_MREMAP:
		expect = (s->flags & MREMAP_FIXED) ? s->addr2 : s->addr;
		break;
	case KC_OP_FORK:
	case KC_OP_EXIT:
		break;
	default:
		break;
	}

	send_cmd(cmd, &c);
	if (s->op == KC_OP_FORK) {
		struct kc_reply probe, ready;
		get_reply(kc.preply, &probe, "the probe child");
		if (probe.op != KC_OP_READY || probe.err || probe.vmpte_kb < 0)
			fatal("the probe child failed: %s", probe.msg);
		get_reply(kc.creply, &ready, "the new child");
		if (ready.op != KC_OP_READY || ready.err)
			fatal("the child could not set up: %s", ready.msg);
		get_reply(kc.preply, &r, who);
		if (r.ret <= 0 || r.pid != ready.pid)
			fatal("fork: parent says %d, child says %d", r.pid, ready.pid);
		kc.child = r.pid;
		kc.base_c = probe.vmpte_kb;
		kc.child_mpid = (*next_mpid)++;
		printf("    child pid %d; baseline VmPTE %ld kB (probe pid %d, "
		       "slot unmapped)\n", (int)kc.child, kc.base_c, probe.pid);
	} else {
		get_reply(rep, &r, who);
		if (r.op != c.op)
			fatal("step %u: reply to op %u for op %u", n, r.op, c.op);
		if (r.err || r.ret == -1)
			fatal("step %u: %s failed in %s: %s", n, op_name(s->op),
			      who, strerror(r.err));
		if (expect && (uint64_t)r.ret != expect)
			fatal("step %u: %s returned %#" PRIx64 ", not %#" PRIx64, n,
			      op_name(s->op), (uint64_t)r.ret, expect);
		if (s->op == KC_OP_EXIT) {
			struct kc_cmd reap = { .op = KC_OP_REAP, .fd = kc.child };
			send_cmd(kc.pcmd, &reap);
			get_reply(kc.preply, &r, "the parent");
			if (r.ret != kc.child)
				fatal("reaping the child: %s", strerror(r.err));
			kc.child = 0;
		}
	}
	return expect;
}

/* Step n in the model, for process mpid (a refusal there, or a failed
 * invariant, is a test failure). */
static void model_step(struct mm_world *w, unsigned n, const struct step *s,
		       uint32_t mpid, uint64_t expect)
{
	int err = 0;
	switch (s->op) {
	case KC_OP_MMAP:
	case KC_OP_MMAP_TOPDOWN:
	case KC_OP_SHMAT:
		err = model_map(w, mpid, s, n);
		break;
	case KC_OP_MUNMAP:
	case KC_OP_SHMDT:
		err = mm_unmap(w, mpid, s->addr, s->len);
		break;
	case KC_OP_MPROTECT:
		err = mm_protect(w, mpid, s->addr, s->len, mm_prot(s->prot));
		break;
	case KC_OP_MREMAP: {
		uint32_t fl = ((s->flags & MREMAP_MAYMOVE) ? MM_REMAP_MAYMOVE : 0) |
			      ((s->flags & MREMAP_FIXED) ? MM_REMAP_FIXED : 0) |
			      ((s->flags & MREMAP_DONTUNMAP) ? MM_REMAP_DONTUNMAP : 0);
		err = mm_remap(w, mpid, s->addr, s->len, expect, s->len2, fl);
		break;
	}
	case KC_OP_MADVISE:
		if (s->flags != MADV_DONTNEED)
			fatal("step %u: advice %d not scripted", n, s->flags);
		err = mm_advise(w, mpid, s->addr, s->len, MM_ADV_DONTNEED);
		break;
	case KC_OP_TOUCH:
		err = model_touch(w, mpid, s);
		break;
	case KC_OP_FORK:
		err = mm_fork(w, 1, kc.child_mpid);
		break;
	case KC_OP_EXIT:
		err = mm_exit(w, mpid);
		break;
	default:
		fatal("step %u: op not scripted", n);
	}
	if (err < 0) {
		printf("    MODEL REFUSED the step: %d (%s)\n", err, mm_world_error(w));
		fail_step(n);
	}
	if (mm_check(w) < 0) {
		printf("    mm_check FAILED: %s\n", mm_world_error(w));
		fail_step(n);
	}
}

/* Runs step n in the kernel, then in the model. */
static void run_step(struct mm_world *w, unsigned n, const struct step *s,
		     uint32_t *next_mpid)
{
	uint32_t mpid = s->who == 'C' ? kc.child_mpid : 1;
	printf("step %2u %c %-8s %s\n", n, s->who, op_name(s->op), s->what);
	uint64_t expect = kernel_step(n, s, next_mpid);
	model_step(w, n, s, mpid, expect);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		signal(sigs[i], on_signal);
	setup_objects();
	start_subject();

	/* Step 0: the parent's baseline, and that it does not drift. */
	kc.base_p = vmpte_kb(kc.subject);
	struct kc_cmd again = { .op = KC_OP_PRETOUCH };
	struct kc_reply r;
	send_cmd(kc.pcmd, &again);
	get_reply(kc.preply, &r, "the parent");
	if (r.err)
		fatal("pre-touch again: %s", r.msg);
	long again_kb = vmpte_kb(kc.subject);
	printf("step  0 P baseline: parent pid %d VmPTE %ld kB, after a second "
	       "pre-touch %ld kB; slot %#llx-%#llx is free\n", (int)kc.subject,
	       kc.base_p, again_kb, KC_SLOT_BASE, KC_SLOT_BASE + KC_SLOT_SIZE);
	if (again_kb != kc.base_p)
		fatal("the parent's baseline drifts (%ld kB -> %ld kB)", kc.base_p,
		      again_kb);

	struct mm_world *w = mm_world_new(&mm_policy_linux);
	if (!w)
		fatal("mm_world_new failed");
	mm_world_set_zero_page(w, kernel_zero_page());
	if (mm_create(w, 1) < 0)
		fatal("mm_create: %s", mm_world_error(w));

	uint32_t next_mpid = 2;
	long pk = 0, pm = 0, ck = 0, cm = 0;
	for (unsigned i = 0; i < kc_nsteps; i++) {
		unsigned n = i + 1;
		bool had_child = kc.child != 0;
		run_step(w, n, &kc_script[i], &next_mpid);
		compare(w, n, "parent", 1, kc.subject, kc.base_p, &pk, &pm);
		if (kc.child) {
			if (!had_child)
				ck = cm = 0;
			char name[16];
			snprintf(name, sizeof name, "child%u", kc.child_mpid - 1);
			compare(w, n, name, kc.child_mpid, kc.child, kc.base_c, &ck, &cm);
		}
	}

	struct kc_cmd quit = { .op = KC_OP_QUIT };
	send_cmd(kc.pcmd, &quit);
	get_reply(kc.preply, &r, "the parent");
	waitpid(kc.subject, NULL, 0);
	kc.subject = 0;
	mm_world_free(w);
	if (shmctl(kc.shmid, IPC_RMID, NULL) < 0)
		fatal("shmctl(IPC_RMID): %s", strerror(errno));
	kc.shmid = -1;
	cleanup();

	if (kc.failures) {
		printf("kernel_crosscheck: FAILED: %d mismatch(es), first at step %d\n",
		       kc.failures, kc.first_failure);
		return 1;
	}
	printf("kernel_crosscheck: %zu steps, model == kernel VmPTE after each\n",
	       kc_nsteps);
	return 0;
}
