/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "path_open.h"

#define LINKS_MAX 40 /* links followed in one path, as the kernel's */

/* -1 with errno err and why said. */
static int refuse(struct path_open *o, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int refuse(struct path_open *o, int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(o->why, sizeof(o->why), fmt, ap);
	va_end(ap);
	errno = err;
	return -1;
}

static int failed(struct path_open *o, int err)
{
	return refuse(o, err, "%s", strerror(err));
}

static bool ours(uid_t uid)
{
	return uid == geteuid() || uid == 0;
}

/* Whether dir (named name) may be passed under o's rules: 0, or -1. */
static int dir_check(struct path_open *o, int dir, const char *name)
{
	struct stat st;
	if (!(o->rules & PATH_DIRS_OURS))
		return 0;
	if (fstat(dir, &st))
		return failed(o, errno);
	if (ours(st.st_uid) && (!(st.st_mode & 022) || (st.st_mode & S_ISVTX)))
		return 0;
	return refuse(o, EPERM, "%s (uid %u, mode %04o) is a directory another "
		      "user can change", name, (unsigned)st.st_uid,
		      (unsigned)(st.st_mode & 07777));
}

/* dir, opened O_PATH: 0, or -1 (and nothing open). */
static int enter(struct path_open *o, int *dir, int fd, const char *name)
{
	if (fd < 0)
		return failed(o, errno);
	close(*dir);
	*dir = fd;
	return dir_check(o, fd, name);
}

/* Whether dir is our own /proc/self/fd (or /proc/thread-self/fd). */
static bool own_fd_dir(int dir)
{
	static const char *const mine[] = { "/proc/self/fd", "/proc/thread-self/fd" };
	struct stat d, s;
	if (fstat(dir, &d))
		return false;
	for (size_t i = 0; i < sizeof(mine) / sizeof(mine[0]); i++)
		if (!stat(mine[i], &s) && s.st_dev == d.st_dev && s.st_ino == d.st_ino)
			return true;
	return false;
}

/* The fd a /proc link of ours names, when it names one: /dev/stderr and
 * /dev/fd/N mean "where my fd goes", at its offset, as the caller opened
 * it.  Another /proc link (another process's fd, a cwd) need not point at
 * a path: the kernel follows it. */
static int open_proc_link(struct path_open *o, int dir, const char *name)
{
	int fd;
	if (own_fd_dir(dir) && name[strspn(name, "0123456789")] == '\0') {
		int n = atoi(name), fl = fcntl(n, F_GETFL);
		if (fl < 0)
			return failed(o, errno);
		if ((o->flags & O_ACCMODE) != O_RDONLY && (fl & O_ACCMODE) == O_RDONLY)
			return refuse(o, EBADF, "fd %d is open for reading only", n);
		fd = fcntl(n, F_DUPFD_CLOEXEC, 0);
		o->held = true;
	} else {
		fd = openat(dir, name, o->flags | O_CLOEXEC, o->mode);
	}
	if (fd < 0 || fstat(fd, &o->st)) {
		int err = errno;
		if (fd >= 0)
			close(fd);
		return failed(o, err);
	}
	return fd;
}

/*
 * The walk: p is what is left of the path, in one of two buffers (a
 * link's target and the rest are put together in the other).  Each
 * component is opened O_PATH | O_NOFOLLOW relative to dir; the last with
 * the caller's flags and O_NOFOLLOW.  A link is looked at through an fd
 * of its own, so the link checked is the link read.
 */
static int walk(struct path_open *o, char buf[2][2 * PATH_MAX], int *dir)
{
	const char *p = buf[0];
	unsigned cur = 0, links = 0;
	for (;;) {
		char name[NAME_MAX + 1], target[PATH_MAX];
		struct stat st;
		struct statfs fs;
		p += strspn(p, "/");
		size_t n = strcspn(p, "/");
		if (n > NAME_MAX)
			return failed(o, ENAMETOOLONG);
		memcpy(name, n ? p : ".", n ? n : 1);
		name[n ? n : 1] = '\0';
		p += n;
		bool last = !p[strspn(p, "/")];
		if (last && *p)
			return refuse(o, EISDIR, "it ends with '/': a directory");
		if (last) {
			int fd = openat(*dir, name, o->flags | O_NOFOLLOW | O_CLOEXEC,
					o->mode);
			if (fd >= 0 && !fstat(fd, &o->st))
				return fd;
			int err = errno;
			if (fd >= 0)
				close(fd);
			/* A link gives ELOOP, or EACCES in a sticky directory
			 * (the kernel's O_CREAT of another user's link there):
			 * looked at below.  After ENXIO (a FIFO nobody reads, a
			 * socket), o->st says what is there. */
			bool there = !fstatat(*dir, name, &o->st, AT_SYMLINK_NOFOLLOW);
			if (err != ELOOP && !(there && S_ISLNK(o->st.st_mode)))
				return failed(o, err);
		} else {
			int fd = openat(*dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
			if (fd < 0 || fstat(fd, &st)) {
				int err = errno;
				if (fd >= 0)
					close(fd);
				return failed(o, err);
			}
			if (S_ISDIR(st.st_mode)) {
				if (enter(o, dir, fd, name))
					return -1;
				continue;
			}
			close(fd);
			if (!S_ISLNK(st.st_mode))
				return failed(o, ENOTDIR);
		}
		/* A link: looked at through an fd of its own. */
		int l = openat(*dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (l < 0 || fstat(l, &st) || fstatfs(l, &fs)) {
			int err = errno;
			if (l >= 0)
				close(l);
			return failed(o, err);
		}
		ssize_t tn = readlinkat(l, "", target, sizeof(target));
		close(l);
		if (!S_ISLNK(st.st_mode))
			return refuse(o, EAGAIN, "%s changed while it was opened (another "
				      "user renaming it?)", name);
		if (++links > LINKS_MAX)
			return failed(o, ELOOP);
		if (!ours(st.st_uid))
			return refuse(o, EPERM, "%s is a symbolic link of uid %u's: only "
				      "links of the caller's and root's are followed",
				      name, (unsigned)st.st_uid);
		if (fs.f_type == PROC_SUPER_MAGIC) {
			if (last)
				return open_proc_link(o, *dir, name);
			if (enter(o, dir, openat(*dir, name, O_PATH | O_DIRECTORY |
						 O_CLOEXEC), name))
				return -1;
			continue;
		}
		if (tn < 0 || (size_t)tn >= sizeof(target))
			return failed(o, tn < 0 ? errno : ENAMETOOLONG);
		target[tn] = '\0';
		char *next = buf[cur ^= 1];
		if ((size_t)snprintf(next, sizeof(buf[0]), "%s%s", target, p) >=
		    sizeof(buf[0]))
			return failed(o, ENAMETOOLONG);
		p = next;
		if (*p == '/' &&
		    enter(o, dir, open("/", O_PATH | O_DIRECTORY | O_CLOEXEC), "/"))
			return -1;
	}
}

int cli_path_open(struct path_open *o)
{
	char buf[2][2 * PATH_MAX];
	o->held = false;
	o->why[0] = '\0';
	size_t len = strlen(o->path);
	if (!len || len >= PATH_MAX)
		return failed(o, len ? ENAMETOOLONG : ENOENT);
	memcpy(buf[0], o->path, len + 1);
	const char *start = *o->path == '/' ? "/" : ".";
	int dir = open(start, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return failed(o, errno);
	int fd = dir_check(o, dir, start) ? -1 : walk(o, buf, &dir);
	int err = errno;
	close(dir);
	/* The last component, a directory, is passed as much as the others. */
	if (fd >= 0 && S_ISDIR(o->st.st_mode) && dir_check(o, fd, o->path)) {
		err = errno;
		close(fd);
		fd = -1;
	}
	errno = err;
	return fd;
}

int cli_path_dir_kept(const char *dir, char *why, size_t cap)
{
	struct path_open o = {
		.path = dir, .flags = O_PATH | O_DIRECTORY, .rules = PATH_DIRS_OURS,
	};
	int fd = cli_path_open(&o);
	if (fd < 0) {
		snprintf(why, cap, "%s", o.why);
		return -1;
	}
	close(fd);
	return 0;
}
