/* SPDX-License-Identifier: MIT */
/*
 * The memory calls as the daemon receives them: every traced call of a
 * scripted program in order, with its arguments, result, backing object,
 * call site and, for the failed ones, the flag and the kernel's errno; the
 * program's output and errno unchanged; the options that shape records.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "traced.h"

#define PAGE 4096u

static char data_file[64];

static int make_file(void **state)
{
	char page[PAGE] = { 1 };

	snprintf(data_file, sizeof(data_file), "/tmp/ptshare-shim-file-XXXXXX");
	int fd = mkstemp(data_file);
	for (int i = 0; i < 4; i++)
		assert_int_equal(write(fd, page, sizeof(page)), sizeof(page));
	close(fd);
	return 0;
}

static int remove_file(void **state)
{
	unlink(data_file);
	return 0;
}

struct expect {
	uint16_t type;
	int32_t err; /* 0: succeeded */
};

/* What script() in shim_subject.c does, in order. */
static const struct expect script_calls[] = {
	{ PTS_HELLO, 0 },    { PTS_MMAP, 0 },     { PTS_MMAP, 0 },
	{ PTS_MMAP, 0 },     { PTS_MPROTECT, 0 }, { PTS_MADVISE, 0 },
	{ PTS_MREMAP, 0 },   { PTS_MMAP, 0 },     { PTS_MREMAP, 0 },
	{ PTS_SHMAT, 0 },    { PTS_SHMDT, 0 },    { PTS_MUNMAP, 0 },
	{ PTS_MUNMAP, 0 },   { PTS_MUNMAP, 0 },   { PTS_MUNMAP, EINVAL },
	{ PTS_MMAP, EBADF }, { PTS_MMAP, ENOMEM }, { PTS_MPROTECT, ENOMEM },
	{ PTS_MADVISE, EINVAL }, { PTS_MREMAP, EINVAL }, { PTS_SHMAT, EINVAL },
	{ PTS_SHMDT, EINVAL }, { PTS_EXIT, 0 },
};
#define NCALLS (sizeof(script_calls) / sizeof(script_calls[0]))

static void run_script(struct traced *t, const char *options)
{
	const char *argv[] = { NULL, "script", data_file, NULL };

	traced_run(t, NULL, options, argv);
	assert_true(WIFEXITED(t->status));
	assert_int_equal(WEXITSTATUS(t->status), 0);
}

static void test_script_records(void **state)
{
	const struct fake_rec *r[NCALLS + 8];
	struct traced t;

	run_script(&t, NULL);
	assert_int_equal(recs_of(t.d, t.run.pid, r, NCALLS + 8), NCALLS);
	for (size_t i = 0; i < NCALLS; i++) {
		const struct pts_hdr *h = &r[i]->r.h;
		int32_t err = script_calls[i].err;
		assert_int_equal(h->type, script_calls[i].type);
		assert_int_equal(h->seq, i + 1);
		assert_int_equal(!!(h->flags & PTS_F_FAILED), err != 0);
		if (h->type == PTS_MMAP)
			assert_int_equal(r[i]->r.mmap.result_errno, err);
		else if (h->type == PTS_MREMAP)
			assert_int_equal(r[i]->r.mremap.result_errno, err);
		else if (h->type == PTS_SHMAT)
			assert_int_equal(r[i]->r.shmat.result_errno, err);
		else if (h->type != PTS_HELLO && h->type != PTS_EXIT)
			assert_int_equal(r[i]->r.range.result_errno, err);
	}

	uint64_t anon = run_number(&t.run, "anon", 0);
	uint64_t shared = run_number(&t.run, "shared", 0);
	uint64_t file = run_number(&t.run, "file", 0);
	assert_int_equal(r[0]->r.hello.flags & PTS_HELLO_EXECED, PTS_HELLO_EXECED);
	assert_int_equal(r[0]->r.hello.ppid, getpid());
	assert_non_null(strstr(r[0]->r.hello.exe, "shim_subject"));

	const struct pts_mmap *m = &r[1]->r.mmap;
	assert_int_equal(m->addr, anon);
	assert_int_equal(m->len, 3 * PAGE);
	assert_int_equal(m->flags, MAP_PRIVATE | MAP_ANONYMOUS);
	assert_int_equal(m->fd, -1);
	assert_int_equal(m->dev | m->ino, 0);
	m = &r[2]->r.mmap;
	assert_int_equal(m->addr, shared);
	assert_int_equal(m->flags, MAP_SHARED | MAP_ANONYMOUS);
	assert_int_equal(m->dev | m->ino, 0);
	m = &r[3]->r.mmap;
	assert_int_equal(m->addr, file);
	assert_int_equal(m->len, 2 * PAGE);
	assert_int_equal(m->offset, PAGE);
	assert_int_equal(m->prot, PROT_READ);
	assert_int_equal(m->fd, run_number(&t.run, "file", 3));
	assert_int_equal(m->dev, run_number(&t.run, "file", 1));
	assert_int_equal(m->ino, run_number(&t.run, "file", 2));

	assert_int_equal(r[4]->r.range.addr, anon);
	assert_int_equal(r[4]->r.range.arg, PROT_READ);
	assert_int_equal(r[5]->r.range.arg, MADV_DONTNEED);
	assert_int_equal(r[5]->r.range.len, 3 * PAGE);
	const struct pts_mremap *mr = &r[6]->r.mremap;
	assert_int_equal(mr->old_addr, anon);
	assert_int_equal(mr->old_len, 3 * PAGE);
	assert_int_equal(mr->new_len, 6 * PAGE);
	assert_int_equal(mr->new_addr, run_number(&t.run, "mremap", 0));
	mr = &r[8]->r.mremap;
	assert_int_equal(mr->flags, MREMAP_MAYMOVE | MREMAP_FIXED);
	assert_int_equal(mr->new_addr, r[7]->r.mmap.addr);
	assert_int_equal(mr->new_addr, run_number(&t.run, "fixed", 0));
	const struct pts_shmat *sa = &r[9]->r.shmat;
	assert_int_equal(sa->addr, run_number(&t.run, "shmat", 0));
	assert_int_equal(sa->shmid, run_number(&t.run, "shmat", 1));
	assert_int_equal(sa->len, 8 * PAGE);
	assert_int_equal(sa->shmflg, SHM_RDONLY);
	assert_int_equal(r[10]->r.range.addr, sa->addr);
	assert_int_equal(r[11]->r.range.addr, file);
	assert_int_equal(r[12]->r.range.addr, shared);
	assert_int_equal(r[15]->r.mmap.addr, (uint64_t)(uintptr_t)MAP_FAILED);
	assert_int_equal(r[NCALLS - 1]->r.exit.status, 0);
	traced_free(&t);
}

/* Default: 4 frames, the first in script() itself (the shim's own frames
 * left out); frames=N and stack=0 change that.  EXIT has none, ever. */
static void test_call_stacks(void **state)
{
	static const struct {
		const char *options;
		unsigned nframes;
	} cases[] = { { NULL, 4 }, { "frames=2", 2 }, { "frames=99", 16 },
		      { "stack=0", 0 }, { "frames=0", 0 } };

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		const struct fake_rec *r[NCALLS + 8];
		struct traced t;
		run_script(&t, cases[c].options);
		uint64_t script = run_number(&t.run, "script", 0);
		assert_int_equal(recs_of(t.d, t.run.pid, r, NCALLS + 8), NCALLS);
		for (size_t i = 1; i + 1 < NCALLS; i++) {
			unsigned n = r[i]->r.h.nframes;
			if (cases[c].nframes < 16)
				assert_int_equal(n, cases[c].nframes);
			else /* main, libc's start, _start: fewer than 16 */
				assert_in_range(n, 5, 16);
			if (n)
				assert_in_range(fake_frames(r[i])[0], script,
						script + PAGE);
		}
		assert_int_equal(r[NCALLS - 1]->r.h.type, PTS_EXIT);
		assert_int_equal(r[NCALLS - 1]->r.h.nframes, 0);
		traced_free(&t);
	}
}

/* The program's own output (errno values included) is the same traced,
 * untraced, and preloaded without a daemon. */
static void test_script_output_unchanged(void **state)
{
	const char *argv[] = { SUBJECT_PATH, "script", data_file, NULL };
	struct run plain, lonely;
	struct run_env env;
	struct traced t;

	run_script(&t, NULL);
	run_env(&env, false, NULL, NULL);
	run_start(&plain, argv, env.v, NULL);
	int plain_status = run_finish(&plain);
	run_env(&env, true, "/nonexistent/ptshare.sock", "verbose=0");
	run_start(&lonely, argv, env.v, NULL);
	int lonely_status = run_finish(&lonely);

	char *a = run_stable_text(&t.run), *b = run_stable_text(&plain),
	     *c = run_stable_text(&lonely);
	assert_string_equal(a, b);
	assert_string_equal(c, b);
	assert_non_null(strstr(b, "errno after a successful mmap 4242"));
	assert_non_null(strstr(b, "munmap unaligned failed EINVAL"));
	assert_non_null(strstr(b, "mmap bad fd failed EBADF"));
	assert_non_null(strstr(b, "mmap huge failed ENOMEM"));
	assert_int_equal(t.status, plain_status);
	assert_int_equal(lonely_status, plain_status);
	free(a);
	free(b);
	free(c);
	run_free(&plain);
	run_free(&lonely);
	traced_free(&t);
}

/* HELLO brings a userfaultfd (the daemon checks it is one), unless uffd=0. */
static void test_hello_userfaultfd(void **state)
{
	struct traced t;

	run_script(&t, NULL);
	assert_true(nth_of(t.d, t.run.pid, PTS_HELLO, 0)->uffd);
	assert_true(nth_of(t.d, t.run.pid, PTS_HELLO, 0)->r.hello.flags &
		    PTS_HELLO_UFFD);
	traced_free(&t);
	run_script(&t, "uffd=0");
	assert_false(nth_of(t.d, t.run.pid, PTS_HELLO, 0)->uffd);
	assert_false(nth_of(t.d, t.run.pid, PTS_HELLO, 0)->r.hello.flags &
		     PTS_HELLO_UFFD);
	traced_free(&t);
}

/* RLIMIT_NOFILE far below 1000: the connection sits under the limit. */
static void test_low_fd_limit(void **state)
{
	const char *argv[] = { NULL, "script", data_file, NULL };
	const struct run_limits lim = { .nofile = 64 };
	struct traced t;

	traced_start(&t, NULL, NULL, argv, &lim);
	traced_finish(&t);
	assert_int_equal(WEXITSTATUS(t.status), 0);
	assert_int_equal(count_of(t.d, t.run.pid, PTS_MMAP), 6);
	assert_int_equal(count_of(t.d, t.run.pid, PTS_EXIT), 1);
	traced_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_script_records),
		cmocka_unit_test(test_call_stacks),
		cmocka_unit_test(test_script_output_unchanged),
		cmocka_unit_test(test_hello_userfaultfd),
		cmocka_unit_test(test_low_fd_limit),
	};
	return cmocka_run_group_tests(tests, make_file, remove_file);
}
