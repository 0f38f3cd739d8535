/* SPDX-License-Identifier: MIT */
/*
 * The program `ptshare run` traces, checked up front: the shim rides on
 * LD_PRELOAD, which the dynamic loader applies only to dynamically linked
 * programs of its own class, and ignores for set-user-ID and set-group-ID
 * ones that change the user or group.  A program it would not reach is
 * refused rather than run untraced.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run.h"

/* As the kernel: a script's interpreter may be a script, a few deep. */
#define INTERP_DEPTH_MAX 4

static bool executable_file(const char *path)
{
	struct stat st;
	return !stat(path, &st) && S_ISREG(st.st_mode) && !access(path, X_OK);
}

int program_resolve(const char *cmd, char *path, size_t cap)
{
	if (strchr(cmd, '/')) {
		if ((size_t)snprintf(path, cap, "%s", cmd) >= cap)
			return -ENAMETOOLONG;
		return executable_file(path) ? 0 : access(path, F_OK) ? -ENOENT : -EACCES;
	}
	const char *dirs = getenv("PATH");
	int err = -ENOENT;
	/* An empty PATH entry is the current directory, as for execvp(). */
	for (const char *d = dirs ? dirs : "/bin:/usr/bin"; ; ) {
		size_t n = strcspn(d, ":");
		if ((size_t)snprintf(path, cap, "%.*s%s%s", (int)n, d, n ? "/" : "",
				     cmd) < cap) {
			if (executable_file(path))
				return 0;
			if (!access(path, F_OK))
				err = -EACCES;
		}
		if (!d[n])
			return err;
		d += n + 1;
	}
}

/* The interpreter of a "#!" script into interp; false when not a script. */
static bool script_interpreter(int fd, char *interp, size_t cap)
{
	char line[256];
	ssize_t n = pread(fd, line, sizeof(line) - 1, 0);
	if (n < 2 || line[0] != '#' || line[1] != '!')
		return false;
	line[n] = '\0';
	char *p = line + 2 + strspn(line + 2, " \t");
	size_t len = strcspn(p, " \t\n");
	if (!len || len >= cap)
		return false;
	memcpy(interp, p, len);
	interp[len] = '\0';
	return true;
}

/* NULL when the ELF program at fd has an interpreter (the dynamic loader)
 * and our class; else what is wrong.  Not an ELF file: NULL (the kernel
 * decides what runs it). */
static const char *elf_problem(int fd)
{
	Elf64_Ehdr eh;
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG))
		return NULL;
	if (eh.e_ident[EI_CLASS] != ELFCLASS64)
		return "is a 32-bit program, which the 64-bit libptshare.so cannot "
		       "be loaded into";
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		if (pread(fd, &ph, sizeof(ph),
			  (off_t)(eh.e_phoff + (uint64_t)i * eh.e_phentsize)) != sizeof(ph))
			break;
		if (ph.p_type == PT_INTERP)
			return NULL;
	}
	return "is statically linked";
}

/* What keeps LD_PRELOAD out of a program: what is wrong, and the file it
 * is wrong with (the program, or a script's interpreter). */
struct problem {
	char what[160];
	char culprit[PATH_MAX];
};

/* Whether an exec of the file st changes our ids: the kernel then gives
 * the loader AT_SECURE, and the loader ignores LD_PRELOAD.  A
 * set-user-ID file of our own (real) uid changes nothing (root running a
 * program of root's), nor a set-group-ID one of our gid: preloaded. */
static bool set_id_problem(const struct stat *st, char *what, size_t cap)
{
	if ((st->st_mode & S_ISUID) && st->st_uid != getuid())
		snprintf(what, cap, "is set-user-ID to uid %u, and the dynamic "
			 "loader ignores LD_PRELOAD when an exec changes the user",
			 (unsigned)st->st_uid);
	else if ((st->st_mode & S_ISGID) && (st->st_mode & S_IXGRP) &&
		 st->st_gid != getgid())
		snprintf(what, cap, "is set-group-ID to gid %u, and the dynamic "
			 "loader ignores LD_PRELOAD when an exec changes the group",
			 (unsigned)st->st_gid);
	else
		return false;
	return true;
}

/* Whether LD_PRELOAD cannot follow path into the program: p says why. */
static bool problem_of(const char *path, struct problem *p, int depth)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false; /* unreadable: exec will tell */
	struct stat st;
	char interp[256];
	const char *elf;
	bool found = true;
	if (!fstat(fd, &st) && set_id_problem(&st, p->what, sizeof(p->what))) {
		/* said */
	} else if (depth < INTERP_DEPTH_MAX &&
		   script_interpreter(fd, interp, sizeof(interp))) {
		close(fd);
		return problem_of(interp, p, depth + 1);
	} else if ((elf = elf_problem(fd))) {
		snprintf(p->what, sizeof(p->what), "%s", elf);
	} else {
		found = false;
	}
	close(fd);
	if (found)
		snprintf(p->culprit, sizeof(p->culprit), "%s", path);
	return found;
}

bool program_preloadable(const char *path, char *why, size_t cap)
{
	struct problem p;
	if (!problem_of(path, &p, 0))
		return true;
	if (!strcmp(p.culprit, path))
		snprintf(why, cap, "%s %s", path, p.what);
	else
		snprintf(why, cap, "%s runs through %s, which %s", path, p.culprit,
			 p.what);
	return false;
}
