/* SPDX-License-Identifier: MIT */
/*
 * The run's details in the report (ptshare run; docs/report-json.md,
 * "run"): where and how the program ran, as the daemon recorded them in
 * its trace (PTS_RUN_INFO), so that a replay shows them too.
 */
#define _GNU_SOURCE
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "lib/json.h"
#include "report.h"

/* The start, in UTC, as ISO 8601. */
static const char *start_text(const struct pts_run_info *i, char *buf, size_t cap)
{
	time_t t = (time_t)(i->start_ns / 1000000000);
	struct tm tm;
	if (!gmtime_r(&t, &tm) || !strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, cap, "?");
	return buf;
}

static double duration_s(const struct pts_run_info *i)
{
	return (double)(i->end_ns - i->start_ns) / 1e9;
}

static bool ended(const struct pts_run_info *i)
{
	return i->end_ns && i->wait_status >= 0;
}

/* As a shell gives it: the exit status, or 128 + the signal. */
static int exit_status(const struct pts_run_info *i)
{
	return WIFSIGNALED(i->wait_status) ? 128 + WTERMSIG(i->wait_status)
					   : WEXITSTATUS(i->wait_status);
}

static void member_setting(struct json *j, const char *key, int64_t v)
{
	if (v < 0) {
		json_key(j, key);
		json_null(j);
	} else {
		json_member_i64(j, key, v);
	}
}

void report_run_json(struct json *j, const struct report *r)
{
	const struct pts_run_info *i = &r->stream.run;
	char start[32];
	json_key(j, "run");
	if (!r->has_stream || !r->stream.has_run) {
		json_null(j);
		return;
	}
	json_object(j);
	json_member_string(j, "command_line", i->command);
	json_member_string(j, "start", start_text(i, start, sizeof(start)));
	json_member_i64(j, "start_ns", i->start_ns);
	json_key(j, "duration_s");
	if (i->end_ns)
		json_double(j, duration_s(i));
	else
		json_null(j);
	json_member_string(j, "host", i->host);
	json_member_string(j, "kernel", i->kernel);
	member_setting(j, "randomize_va_space", i->va_space);
	json_member_string(j, "thp", i->thp);
	json_member_string(j, "shmem_thp", i->shmem_thp);
	member_setting(j, "nr_hugepages", i->nr_hugepages);
	json_member_string(j, "ptshare_version", i->version);
	member_setting(j, "exit_status", ended(i) ? exit_status(i) : -1);
	member_setting(j, "signal", ended(i) && WIFSIGNALED(i->wait_status)
		       ? WTERMSIG(i->wait_status) : -1);
	json_end_object(j);
}

void report_run_text(FILE *f, const struct report *r)
{
	const struct pts_run_info *i = &r->stream.run;
	char start[32];
	if (!r->has_stream || !r->stream.has_run)
		return;
	fprintf(f, "run: %s\n  on %s (Linux %s), started %s", i->command,
		i->host, i->kernel, start_text(i, start, sizeof(start)));
	if (i->end_ns)
		fprintf(f, ", %.2f s", duration_s(i));
	if (ended(i))
		fprintf(f, ", exit status %d", exit_status(i));
	fprintf(f, "; ptshare %s\n  randomize_va_space %d, THP %s, shmem THP "
		"%s, nr_hugepages %lld\n", i->version, i->va_space,
		*i->thp ? i->thp : "?", *i->shmem_thp ? i->shmem_thp : "?",
		(long long)i->nr_hugepages);
}
