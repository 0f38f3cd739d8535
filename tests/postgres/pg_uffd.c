/* SPDX-License-Identifier: MIT */
/*
 * The cluster's user allowed to make userfaultfds while the cluster lives,
 * so that `ptshare run` sees the server's page faults (docs/faults.md): the
 * commands docs/run.md, "allowing a user /dev/userfaultfd", gives a user,
 * run only when the user could not already, and undone afterwards.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pg_cluster.h"

#define UFFD_DEV "/dev/userfaultfd"
#define SETFACL "/usr/bin/setfacl"

int pg_uffd_find(char *why, size_t cap)
{
	if (access(UFFD_DEV, F_OK))
		snprintf(why, cap, "no %s (Linux 6.1 or later)", UFFD_DEV);
	else if (access(SETFACL, X_OK))
		snprintf(why, cap, "no %s (the acl package)", SETFACL);
	else
		return 0;
	return -1;
}

/* setfacl ARG ACL /dev/userfaultfd, as root: 0 when it succeeded. */
static int setfacl(const char *arg, const char *acl)
{
	const char *const argv[] = { SETFACL, arg, acl, UFFD_DEV, NULL };
	pid_t pid = fork();
	if (!pid) {
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	int status;
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		fprintf(stderr, "pg_cluster: %s %s %s %s failed\n", SETFACL, arg,
			acl, UFFD_DEV);
		return -1;
	}
	return 0;
}

int pg_uffd_allow(struct pg_cluster *c)
{
	char acl[96];
	if (pg_user_may(c, UFFD_DEV, R_OK | W_OK))
		return 0;
	snprintf(acl, sizeof(acl), "u:%s:rw", c->user);
	if (setfacl("-m", acl))
		return -1;
	c->uffd_allowed = true;
	if (!pg_user_may(c, UFFD_DEV, R_OK | W_OK)) {
		fprintf(stderr, "pg_cluster: %s still may not open %s\n", c->user,
			UFFD_DEV);
		return -1;
	}
	return 0;
}

void pg_uffd_restore(struct pg_cluster *c)
{
	char acl[96];
	if (!c->uffd_allowed)
		return;
	snprintf(acl, sizeof(acl), "u:%s", c->user);
	if (!setfacl("-x", acl))
		c->uffd_allowed = false;
}
