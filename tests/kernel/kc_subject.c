/* SPDX-License-Identifier: MIT */
/*
 * The measured processes of the kernel cross-check (see the comment at the
 * top of kernel_crosscheck.c for the method).  The driver execs this program
 * as the "parent"; on KC_OP_FORK it forks a probe child (which reports the
 * child's baseline VmPTE) and then the real child.  Both serve commands from
 * the driver over pipes: each command is one system call or one touch loop
 * inside the scripted 512 GiB slot, answered by one reply.
 *
 * This program is deliberately built WITHOUT sanitizers and linked with
 * -z now: it must not create page tables outside the slot once it has
 * pre-touched its address space (no lazy binding, no shadow memory, no
 * malloc, no stdio; static buffers and raw system calls only), so that its
 * VmPTE minus its baseline is exactly the tables of the scripted region.
 *
 * usage: kc_subject PARENT_CMD_FD PARENT_REPLY_FD CHILD_CMD_FD CHILD_REPLY_FD
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kc_proto.h"

#define PAGE 4096UL
/* How far the stack is grown before the baseline; command handling needs a
 * few KiB at most. */
#define STACK_PREGROW (256 * 1024)

static int cmd_fd, reply_fd;
static char maps_buf[512 * 1024];
static char status_buf[16 * 1024];
static struct kc_reply reply;

static void die(const char *what)
{
	char line[256];
	int n = snprintf(line, sizeof line, "kc_subject[%d]: %s: %s\n",
			 (int)getpid(), what, strerror(errno));
	if (n > 0)
		(void)!write(2, line, (size_t)n);
	_exit(99);
}

static void send_reply(void)
{
	if (write(reply_fd, &reply, sizeof reply) != (ssize_t)sizeof reply)
		die("write reply");
}

/* Reads a whole /proc file into buf with open/read only.  -1 on error. */
static ssize_t slurp(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t len = 0;
	for (;;) {
		ssize_t n = read(fd, buf + len, cap - 1 - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			close(fd);
			return -1;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len == cap - 1) {
			close(fd);
			errno = EFBIG;
			return -1;
		}
	}
	close(fd);
	buf[len] = '\0';
	return (ssize_t)len;
}

static long own_vmpte_kb(void)
{
	if (slurp("/proc/self/status", status_buf, sizeof status_buf) < 0)
		return -1;
	char *p = strstr(status_buf, "\nVmPTE:");
	if (!p)
		return -1;
	return strtol(p + 7, NULL, 10);
}

static uint64_t parse_hex(const char **s)
{
	uint64_t v = 0;
	for (;;) {
		char c = **s;
		if (c >= '0' && c <= '9')
			v = v * 16 + (uint64_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v * 16 + (uint64_t)(c - 'a' + 10);
		else
			return v;
		(*s)++;
	}
}

static const char *skip_field(const char *s)
{
	while (*s && *s != ' ' && *s != '\n')
		s++;
	while (*s == ' ')
		s++;
	return s;
}

/* A line of maps_buf: its range and length; the next line, or NULL at
 * the end. */
static const char *maps_line(const char *l, uint64_t *start, uint64_t *end,
			     int *len)
{
	const char *s = l;
	*start = parse_hex(&s);
	s++;
	*end = parse_hex(&s);
	const char *nl = strchr(l, '\n');
	*len = nl ? (int)(nl - l) : (int)strlen(l);
	return nl && nl[1] ? nl + 1 : NULL;
}

static int maps_overlap_slot(void)
{
	if (slurp("/proc/self/maps", maps_buf, sizeof maps_buf) < 0) {
		snprintf(reply.msg, sizeof reply.msg, "read /proc/self/maps: %s",
			 strerror(errno));
		return -1;
	}
	for (const char *l = maps_buf, *next; l && *l; l = next) {
		uint64_t start, end;
		int len;
		next = maps_line(l, &start, &end, &len);
		if (start < KC_SLOT_BASE + KC_SLOT_SIZE && end > KC_SLOT_BASE) {
			snprintf(reply.msg, sizeof reply.msg,
				 "the scripted 512 GiB slot is not free: %.*s", len, l);
			return -1;
		}
	}
	return 0;
}

/*
 * Reads every page of every readable mapping outside the slot, so that no
 * access made later outside the slot can allocate a page table.  Skips the
 * special mappings and pages of a file mapping beyond the end of the file
 * (SIGBUS).  Returns -1 with reply.msg set on failure.
 */
static int pretouch(void)
{
	if (slurp("/proc/self/maps", maps_buf, sizeof maps_buf) < 0) {
		snprintf(reply.msg, sizeof reply.msg, "read /proc/self/maps: %s",
			 strerror(errno));
		return -1;
	}
	for (char *l = maps_buf; *l; ) {
		char *nl = strchr(l, '\n');
		if (nl)
			*nl = '\0';
		const char *s = l;
		uint64_t start = parse_hex(&s);
		s++;
		uint64_t end = parse_hex(&s);
		s++;
		char readable = s[0];
		s = skip_field(s);          /* perms */
		uint64_t off = parse_hex(&s);
		s = skip_field(s);          /* offset */
		s = skip_field(s);          /* dev */
		const char *inode = s;
		s = skip_field(s);          /* inode */
		const char *path = s;
		bool in_slot = start >= KC_SLOT_BASE &&
			       end <= KC_SLOT_BASE + KC_SLOT_SIZE;
		bool special = !strcmp(path, "[vvar]") ||
			       !strcmp(path, "[vvar_vclock]") ||
			       !strcmp(path, "[vsyscall]");
		if (readable == 'r' && !in_slot && !special) {
			uint64_t limit = end;
			if (path[0] == '/' && inode[0] != '0') {
				struct stat st;
				if (stat(path, &st) < 0) {
					snprintf(reply.msg, sizeof reply.msg,
						 "cannot size file mapping %s: %s",
						 path, strerror(errno));
					return -1;
				}
				uint64_t size = ((uint64_t)st.st_size + PAGE - 1) &
						~(PAGE - 1);
				uint64_t avail = size > off ? size - off : 0;
				if (avail < end - start)
					limit = start + avail;
			}
			for (uint64_t p = start; p < limit; p += PAGE)
				(void)*(volatile const char *)(uintptr_t)p;
		}
		if (!nl)
			break;
		l = nl + 1;
	}
	return 0;
}

/* Grows the stack well beyond what command handling needs, page by page
 * from the top, before it is pre-touched and measured. */
static __attribute__((noinline)) void pregrow_stack(void)
{
	volatile char pad[STACK_PREGROW];
	for (size_t i = sizeof pad; i >= PAGE; i -= PAGE)
		pad[i - 1] = 0;
	pad[0] = 0;
}

/* Placeholders above the hole of a top-down mmap. */
#define HOLDERS_MAX 256
/* Below the stack's start, what get_unmapped_area never hands out
 * anyway (the stack's guard gap and more). */
#define STACK_MARGIN (64UL << 20)

/*
 * mmap with no address (KC_OP_MMAP_TOPDOWN): the kernel takes the highest
 * gap below mmap_base that fits, and places the mapping at its top.  With
 * every gap above c->addr + c->len held by a PROT_NONE placeholder (no
 * pages, so no page table), that gap is the one ending at c->addr + c->len.
 * The placeholders are removed afterwards.  The mapping's address, or -1.
 */
static long mmap_topdown(const struct kc_cmd *c)
{
	static uint64_t holder[HOLDERS_MAX][2];
	size_t n = 0;
	uint64_t above = c->addr + c->len, top = 0;

	if (slurp("/proc/self/maps", maps_buf, sizeof maps_buf) < 0)
		return -1;
	for (const char *l = maps_buf, *next; l && *l; l = next) {
		uint64_t start, end;
		int len;
		next = maps_line(l, &start, &end, &len);
		const char *stack = strstr(l, "[stack]");
		if (stack && stack < l + len)
			top = start - STACK_MARGIN;
		if (!top && start > above && n < HOLDERS_MAX) {
			holder[n][0] = above;
			holder[n++][1] = start;
		}
		above = end > above ? end : above;
	}
	if (!top || n == HOLDERS_MAX) {
		errno = E2BIG;
		return -1;
	}
	long r = -1;
	size_t held = 0;
	for (; held < n; held++) {
		uint64_t end = holder[held][1] < top ? holder[held][1] : top;
		if (end > holder[held][0] &&
		    syscall(SYS_mmap, holder[held][0], end - holder[held][0],
			    PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
			    MAP_FIXED_NOREPLACE, -1, 0) == -1)
			goto out;
		holder[held][1] = end;
	}
	r = (long)syscall(SYS_mmap, 0, c->len, c->prot, c->flags, c->fd, c->off);
out:
	for (size_t i = 0; i < held; i++)
		if (holder[i][1] > holder[i][0])
			syscall(SYS_munmap, holder[i][0], holder[i][1] - holder[i][0]);
	return r;
}

static void touch(uint64_t addr, uint64_t len, uint64_t stride, int write)
{
	for (uint64_t p = addr; p < addr + len; p += stride) {
		volatile char *c = (volatile char *)(uintptr_t)p;
		if (write)
			*c = (char)(p >> 12);
		else
			(void)*c;
	}
}

static void serve(bool is_parent);

static void do_fork(int child_cmd, int child_reply)
{
	/* The probe: same address space as the real child will have, minus
	 * the whole slot; pre-touched exactly like the real child. */
	pid_t probe = fork();
	if (probe < 0)
		die("fork probe");
	if (probe == 0) {
		memset(&reply, 0, sizeof reply);
		reply.op = KC_OP_READY;
		reply.pid = (int32_t)getpid();
		if (syscall(SYS_munmap, KC_SLOT_BASE, KC_SLOT_SIZE) != 0) {
			reply.err = errno;
			snprintf(reply.msg, sizeof reply.msg, "probe munmap slot: %s",
				 strerror(errno));
		} else if (pretouch() < 0) {
			reply.err = EIO;
		} else {
			reply.vmpte_kb = own_vmpte_kb();
		}
		send_reply();
		_exit(0);
	}
	int status;
	if (waitpid(probe, &status, 0) != probe)
		die("waitpid probe");

	pid_t child = fork();
	if (child < 0)
		die("fork");
	if (child == 0) {
		cmd_fd = child_cmd;
		reply_fd = child_reply;
		memset(&reply, 0, sizeof reply);
		reply.op = KC_OP_READY;
		reply.pid = (int32_t)getpid();
		if (pretouch() < 0)
			reply.err = EIO;
		send_reply();
		serve(false);
		_exit(0);
	}
	memset(&reply, 0, sizeof reply);
	reply.op = KC_OP_FORK;
	reply.pid = (int32_t)child;
	reply.ret = child;
	send_reply();
}

static int child_cmd_fd, child_reply_fd;

static void serve(bool is_parent)
{
	static struct kc_cmd c;
	for (;;) {
		ssize_t n = read(cmd_fd, &c, sizeof c);
		if (n == 0)
			_exit(0); /* the driver went away */
		if (n != (ssize_t)sizeof c)
			die("read command");
		memset(&reply, 0, sizeof reply);
		reply.op = c.op;
		long r = 0;
		switch (c.op) {
		case KC_OP_MMAP:
			/* Exact placement; MAP_FIXED only where the script
			 * means to replace a mapping. */
			if (!(c.flags & MAP_FIXED))
				c.flags |= MAP_FIXED_NOREPLACE;
			r = (long)syscall(SYS_mmap, c.addr, c.len, c.prot, c.flags,
					  c.fd, c.off);
			break;
		case KC_OP_MMAP_TOPDOWN:
			r = mmap_topdown(&c);
			break;
		case KC_OP_MUNMAP:
			r = syscall(SYS_munmap, c.addr, c.len);
			break;
		case KC_OP_MPROTECT:
			r = syscall(SYS_mprotect, c.addr, c.len, c.prot);
			break;
		case KC_OP_MREMAP:
			r = (long)syscall(SYS_mremap, c.addr, c.len, c.len2, c.flags,
					  c.addr2);
			break;
		case KC_OP_MADVISE:
			r = syscall(SYS_madvise, c.addr, c.len, c.flags);
			break;
		case KC_OP_TOUCH:
			touch(c.addr, c.len, c.len2, c.prot);
			break;
		case KC_OP_SHMAT:
			r = (long)syscall(SYS_shmat, c.fd, c.addr, 0);
			break;
		case KC_OP_SHMDT:
			r = syscall(SYS_shmdt, c.addr);
			break;
		case KC_OP_FORK:
			if (!is_parent)
				goto bad;
			do_fork(child_cmd_fd, child_reply_fd);
			continue;
		case KC_OP_EXIT:
			if (is_parent)
				goto bad;
			send_reply();
			_exit(0);
		case KC_OP_REAP: {
			int status;
			if (!is_parent)
				goto bad;
			r = waitpid(c.fd, &status, 0);
			break;
		}
		case KC_OP_PRETOUCH:
			if (pretouch() < 0)
				r = -1, errno = EIO;
			break;
		case KC_OP_QUIT:
			if (!is_parent)
				goto bad;
			send_reply();
			_exit(0);
		default:
		bad:
			r = -1;
			errno = EINVAL;
			break;
		}
		reply.ret = r;
		if (r == -1)
			reply.err = errno;
		send_reply();
	}
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		static const char usage[] =
			"usage: kc_subject PCMD PREPLY CCMD CREPLY (run by kernel_crosscheck)\n";
		(void)!write(2, usage, sizeof usage - 1);
		return 2;
	}
	cmd_fd = atoi(argv[1]);
	reply_fd = atoi(argv[2]);
	child_cmd_fd = atoi(argv[3]);
	child_reply_fd = atoi(argv[4]);

	/* The script is about small pages: no THP anywhere in this process
	 * or its children, whatever the system's THP settings say. */
	if (prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) < 0)
		die("prctl(PR_SET_THP_DISABLE)");
	pregrow_stack();
	memset(&reply, 0, sizeof reply);
	reply.op = KC_OP_READY;
	reply.pid = (int32_t)getpid();
	if (maps_overlap_slot() < 0 || pretouch() < 0)
		reply.err = EIO;
	send_reply();
	if (reply.err)
		return 1;
	serve(true);
	return 0;
}
