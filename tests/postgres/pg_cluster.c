/* SPDX-License-Identifier: MIT */
/* The cluster's life: made, started, stopped, and removed without trace. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pg_cluster.h"

/* Bounds of the waits, in seconds: generous, since a sanitized ptshare run
 * reads every backend's /proc at its fork and exit. */
#define INITDB_S 120
#define READY_S 120
#define STOP_S 300
#define POLL_MS 100

const char *pg_cluster_path(const struct pg_cluster *c, const char *name,
			    char *out, size_t cap)
{
	if ((size_t)snprintf(out, cap, "%s/%s", c->dir, name) >= cap)
		out[0] = '\0'; /* never: the directory is ours, under /tmp */
	return out;
}

int pg_cluster_create(struct pg_cluster *c)
{
	snprintf(c->dir, sizeof(c->dir), "/tmp/ptshare-pg-XXXXXX");
	if (!mkdtemp(c->dir)) {
		perror("pg_cluster: mkdtemp");
		c->dir[0] = '\0';
		return -1;
	}
	if (chown(c->dir, c->uid, c->gid) || chmod(c->dir, 0700)) {
		fprintf(stderr, "pg_cluster: %s: %s\n", c->dir, strerror(errno));
		return -1;
	}
	if (pg_uffd_allow(c))
		return -1;
	pg_cluster_path(c, "data", c->data, sizeof(c->data));
	/* trust: the socket's directory is the user's alone.  --no-sync: a
	 * cluster that dies with the test needs no durability. */
	const char *const argv[] = { "initdb", "-D", c->data, "-A", "trust",
				     "-U", c->user, "-E", "UTF8", "--locale=C",
				     "--no-sync", NULL };
	struct pg_cmd cmd;
	int r = pg_run(c, &cmd, argv, INITDB_S);
	pg_cmd_free(&cmd);
	return r ? -1 : 0;
}

int pg_cluster_start(struct pg_cluster *c, const char *const wrap[])
{
	char postgres[PATH_MAX], sockdir[PATH_MAX + 32], port[32], log[PATH_MAX];
	char buffers[64];
	if ((size_t)snprintf(postgres, sizeof(postgres), "%s/postgres",
			     c->bindir) >= sizeof(postgres) ||
	    (size_t)snprintf(sockdir, sizeof(sockdir), "unix_socket_directories=%s",
			     c->dir) >= sizeof(sockdir)) {
		fputs("pg_cluster: path too long\n", stderr);
		return -1;
	}
	snprintf(port, sizeof(port), "port=%d", c->port);
	snprintf(buffers, sizeof(buffers), "shared_buffers=%s",
		 c->shared_buffers ? c->shared_buffers : "512MB");
	const char *const server[] = {
		postgres, "-D", c->data,
		"-c", buffers,
		"-c", c->huge_pages ? "huge_pages=on" : "huge_pages=off",
		"-c", "listen_addresses=", "-c", sockdir, "-c", port, NULL,
	};
	const char *argv[64];
	size_t n = 0;
	for (size_t i = 0; wrap && wrap[i] && n < 40; i++)
		argv[n++] = wrap[i];
	for (size_t i = 0; server[i]; i++)
		argv[n++] = server[i];
	argv[n] = NULL;
	/* If we die, SIGINT: a fast shutdown, passed on by a wrapper. */
	c->runner = pg_spawn(c, argv, -1, pg_cluster_path(c, "server.log", log,
							    sizeof(log)), SIGINT);
	if (c->runner < 0) {
		perror("pg_cluster: fork");
		return -1;
	}
	c->running = true;
	return 0;
}

void pg_cluster_print_log(const struct pg_cluster *c)
{
	char path[PATH_MAX], line[1024];
	FILE *f = fopen(pg_cluster_path(c, "server.log", path, sizeof(path)), "r");
	fprintf(stderr, "--- %s\n", path);
	while (f && fgets(line, sizeof(line), f))
		fputs(line, stderr);
	fputs("---\n", stderr);
	if (f)
		fclose(f);
}

/* Whether the runner has ended (then reaped, its status kept). */
static bool runner_ended(struct pg_cluster *c)
{
	if (c->running && waitpid(c->runner, &c->runner_status, WNOHANG) == c->runner)
		c->running = false;
	return !c->running;
}

int pg_cluster_wait_ready(struct pg_cluster *c)
{
	const char *const argv[] = { "pg_isready", "-q", NULL };
	for (int waited = 0; waited < READY_S * 1000; waited += POLL_MS) {
		struct pg_cmd cmd;
		int r = pg_cmd_start(c, &cmd, argv) ? -1 : pg_cmd_finish(&cmd, 30);
		pg_cmd_free(&cmd);
		if (r == 0)
			return 0;
		if (runner_ended(c)) {
			fprintf(stderr, "pg_cluster: the server ended before it was "
				"ready (wait status %#x)\n", c->runner_status);
			pg_cluster_print_log(c);
			return -1;
		}
		pg_sleep_ms(POLL_MS);
	}
	fprintf(stderr, "pg_cluster: not ready within %d s\n", READY_S);
	pg_cluster_print_log(c);
	return -1;
}

/* Line n (from 1) of postmaster.pid. */
static bool pid_file_line(const struct pg_cluster *c, int n, char *out, size_t cap)
{
	char path[PATH_MAX + 32];
	snprintf(path, sizeof(path), "%s/postmaster.pid", c->data);
	FILE *f = fopen(path, "r");
	bool found = false;
	for (int i = 1; f && !found && fgets(out, (int)cap, f); i++)
		found = i == n;
	if (f)
		fclose(f);
	return found;
}

pid_t pg_postmaster_pid(const struct pg_cluster *c)
{
	char line[64];
	long pid;
	return pid_file_line(c, 1, line, sizeof(line)) &&
	       sscanf(line, "%ld", &pid) == 1 && pid > 0 ? (pid_t)pid : -1;
}

/* The runner and every process below it: postgres's children each lead a
 * session of their own, so no process group holds them all. */
static void kill_tree(pid_t root)
{
	enum { MAX = 4096 };
	static pid_t pid[MAX], ppid[MAX], doomed[MAX];
	size_t n = 0, nd = 0;
	DIR *d = opendir("/proc");
	struct dirent *e;
	while (d && (e = readdir(d)) && n < MAX) {
		char path[300];
		int p, pp;
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		FILE *f = fopen(path, "r");
		/* comm may hold spaces and parentheses: ppid follows the last ')'. */
		char buf[512], *close_paren;
		if (f && fgets(buf, sizeof(buf), f) && (close_paren = strrchr(buf, ')')) &&
		    sscanf(buf, "%d", &p) == 1 &&
		    sscanf(close_paren + 1, " %*c %d", &pp) == 1) {
			pid[n] = p;
			ppid[n++] = pp;
		}
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	doomed[nd++] = root;
	for (size_t k = 0; k < nd; k++)
		for (size_t i = 0; i < n && nd < MAX; i++)
			if (ppid[i] == doomed[k])
				doomed[nd++] = pid[i];
	for (size_t k = 0; k < nd; k++)
		kill(doomed[k], SIGKILL);
}

/* Waits for the runner up to limit_s; false if it still runs. */
static bool wait_runner(struct pg_cluster *c, int limit_s)
{
	for (int waited = 0; waited < limit_s * 1000; waited += POLL_MS) {
		if (runner_ended(c))
			return true;
		pg_sleep_ms(POLL_MS);
	}
	return runner_ended(c);
}

int pg_cluster_stop(struct pg_cluster *c)
{
	if (!c->running)
		return -1;
	pid_t pm = pg_postmaster_pid(c);
	kill(pm > 0 ? pm : c->runner, SIGINT);
	if (!wait_runner(c, STOP_S)) {
		fprintf(stderr, "pg_cluster: still running %d s after SIGINT to "
			"the postmaster (%d): killed\n", STOP_S, (int)pm);
		pg_cluster_print_log(c);
		kill_tree(c->runner);
		wait_runner(c, STOP_S);
		return -1;
	}
	int st = c->runner_status;
	return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
}

/* The SysV segment a killed postmaster leaves (its interlock): removed if
 * it is still the one postmaster.pid names. */
static void remove_segment(const struct pg_cluster *c, const char *line)
{
	unsigned long key, id;
	struct shmid_ds ds;
	if (sscanf(line, "%lu %lu", &key, &id) == 2 &&
	    shmctl((int)id, IPC_STAT, &ds) == 0 && ds.shm_perm.uid == c->uid &&
	    (unsigned long)ds.shm_perm.__key == key)
		shmctl((int)id, IPC_RMID, NULL);
}

static int remove_one(const char *path, const struct stat *st, int flag,
		      struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	if (remove(path))
		fprintf(stderr, "pg_cluster: cannot remove %s: %s\n", path,
			strerror(errno));
	return 0;
}

void pg_cluster_destroy(struct pg_cluster *c)
{
	char shm_line[128] = "";
	if (c->running) {
		pid_file_line(c, 7, shm_line, sizeof(shm_line));
		kill_tree(c->runner);
		if (!wait_runner(c, STOP_S))
			fprintf(stderr, "pg_cluster: pid %d survives SIGKILL\n",
				(int)c->runner);
		remove_segment(c, shm_line);
	}
	if (c->dir[0])
		nftw(c->dir, remove_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
	c->dir[0] = '\0';
	pg_uffd_restore(c);
}
