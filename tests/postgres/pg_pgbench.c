/* SPDX-License-Identifier: MIT */
/* pgbench against the cluster: its tables, a select-only run, its figures. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pg_cluster.h"

/* Loading scale 10 takes seconds; a traced server is slower. */
#define INIT_S 600

int pg_pgbench_init(const struct pg_cluster *c, int scale)
{
	char s[16];
	snprintf(s, sizeof(s), "%d", scale);
	const char *const argv[] = { "pgbench", "-i", "-q", "-s", s, NULL };
	struct pg_cmd cmd;
	int r = pg_run(c, &cmd, argv, INIT_S);
	pg_cmd_free(&cmd);
	return r ? -1 : 0;
}

int pg_pgbench_select_start(const struct pg_cluster *c, struct pg_cmd *cmd,
			    int clients, int seconds, bool reconnect)
{
	char nc[16], t[16];
	snprintf(nc, sizeof(nc), "%d", clients);
	snprintf(t, sizeof(t), "%d", seconds);
	const char *const argv[] = { "pgbench", "-S", "-c", nc, "-T", t,
				     reconnect ? "-C" : NULL, NULL };
	return pg_cmd_start(c, cmd, argv);
}

/* The number after "key = " on its line of the output. */
static bool figure(const char *out, const char *key, double *v)
{
	const char *p = out ? strstr(out, key) : NULL;
	return p && sscanf(p + strlen(key), " = %lf", v) == 1;
}

int pg_pgbench_figures(const struct pg_cmd *cmd, double *tps, double *connect_ms)
{
	*connect_ms = 0;
	if (!figure(cmd->out, "initial connection time", connect_ms))
		figure(cmd->out, "average connection time", connect_ms);
	if (figure(cmd->out, "\ntps", tps))
		return 0;
	fprintf(stderr, "pg_cluster: no tps in pgbench's output:\n%s\n",
		cmd->out ? cmd->out : "");
	return -1;
}
