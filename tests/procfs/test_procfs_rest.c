/* SPDX-License-Identifier: MIT */
/*
 * Readings at rest (procfs_image.rest, docs/procfs.md): a child asleep
 * since its last reading is read from its status alone, and the first
 * thing it does, or a second thread, makes the next reading whole again.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "procfs/image.h"
#include "subject.h"

#define SLOT_BASE 0x5a0000000000UL /* 2 MiB aligned, far from the rest */

static int map_slot(void *arg)
{
	(void)arg;
	void *p = mmap((void *)SLOT_BASE, 8UL << 20, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	return p == MAP_FAILED ? -errno : 0;
}

static void *sleeper(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static int start_thread(void *arg)
{
	pthread_t t;
	(void)arg;
	return -pthread_create(&t, NULL, sleeper, NULL);
}

/* The subject back in its read(2), asleep (it answers before it gets
 * there). */
static void wait_asleep(pid_t pid)
{
	for (int i = 0; i < 2000; i++) {
		struct procfs_status st;
		assert_int_equal(procfs_status_read(pid, &st), 0);
		if (st.state == 'S')
			return;
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	fail_msg("pid %d never slept", (int)pid);
}

static void touch(struct subject *s, uint64_t addr)
{
	struct subject_range r = { addr, 4096 };
	assert_int_equal(subject_run(s, subject_populate_write, &r, sizeof(r)), 0);
	wait_asleep(s->pid);
}

static bool has_run_at(const struct procfs_image *img, uint64_t addr)
{
	for (size_t i = 0; i < img->nruns; i++)
		if (img->runs[i].start <= addr && addr < img->runs[i].end)
			return true;
	return false;
}

/* Read with the mark rest (0: none): the image, checked whole or at rest. */
static void read_child(pid_t pid, uint64_t rest, struct procfs_image *img)
{
	*img = (struct procfs_image){ .rest = rest };
	assert_int_equal(procfs_image_read(pid, NULL, img), 0);
	assert_true(img->stable);
	if (img->at_rest) {
		assert_int_equal(img->rest, rest);
		assert_int_equal(img->maps.n, 0);
		assert_int_equal(img->nruns, 0);
	} else {
		assert_true(img->maps.n > 0);
	}
}

static void test_unchanged_then_ran(void **state)
{
	struct subject s;
	struct procfs_image first, again, after;
	(void)state;
	assert_int_equal(subject_start(&s), 0);
	assert_int_equal(subject_run(&s, map_slot, NULL, 0), 0);
	touch(&s, SLOT_BASE);

	read_child(s.pid, 0, &first);
	assert_false(first.at_rest);
	assert_true(first.rest != 0); /* asleep throughout */
	assert_true(has_run_at(&first, SLOT_BASE));

	read_child(s.pid, first.rest, &again);
	assert_true(again.at_rest);
	assert_int_equal(again.status.vmpte_kb, first.status.vmpte_kb);
	procfs_image_free(&again);
	read_child(s.pid, first.rest, &again);
	assert_true(again.at_rest);

	/* It runs: a page in another 2 MiB span, a new table. */
	touch(&s, SLOT_BASE + (4UL << 20));
	read_child(s.pid, first.rest, &after);
	assert_false(after.at_rest);
	assert_true(after.rest != 0 && after.rest != first.rest);
	assert_true(has_run_at(&after, SLOT_BASE + (4UL << 20)));
	assert_int_equal(after.status.vmpte_kb, first.status.vmpte_kb + 4);

	/* The mark of another process is not this one's. */
	struct subject other;
	struct procfs_image o;
	assert_int_equal(subject_start(&other), 0);
	wait_asleep(other.pid);
	read_child(other.pid, after.rest, &o);
	assert_false(o.at_rest);

	procfs_image_free(&o);
	procfs_image_free(&first);
	procfs_image_free(&again);
	procfs_image_free(&after);
	subject_stop(&other);
	subject_stop(&s);
}

/* A thread besides its own: never at rest (the other may run). */
static void test_threads_never_rest(void **state)
{
	struct subject s;
	struct procfs_image img;
	(void)state;
	assert_int_equal(subject_start(&s), 0);
	assert_int_equal(subject_run(&s, start_thread, NULL, 0), 0);
	wait_asleep(s.pid);
	read_child(s.pid, 0, &img);
	assert_int_equal(img.rest, 0);
	assert_int_equal(img.status.rest, 0);
	procfs_image_free(&img);
	subject_stop(&s);
}

/* A process that runs (a busy loop) has no mark. */
static void test_running_never_rests(void **state)
{
	struct procfs_status st = { 0 };
	(void)state;
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (!pid)
		for (;;)
			;
	for (int i = 0; i < 2000 && st.state != 'R'; i++) {
		assert_int_equal(procfs_status_read(pid, &st), 0);
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	assert_int_equal(st.state, 'R');
	assert_int_equal(st.rest, 0);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unchanged_then_ran),
		cmocka_unit_test(test_threads_never_rest),
		cmocka_unit_test(test_running_never_rests),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
