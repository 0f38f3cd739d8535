/* SPDX-License-Identifier: MIT */
/* A subject traced by a fake daemon (traced.h). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "traced.h"

void traced_start(struct traced *t, const struct fake_opts *opts,
		  const char *options, const char *const argv[],
		  const struct run_limits *lim)
{
	const char *args[16] = { SUBJECT_PATH };
	struct run_env env;
	size_t n = 1;

	for (size_t i = 1; argv[i] && n < 15; i++)
		args[n++] = argv[i];
	if (argv[0])
		args[0] = argv[0];
	memset(t, 0, sizeof(*t));
	t->d = fake_start(opts);
	run_env(&env, true, fake_socket(t->d), options);
	run_start(&t->run, args, env.v, lim);
}

void traced_finish(struct traced *t)
{
	t->status = run_finish(&t->run);
	assert_true(fake_settle(t->d, SETTLE_MS));
	assert_no_violation(t->d);
}

void traced_run(struct traced *t, const struct fake_opts *opts,
		const char *options, const char *const argv[])
{
	traced_start(t, opts, options, argv, NULL);
	traced_finish(t);
}

void traced_free(struct traced *t)
{
	run_free(&t->run);
	fake_stop(t->d);
}

void assert_no_violation(struct fake_daemon *d)
{
	size_t n = fake_errors(d);

	for (size_t i = 0; i < n; i++)
		print_error("fake daemon: %s\n", fake_error(d, i));
	assert_int_equal(n, 0);
}

size_t recs_of(struct fake_daemon *d, int32_t pid, const struct fake_rec **out,
	       size_t max)
{
	size_t n = 0, total = fake_count(d);

	for (size_t i = 0; i < total; i++) {
		const struct fake_rec *r = fake_rec(d, i);
		if (r->pid != pid)
			continue;
		if (n < max)
			out[n] = r;
		n++;
	}
	return n;
}

const struct fake_rec *nth_of(struct fake_daemon *d, int32_t pid,
			      uint16_t type, size_t n)
{
	size_t total = fake_count(d);

	for (size_t i = 0; i < total; i++) {
		const struct fake_rec *r = fake_rec(d, i);
		if (r->pid == pid && r->r.h.type == type && n-- == 0)
			return r;
	}
	return NULL;
}

size_t count_of(struct fake_daemon *d, int32_t pid, uint16_t type)
{
	size_t n = 0;

	while (nth_of(d, pid, type, n))
		n++;
	return n;
}

size_t hellos(struct fake_daemon *d, uint32_t flags, int32_t *pids, size_t max)
{
	size_t n = 0, total = fake_count(d);

	for (size_t i = 0; i < total; i++) {
		const struct fake_rec *r = fake_rec(d, i);
		if (r->r.h.type != PTS_HELLO || (r->r.hello.flags & flags) != flags)
			continue;
		if (n < max)
			pids[n] = r->pid;
		n++;
	}
	return n;
}

uint64_t run_number(const struct run *r, const char *key, int field)
{
	const char *v = run_value(r, key);

	assert_non_null(v);
	for (int i = 0; i < field; i++) {
		v = strchr(v, ' ');
		assert_non_null(v);
		v++;
	}
	return strtoull(v, NULL, 0);
}
