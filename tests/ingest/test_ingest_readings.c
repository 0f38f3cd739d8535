/* SPDX-License-Identifier: MIT */
/*
 * The ingest's readings, fed by hand as a replay feeds them (no /proc):
 * checkpoint records reconciling the model, records around them, the peak
 * they let be taken, and the readings owed.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <cmocka.h>

#include "ingest_fixture.h"
#include "ingest/trace.h"
#include "lib/clock.h"

/* A reading of pid whose PTS_CK_CGROUP says path (len bytes of it). */
static int cgroup_reading(struct fixture *f, int32_t pid, const char *path,
			  uint32_t len)
{
	struct pts_ck_begin b = { .h = { .type = PTS_CK_BEGIN, .size = sizeof(b) },
				  .pid = pid, .reason = PTS_CK_TIMER };
	union {
		struct pts_ck_cgroup c;
		uint8_t b[sizeof(struct pts_ck_cgroup) + 512];
	} cg = { .c = { .h = { .type = PTS_CK_CGROUP,
			       .size = (uint16_t)(sizeof(cg.c) + len) },
			.len = len } };
	memcpy(cg.c.path, path, strlen(path));
	struct pts_ck_end e = { .h = { .type = PTS_CK_END, .size = sizeof(e) },
				.vmpte_kb = 0, .flags = PTS_CK_STABLE };
	assert_int_equal(ingest_replay(f->g, pid, 0, &b, sizeof(b)), 0);
	int r = ingest_replay(f->g, pid, 0, &cg, cg.c.h.size);
	assert_int_equal(ingest_replay(f->g, pid, 0, &e, sizeof(e)), 0);
	return r;
}

/* A reading's PTS_CK_CGROUP is the process's cgroup in the report (and
 * its group with --group-by cgroup), until another says otherwise; one
 * longer than PTS_CGROUP_MAX is refused as malformed. */
static void cgroup_from_reading(void **state)
{
	struct fixture *f = *state;
	struct ingest_action act;
	ingest_report_options(f->g, REPORT_GROUP_CGROUP, false);
	hello(f, 100, 0, &act);
	assert_int_equal(cgroup_reading(f, 100, "/system.slice/a.service", 23), 0);
	const struct report *r = ingest_report(f->g);
	assert_string_equal(final_of_pid(r, 100)->proc.cgroup,
			    "/system.slice/a.service");
	assert_int_equal(r->ngroups, 1);
	assert_string_equal(r->groups[0].key, "/system.slice/a.service");
	assert_int_equal(cgroup_reading(f, 100, "/b", 2), 0);
	r = ingest_report(f->g);
	assert_string_equal(final_of_pid(r, 100)->proc.cgroup, "/b");
	char longer[PTS_CGROUP_MAX + 2];
	memset(longer, 'x', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	assert_int_equal(cgroup_reading(f, 100, longer, PTS_CGROUP_MAX + 1),
			 -EPROTO);
	assert_string_equal(final_of_pid(ingest_report(f->g), 100)->proc.cgroup,
			    "/b");
}

/* A checkpoint maps what the shim did not see, unmaps what is gone and
 * changes a protection, keeping the tables of what agrees. */
static void reconcile_from_proc(void **state)
{
	struct fixture *f = *state;
	struct ingest_action act;
	uint32_t c1 = hello(f, 400, 0, &act);
	mmap_rec(f, c1, BASE, 4 * MIB, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED);
	mmap_rec(f, c1, BASE + 8 * MIB, 2 * MIB, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED);
	struct pts_ck_vma v[2] = {
		{ .start = BASE, .end = BASE + 4 * MIB, .kind = MM_OBJ_ANON,
		  .prot = MM_PROT_READ },                    /* protection changed */
		{ .start = BASE + 16 * MIB, .end = BASE + 18 * MIB,
		  .kind = MM_OBJ_FILE, .dev = 8, .ino = 9,
		  .prot = MM_PROT_READ },                    /* unseen mapping */
	};                                                   /* BASE+8M: gone */
	struct pts_ck_run run[2] = { { BASE, BASE + 4096, 0, 0 },
				     { BASE + 16 * MIB, BASE + 16 * MIB + 4096, 0, 0 } };
	checkpoint(f, 400, v, 2, run, 2, 16);
	struct mm_proc_stats s;
	assert_int_equal(mm_proc_stats(f->ws.w[0], 400, &s), 0);
	assert_int_equal(s.vmas, 2);
	assert_int_equal(s.mapped_bytes, 6 * MIB);
	assert_int_equal(s.tables[PT_PTE], 2);
	const struct report *r = ingest_report(f->g);
	assert_int_equal(r->stream.proc_only_bytes, 2 * MIB);
	assert_int_equal(r->stream.intercepted_bytes, 6 * MIB);
	assert_int_equal(r->finals_exact, 1);
}

/* A checkpoint may read /proc after a call and before its record: the
 * record then finds its mapping there and is taken as already applied. */
static void record_after_checkpoint(void **state)
{
	struct fixture *f = *state;
	struct ingest_action act;
	uint32_t c1 = hello(f, 500, 0, &act);
	struct pts_ck_vma v = { .start = BASE, .end = BASE + 4 * MIB,
				.kind = MM_OBJ_SHMEM, .dev = 5, .ino = 77,
				.prot = MM_PROT_READ | MM_PROT_WRITE,
				.flags = MM_VMA_SHARED };
	checkpoint(f, 500, &v, 1, NULL, 0, 0);
	mmap_rec(f, c1, BASE, 4 * MIB, MAP_SHARED | MAP_ANONYMOUS);
	const struct report *r = ingest_report(f->g);
	assert_int_equal(r->stream.refused, 0);
	/* a record that does not match what is there is still refused */
	mmap_rec(f, c1, BASE, 2 * MIB, MAP_PRIVATE | MAP_ANONYMOUS);
	r = ingest_report(f->g);
	assert_int_equal(r->stream.refused, 1);
}

/* An mmap made after a checkpoint's reading began lands where the kernel
 * found nothing: what the model has there, from that older reading (a
 * mapping glibc unmapped where no interposer saw it), goes. */
static void mmap_after_checkpoint(void **state)
{
	struct fixture *f = *state;
	struct ingest_action act;
	uint32_t c1 = hello(f, 600, 0, &act);
	struct pts_ck_vma v = { .start = BASE, .end = BASE + 8 * MIB,
				.kind = MM_OBJ_ANON,
				.prot = MM_PROT_READ | MM_PROT_WRITE };
	checkpoint(f, 600, &v, 1, NULL, 0, 0);
	struct pts_mmap m = { .h.time_ns = 1, .addr = BASE + 2 * MIB,
			      .len = MIB, .prot = PROT_READ | PROT_WRITE,
			      .flags = MAP_SHARED | MAP_ANONYMOUS, .fd = -1 };
	send_rec(f, c1, &m, PTS_MMAP, sizeof(m), &act);
	assert_int_equal(ingest_report(f->g)->stream.refused, 0);
	struct mm_proc_stats s;
	assert_int_equal(mm_proc_stats(f->ws.w[0], 600, &s), 0);
	assert_int_equal(s.vmas, 3);
	assert_int_equal(s.mapped_bytes, 8 * MIB);
}

/* pid maps 2 MiB of private anonymous memory read-only with MAP_POPULATE
 * (read faults), then forks child: the child's tables under linux. */
static uint64_t read_populate_fork(struct fixture *f, int32_t pid,
				   int32_t child)
{
	struct ingest_action act;
	uint32_t c = hello(f, pid, 0, &act);
	struct pts_mmap m = {
		.addr = BASE, .len = 2 * MIB, .prot = PROT_READ, .fd = -1,
		.flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_POPULATE,
	};
	send_rec(f, c, &m, PTS_MMAP, sizeof(m), &act);
	assert_int_equal(tables(f, 0, pid), 3); /* PUD + PMD + PTE */
	struct pts_fork fk = { .child = child };
	send_rec(f, c, &fk, PTS_FORK, sizeof(fk), &act);
	hello(f, child, PTS_HELLO_FORKED, &act);
	return tables(f, 0, child);
}

/* What a read of private anonymous memory maps travels in the trace: the
 * read pages are an anonymous page, and fork copies their tables, after a
 * PTS_ZERO_PAGE record that says so, live and replayed; without one (an
 * older trace) they are the zero page, and it does not. */
static void zero_page_in_trace(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(read_populate_fork(f, 700, 701), 0);
	ingest_zero_page(f->g, false);
	assert_int_equal(read_populate_fork(f, 800, 801), 3);

	struct fixture *r = fixture_new(NULL);
	struct trace_error te;
	rewind(f->trace);
	assert_int_equal(ingest_trace_replay(f->trace, r->g, false, &te), 0);
	assert_int_equal(tables(r, 0, 701), 0);
	assert_int_equal(tables(r, 0, 801), 3);
	fixture_free(r);
}

/* A record that changes nothing (a failed call): the peak due after a
 * reading is taken, or passed by, at the next record. */
static void nudge(struct fixture *f, uint32_t conn)
{
	struct ingest_action act;
	struct pts_range m = { .h.flags = PTS_F_FAILED, .addr = BASE,
				.len = MIB, .result_errno = EINVAL };
	send_rec(f, conn, &m, PTS_MUNMAP, sizeof(m), &act);
}

static uint64_t peak_tables(struct fixture *f)
{
	return report_sum3(ingest_report_now(f->g)->totals[0].linked);
}

/* A 2 MiB private anonymous mapping at BASE, one page of it present. */
static const struct pts_ck_vma anon_2m = {
	.start = BASE, .end = BASE + 2 * MIB, .kind = MM_OBJ_ANON,
	.prot = MM_PROT_READ | MM_PROT_WRITE,
};
static const struct pts_ck_run one_page = { BASE, BASE + 4096, PTS_RUN_ANON, 0 };

/*
 * The peak is a report of every process: past 64 processes, after a
 * reading it is taken once a record per process beyond 64 came since the
 * last, so that a rising workload does not pay the square of its
 * processes.  A higher moment passed by is said, until a peak as high is
 * taken.
 */
static void peak_waits_for_records(void **state)
{
	struct fixture *f = *state;
	struct ingest_action act;
	const struct pts_ck_vma *v = &anon_2m;
	const struct pts_ck_run *run = &one_page;
	uint32_t c = hello(f, 800, 0, &act);
	for (int32_t pid = 801; pid <= 870; pid++) { /* 71 processes */
		struct pts_fork fk = { .child = pid };
		send_rec(f, c, &fk, PTS_FORK, sizeof(fk), &act);
	}
	/* each child read (a copy no reading checked holds the peak back),
	 * then the first reading's peak is taken */
	for (int32_t pid = 801; pid <= 870; pid++)
		checkpoint(f, pid, NULL, 0, NULL, 0, 0);
	checkpoint(f, 800, v, 1, run, 1, 12);
	nudge(f, c);
	assert_int_equal(peak_tables(f), 3); /* PUD, PMD and PTE tables */
	/* 5 records later, fewer than the 7 processes beyond 64: passed by */
	checkpoint(f, 801, v, 1, run, 1, 12);
	nudge(f, c);
	assert_int_equal(peak_tables(f), 3);
	assert_int_equal(ingest_report_now(f->g)->stream.peak_skipped_tables, 6);
	/* 3 readings that change nothing, 12 records: the next is taken */
	for (int32_t i = 0; i < 3; i++)
		checkpoint(f, 870, NULL, 0, NULL, 0, 0);
	checkpoint(f, 802, v, 1, run, 1, 12);
	nudge(f, c);
	assert_int_equal(peak_tables(f), 9);
	assert_int_equal(ingest_report_now(f->g)->stream.peak_skipped_tables, 0);
	assert_replays_same(f);
}

/* The readings owed for a process while its ring was drained for a
 * reading are that reading (ingest_reading_wanted): a resync its records
 * asked for leaves its reason, an EXIT's gives it its own; none is made
 * after.  Made later, each would drain more records owing the next. */
static void readings_owed_since_are_one(void **state)
{
	struct fixture *f = *state;
	struct ingest_action act;
	struct ingest_reading want;
	uint32_t c = hello(f, 100, 0, &act);
	assert_true(ingest_reading_next(f->g, &want));
	assert_int_equal(want.pid, 100);
	assert_int_equal(want.reason, PTS_CK_CONNECT);
	/* what the ring held: more model work than a reading may lag */
	for (int i = 0; i < 4200; i++)
		mmap_rec(f, c, BASE, MIB, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED);
	assert_true(ingest_reading_wanted(f->g, &want));
	assert_int_equal(want.reason, PTS_CK_CONNECT);
	checkpoint(f, 100, NULL, 0, NULL, 0, 0);
	assert_false(ingest_reading_next(f->g, &want));

	for (int i = 0; i < 4200; i++)
		mmap_rec(f, c, BASE, MIB, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED);
	assert_true(ingest_reading_next(f->g, &want));
	assert_int_equal(want.reason, PTS_CK_RESYNC);
	struct pts_exit ex = { .status = 0 };
	send_rec(f, c, &ex, PTS_EXIT, sizeof(ex), &act);
	assert_true(ingest_reading_wanted(f->g, &want));
	assert_int_equal(want.reason, PTS_CK_EXIT);
	assert_false(ingest_reading_next(f->g, &want));
}

/* The next reading owed is pid's, for reason, and the only one. */
static void owed_only(struct fixture *f, int32_t pid, uint32_t reason)
{
	struct ingest_reading want;
	assert_true(ingest_reading_next(f->g, &want));
	assert_int_equal(want.pid, pid);
	assert_int_equal(want.reason, reason);
	assert_false(ingest_reading_next(f->g, &want));
}

/* A new image with a ring and no userfaultfd (it does not wait for its
 * HELLO's ack), connected or exec'd, is read at the first of: its EXIT
 * (that reading its only one), its first record, its asking (a kick), 2 ms
 * after its HELLO.  One with a userfaultfd or without a ring waits for its
 * ack: read at once. */
static void first_reading_waits(void **state)
{
	struct fixture *f = *state;
	struct ingest_action act;
	struct ingest_reading want;
	uint64_t next;
	uint32_t c = hello(f, 100, PTS_HELLO_RING, &act);
	assert_false(ingest_reading_next(f->g, &want));
	assert_false(ingest_readings_waiting(f->g, now_ns(), &next));
	assert_true(next > now_ns());
	struct pts_exit ex = { .status = 0 };
	send_rec(f, c, &ex, PTS_EXIT, sizeof(ex), &act);
	owed_only(f, 100, PTS_CK_EXIT);
	assert_false(ingest_readings_waiting(f->g, UINT64_MAX, &next));
	assert_int_equal(next, 0);

	c = hello(f, 200, PTS_HELLO_RING, &act);
	assert_false(ingest_reading_next(f->g, &want));
	mmap_rec(f, c, BASE, MIB, MAP_PRIVATE | MAP_ANONYMOUS);
	owed_only(f, 200, PTS_CK_CONNECT);
	checkpoint(f, 200, NULL, 0, NULL, 0, 0);

	hello(f, 300, PTS_HELLO_RING, &act);
	ingest_reading_asked(f->g, 300);
	owed_only(f, 300, PTS_CK_CONNECT);
	checkpoint(f, 300, NULL, 0, NULL, 0, 0);

	hello(f, 400, PTS_HELLO_RING, &act);
	assert_false(ingest_readings_waiting(f->g, now_ns(), &next));
	assert_false(ingest_reading_next(f->g, &want));
	assert_true(ingest_readings_waiting(f->g, next, &next));
	assert_int_equal(next, 0);
	owed_only(f, 400, PTS_CK_CONNECT);
	checkpoint(f, 400, NULL, 0, NULL, 0, 0);

	hello(f, 500, PTS_HELLO_RING | PTS_HELLO_UFFD, &act);
	owed_only(f, 500, PTS_CK_CONNECT);
	hello(f, 600, 0, &act);
	owed_only(f, 600, PTS_CK_CONNECT);
	checkpoint(f, 600, NULL, 0, NULL, 0, 0);

	/* An exec'd image too: its reading, an exec's, at its first record. */
	c = hello(f, 600, PTS_HELLO_EXECED | PTS_HELLO_RING, &act);
	assert_false(ingest_reading_next(f->g, &want));
	mmap_rec(f, c, BASE, MIB, MAP_PRIVATE | MAP_ANONYMOUS);
	owed_only(f, 600, PTS_CK_EXEC);
}

/* A forked child that says HELLO with parent's ring, of pid child: acked
 * at once, its model its parent's copy. */
static uint32_t forked(struct fixture *f, uint32_t parent_conn, int32_t child,
		       uint32_t flags)
{
	struct ingest_action act;
	struct pts_fork fk = { .child = child };
	send_rec(f, parent_conn, &fk, PTS_FORK, sizeof(fk), &act);
	uint32_t c = hello(f, child, PTS_HELLO_FORKED | PTS_HELLO_RING | flags,
			   &act);
	assert_int_equal(act.nack, 1);
	assert_int_equal(act.ack[0].conn, c);
	return c;
}

/* A forked child, its parent's copy, is read first when it asks (a kick:
 * its exec waits for that reading), in a reading of every process, or at
 * its EXIT (then its only reading); not at its HELLO nor at its records.
 * One that handed a userfaultfd over is read at its HELLO.  While one is
 * unread no peak is taken: its model has no VmPTE to be held to. */
static void forked_child_read_when_asked(void **state)
{
	struct fixture *f = *state;
	struct ingest_action act;
	struct ingest_reading want;
	const struct pts_ck_vma *v = &anon_2m;
	const struct pts_ck_run *run = &one_page;
	uint32_t c = hello(f, 100, 0, &act);
	owed_only(f, 100, PTS_CK_CONNECT);
	checkpoint(f, 100, v, 1, run, 1, 12);
	uint32_t c101 = forked(f, c, 101, 0);
	forked(f, c, 102, 0);
	mmap_rec(f, c101, BASE + 4 * MIB, MIB, MAP_PRIVATE | MAP_ANONYMOUS);
	assert_false(ingest_reading_next(f->g, &want));
	assert_int_equal(tables(f, 0, 101), 3); /* the copied PTE table */

	checkpoint(f, 100, v, 1, run, 1, 12);
	nudge(f, c);
	assert_int_equal(peak_tables(f), 3); /* 100's alone, before the forks */
	assert_int_equal(ingest_report_now(f->g)->stream.peak_skipped_tables, 9);
	assert_int_equal(ingest_report_now(f->g)->series.readings, 1); /* nor a point */
	ingest_reading_asked(f->g, 101);
	owed_only(f, 101, PTS_CK_FORK);
	checkpoint(f, 101, v, 1, run, 1, 12);
	nudge(f, c);
	assert_int_equal(peak_tables(f), 3); /* 102 is unread still */

	ingest_checkpoint_all(f->g, PTS_CK_TIMER);
	int32_t owed[4];
	size_t n = 0;
	while (n < 4 && ingest_reading_next(f->g, &want))
		owed[n++] = want.pid;
	assert_int_equal(n, 3);
	for (size_t i = 0; i < n; i++) /* each a replay's: the rest forgotten */
		checkpoint(f, owed[i], v, 1, run, 1, 12);
	nudge(f, c);
	assert_int_equal(peak_tables(f), 9);
	assert_int_equal(ingest_report_now(f->g)->stream.peak_skipped_tables, 0);
	assert_int_equal(ingest_report_now(f->g)->series.readings, 2);

	uint32_t c103 = forked(f, c, 103, 0);
	mmap_rec(f, c103, BASE + 4 * MIB, MIB, MAP_PRIVATE | MAP_ANONYMOUS);
	struct pts_exit ex = { .status = 0 };
	send_rec(f, c103, &ex, PTS_EXIT, sizeof(ex), &act);
	owed_only(f, 103, PTS_CK_EXIT);
	checkpoint(f, 103, v, 1, run, 1, 12);

	forked(f, c, 104, PTS_HELLO_UFFD);
	owed_only(f, 104, PTS_CK_FORK);
	checkpoint(f, 104, v, 1, run, 1, 12);
	assert_replays_same(f);
}

/* A reading as the daemon makes it of a process that rests: BEGIN, its
 * mapping v and page run unless it is at rest, the mark, END. */
static int marked_reading(struct fixture *f, int32_t pid,
			  const struct pts_ck_vma *v,
			  const struct pts_ck_run *run, uint64_t mark,
			  int64_t vmpte_kb)
{
	struct pts_ck_begin b = { .h = { .type = PTS_CK_BEGIN, .size = sizeof(b) },
				  .pid = pid, .reason = PTS_CK_TIMER };
	struct {
		struct pts_ck_vmas h;
		struct pts_ck_vma v;
	} vmas = { .h = { .h = { .type = PTS_CK_VMAS, .size = sizeof(vmas) },
			  .n = 1 } };
	struct {
		struct pts_ck_runs h;
		struct pts_ck_run r;
	} runs = { .h = { .h = { .type = PTS_CK_RUNS, .size = sizeof(runs) },
			  .n = 1 } };
	struct pts_ck_rest m = { .h = { .type = PTS_CK_REST, .size = sizeof(m) },
				 .mark = mark };
	struct pts_ck_end e = { .h = { .type = PTS_CK_END, .size = sizeof(e) },
				.vmpte_kb = vmpte_kb,
				.flags = PTS_CK_STABLE | (v ? 0 : PTS_CK_AT_REST) };
	assert_int_equal(ingest_replay(f->g, pid, 0, &b, sizeof(b)), 0);
	if (v) {
		vmas.v = *v;
		runs.r = *run;
		assert_int_equal(ingest_replay(f->g, pid, 0, &vmas, sizeof(vmas)), 0);
		assert_int_equal(ingest_replay(f->g, pid, 0, &runs, sizeof(runs)), 0);
	}
	int r = ingest_replay(f->g, pid, 0, &m, sizeof(m));
	assert_int_equal(ingest_replay(f->g, pid, 0, &e, sizeof(e)), 0);
	return r;
}

/* The mark a reading's PTS_CK_REST gave, asked back by the next one. */
static uint64_t next_rest(struct fixture *f, int32_t pid)
{
	struct ingest_reading want;
	ingest_checkpoint_all(f->g, PTS_CK_FINAL);
	assert_true(ingest_reading_next(f->g, &want));
	assert_int_equal(want.pid, pid);
	assert_true(ingest_reading_wanted(f->g, &want));
	return want.rest;
}

/* A reading at rest keeps the mappings and pages of the marked one before
 * it (none come with it) and its mark; a reading without a mark, or one
 * refused, leaves none; a mark of 0 is malformed. */
static void reading_at_rest(void **state)
{
	struct fixture *f = *state;
	struct ingest_action act;
	uint32_t c = hello(f, 700, 0, &act);
	assert_int_equal(next_rest(f, 700), 0);
	struct pts_ck_vma v = { .start = BASE, .end = BASE + 4 * MIB,
				.kind = MM_OBJ_ANON,
				.prot = MM_PROT_READ | MM_PROT_WRITE };
	struct pts_ck_run run = { BASE, BASE + 4096, 0, 0 };
	checkpoint(f, 700, &v, 1, &run, 1, 12);
	assert_int_equal(next_rest(f, 700), 0); /* no mark: it ran */
	assert_int_equal(marked_reading(f, 700, &v, &run, 0x5eed, 12), 0);
	assert_int_equal(ingest_report(f->g)->stream.readings_at_rest, 0);
	assert_int_equal(next_rest(f, 700), 0x5eed);

	struct mm_proc_stats st;
	for (int i = 0; i < 4; i++)
		assert_int_equal(marked_reading(f, 700, NULL, NULL, 0x5eed, 12), 0);
	assert_int_equal(mm_proc_stats(f->ws.w[0], 700, &st), 0);
	assert_int_equal(st.vmas, 1);
	assert_int_equal(st.tables[PT_PTE], 1);
	const struct report *r = ingest_report(f->g);
	assert_int_equal(r->stream.readings_at_rest, 4);
	assert_int_equal(r->finals_exact, 1);
	assert_int_equal(final_of_pid(r, 700)->proc.vmpte_kb, 12);
	assert_int_equal(next_rest(f, 700), 0x5eed);
	/* A record applied since (sent before the reading, say, and come
	 * later, or held in the ring the reading drains first): the model
	 * moved, the next reading reads. */
	struct ingest_reading want;
	ingest_checkpoint_all(f->g, PTS_CK_FINAL);
	assert_true(ingest_reading_next(f->g, &want));
	assert_int_equal(want.rest, 0x5eed);
	mmap_rec(f, c, BASE + 8 * MIB, MIB, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED);
	assert_true(ingest_reading_wanted(f->g, &want));
	assert_int_equal(want.rest, 0);
	assert_int_equal(marked_reading(f, 700, &v, &run, 0x5eed, 12), 0);
	mmap_rec(f, c, BASE + 8 * MIB, MIB, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED);
	assert_int_equal(next_rest(f, 700), 0);
	assert_int_equal(marked_reading(f, 700, &v, &run, 0x5eed, 12), 0);
	assert_int_equal(next_rest(f, 700), 0x5eed);

	/* Read whole again (it ran): the mark goes with it. */
	checkpoint(f, 700, &v, 1, &run, 1, 12);
	assert_int_equal(next_rest(f, 700), 0);
	assert_int_equal(marked_reading(f, 700, NULL, NULL, 0, 12), -EPROTO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(cgroup_from_reading, setup, teardown),
		cmocka_unit_test_setup_teardown(reconcile_from_proc, setup, teardown),
		cmocka_unit_test_setup_teardown(record_after_checkpoint, setup, teardown),
		cmocka_unit_test_setup_teardown(mmap_after_checkpoint, setup, teardown),
		cmocka_unit_test_setup_teardown(zero_page_in_trace, setup_traced,
						teardown),
		cmocka_unit_test_setup_teardown(peak_waits_for_records, setup_traced,
						teardown),
		cmocka_unit_test_setup_teardown(readings_owed_since_are_one, setup,
						teardown),
		cmocka_unit_test_setup_teardown(reading_at_rest, setup, teardown),
		cmocka_unit_test_setup_teardown(first_reading_waits, setup,
						teardown),
		cmocka_unit_test_setup_teardown(forked_child_read_when_asked,
						setup_traced, teardown),
	};
	return cmocka_run_group_tests_name("ingest_readings", tests, NULL, NULL);
}
