/* SPDX-License-Identifier: MIT */
/* Reading whole /proc files into growing buffers. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procfs_internal.h"

/* Most status files fit at once; maps files double from here. */
#define PROCFS_READ_MIN 4096

int procfs_open(int pid, const char *name)
{
	char path[64];

	if (pid <= 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%d/%s", pid, name);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	/* /proc/PID itself is gone: the process exited and was reaped. */
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	return fd;
}

/* Room for at least one more read of a useful size, plus the NUL. */
static int text_reserve(struct procfs_text *t)
{
	size_t need = t->len + PROCFS_READ_MIN / 2 + 1;

	if (need <= t->cap)
		return 0;
	return grow_array((void **)&t->data, &t->cap,
			  need > PROCFS_READ_MIN ? need : PROCFS_READ_MIN, 1);
}

/*
 * The kernel stops a maps-like file at a clean EOF once the mm it was
 * opened on has no users left (exit, exec), whatever it had printed.  A file
 * that had text must show text again from offset 0 while the mm lives, so a
 * second, one-byte read tells a real end from a truncated one.
 */
static int check_mm_alive(int fd)
{
	char c;
	ssize_t r = pread(fd, &c, 1, 0);

	if (r < 0)
		return -errno;
	return r == 1 ? 0 : -ESRCH;
}

int procfs_read_fd(int fd, struct procfs_text *t, bool check_mm)
{
	t->len = 0;
	for (;;) {
		int err = text_reserve(t);
		if (err)
			return err;
		ssize_t r = read(fd, t->data + t->len, t->cap - t->len - 1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			break;
		t->len += (size_t)r;
	}
	t->data[t->len] = '\0';
	/* Nothing at all from offset 0 is no address space (kernel thread,
	 * zombie): a true answer, not a truncation. */
	if (check_mm && lseek(fd, 0, SEEK_CUR) > 0)
		return check_mm_alive(fd);
	return 0;
}

int procfs_read_file(int pid, const char *name, struct procfs_text *t,
		     bool check_mm)
{
	int fd = procfs_open(pid, name);

	if (fd < 0)
		return fd;
	int err = procfs_read_fd(fd, t, check_mm);
	close(fd);
	return err;
}

int procfs_text_set(struct procfs_text *t, const char *text, size_t len)
{
	if (grow_array((void **)&t->data, &t->cap, len + 1, 1))
		return -ENOMEM;
	memcpy(t->data, text, len);
	t->data[len] = '\0';
	t->len = len;
	return 0;
}
