/* SPDX-License-Identifier: MIT */
/*
 * What the daemon keeps of a process's userfaultfd registrations
 * (daemon/uffd.c; docs/daemon.md, What one client may cost): one range
 * per shared mapping the model has, dealt with once.  A client that sends
 * a userfaultfd and claims shared mappings that do not exist has them in
 * the model until a reading of /proc corrects it: their ranges go with
 * them at the next sync of their range, or of the whole list (at a
 * checkpoint, or once the list has doubled), so the list never holds much
 * more than the model's shared mappings.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "ptshare/policy.h"
#include "ptshare/wire.h"
#include "uffd.h"

#define PID 77
#define CLAIMS 1000
#define BASE (1ULL << 32)
#define STEP (4ULL << 20) /* apart: the model does not merge them */

struct fixture {
	struct mm_world *w;
	struct uffd u;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	f->w = mm_world_new(&mm_policy_linux);
	assert_non_null(f->w);
	assert_int_equal(mm_create(f->w, PID), 0);
	uffd_init(&f->u);
	f->u.fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (f->u.fd < 0)
		fail_msg("userfaultfd: %m (the test runs as root)");
	assert_int_equal(uffd_start(&f->u, PTS_FAULTS_TABLE), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	uffd_close(&f->u);
	mm_world_free(f->w);
	free(f);
	return 0;
}

/* Shared memory the process does not have: the kernel refuses to register
 * it, and the daemon does not try again. */
static void claim(struct fixture *f, unsigned i, uint32_t kind)
{
	struct mm_mapping m = {
		.addr = BASE + i * STEP, .len = 2 * STEP / 4,
		.obj = { .kind = kind, .dev = 5, .ino = 100 + i },
		.prot = MM_PROT_READ | MM_PROT_WRITE, .flags = MM_VMA_SHARED,
	};
	assert_int_equal(mm_map(f->w, PID, &m), 0);
}

static void ranges_follow_the_model(void **state)
{
	struct fixture *f = *state;
	for (unsigned i = 0; i < CLAIMS; i++)
		claim(f, i, i % 2 ? MM_OBJ_SHMEM : MM_OBJ_FILE);
	uffd_sync(&f->u, f->w, PID, 0, UINT64_MAX);
	assert_int_equal(f->u.nr, CLAIMS / 2); /* files are never registered */
	for (size_t i = 1; i < f->u.nr; i++)
		assert_true(f->u.r[i - 1].end <= f->u.r[i].start);
	/* Synced again: nothing new. */
	uffd_sync(&f->u, f->w, PID, 0, UINT64_MAX);
	assert_int_equal(f->u.nr, CLAIMS / 2);
	/* A reading found none of them: the model drops them, and so does
	 * the list, though no record unmapped them. */
	for (unsigned i = 0; i < CLAIMS; i += 4)
		assert_int_equal(mm_unmap(f->w, PID, BASE + i * STEP, 4 * STEP), 0);
	uffd_sync(&f->u, f->w, PID, 0, UINT64_MAX);
	assert_int_equal(f->u.nr, 0);
}

/* A range dealt with stays dealt with while its mapping lasts, cut to it
 * where the mapping shrank; what the mapping gained is added. */
static void ranges_kept_and_cut(void **state)
{
	struct fixture *f = *state;
	claim(f, 0, MM_OBJ_SHMEM);
	uffd_sync(&f->u, f->w, PID, 0, UINT64_MAX);
	assert_int_equal(f->u.nr, 1);
	assert_int_equal(mm_unmap(f->w, PID, BASE, STEP / 4), 0);
	struct mm_mapping m = {
		.addr = BASE + STEP / 2, .len = STEP / 2,
		.obj = { .kind = MM_OBJ_SHMEM, .dev = 5, .ino = 100 },
		.offset = STEP / 2,
		.prot = MM_PROT_READ | MM_PROT_WRITE, .flags = MM_VMA_SHARED,
	};
	assert_int_equal(mm_map(f->w, PID, &m), 0);
	uffd_sync(&f->u, f->w, PID, 0, UINT64_MAX);
	assert_int_equal(f->u.nr, 2);
	assert_true(f->u.r[0].start == BASE + STEP / 4 &&
		    f->u.r[0].end == BASE + STEP / 2);
	assert_true(f->u.r[1].start == BASE + STEP / 2 &&
		    f->u.r[1].end == BASE + STEP);
}

/* A record's sync rebuilds what its range meets, and no more; the list,
 * grown past twice what it was at its last whole rebuild, is rebuilt
 * whole: claims the model dropped cannot pile up between checkpoints. */
static void window_and_bound(void **state)
{
	struct fixture *f = *state;
	enum { OLD = 100, NEW = 200 };
	for (unsigned i = 0; i < OLD; i++)
		claim(f, i, MM_OBJ_SHMEM);
	uffd_sync(&f->u, f->w, PID, 0, UINT64_MAX);
	assert_int_equal(mm_unmap(f->w, PID, BASE, OLD * STEP), 0);
	uffd_sync(&f->u, f->w, PID, BASE, BASE + STEP); /* meets one of them */
	assert_int_equal(f->u.nr, OLD - 1);
	for (unsigned i = OLD; i < OLD + NEW; i++) {
		claim(f, i, MM_OBJ_SHMEM);
		uffd_sync(&f->u, f->w, PID, BASE + i * STEP, BASE + i * STEP + 1);
		assert_true(f->u.nr <= 2 * (OLD + 1) + 64 + 1);
	}
	assert_int_equal(f->u.nr, NEW);
	for (size_t i = 1; i < f->u.nr; i++)
		assert_true(f->u.r[i - 1].end <= f->u.r[i].start);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(ranges_follow_the_model, setup, teardown),
		cmocka_unit_test_setup_teardown(ranges_kept_and_cut, setup, teardown),
		cmocka_unit_test_setup_teardown(window_and_bound, setup, teardown),
	};
	return cmocka_run_group_tests_name("uffd_ranges", tests, NULL, NULL);
}
