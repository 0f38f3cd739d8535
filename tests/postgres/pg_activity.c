/* SPDX-License-Identifier: MIT */
/* The server's processes by role, as pg_stat_activity names them. */
#include <stdio.h>
#include <string.h>

#include "pg_cluster.h"

#define SAMPLE_S 120 /* bound of the wait for every backend to show */
#define SAMPLE_MS 200

const char *const pg_aux_types[PG_NAUX] = {
	"checkpointer", "background writer", "walwriter",
	"autovacuum launcher", "logical replication launcher",
};

const struct pg_listed *pg_listing_find(const struct pg_listing *l, long pid)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->p[i].pid == pid)
			return &l->p[i];
	return NULL;
}

/* Adds psql's "pid|backend_type|application_name" lines not yet listed;
 * the pgbench backends of this sample, how many. */
static size_t add_listed(struct pg_listing *l, const char *out, unsigned sample)
{
	size_t pgbench = 0;
	for (const char *line = out; line && *line; ) {
		const char *nl = strchr(line, '\n');
		char buf[256], app[64] = "";
		struct pg_listed p = { 0 };
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		snprintf(buf, sizeof(buf), "%.*s", (int)len, line);
		line = nl ? nl + 1 : NULL;
		if (sscanf(buf, "%ld|%63[^|]|%63[^\n]", &p.pid, p.type, app) < 2)
			continue;
		p.pgbench = !strcmp(p.type, "client backend") && !strcmp(app, "pgbench");
		pgbench += p.pgbench;
		p.sample = sample;
		struct pg_listed *had = (struct pg_listed *)pg_listing_find(l, p.pid);
		if (had)
			had->sample = sample;
		else if (l->n < sizeof(l->p) / sizeof(l->p[0]))
			l->p[l->n++] = p;
	}
	return pgbench;
}

size_t pg_listing_pgbench(const struct pg_listing *l)
{
	size_t n = 0;
	for (size_t i = 0; i < l->n; i++)
		n += l->p[i].pgbench;
	return n;
}

bool pg_listing_has_type(const struct pg_listing *l, const char *type)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->p[i].type, type))
			return true;
	return false;
}

void pg_list_processes(const struct pg_cluster *c, struct pg_listing *l,
		       size_t clients)
{
	const char *const argv[] = {
		"psql", "-X", "-A", "-t", "-F", "|", "-c",
		"SELECT pid, backend_type, application_name FROM pg_stat_activity",
		NULL,
	};
	unsigned sample = 0;
	bool all = false;
	for (int waited = 0; waited < SAMPLE_S * 1000; waited += SAMPLE_MS) {
		struct pg_cmd cmd;
		size_t now = pg_run(c, &cmd, argv, 60) ? 0
			     : add_listed(l, cmd.out, ++sample);
		pg_cmd_free(&cmd);
		all = now >= clients;
		for (size_t i = 0; i < PG_NAUX; i++)
			all &= pg_listing_has_type(l, pg_aux_types[i]);
		if (all)
			break;
		pg_sleep_ms(SAMPLE_MS);
	}
	/* pgbench's clients are those connected together: the connection
	 * it makes first, alone (its vacuum), is not one. */
	for (size_t i = 0; all && i < l->n; i++)
		l->p[i].pgbench &= l->p[i].sample == sample;
}
