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
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "ingest/ingest.h"
#include "ptshare/wire.h"
#include "uffd.h"

#define PID 77
#define CLAIMS 1000
#define BASE (1ULL << 32)
#define STEP (4ULL << 20) /* apart: the model does not merge them */

/* The model of today's kernel is the ingest's (w: its world), which the
 * daemon asks for a process's shared ranges (ingest_ranges_of). */
struct fixture {
	struct mm_worlds ws;
	struct ingest *g;
	struct mm_world *w;
	struct uffd u;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	char err[128];
	assert_int_equal(mm_worlds_init(&f->ws, "linux", err, sizeof(err)), 0);
	f->g = ingest_new(&f->ws, NULL, NULL);
	assert_non_null(f->g);
	f->w = f->ws.w[0];
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
	ingest_free(f->g);
	mm_worlds_free(&f->ws);
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
	uffd_sync(&f->u, f->g, PID, 0, UINT64_MAX);
	assert_int_equal(f->u.done.nr, CLAIMS / 2); /* files are never registered */
	for (size_t i = 1; i < f->u.done.nr; i++)
		assert_true(f->u.done.r[i - 1].end <= f->u.done.r[i].start);
	/* Synced again: nothing new. */
	uffd_sync(&f->u, f->g, PID, 0, UINT64_MAX);
	assert_int_equal(f->u.done.nr, CLAIMS / 2);
	/* A reading found none of them: the model drops them, and so does
	 * the list, though no record unmapped them. */
	for (unsigned i = 0; i < CLAIMS; i += 4)
		assert_int_equal(mm_unmap(f->w, PID, BASE + i * STEP, 4 * STEP), 0);
	uffd_sync(&f->u, f->g, PID, 0, UINT64_MAX);
	assert_int_equal(f->u.done.nr, 0);
}

/* A range dealt with stays dealt with while its mapping lasts, cut to it
 * where the mapping shrank; what the mapping gained is added (joined to
 * it: both refused, since the process has no such memory). */
static void ranges_kept_and_cut(void **state)
{
	struct fixture *f = *state;
	claim(f, 0, MM_OBJ_SHMEM);
	uffd_sync(&f->u, f->g, PID, 0, UINT64_MAX);
	assert_int_equal(f->u.done.nr, 1);
	assert_int_equal(mm_unmap(f->w, PID, BASE, STEP / 4), 0);
	struct mm_mapping m = {
		.addr = BASE + STEP / 2, .len = STEP / 2,
		.obj = { .kind = MM_OBJ_SHMEM, .dev = 5, .ino = 100 },
		.offset = STEP / 2,
		.prot = MM_PROT_READ | MM_PROT_WRITE, .flags = MM_VMA_SHARED,
	};
	assert_int_equal(mm_map(f->w, PID, &m), 0);
	uffd_sync(&f->u, f->g, PID, 0, UINT64_MAX);
	assert_int_equal(f->u.done.nr, 1);
	assert_true(f->u.done.r[0].start == BASE + STEP / 4 &&
		    f->u.done.r[0].end == BASE + STEP && !f->u.done.r[0].live);
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
	uffd_sync(&f->u, f->g, PID, 0, UINT64_MAX);
	assert_int_equal(mm_unmap(f->w, PID, BASE, OLD * STEP), 0);
	uffd_sync(&f->u, f->g, PID, BASE, BASE + STEP); /* meets one of them */
	assert_int_equal(f->u.done.nr, OLD - 1);
	for (unsigned i = OLD; i < OLD + NEW; i++) {
		claim(f, i, MM_OBJ_SHMEM);
		uffd_sync(&f->u, f->g, PID, BASE + i * STEP, BASE + i * STEP + 1);
		assert_true(f->u.done.nr <= 2 * (OLD + 1) + 64 + 1);
	}
	assert_int_equal(f->u.done.nr, NEW);
	for (size_t i = 1; i < f->u.done.nr; i++)
		assert_true(f->u.done.r[i - 1].end <= f->u.done.r[i].start);
}

#define SPAN (2ULL << 20)
#define REAL_BYTES (8 * SPAN)

/* Shared memory of the test's own, in the model as the process's: the
 * fixture's userfaultfd, made here, registers it in this process. */
static char *real_shared(struct fixture *f)
{
	char *p = mmap(NULL, REAL_BYTES, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(p != MAP_FAILED);
	struct mm_mapping m = {
		.addr = (uintptr_t)p, .len = REAL_BYTES,
		.obj = { .kind = MM_OBJ_SHMEM, .dev = 5, .ino = 7 },
		.prot = MM_PROT_READ | MM_PROT_WRITE, .flags = MM_VMA_SHARED,
	};
	assert_int_equal(mm_map(f->w, PID, &m), 0);
	return p;
}

static int register_with(int fd, const char *p, uint64_t len)
{
	struct uffdio_register r = {
		.range = { (uintptr_t)p, len }, .mode = UFFDIO_REGISTER_MODE_MISSING,
	};
	return ioctl(fd, UFFDIO_REGISTER, &r) ? -errno : 0;
}

/* What the shim sends after a call that failed: PTS_F_FAILED and its
 * errno in the body.  What the ingest says it asks is done; the acks it
 * asks for are returned. */
static unsigned failed_record(struct fixture *f, void *rec, uint16_t type,
			      size_t size)
{
	struct pts_hdr *h = rec;
	struct ingest_action act = { 0 };
	h->type = type;
	h->size = (uint16_t)size;
	h->flags = PTS_F_FAILED;
	ingest_record_actions(&act, 1, h);
	for (unsigned i = 0; i < act.nuffd; i++)
		uffd_act(&f->u, f->g, getpid(), &act.uffd[i]);
	return act.nack;
}

/*
 * The program's own UFFDIO_REGISTER of a part of memory the daemon holds
 * fails with EBUSY; told so (the shim's failed record), the daemon
 * releases the whole of its range (no VMA of ours split) and asks for the
 * ack the shim waits for; the program's second call succeeds, and the
 * daemon never registers there again while it is mapped.  A release of
 * its own later (a failed mremap over the whole) leaves the program's
 * registration alone.
 */
static void program_wins(void **state)
{
	struct fixture *f = *state;
	char *p = real_shared(f);
	uffd_sync(&f->u, f->g, PID, 0, UINT64_MAX);
	assert_int_equal(f->u.done.nr, 1);
	assert_true(f->u.done.r[0].live);
	int own = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	struct uffdio_api api = { .api = UFFD_API,
				  .features = UFFD_FEATURE_MISSING_SHMEM };
	assert_true(own >= 0 && !ioctl(own, UFFDIO_API, &api));
	assert_int_equal(register_with(own, p + SPAN, SPAN), -EBUSY);
	struct pts_own_uffd r = {
		.start = (uintptr_t)p + SPAN, .len = SPAN,
		.mode = UFFDIO_REGISTER_MODE_MISSING,
		.request = PTS_OWN_UFFD_REGISTER, .result_errno = EBUSY,
	};
	assert_int_equal(failed_record(f, &r, PTS_OWN_UFFD, sizeof(r)),
			 1); /* its ack */
	assert_int_equal(f->u.done.nr, 1);
	assert_false(f->u.done.r[0].live);
	assert_int_equal(register_with(own, p + SPAN, SPAN), 0);
	uffd_sync(&f->u, f->g, PID, 0, UINT64_MAX);
	assert_int_equal(f->u.done.nr, 1);
	assert_false(f->u.done.r[0].live);
	struct pts_mremap m = {
		.old_addr = (uintptr_t)p, .old_len = REAL_BYTES,
		.new_len = 2 * REAL_BYTES, .result_errno = EFAULT,
	};
	assert_int_equal(failed_record(f, &m, PTS_MREMAP, sizeof(m)),
			 1); /* its ack */
	/* Still the program's: another userfaultfd cannot have it. */
	assert_int_equal(register_with(f->u.fd, p + SPAN, SPAN), -EBUSY);
	close(own);
	munmap(p, REAL_BYTES);
}

/* A range released in the middle of a live one: three, the middle one
 * not live; released next to it, joined to it; all released, one. */
static void release_cuts_and_joins(void **state)
{
	(void)state;
	struct uffd_ranges l = { 0 };
	assert_int_equal(ranges_append(&l, 0, 8 * SPAN, 0, true), 0);
	assert_int_equal(ranges_release(&l, 2 * SPAN, 3 * SPAN), 0);
	assert_int_equal(l.nr, 3);
	assert_true(l.r[0].live && !l.r[1].live && l.r[2].live);
	assert_true(l.r[1].start == 2 * SPAN && l.r[1].end == 3 * SPAN);
	assert_int_equal(ranges_release(&l, 3 * SPAN, 4 * SPAN), 0);
	assert_int_equal(l.nr, 3);
	assert_true(l.r[1].start == 2 * SPAN && l.r[1].end == 4 * SPAN);
	assert_int_equal(ranges_release(&l, 0, 8 * SPAN), 0);
	assert_int_equal(l.nr, 1);
	assert_false(l.r[0].live);
	ranges_free(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(ranges_follow_the_model, setup, teardown),
		cmocka_unit_test_setup_teardown(ranges_kept_and_cut, setup, teardown),
		cmocka_unit_test_setup_teardown(window_and_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(program_wins, setup, teardown),
		cmocka_unit_test(release_cuts_and_joins),
	};
	return cmocka_run_group_tests_name("uffd_ranges", tests, NULL, NULL);
}
