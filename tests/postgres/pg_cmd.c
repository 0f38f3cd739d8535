/* SPDX-License-Identifier: MIT */
/* Finding PostgreSQL and the postgres user, and running commands as it. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pg_cluster.h"
#include "lib/clock.h"

void pg_sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static bool is_program(const char *dir, const char *name)
{
	char path[PATH_MAX];
	return (size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) < sizeof(path) &&
	       !access(path, X_OK);
}

/* The newest /usr/lib/postgresql/N/bin holding a postgres (Debian's
 * layout: several major versions may sit side by side). */
static bool newest_bindir(char *out, size_t cap)
{
	DIR *d = opendir("/usr/lib/postgresql");
	long best = -1;
	struct dirent *e;
	if (!d)
		return false;
	while ((e = readdir(d))) {
		char *end, dir[PATH_MAX];
		long v = strtol(e->d_name, &end, 10);
		snprintf(dir, sizeof(dir), "/usr/lib/postgresql/%s/bin", e->d_name);
		if (end != e->d_name && !*end && v > best && is_program(dir, "postgres")) {
			best = v;
			snprintf(out, cap, "%s", dir);
		}
	}
	closedir(d);
	return best >= 0;
}

int pg_cluster_find(struct pg_cluster *c, char *why, size_t cap)
{
	*c = (struct pg_cluster){ .port = 5432, .runner = -1 };
	const char *user = getenv("PTSHARE_PG_USER");
	const char *bindir = getenv("PTSHARE_PG_BINDIR");
	user = user && *user ? user : "postgres";
	if (geteuid() != 0) {
		snprintf(why, cap, "not root: the cluster is made as root and run "
			 "as the %s user", user);
		return -1;
	}
	struct passwd *pw = getpwnam(user);
	if (!pw || !pw->pw_uid) {
		snprintf(why, cap, "no unprivileged user '%s' (PTSHARE_PG_USER)", user);
		return -1;
	}
	snprintf(c->user, sizeof(c->user), "%s", user);
	c->uid = pw->pw_uid;
	c->gid = pw->pw_gid;
	if (bindir && *bindir)
		snprintf(c->bindir, sizeof(c->bindir), "%s", bindir);
	else if (!newest_bindir(c->bindir, sizeof(c->bindir)))
		snprintf(c->bindir, sizeof(c->bindir), "/usr/lib/postgresql/?/bin");
	static const char *const needed[] = { "initdb", "postgres", "pg_isready",
					       "pgbench", "psql" };
	for (size_t i = 0; i < sizeof(needed) / sizeof(needed[0]); i++)
		if (!is_program(c->bindir, needed[i])) {
			snprintf(why, cap, "no PostgreSQL: %s/%s (PTSHARE_PG_BINDIR)",
				 c->bindir, needed[i]);
			return -1;
		}
	return pg_uffd_find(why, cap);
}

/* In a child: the postgres user's identity, the cluster's directory and an
 * environment of our own (nothing of the caller's preloads). */
static int become_user(const struct pg_cluster *c)
{
	/* The sanitizers' options: ptshare may be a sanitized build; the
	 * shim's (bench/pgbench with PTSHARE_OPTIONS=ring=0, say). */
	static const char *const keep[] = { "ASAN_OPTIONS", "UBSAN_OPTIONS",
					     "LSAN_OPTIONS", "PTSHARE_OPTIONS" };
	enum { NKEEP = sizeof(keep) / sizeof(keep[0]) };
	char *kept[NKEEP], path[PATH_MAX + 32], port[16];
	for (size_t i = 0; i < NKEEP; i++) {
		const char *v = getenv(keep[i]);
		kept[i] = v ? strdup(v) : NULL;
	}
	if (initgroups(c->user, c->gid) || setgid(c->gid) || setuid(c->uid) ||
	    chdir(c->dir[0] ? c->dir : "/")) {
		fprintf(stderr, "pg_cluster: becoming %s in %s: %s\n", c->user,
			c->dir, strerror(errno));
		return -1;
	}
	snprintf(path, sizeof(path), "%s:/usr/local/bin:/usr/bin:/bin", c->bindir);
	snprintf(port, sizeof(port), "%d", c->port);
	clearenv();
	for (size_t i = 0; i < NKEEP; i++)
		if (kept[i])
			setenv(keep[i], kept[i], 1);
	setenv("PATH", path, 1);
	setenv("HOME", c->dir, 1);
	setenv("TMPDIR", c->dir, 1); /* ptshare run's socket directory too */
	setenv("LC_ALL", "C", 1);
	setenv("PGHOST", c->dir, 1);
	setenv("PGPORT", port, 1);
	setenv("PGUSER", c->user, 1);
	setenv("PGDATABASE", "postgres", 1);
	return 0;
}

pid_t pg_spawn(const struct pg_cluster *c, const char *const argv[], int out_fd,
	       const char *out_path, int deathsig)
{
	pid_t parent = getpid(), pid = fork();
	if (pid)
		return pid;
	char path[PATH_MAX];
	bool fits = strchr(argv[0], '/')
		? (size_t)snprintf(path, sizeof(path), "%s", argv[0]) < sizeof(path)
		: (size_t)snprintf(path, sizeof(path), "%s/%s", c->bindir,
				   argv[0]) < sizeof(path);
	int in = open("/dev/null", O_RDONLY);
	if (!fits || in < 0 || dup2(in, 0) < 0 || become_user(c))
		_exit(126);
	if (out_path) {
		setpgid(0, 0);
		out_fd = open(out_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	}
	if (out_fd < 0 || dup2(out_fd, 1) < 0 || dup2(out_fd, 2) < 0 ||
	    prctl(PR_SET_PDEATHSIG, deathsig) || getppid() != parent)
		_exit(126);
	execv(path, (char *const *)argv);
	fprintf(stderr, "pg_cluster: cannot run %s as %s: %s\n", path, c->user,
		strerror(errno));
	_exit(127);
}

bool pg_user_may(const struct pg_cluster *c, const char *path, int mode)
{
	pid_t pid = fork();
	if (!pid)
		_exit(become_user(c) || access(path, mode) ? 1 : 0);
	int status;
	return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	       !WEXITSTATUS(status);
}

/* from into to, with from's mode, owned by the cluster's user. */
static int copy_file(const struct pg_cluster *c, const char *from, const char *to)
{
	struct stat st;
	char buf[1 << 16];
	int in = open(from, O_RDONLY | O_CLOEXEC), out = -1, r = -1;
	if (in < 0 || fstat(in, &st))
		goto done;
	out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, st.st_mode & 0755);
	if (out < 0 || fchown(out, c->uid, c->gid))
		goto done;
	for (ssize_t n; (n = read(in, buf, sizeof(buf))) != 0; ) {
		if (n < 0 || write(out, buf, (size_t)n) != n)
			goto done;
	}
	r = 0;
done:
	if (r)
		fprintf(stderr, "pg_cluster: copying %s to %s: %s\n", from, to,
			strerror(errno));
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return r;
}

/* The regular files of from into to, a directory made for them (0755,
 * the cluster user's, its parents too): 0 or -1, said. */
static int copy_dir(const struct pg_cluster *c, const char *from, char *to)
{
	for (char *p = to + 1; ; p++) {
		if (*p && *p != '/')
			continue;
		char was = *p;
		*p = '\0';
		int made = mkdir(to, 0755) ? (errno == EEXIST ? 0 : -1)
			   : chown(to, c->uid, c->gid);
		*p = was;
		if (made) {
			fprintf(stderr, "pg_cluster: %s: %s\n", to,
				strerror(errno));
			return -1;
		}
		if (!was)
			break;
	}
	DIR *d = opendir(from);
	if (!d) {
		fprintf(stderr, "pg_cluster: %s: %s\n", from, strerror(errno));
		return -1;
	}
	char src[PATH_MAX * 2], dst[PATH_MAX * 2];
	int r = 0;
	for (struct dirent *e; !r && (e = readdir(d)); ) {
		if (e->d_type != DT_REG)
			continue;
		snprintf(src, sizeof(src), "%s/%s", from, e->d_name);
		snprintf(dst, sizeof(dst), "%s/%s", to, e->d_name);
		r = copy_file(c, src, dst);
	}
	closedir(d);
	return r;
}

const char *pg_cluster_reach(const struct pg_cluster *c, const char *path,
			     char *out, size_t cap)
{
	if (pg_user_may(c, path, X_OK))
		return path;
	char dir[PATH_MAX], bin[PATH_MAX], lib[PATH_MAX], from[PATH_MAX * 2];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	/* The program's folder and ptshare's private one, laid out as the
	 * build lays them out (docs/run.md). */
	pg_cluster_path(c, PTSHARE_BINDIR, bin, sizeof(bin));
	pg_cluster_path(c, PTSHARE_PKGLIBDIR, lib, sizeof(lib));
	snprintf(from, sizeof(from), "%s/%s", dir, PTSHARE_PKGLIBDIR_FROM_BINDIR);
	if (copy_dir(c, dir, bin) || copy_dir(c, from, lib) ||
	    (size_t)snprintf(out, cap, "%s/%s", bin, slash + 1) >= cap ||
	    !pg_user_may(c, out, X_OK))
		return NULL;
	return out;
}

int pg_cmd_start(const struct pg_cluster *c, struct pg_cmd *cmd,
		 const char *const argv[])
{
	int p[2];
	*cmd = (struct pg_cmd){ .pid = -1, .out_fd = -1 };
	if (pipe2(p, O_CLOEXEC)) {
		perror("pg_cluster: pipe");
		return -1;
	}
	cmd->pid = pg_spawn(c, argv, p[1], NULL, SIGKILL);
	close(p[1]);
	if (cmd->pid < 0) {
		perror("pg_cluster: fork");
		close(p[0]);
		return -1;
	}
	cmd->out_fd = p[0];
	return 0;
}

/* The output until EOF or the deadline: true at EOF. */
static bool read_all(struct pg_cmd *cmd, int64_t deadline)
{
	for (;;) {
		char buf[4096];
		struct pollfd p = { cmd->out_fd, POLLIN, 0 };
		int64_t left = deadline - now_ms();
		if (left <= 0 || poll(&p, 1, (int)left) == 0)
			return false;
		ssize_t n = read(cmd->out_fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return true;
		char *out = realloc(cmd->out, cmd->len + (size_t)n + 1);
		if (!out)
			return true;
		memcpy(out + cmd->len, buf, (size_t)n);
		cmd->out = out;
		cmd->len += (size_t)n;
		out[cmd->len] = '\0';
	}
}

int pg_cmd_finish(struct pg_cmd *cmd, int timeout_s)
{
	int status = -1; /* not WIFEXITED */
	if (cmd->pid < 0)
		return -1;
	if (!read_all(cmd, now_ms() + 1000LL * timeout_s)) {
		fprintf(stderr, "pg_cluster: pid %d still running after %d s: "
			"killed\n", (int)cmd->pid, timeout_s);
		kill(cmd->pid, SIGKILL);
	}
	close(cmd->out_fd);
	cmd->out_fd = -1;
	if (!cmd->out)
		cmd->out = calloc(1, 1);
	while (waitpid(cmd->pid, &status, 0) < 0 && errno == EINTR)
		;
	cmd->pid = -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

void pg_cmd_free(struct pg_cmd *cmd)
{
	if (cmd->pid > 0)
		pg_cmd_finish(cmd, 0);
	free(cmd->out);
	cmd->out = NULL;
}

int pg_run(const struct pg_cluster *c, struct pg_cmd *cmd,
	   const char *const argv[], int timeout_s)
{
	if (pg_cmd_start(c, cmd, argv))
		return -1;
	int r = pg_cmd_finish(cmd, timeout_s);
	if (r)
		fprintf(stderr, "pg_cluster: %s failed (exit %d):\n%s\n", argv[0], r,
			cmd->out ? cmd->out : "");
	return r;
}
