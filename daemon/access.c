/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "access.h"
#include "cli/cli.h"

/* Users a list may name: a system-wide daemon serves a few services' users
 * (or all of them). */
#define ALLOW_MAX 64

static struct {
	bool all;
	size_t n;
	uid_t uid[ALLOW_MAX];
} allowed;

/* A user name, or a uid in decimal: 0, or -1. */
static int user_id(const char *name, uid_t *uid)
{
	uint64_t n;
	if (!cli_u64(name, &n)) {
		if (n >= (uid_t)-1)
			return -1;
		*uid = (uid_t)n;
		return 0;
	}
	struct passwd *pw = getpwnam(name);
	if (!pw)
		return -1;
	*uid = pw->pw_uid;
	return 0;
}

int access_allow_users(const char *list, char *err, size_t cap)
{
	char name[256];
	if (!strcmp(list, "all")) {
		allowed.all = true;
		return 0;
	}
	for (const char *p = list;; p++) {
		size_t len = strcspn(p, ",");
		if (!len || len >= sizeof(name)) {
			snprintf(err, cap, "--allow-users: an empty or overlong name in '%s'",
				 list);
			return -1;
		}
		memcpy(name, p, len);
		name[len] = '\0';
		if (allowed.n == ALLOW_MAX) {
			snprintf(err, cap, "--allow-users: more than %d users", ALLOW_MAX);
			return -1;
		}
		if (user_id(name, &allowed.uid[allowed.n])) {
			snprintf(err, cap, "--allow-users: no user '%s'", name);
			return -1;
		}
		/* The daemon's own user is served anyway. */
		allowed.n += allowed.uid[allowed.n] != geteuid();
		p += len;
		if (!*p)
			return 0;
	}
}

bool access_others_allowed(void)
{
	return allowed.all || allowed.n;
}

int access_check_socket_dir(const char *path, char *err, size_t cap)
{
	char dir[PATH_MAX];
	struct stat st;
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else
		slash[slash == dir] = '\0';
	if (stat(dir, &st)) {
		snprintf(err, cap, "%s: %s", dir, strerror(errno));
		return -1;
	}
	bool others = access_others_allowed();
	bool owner = st.st_uid == geteuid() || (others && st.st_uid == 0);
	if (!owner || (st.st_mode & (others ? 022 : 077))) {
		snprintf(err, cap, "its directory %s (mode %04o, uid %u) is not %s "
			 "(docs/daemon.md, Access)", dir, (unsigned)(st.st_mode & 07777),
			 (unsigned)st.st_uid, others
			 ? "the daemon user's or root's, writable by them alone"
			 : "the daemon user's alone: mode 0700");
		return -1;
	}
	return 0;
}

int access_open_socket(const char *path)
{
	return access_others_allowed() && chmod(path, 0666) ? -errno : 0;
}

bool access_may_connect(uid_t uid)
{
	if (uid == geteuid() || allowed.all)
		return true;
	for (size_t i = 0; i < allowed.n; i++)
		if (allowed.uid[i] == uid)
			return true;
	return false;
}

bool access_may_report(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}
