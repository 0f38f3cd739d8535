/* SPDX-License-Identifier: MIT */
/*
 * What a program sees of its own mappings (docs/faults.md, Modes): a C
 * program (maps_subject) and Python multiprocessing workers
 * (maps_workers.py, when python3 is there) print their /proc/self/maps,
 * plainly and under `ptshare run` in the default mode; what they print
 * must be the same, but for the shim's libraries.  Lines are compared
 * without their addresses, which differ from run to run: a line inside a
 * region the program made (it says where, "@region NAME ADDR LEN") as
 * where it starts and ends in the region, every other by its size,
 * protection, offset and name.  Private anonymous memory without a name is
 * left out: the shim's own allocations land there, and no fault mode ever
 * registers private memory.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "run_util.h"

#define REGIONS_MAX 8

struct region {
	char name[32];
	unsigned long start, len;
};

/* Normalised text, grown as it is written. */
struct text {
	char *s;
	size_t len, cap;
};

static void put(struct text *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void put(struct text *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (t->len + (size_t)n + 1 > t->cap) {
		t->cap = 2 * (t->len + (size_t)n + 1);
		t->s = realloc(t->s, t->cap);
		assert_non_null(t->s);
	}
	va_start(ap, fmt);
	vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
	va_end(ap);
	t->len += (size_t)n;
}

/* The shim's libraries and its record ring, which only a traced run maps
 * (docs/promises.md). */
static bool shim_library(const char *path)
{
	static const char *const libs[] = { "libptshare.so",
					    "memfd:ptshare-ring" };
	const char *base = strrchr(path, '/');
	for (size_t i = 0; base && i < sizeof(libs) / sizeof(libs[0]); i++)
		if (!strncmp(base + 1, libs[i], strlen(libs[i])))
			return true;
	return false;
}

/* One line of /proc/PID/maps, without its addresses. */
static void normalise_line(struct text *t, const char *line,
			   const struct region *r, size_t nr)
{
	unsigned long start, end;
	char perms[8], offset[32];
	int path_at = 0;
	if (sscanf(line, "%lx-%lx %7s %31s %*s %*s %n", &start, &end, perms,
		   offset, &path_at) != 4)
		fail_msg("not a maps line: %s", line);
	const char *path = path_at ? line + path_at : "";
	for (size_t i = 0; i < nr; i++)
		if (start >= r[i].start && start < r[i].start + r[i].len) {
			put(t, "%s +%#lx-+%#lx %s %s\n", r[i].name,
			    start - r[i].start, end - r[i].start, perms, offset);
			return;
		}
	if ((!*path && perms[3] == 'p') || shim_library(path) ||
	    !strcmp(path, "[heap]"))
		return;
	put(t, "%#lx %s %s %s\n", end - start, perms, offset, path);
}

static int line_order(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The lines of a block, from from to the end of t, in order. */
static void sort_block(struct text *t, size_t from)
{
	char *block = strndup(t->s + from, t->len - from), *save = NULL;
	char **lines = calloc(t->len - from + 1, sizeof(*lines));
	size_t n = 0;
	assert_true(block && lines);
	for (char *l = strtok_r(block, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
		lines[n++] = l;
	qsort(lines, n, sizeof(*lines), line_order);
	t->len = from;
	for (size_t i = 0; i < n; i++)
		put(t, "%s\n", lines[i]);
	free(lines);
	free(block);
}

/* A run's output as compared: its "@maps" blocks normalised. */
static struct text normalise(const char *out)
{
	struct text t = { 0 };
	struct region r[REGIONS_MAX];
	size_t nr = 0, block = 0;
	bool in_maps = false;
	char *copy = strdup(out), *save = NULL;
	assert_non_null(copy);
	for (char *line = strtok_r(copy, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "@region ", 8) && nr < REGIONS_MAX) {
			if (sscanf(line + 8, "%31s %lx %lx", r[nr].name, &r[nr].start,
				   &r[nr].len) != 3)
				fail_msg("bad line: %s", line);
			nr++;
		} else if (!strncmp(line, "@maps ", 6)) {
			put(&t, "%s\n", line);
			block = t.len;
			in_maps = true;
		} else if (!strcmp(line, "@end")) {
			sort_block(&t, block);
			in_maps = false;
		} else if (in_maps) {
			normalise_line(&t, line, r, nr);
		}
	}
	free(copy);
	assert_int_not_equal(nr, 0);
	return t;
}

/* Fails the test at the first line where a and b differ, with the lines
 * before it. */
static void assert_same(const char *a, const char *b)
{
	size_t line = 1, at = 0, from = 0;
	for (; a[at] && a[at] == b[at]; at++)
		if (a[at] == '\n') {
			line++;
			from = at + 1;
		}
	if (!a[at] && !b[at])
		return;
	size_t before = from > 400 ? from - 400 : 0;
	fail_msg("the maps differ from line %zu of the normalised output:\n"
		 "...%.*s\nplain:  %.200s\ntraced: %.200s", line,
		 (int)(from - before), a + before, a + from, b + from);
}

/* argv run plainly, then under `ptshare run` (the default mode): the maps
 * they print are the same, but for the shim's libraries. */
static void assert_maps_unchanged(const char *const argv[])
{
	struct cmd plain, traced;
	char dir[64];
	if (cmd_run(&plain, argv, NULL))
		fail_msg("the plain run failed:\n%s", plain.text[1]);
	tmp_make(dir, sizeof(dir));
	const char *run[16] = { PTSHARE_PATH, "run", "--no-record", "-o",
				tmp_path(dir, "report.txt"), "--" };
	size_t n = 6;
	for (size_t i = 0; argv[i]; i++)
		run[n++] = argv[i];
	int status = cmd_run(&traced, run, NULL);
	assert_no_sanitizer_report(&traced);
	if (status)
		fail_msg("status %d:\n%s", status, traced.text[1]);
	struct text a = normalise(plain.text[0]), b = normalise(traced.text[0]);
	assert_same(a.s, b.s);
	free(a.s);
	free(b.s);
	cmd_free(&plain);
	cmd_free(&traced);
	const char *const made[] = { "report.txt", NULL };
	tmp_remove(dir, made);
}

static void test_c_program(void **state)
{
	const char *const argv[] = { MAPS_SUBJECT_PATH, NULL };
	assert_maps_unchanged(argv);
}

/* python3 on PATH, into buf; false when there is none. */
static bool find_python(char *buf, size_t cap)
{
	const char *path = getenv("PATH");
	char *copy = strdup(path ? path : "/usr/bin:/bin"), *save = NULL;
	bool found = false;
	for (char *dir = strtok_r(copy, ":", &save); dir && !found;
	     dir = strtok_r(NULL, ":", &save)) {
		snprintf(buf, cap, "%s/python3", dir);
		found = access(buf, X_OK) == 0;
	}
	free(copy);
	return found;
}

static void test_python_workers(void **state)
{
	char python[4096];
	if (!find_python(python, sizeof(python)))
		skip();
	const char *const argv[] = { python, MAPS_WORKERS_PATH, NULL };
	assert_maps_unchanged(argv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_c_program, run_tmpdir_setup,
						run_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_python_workers, run_tmpdir_setup,
						run_tmpdir_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
