/* SPDX-License-Identifier: MIT */
/*
 * A throw-away PostgreSQL cluster for the postgres test and bench/pgbench:
 * created as root in a fresh private directory owned by the postgres user,
 * served on a unix socket in that directory only (no TCP), and run, like
 * every command against it, as that user (PostgreSQL refuses root).  The
 * server may be started under a wrapper (`ptshare run ... --`), which then
 * runs as the postgres user too.
 *
 * Every wait is bounded; a failure says what and where on stderr.  The
 * server's and the wrapper's output go to DIR/server.log.
 */
#ifndef PTSHARE_TESTS_PG_CLUSTER_H
#define PTSHARE_TESTS_PG_CLUSTER_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct pg_cluster {
	char dir[PATH_MAX];     /* private: 0700, owned by the postgres user */
	char data[PATH_MAX];    /* DIR/data */
	char bindir[PATH_MAX];  /* PostgreSQL's programs */
	char user[64];
	uid_t uid;
	gid_t gid;
	int port;               /* names the socket DIR/.s.PGSQL.PORT */
	bool uffd_allowed;      /* we let the user open /dev/userfaultfd */
	bool huge_pages;        /* start with huge_pages=on, not off */
	const char *shared_buffers; /* the server's ("2GB"); NULL: 512MB */
	pid_t runner;           /* our child: postgres itself or its wrapper */
	int runner_status;      /* its wait status once it ended */
	bool running;
};

/* A command running as the postgres user, its stdout (and stderr) read
 * through a pipe. */
struct pg_cmd {
	pid_t pid;
	int out_fd;
	char *out;   /* everything it printed, NUL-terminated, once finished */
	size_t len;
};

/*
 * Prerequisites: root, the postgres user (PTSHARE_PG_USER overrides) and
 * PostgreSQL's programs (PTSHARE_PG_BINDIR overrides; else the newest
 * /usr/lib/postgresql/N/bin).  0, or -1 with why they are missing in why:
 * a reason to skip, not a failure.
 */
int pg_cluster_find(struct pg_cluster *c, char *why, size_t cap);

/*
 * The directory (mkdtemp under /tmp) and initdb in it, and the user allowed
 * to make userfaultfds while the cluster lives, so that `ptshare run` sees
 * its page faults (pg_uffd.c): 0 or -1.
 */
int pg_cluster_create(struct pg_cluster *c);
/*
 * The path by which the postgres user runs the program at path: path
 * itself, or, when the user cannot reach it (a build directory under a
 * private home), a copy of every file of its directory in DIR/bin, and of
 * ptshare's private folder in DIR/lib/ptshare (where ptshare finds
 * ptshared and libptshare.so, relative to itself), written into out.
 * After pg_cluster_create; NULL, said on stderr, when neither works.
 */
const char *pg_cluster_reach(const struct pg_cluster *c, const char *path,
			     char *out, size_t cap);
/*
 * Starts the server with c->shared_buffers (512MB when NULL) and
 * huge_pages=off (on with c->huge_pages: vm.nr_hugepages is the caller's),
 * as the postgres user.  wrap: NULL, or a NULL-terminated argv put before
 * `postgres -D DATA ...` (its last word is usually "--").  0 or -1.
 */
int pg_cluster_start(struct pg_cluster *c, const char *const wrap[]);
/* Until pg_isready says the server accepts connections: 0, or -1 when the
 * server ended or did not become ready within its bound. */
int pg_cluster_wait_ready(struct pg_cluster *c);
/* The postmaster's pid (from postmaster.pid), or -1. */
pid_t pg_postmaster_pid(const struct pg_cluster *c);
/*
 * Fast shutdown: SIGINT to the postmaster, then waits for the runner (and
 * so for a wrapper's report).  Returns the runner's exit code (128 + the
 * signal when killed), or -1 when it had to be killed.
 */
int pg_cluster_stop(struct pg_cluster *c);
/* Kills whatever still runs, removes the shared memory left behind and the
 * directory, takes the user's access to /dev/userfaultfd back.  Safe on a
 * cluster never created or already stopped. */
void pg_cluster_destroy(struct pg_cluster *c);
/* DIR/server.log to stderr: what the server and its wrapper said. */
void pg_cluster_print_log(const struct pg_cluster *c);
/* DIR/name into out. */
const char *pg_cluster_path(const struct pg_cluster *c, const char *name,
			    char *out, size_t cap);

/*
 * A command as the postgres user, against the cluster (PGHOST, PGPORT,
 * PGUSER, PGDATABASE set).  argv[0] without a slash is one of PostgreSQL's
 * programs.  pg_cmd_finish waits at most timeout_s seconds (then kills it)
 * and returns its exit code, or -1.
 */
int pg_cmd_start(const struct pg_cluster *c, struct pg_cmd *cmd,
		 const char *const argv[]);
int pg_cmd_finish(struct pg_cmd *cmd, int timeout_s);
void pg_cmd_free(struct pg_cmd *cmd);
/*
 * The primitive under both: argv as the postgres user, stdout and stderr to
 * out_fd, or to out_path (created by the user; the process then leads a
 * group of its own: the server).  deathsig: what it gets if we die
 * (PR_SET_PDEATHSIG, set after the change of user, which clears it).
 */
pid_t pg_spawn(const struct pg_cluster *c, const char *const argv[], int out_fd,
	       const char *out_path, int deathsig);
/* Both in one; the output is printed when the command fails. */
int pg_run(const struct pg_cluster *c, struct pg_cmd *cmd,
	   const char *const argv[], int timeout_s);

/* pgbench -i -s scale: 0 or -1. */
int pg_pgbench_init(const struct pg_cluster *c, int scale);
/* Starts `pgbench -S -c clients -T seconds` (one pgbench thread), with -C
 * (a new connection for each transaction) when reconnect. */
int pg_pgbench_select_start(const struct pg_cluster *c, struct pg_cmd *cmd,
			    int clients, int seconds, bool reconnect);
/* Its figures, from its output: 0, or -1 when it printed none.  connect_ms:
 * the initial connection time, or with -C the average connection time. */
int pg_pgbench_figures(const struct pg_cmd *cmd, double *tps,
		       double *connect_ms);

/* Whether the cluster's user may access path (access(2) mode). */
bool pg_user_may(const struct pg_cluster *c, const char *path, int mode);

/* pg_uffd.c: the user and /dev/userfaultfd, as docs/run.md, "allowing a user
 * /dev/userfaultfd", says.  find: 0, or -1 with why the machine cannot (a
 * reason to skip); allow: 0, or -1 (said on stderr); restore: undoes
 * allow. */
int pg_uffd_find(char *why, size_t cap);
int pg_uffd_allow(struct pg_cluster *c);
void pg_uffd_restore(struct pg_cluster *c);

/* pg_activity.c: the server's processes by role.  A process
 * pg_stat_activity listed: */
struct pg_listed {
	long pid;
	char type[64];  /* backend_type */
	bool pgbench;   /* a client backend of pgbench */
	unsigned sample; /* the last sample that listed it */
};
struct pg_listing {
	struct pg_listed p[512];
	size_t n;
};
#define PG_NAUX 5
/* The auxiliary processes' backend_type: checkpointer, background
 * writer, walwriter, the autovacuum and logical replication launchers. */
extern const char *const pg_aux_types[PG_NAUX];
/* pg_stat_activity, every 200 ms, until `clients` pgbench backends at
 * once and every auxiliary process have shown (at most 120 s), into l;
 * then only those `clients` stay marked pgbench (when more showed). */
void pg_list_processes(const struct pg_cluster *c, struct pg_listing *l,
		       size_t clients);
size_t pg_listing_pgbench(const struct pg_listing *l);
bool pg_listing_has_type(const struct pg_listing *l, const char *type);
const struct pg_listed *pg_listing_find(const struct pg_listing *l, long pid);

/* Sleeps ms milliseconds (polling loops). */
void pg_sleep_ms(int ms);

#endif
