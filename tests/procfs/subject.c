/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE /* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "subject.h"

/* Smaller than PIPE_BUF: one atomic write. */
struct subject_cmd {
	int (*fn)(void *arg);
	size_t len;
	unsigned char arg[SUBJECT_ARG_MAX];
};

static void subject_loop(int cmd_fd, int reply_fd)
{
	struct subject_cmd cmd;

	while (read(cmd_fd, &cmd, sizeof(cmd)) == (ssize_t)sizeof(cmd)) {
		int ret = cmd.fn(cmd.len ? cmd.arg : NULL);
		if (write(reply_fd, &ret, sizeof(ret)) != (ssize_t)sizeof(ret))
			break;
	}
	/* No atexit handlers: they belong to the test process. */
	_exit(0);
}

int subject_start(struct subject *s)
{
	int cmd[2], reply[2];

	if (pipe2(cmd, O_CLOEXEC))
		return -errno;
	if (pipe2(reply, O_CLOEXEC)) {
		int err = -errno;
		close(cmd[0]);
		close(cmd[1]);
		return err;
	}
	s->pid = fork();
	if (s->pid == 0) {
		close(cmd[1]);
		close(reply[0]);
		subject_loop(cmd[0], reply[1]);
	}
	int err = s->pid < 0 ? -errno : 0;
	close(cmd[0]);
	close(reply[1]);
	if (err) {
		close(cmd[1]);
		close(reply[0]);
		return err;
	}
	s->cmd_fd = cmd[1];
	s->reply_fd = reply[0];
	return 0;
}

int subject_run(struct subject *s, int (*fn)(void *arg), const void *arg,
		size_t len)
{
	struct subject_cmd cmd = { fn, len, { 0 } };
	int ret;

	if (len > sizeof(cmd.arg))
		return -E2BIG;
	if (len)
		memcpy(cmd.arg, arg, len);
	if (write(s->cmd_fd, &cmd, sizeof(cmd)) != (ssize_t)sizeof(cmd))
		return -EPIPE;
	if (read(s->reply_fd, &ret, sizeof(ret)) != (ssize_t)sizeof(ret))
		return -EPIPE;
	return ret;
}

int subject_stop(struct subject *s)
{
	int status = 0;

	close(s->cmd_fd);
	close(s->reply_fd);
	if (s->pid > 0) {
		kill(s->pid, SIGKILL);
		if (waitpid(s->pid, &status, 0) < 0)
			status = -errno;
	}
	s->pid = 0;
	return status;
}

static int range_madvise(void *range, int advice)
{
	const struct subject_range *r = range;

	return madvise((void *)r->addr, r->len, advice) ? -errno : 0;
}

int subject_populate_write(void *range)
{
	return range_madvise(range, MADV_POPULATE_WRITE);
}

int subject_populate_read(void *range)
{
	return range_madvise(range, MADV_POPULATE_READ);
}

int subject_munmap(void *range)
{
	const struct subject_range *r = range;

	return munmap((void *)r->addr, r->len) ? -errno : 0;
}
