/* SPDX-License-Identifier: MIT */
/*
 * The program `ptshare run` traces, checked up front: the shim rides on
 * LD_PRELOAD, which the dynamic loader applies only to dynamically linked
 * programs of its own class, and ignores for set-user-ID and set-group-ID
 * ones.  A program it would not reach is refused rather than run untraced.
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

/* NULL when LD_PRELOAD follows path into the program; else what is wrong,
 * with the file it is wrong with (path, or a script's interpreter) in
 * culprit. */
static const char *problem_of(const char *path, char *culprit, size_t cap,
			      int depth)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL; /* unreadable: exec will tell */
	struct stat st;
	const char *problem;
	char interp[256];
	if (!fstat(fd, &st) && ((st.st_mode & S_ISUID) ||
				((st.st_mode & S_ISGID) && (st.st_mode & S_IXGRP)))) {
		problem = "is set-user-ID or set-group-ID, and the dynamic loader "
			  "ignores LD_PRELOAD for such programs";
	} else if (depth < INTERP_DEPTH_MAX &&
		   script_interpreter(fd, interp, sizeof(interp))) {
		close(fd);
		return problem_of(interp, culprit, cap, depth + 1);
	} else {
		problem = elf_problem(fd);
	}
	close(fd);
	if (problem)
		snprintf(culprit, cap, "%s", path);
	return problem;
}

bool program_preloadable(const char *path, char *why, size_t cap)
{
	char culprit[PATH_MAX];
	const char *problem = problem_of(path, culprit, sizeof(culprit), 0);
	if (problem && !strcmp(culprit, path))
		snprintf(why, cap, "%s %s", path, problem);
	else if (problem)
		snprintf(why, cap, "%s runs through %s, which %s", path, culprit,
			 problem);
	return !problem;
}
