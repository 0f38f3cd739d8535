/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE /* fopencookie */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cli_options.h"
#include "path_open.h"
#include "ptshare/wire.h"

int cli_u64(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-')
		return -1;
	*out = v;
	return 0;
}

int cli_faults(const char *s, uint32_t *out)
{
	static const char *const names[] = {
		[PTS_FAULTS_OFF] = "off", [PTS_FAULTS_TABLE] = "table",
		[PTS_FAULTS_ALL] = "all",
	};
	for (uint32_t m = 0; m < sizeof(names) / sizeof(names[0]); m++)
		if (!strcmp(s, names[m])) {
			*out = m;
			return 0;
		}
	return -1;
}

int cli_group_by(const char *s, uint32_t *out)
{
	static const char *const names[] = { CLI_GROUP_BY_NAMES };
	for (uint32_t m = 0; m < sizeof(names) / sizeof(names[0]); m++)
		if (!strcmp(s, names[m])) {
			*out = m + 1;
			return 0;
		}
	return -1;
}

/* Whether what path_open found (o->st) may take an output, the open
 * having failed with open_err (or 0): 0, or -1 with errno and why.  A
 * report may tell one user about another's processes, and a trace holds
 * everything a program did: they go where the caller alone reads them, or
 * where the caller chose. */
static int output_kind(const struct path_open *o, int open_err, char *why,
		       size_t cap)
{
	const struct stat *st = &o->st;
	bool file = S_ISREG(st->st_mode), fifo = S_ISFIFO(st->st_mode);
	int err = open_err;
	if (!file && !fifo && !S_ISCHR(st->st_mode)) {
		snprintf(why, cap, "it is not a regular file, a FIFO or a "
			 "character device");
		err = EINVAL;
	} else if (st->st_uid != geteuid() && (file || st->st_uid)) {
		/* A FIFO or a device of root's will do: /dev/null, a tty. */
		snprintf(why, cap, "it is a %s of uid %u's", file ? "file" : fifo
			 ? "FIFO" : "device", (unsigned)st->st_uid);
		err = EPERM;
	} else if (file && st->st_nlink > 1) {
		/* Its other name may be anywhere: /etc/shadow, linked. */
		snprintf(why, cap, "it is a file with %ju names (hard links)",
			 (uintmax_t)st->st_nlink);
		err = EMLINK;
	} else if (fifo && open_err == ENXIO) {
		snprintf(why, cap, "it is a FIFO with no reader: start its reader "
			 "first");
	} else if (open_err) {
		snprintf(why, cap, "%s", strerror(open_err));
	}
	errno = err;
	return err ? -1 : 0;
}

/* A stream on an output's fd that keeps the errno of the first write
 * that failed: stdio keeps only a flag, and drops what it could not
 * write, so that the close may well succeed (a full disk was then told
 * as "Input/output error"). */
struct output_stream {
	int fd;
	int err;
};

static int closed_err; /* the last output_stream closed: its first error */

static ssize_t stream_write(void *cookie, const char *buf, size_t n)
{
	struct output_stream *s = cookie;
	size_t done = 0;
	while (done < n && !s->err) {
		ssize_t w = write(s->fd, buf + done, n - done);
		if (w > 0)
			done += (size_t)w;
		else if (w < 0 && errno != EINTR)
			s->err = errno;
		else if (!w)
			s->err = EIO;
	}
	return (ssize_t)done;
}

static int stream_close(void *cookie)
{
	struct output_stream *s = cookie;
	if (close(s->fd) && errno != EINTR && !s->err)
		s->err = errno;
	closed_err = s->err;
	free(s);
	return closed_err ? -1 : 0;
}

static FILE *stream_open(int fd)
{
	static const cookie_io_functions_t io = {
		.write = stream_write, .close = stream_close,
	};
	struct output_stream *s = malloc(sizeof(*s));
	FILE *f = s ? fopencookie(s, "w", io) : NULL;
	if (!f) {
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	*s = (struct output_stream){ fd, 0 };
	return f;
}

FILE *cli_output_open(const char *path, char *why, size_t cap)
{
	if (!strcmp(path, "-"))
		return stdout;
	/* O_NONBLOCK: a FIFO nobody reads would hold the open. */
	struct path_open o = {
		.path = path, .flags = O_WRONLY | O_CREAT | O_NONBLOCK, .mode = 0600,
	};
	int fd = cli_path_open(&o), err = errno;
	/* ENXIO: a FIFO with no reader, a socket; which says why. */
	if (fd < 0 && err == ENXIO) {
		output_kind(&o, err, why, cap);
		return NULL;
	}
	if (fd < 0) {
		snprintf(why, cap, "%s", o.why);
		errno = err;
		return NULL;
	}
	/* An fd of the caller's is written as it is, where it stands.  A
	 * file is made private and emptied only once it is known to be the
	 * caller's alone; F_SETFL clears O_NONBLOCK. */
	*why = '\0';
	if (!o.held && (output_kind(&o, 0, why, cap) || fcntl(fd, F_SETFL, 0) ||
			(S_ISREG(o.st.st_mode) &&
			 (fchmod(fd, 0600) || ftruncate(fd, 0))))) {
		err = errno;
		if (!*why)
			snprintf(why, cap, "%s", strerror(err));
		close(fd);
		errno = err;
		return NULL;
	}
	FILE *f = stream_open(fd);
	if (!f) {
		snprintf(why, cap, "%s", strerror(ENOMEM));
		close(fd);
		errno = ENOMEM;
	}
	return f;
}

int cli_output_close(FILE *f)
{
	if (f == stdout || f == stderr) {
		bool failed = ferror(f);
		return fflush(f) || failed ? (errno ? errno : EIO) : 0;
	}
	closed_err = 0;
	fclose(f);
	return closed_err;
}

/* path's directory, opened as cli_path_open() opens it, and its last
 * name, into o: 0, or -1 with errno and why. */
static int replace_dir(struct cli_replace *o, const char *path, char *why,
		       size_t cap)
{
	const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;
	char dir[PATH_MAX];
	size_t n = slash ? (size_t)(slash - path) : 0;
	if (!*name) {
		snprintf(why, cap, "it ends with '/': a directory");
		errno = EISDIR;
		return -1;
	}
	if (strlen(name) >= sizeof(o->name) || n >= sizeof(dir)) {
		snprintf(why, cap, "%s", strerror(ENAMETOOLONG));
		errno = ENAMETOOLONG;
		return -1;
	}
	/* "name": ".", "/name": "/", "dir/name": "dir". */
	snprintf(dir, sizeof(dir), "%.*s", (int)n, path);
	struct path_open d = { .path = n ? dir : slash ? "/" : ".",
			       .flags = O_RDONLY | O_DIRECTORY };
	if ((o->dir = cli_path_open(&d)) < 0) {
		snprintf(why, cap, "%s", d.why);
		return -1;
	}
	snprintf(o->name, sizeof(o->name), "%s", name);
	return 0;
}

/* The new file, a hidden name of its own beside o->name: the fd, or -1. */
static int replace_new(struct cli_replace *o, mode_t mode)
{
	for (int tries = 0; tries < 16; tries++) {
		uint32_t r;
		if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
			return -1;
		snprintf(o->tmp, sizeof(o->tmp), ".%.200s.%08x", o->name, r);
		int fd = openat(o->dir, o->tmp, O_WRONLY | O_CREAT | O_EXCL |
				O_NOFOLLOW | O_CLOEXEC, mode);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	return -1;
}

FILE *cli_replace_open(struct cli_replace *o, const char *path, mode_t mode,
		       char *why, size_t cap)
{
	*o = (struct cli_replace){ .dir = -1, .fd = -1 };
	struct stat st;
	if (!strcmp(path, "-"))
		return cli_output_open(path, why, cap);
	if (replace_dir(o, path, why, cap))
		return NULL;
	int gone = fstatat(o->dir, o->name, &st, AT_SYMLINK_NOFOLLOW) ? errno : 0;
	if (!gone && !S_ISREG(st.st_mode)) {
		close(o->dir);
		o->dir = -1;
		return cli_output_open(path, why, cap);
	}
	FILE *f = NULL;
	errno = gone == ENOENT ? 0 : gone;
	if (!errno && (o->fd = replace_new(o, mode)) >= 0 &&
	    !(f = stream_open(o->fd)))
		unlinkat(o->dir, o->tmp, 0);
	if (!f) {
		int err = errno;
		snprintf(why, cap, "%s", strerror(err));
		if (o->fd >= 0)
			close(o->fd);
		close(o->dir);
		errno = err;
	}
	return f;
}

void cli_replace_abandon(struct cli_replace *o, FILE *f)
{
	cli_output_close(f);
	if (o->dir < 0)
		return;
	unlinkat(o->dir, o->tmp, 0);
	close(o->dir);
}

int cli_replace_close(struct cli_replace *o, FILE *f)
{
	if (o->dir < 0)
		return cli_output_close(f);
	fflush(f);
	int err = fsync(o->fd) ? errno : 0;
	int closed = cli_output_close(f);
	err = closed ? closed : err;
	if (!err && renameat(o->dir, o->tmp, o->dir, o->name))
		err = errno;
	if (err)
		unlinkat(o->dir, o->tmp, 0);
	else if (fsync(o->dir) && errno != EINVAL) /* EINVAL: not syncable */
		err = errno;
	close(o->dir);
	return err;
}
