/* SPDX-License-Identifier: MIT */
/* The schema's checker run on a document (schema_check.h). */
#define _GNU_SOURCE
#include "schema_check.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* Debian's python3, which python3-jsonschema is installed for. */
#define SCHEMA_PYTHON "/usr/bin/python3"

/* The checker on path ("-": the file open at in, as its stdin): its exit
 * status is the answer. */
static bool run_checker(const char *path, int in)
{
	const char *argv[] = { SCHEMA_PYTHON, PTSHARE_SCHEMA_CHECK,
			       PTSHARE_REPORT_SCHEMA, path, NULL };
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int status;
	posix_spawn_file_actions_init(&fa);
	if (in >= 0)
		posix_spawn_file_actions_adddup2(&fa, in, 0);
	int err = posix_spawn(&pid, argv[0], &fa, NULL, (char **)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (err) {
		fprintf(stderr, "schema check: %s: %s\n", argv[0], strerror(err));
		return false;
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			perror("schema check: waitpid");
			return false;
		}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return true;
	fprintf(stderr, "schema check of %s against %s failed (status %#x)\n",
		path, PTSHARE_REPORT_SCHEMA, status);
	return false;
}

bool schema_valid(const char *text, size_t len, const char *name)
{
	/* In a memfd, not a pipe: the checker may stop reading early. */
	int fd = memfd_create("ptshare-schema-check", MFD_CLOEXEC);
	bool ok = fd >= 0;
	for (size_t off = 0; ok && off < len;) {
		ssize_t n = write(fd, text + off, len - off);
		if (n < 0 && errno != EINTR)
			ok = false;
		off += n > 0 ? (size_t)n : 0;
	}
	if (!ok || lseek(fd, 0, SEEK_SET)) {
		perror("schema check: memfd");
		ok = false;
	}
	ok = ok && run_checker("-", fd);
	if (!ok)
		fprintf(stderr, "schema check: %s is not a valid document\n", name);
	if (fd >= 0)
		close(fd);
	return ok;
}

/* The files found valid: a file is checked again only once it changed. */
#define CHECKED_MAX 32
static struct checked {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
} checked[CHECKED_MAX];
static unsigned nchecked;

static bool same_file(const struct checked *c, const struct stat *st)
{
	return c->dev == st->st_dev && c->ino == st->st_ino &&
	       c->size == st->st_size &&
	       c->mtime.tv_sec == st->st_mtim.tv_sec &&
	       c->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

bool schema_valid_file(const char *path)
{
	struct stat st;
	if (stat(path, &st)) {
		fprintf(stderr, "schema check: %s: %s\n", path, strerror(errno));
		return false;
	}
	for (unsigned i = 0; i < CHECKED_MAX; i++)
		if (same_file(&checked[i], &st))
			return true;
	if (!run_checker(path, -1))
		return false;
	checked[nchecked++ % CHECKED_MAX] = (struct checked){
		st.st_dev, st.st_ino, st.st_size, st.st_mtim
	};
	return true;
}
