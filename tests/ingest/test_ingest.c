/* SPDX-License-Identifier: MIT */
/*
 * The ingest fed records by hand, as a replay feeds them (no /proc): the
 * session life cycle, the records becoming model operations, checkpoint
 * records reconciling the model, and hostile input refused.
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

#include "ck_reading.h"
#include "ingest/ingest.h"
#include "ingest/trace.h"
#include "schema_check.h"

#define BASE 0x100000000000ULL
#define MIB (1ULL << 20)

struct fixture {
	struct mm_worlds ws;
	struct ingest *g;
	FILE *trace;      /* what the ingest applied, or NULL */
	uint32_t seq[64]; /* per connection */
};

static struct fixture *fixture_new(FILE *trace)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char err[128];
	assert_non_null(f);
	assert_int_equal(mm_worlds_init(&f->ws, NULL, err, sizeof(err)), 0);
	f->g = ingest_new(&f->ws, NULL, trace);
	assert_non_null(f->g);
	f->trace = trace;
	return f;
}

static void fixture_free(struct fixture *f)
{
	ingest_free(f->g);
	mm_worlds_free(&f->ws);
	if (f->trace)
		fclose(f->trace);
	free(f);
}

static int setup(void **state)
{
	*state = fixture_new(NULL);
	return 0;
}

/* The same, the records applied kept as a trace. */
static int setup_traced(void **state)
{
	FILE *trace = tmpfile();
	assert_non_null(trace);
	*state = fixture_new(trace);
	return 0;
}

static int teardown(void **state)
{
	fixture_free(*state);
	return 0;
}

/* Sends rec (of size bytes) on conn with the next sequence number. */
static void send_rec(struct fixture *f, uint32_t conn, void *rec, uint16_t type,
		     size_t size, struct ingest_action *act)
{
	struct pts_hdr *h = rec;
	h->type = type;
	h->size = (uint16_t)size;
	h->seq = ++f->seq[conn];
	memset(act, 0, sizeof(*act));
	ingest_packet(f->g, conn, rec, size, act);
}

static uint32_t hello(struct fixture *f, int32_t pid, uint32_t flags,
		      struct ingest_action *act)
{
	uint32_t conn = ingest_connect(f->g, pid, 0);
	assert_true(conn > 0 && conn < 64);
	struct pts_hello h = { .version = PTS_WIRE_VERSION, .flags = flags,
			       .ppid = 1 };
	strcpy(h.exe, "test");
	send_rec(f, conn, &h, PTS_HELLO, sizeof(h), act);
	return conn;
}

static uint64_t tables(struct fixture *f, size_t world, int32_t pid)
{
	struct mm_proc_stats s;
	if (mm_proc_stats(f->ws.w[world], (uint32_t)pid, &s))
		return UINT64_MAX;
	return s.tables[PT_PTE] + s.tables[PT_PMD] + s.tables[PT_PUD];
}

static void to_ingest(void *g, int32_t pid, const void *rec, size_t len)
{
	assert_int_equal(ingest_replay(g, pid, 0, rec, len), 0);
}

/* Observes pages through a checkpoint, as the daemon's /proc reading. */
static void checkpoint(struct fixture *f, int32_t pid,
		       const struct pts_ck_vma *v, size_t nv,
		       const struct pts_ck_run *runs, size_t nr, int64_t vmpte_kb)
{
	ck_reading(pid, v, nv, runs, nr, vmpte_kb, to_ingest, f->g);
}

/* A reading that found the process gone. */
static void checkpoint_gone(struct fixture *f, int32_t pid)
{
	struct pts_ck_begin b = { .h = { .type = PTS_CK_BEGIN, .size = sizeof(b) },
				  .pid = pid, .reason = PTS_CK_TIMER };
	struct pts_ck_end e = { .h = { .type = PTS_CK_END, .size = sizeof(e) },
				.vmpte_kb = -1, .err = -ESRCH };
	assert_int_equal(ingest_replay(f->g, pid, 0, &b, sizeof(b)), 0);
	assert_int_equal(ingest_replay(f->g, pid, 0, &e, sizeof(e)), 0);
}

/* The report's one line for pid: there is exactly one. */
static const struct report_final *final_of_pid(const struct report *r,
					       int32_t pid)
{
	const struct report_final *found = NULL;
	for (size_t i = 0; i < r->nfinals; i++) {
		if (r->finals[i].proc.pid != (uint32_t)pid)
			continue;
		assert_null(found);
		found = &r->finals[i];
	}
	assert_non_null(found);
	return found;
}

static void mmap_rec(struct fixture *f, uint32_t conn, uint64_t addr,
		     uint64_t len, int flags)
{
	struct ingest_action act;
	struct pts_mmap m = { .addr = addr, .len = len, .prot = PROT_READ | PROT_WRITE,
			      .flags = flags, .fd = -1 };
	send_rec(f, conn, &m, PTS_MMAP, sizeof(m), &act);
}

/* HELLO is acked; an mmap record maps; a checkpoint observes and keeps
 * VmPTE; fork links under the sharing policies; exit, then close, moves the
 * process to the finals. */
static void lifecycle(void **state)
{
	struct fixture *f = *state;
	struct ingest_action act;
	uint32_t c1 = hello(f, 100, 0, &act);
	assert_int_equal(act.nack, 1);
	assert_int_equal(act.ack[0].conn, c1);
	assert_int_equal(act.ack[0].rec.acked_seq, 1);

	mmap_rec(f, c1, BASE, 4 * MIB, MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED);
	struct pts_ck_vma v = { .start = BASE, .end = BASE + 4 * MIB,
				.kind = MM_OBJ_SHMEM, .dev = 5, .ino = 77,
				.prot = MM_PROT_READ | MM_PROT_WRITE,
				.flags = MM_VMA_SHARED };
	struct pts_ck_run run = { BASE, BASE + 4 * MIB, 0, 0 };
	checkpoint(f, 100, &v, 1, &run, 1, 16);
	assert_int_equal(tables(f, 0, 100), 4); /* PUD + PMD + 2 PTE */

	struct pts_fork fk = { .child = 101 };
	send_rec(f, c1, &fk, PTS_FORK, sizeof(fk), &act);
	uint32_t c2 = hello(f, 101, PTS_HELLO_FORKED, &act);
	assert_int_equal(act.nack, 1);
	assert_int_equal(act.ack[0].conn, c2);
	assert_int_equal(tables(f, 0, 101), 0);  /* linux: shmem not copied */
	assert_int_equal(tables(f, 1, 101), 4);  /* mccracken: PUD+PMD own, 2 PTE linked */

	struct pts_exit ex = { .status = 0 };
	send_rec(f, c2, &ex, PTS_EXIT, sizeof(ex), &act);
	assert_int_equal(act.nack, 1);
	ingest_disconnect(f->g, c2);
	assert_int_equal(tables(f, 0, 101), UINT64_MAX); /* gone */
	const struct report *r = ingest_report(f->g);
	assert_int_equal(r->nfinals, 2);
	assert_int_equal(r->finals_exact, 1); /* pid 100: 16 kB == 16 kB */
	assert_int_equal(r->stream.records, 5);
}

/* A forked child's HELLO may come before its parent's PTS_FORK: it waits
 * for it, its later records are held, and the ack goes out with the fork. */
static void child_before_fork(void **state)
{
	struct fixture *f = *state;
	struct ingest_action act;
	uint32_t c1 = hello(f, 200, 0, &act);
	mmap_rec(f, c1, BASE, 2 * MIB, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED);
	uint32_t c2 = hello(f, 201, PTS_HELLO_FORKED, &act);
	assert_int_equal(act.nack, 0);
	mmap_rec(f, c2, BASE + 2 * MIB, 2 * MIB,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED);
	assert_int_equal(tables(f, 0, 201), UINT64_MAX);
	struct pts_fork fk = { .child = 201 };
	send_rec(f, c1, &fk, PTS_FORK, sizeof(fk), &act);
	assert_int_equal(act.nack, 1);
	assert_int_equal(act.ack[0].conn, c2);
	struct mm_proc_stats s;
	assert_int_equal(mm_proc_stats(f->ws.w[0], 201, &s), 0);
	assert_int_equal(s.vmas, 1); /* inherited and held mappings merged */
	assert_int_equal(s.mapped_bytes, 4 * MIB);
}

/* The records and stream of a report as JSON (the peak, taken whenever a
 * test asks for a report, is left out). */
static char *finals_json(const struct report *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	assert_non_null(m);
	report_json(m, r);
	fclose(m);
	assert_true(schema_valid(buf, strlen(buf), "the report"));
	char *from = strstr(buf, "\"final_checkpoints\"");
	assert_non_null(from);
	memmove(buf, from, strlen(from) + 1);
	return buf;
}

/* The fixture's trace replayed gives the lines and the stream the fixture
 * has: the replay takes the same decisions from the trace. */
static void assert_replays_same(struct fixture *f)
{
	struct fixture *r = fixture_new(NULL);
	struct trace_error te;
	fflush(f->trace);
	rewind(f->trace);
	assert_int_equal(ingest_trace_replay(f->trace, r->g, false, &te), 0);
	char *live = finals_json(ingest_report(f->g));
	char *replayed = finals_json(ingest_report(r->g));
	assert_string_equal(replayed, live);
	free(live);
	free(replayed);
	fixture_free(r);
}

/* A forked child's whole life on its own connection, all read before its
 * parent's PTS_FORK: HELLO, a mapping, EXIT, and the connection's close. */
static void child_life(struct fixture *f, int32_t pid)
{
	struct ingest_action act;
	uint32_t c = hello(f, pid, PTS_HELLO_FORKED, &act);
	mmap_rec(f, c, BASE, 2 * MIB, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED);
	struct pts_exit ex = { .status = 0 };
	send_rec(f, c, &ex, PTS_EXIT, sizeof(ex), &act);
	ingest_disconnect(f->g, c);
}

/* A forked child whose HELLO, mapping and EXIT all came, and whose
 * connection closed, before its parent's PTS_FORK: its records and its
 * close are held, and applied when the fork comes, in the trace too; one
 * line, every record counted, and the replay the same. */
static void child_done_before_fork(void **state)
{
	struct fixture *f = *state;
	struct ingest_action act;
	uint32_t c1 = hello(f, 210, 0, &act);
	child_life(f, 211);
	assert_true(final_of_pid(ingest_report(f->g), 211)->alive); /* held */
	struct pts_fork fk = { .child = 211 };
	send_rec(f, c1, &fk, PTS_FORK, sizeof(fk), &act);
	assert_int_equal(tables(f, 0, 211), UINT64_MAX); /* over: gone */
	const struct report *r = ingest_report(f->g);
	assert_int_equal(final_of_pid(r, 211)->records, 3);
	assert_int_equal(r->stream.records, 5);
	assert_int_equal(r->stream.refused, 0);
	assert_replays_same(f);
}

/*
 * A forked child its parent's PTS_FORK came for, that readings found gone
 * before its connection was read (the daemon fell behind accepting them:
 * a fork storm under load).  However many readings come first, its
 * connection still finds its line, and its records go on it; a child
 * whose connection never comes (one forked with no fd left) has its line
 * too.  One line each, not in the model, and the replay the same.
 */
static void child_gone_before_connect(void **state)
{
	struct fixture *f = *state;
	struct ingest_action act;
	uint32_t c1 = hello(f, 220, 0, &act);
	struct pts_fork fk = { .child = 221 };
	send_rec(f, c1, &fk, PTS_FORK, sizeof(fk), &act);
	fk.child = 222;
	send_rec(f, c1, &fk, PTS_FORK, sizeof(fk), &act);
	for (int i = 0; i < 3; i++) {
		checkpoint_gone(f, 221);
		checkpoint_gone(f, 222);
	}
	assert_int_equal(tables(f, 0, 221), UINT64_MAX); /* gone */
	const struct report *r = ingest_report(f->g);
	assert_false(final_of_pid(r, 221)->alive);
	assert_int_equal(final_of_pid(r, 221)->records, 0);

	uint32_t c2 = hello(f, 221, PTS_HELLO_FORKED, &act);
	assert_int_equal(act.nack, 1); /* its parent's fork came long ago */
	assert_int_equal(act.ack[0].conn, c2);
	mmap_rec(f, c2, BASE, 2 * MIB, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED);
	fk.child = 223; /* it forked too: its child has nothing to copy */
	send_rec(f, c2, &fk, PTS_FORK, sizeof(fk), &act);
	struct pts_exit ex = { .status = 0 };
	send_rec(f, c2, &ex, PTS_EXIT, sizeof(ex), &act);
	ingest_disconnect(f->g, c2);
	uint32_t c3 = hello(f, 223, PTS_HELLO_FORKED, &act);
	assert_int_equal(act.nack, 1);
	assert_int_equal(tables(f, 0, 223), 0); /* in the model, empty */
	send_rec(f, c3, &ex, PTS_EXIT, sizeof(ex), &act);
	ingest_disconnect(f->g, c3);
	r = ingest_report(f->g);
	assert_int_equal(r->nfinals, 4);
	assert_false(final_of_pid(r, 221)->alive);
	assert_int_equal(final_of_pid(r, 221)->records, 4);
	assert_false(final_of_pid(r, 222)->alive);
	assert_int_equal(final_of_pid(r, 222)->records, 0);
	assert_int_equal(final_of_pid(r, 223)->records, 2);
	assert_int_equal(tables(f, 0, 221), UINT64_MAX);
	assert_int_equal(r->stream.records, 9);
	assert_int_equal(r->stream.lost + r->stream.refused + r->stream.malformed, 0);
	assert_replays_same(f);
	/* a second fork of a child gone after its fork came is refused */
	fk.child = 222;
	send_rec(f, c1, &fk, PTS_FORK, sizeof(fk), &act);
	assert_int_equal(ingest_report(f->g)->stream.refused, 1);
	assert_int_equal(tables(f, 0, 222), UINT64_MAX);
	/* the parent's line says why (JSON refused_why, text --verbose) */
	r = ingest_report(f->g);
	assert_string_equal(final_of_pid(r, 220)->refused_why,
			    "fork of a pid already known");
	assert_string_equal(final_of_pid(r, 221)->refused_why, "");
	assert_int_equal(r->stream.out_of_memory, 0);
}

/* A child read from /proc before its parent's PTS_FORK came (the timer
 * adopts it): its HELLO, which waits, is acked then (not when the fork
 * comes, which may be never); the late fork is no refusal. */
static void child_adopted_before_fork(void **state)
{
	struct fixture *f = *state;
	struct ingest_action act;
	uint32_t c1 = hello(f, 230, 0, &act);
	uint32_t c2 = hello(f, 231, PTS_HELLO_FORKED, &act);
	assert_int_equal(act.nack, 0); /* it waits for its parent's fork */
	checkpoint(f, 231, NULL, 0, NULL, 0, 0);
	assert_int_equal(tables(f, 0, 231), 0); /* in the model, as read */
	act = (struct ingest_action){ 0 };
	assert_false(ingest_owed_acks(f->g, &act));
	assert_int_equal(act.nack, 1);
	assert_int_equal(act.ack[0].conn, c2);
	assert_int_equal(act.ack[0].rec.acked_seq, 1);
	struct pts_fork fk = { .child = 231 };
	send_rec(f, c1, &fk, PTS_FORK, sizeof(fk), &act);
	assert_int_equal(ingest_report(f->g)->stream.refused, 0);
	/* a second fork of a pid the model has is still refused */
	send_rec(f, c1, &fk, PTS_FORK, sizeof(fk), &act);
	assert_int_equal(ingest_report(f->g)->stream.refused, 1);
}

/*
 * A forked child that did everything (HELLO, a mapping, EXIT, its close)
 * before its parent's PTS_FORK was read, and that a reading adopted and
 * found gone before the fork came: the fork, however late, finds its line
 * and is no refusal.  One line with every record, not in the model, and
 * the replay the same.
 */
static void child_gone_before_fork(void **state)
{
	struct fixture *f = *state;
	struct ingest_action act;
	uint32_t c1 = hello(f, 240, 0, &act);
	child_life(f, 241);
	checkpoint_gone(f, 241); /* adopts it, and finds it gone */
	checkpoint_gone(f, 241);
	assert_int_equal(tables(f, 0, 241), UINT64_MAX);
	const struct report *r = ingest_report(f->g);
	assert_int_equal(final_of_pid(r, 241)->records, 3);

	struct pts_fork fk = { .child = 241 };
	send_rec(f, c1, &fk, PTS_FORK, sizeof(fk), &act);
	assert_int_equal(tables(f, 0, 241), UINT64_MAX);
	r = ingest_report(f->g);
	assert_int_equal(r->nfinals, 2);
	assert_false(final_of_pid(r, 241)->alive);
	assert_int_equal(final_of_pid(r, 241)->records, 3);
	assert_int_equal(r->stream.records, 5);
	assert_int_equal(r->stream.lost + r->stream.refused + r->stream.malformed, 0);
	assert_replays_same(f);
}

/* A child adopted and gone whose parent's PTS_FORK never comes, and a new
 * process that takes its pid: two processes, two lines, the new one in
 * the model. */
static void pid_reused_while_fork_owed(void **state)
{
	struct fixture *f = *state;
	struct ingest_action act;
	hello(f, 250, 0, &act);
	child_life(f, 251);
	checkpoint_gone(f, 251);
	assert_int_equal(tables(f, 0, 251), UINT64_MAX);
	uint32_t c3 = hello(f, 251, 0, &act);
	assert_int_equal(act.nack, 1);
	assert_int_equal(act.ack[0].conn, c3);
	assert_int_equal(tables(f, 0, 251), 0); /* the new one, in the model */
	const struct report *r = ingest_report(f->g);
	assert_int_equal(r->nfinals, 3);
	size_t old = 0, now = 0;
	for (size_t i = 0; i < r->nfinals; i++) {
		const struct report_final *x = &r->finals[i];
		old += x->proc.pid == 251 && !x->alive && x->records == 3;
		now += x->proc.pid == 251 && x->alive && x->records == 1;
	}
	assert_int_equal(old, 1);
	assert_int_equal(now, 1);
	assert_replays_same(f);
}

/*
 * Two mappings of one file, contiguous in it and alike in what /proc shows,
 * that /proc lists apart (a library's read-only data, and its RELRO: the
 * kernel keeps them apart by VM_ACCOUNT, which /proc/PID/maps does not
 * show) stay apart in the model.  Merged, the RELRO's anonymous pages made
 * the whole a VMA that fork copies, and a child got a table for the other
 * one's span that the kernel never gave it (PostgreSQL's children, +4 kB).
 */
static void listed_mappings_stay_apart(void **state)
{
	struct fixture *f = *state;
	struct ingest_action act;
	uint32_t c1 = hello(f, 700, 0, &act);
	const uint64_t ro_end = BASE + 2 * MIB + 64 * 1024;
	struct pts_ck_vma v[2] = {
		{ .start = BASE + MIB, .end = ro_end, .offset = 0,
		  .kind = MM_OBJ_FILE, .dev = 8, .ino = 9, .prot = MM_PROT_READ },
		{ .start = ro_end, .end = ro_end + 64 * 1024,
		  .offset = ro_end - (BASE + MIB),
		  .kind = MM_OBJ_FILE, .dev = 8, .ino = 9, .prot = MM_PROT_READ },
	};
	struct pts_ck_run runs[2] = {
		{ BASE + MIB, BASE + MIB + 4096, 0, 0 },          /* file page */
		{ ro_end, ro_end + 4096, PTS_RUN_ANON, 0 },      /* COW page */
	};
	checkpoint(f, 700, v, 2, runs, 2, 16);
	struct mm_proc_stats st;
	assert_int_equal(mm_proc_stats(f->ws.w[0], 700, &st), 0);
	assert_int_equal(st.vmas, 2);
	struct pts_fork fk = { .child = 701 };
	send_rec(f, c1, &fk, PTS_FORK, sizeof(fk), &act);
	hello(f, 701, PTS_HELLO_FORKED, &act);
	/* The RELRO's span alone is copied: PUD, PMD and one PTE table. */
	assert_int_equal(tables(f, 0, 701), 3);
}

/* Records that are malformed, out of order or from an unknown connection
 * are refused and counted; the others keep being served. */
static void hostile(void **state)
{
	struct fixture *f = *state;
	struct ingest_action act;
	uint32_t c1 = hello(f, 300, 0, &act);
	uint8_t junk[PTS_REC_MAX + 64] = { 0 };
	memset(&act, 0, sizeof(act));
	ingest_packet(f->g, c1, junk, sizeof(junk), &act); /* oversized */
	ingest_packet(f->g, c1, junk, 3, &act);            /* truncated */
	struct pts_hdr *h = (struct pts_hdr *)junk;
	*h = (struct pts_hdr){ .type = PTS_MMAP, .size = 40, .seq = 2 };
	ingest_packet(f->g, c1, junk, 40, &act);            /* size lies */
	*h = (struct pts_hdr){ .type = PTS_CK_BEGIN, .size = sizeof(struct pts_ck_begin),
			       .seq = 2 };
	ingest_packet(f->g, c1, junk, h->size, &act);       /* daemon-only */
	*h = (struct pts_hdr){ .type = 999, .size = 24, .seq = 2 };
	ingest_packet(f->g, c1, junk, 24, &act);            /* unknown type */
	ingest_packet(f->g, 63, junk, 24, &act);            /* no such conn */
	const struct report *r = ingest_report(f->g);
	assert_int_equal(r->stream.malformed, 5);
	/* the session still works */
	f->seq[c1] = 1;
	mmap_rec(f, c1, BASE, 2 * MIB, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED);
	struct mm_proc_stats s;
	assert_int_equal(mm_proc_stats(f->ws.w[0], 300, &s), 0);
	assert_int_equal(s.mapped_bytes, 2 * MIB);
	/* a gap in the sequence is counted as lost records */
	f->seq[c1] += 5;
	mmap_rec(f, c1, BASE + 4 * MIB, 2 * MIB, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED);
	r = ingest_report(f->g);
	assert_int_equal(r->stream.lost, 5);
}

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

/* Every record counted once, by its process or in a named bucket: one
 * process holding two connections (a client that connects twice, or an
 * exec's old image beyond what the daemon reads first) sends on the one
 * the newer replaced.  Those are not applied, and were counted as lost by
 * the stream alone; lost is what the numbering misses, per process. */
static void superseded_connection(void **state)
{
	struct fixture *f = *state;
	struct ingest_action act;
	uint32_t old = hello(f, 700, 0, &act);
	uint32_t conn = ingest_connect(f->g, 700, 0);
	struct pts_hello h = { .version = PTS_WIRE_VERSION, .flags = PTS_HELLO_EXECED,
			       .ppid = 1 };
	strcpy(h.exe, "test");
	send_rec(f, conn, &h, PTS_HELLO, sizeof(h), &act);
	struct pts_range r = { .h.flags = PTS_F_FAILED, .result_errno = EINVAL };
	for (int i = 0; i < 3; i++)
		send_rec(f, old, &r, PTS_MUNMAP, sizeof(r), &act);
	f->seq[conn] += 2; /* two records the shim could not send */
	send_rec(f, conn, &r, PTS_MUNMAP, sizeof(r), &act);
	const struct report *rep = ingest_report(f->g);
	uint64_t lost = 0, records = 0;
	for (size_t i = 0; i < rep->nfinals; i++) {
		lost += rep->finals[i].lost;
		records += rep->finals[i].records;
	}
	assert_int_equal(final_of_pid(rep, 700)->lost, 2);
	assert_int_equal(rep->stream.lost, lost);
	assert_int_equal(rep->stream.records, records);
	assert_int_equal(rep->stream.superseded, 3);
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
	struct pts_ck_vma v = { .start = BASE, .end = BASE + 2 * MIB,
				.kind = MM_OBJ_ANON,
				.prot = MM_PROT_READ | MM_PROT_WRITE };
	struct pts_ck_run run = { BASE, BASE + 4096, PTS_RUN_ANON, 0 };
	uint32_t c = hello(f, 800, 0, &act);
	for (int32_t pid = 801; pid <= 870; pid++) { /* 71 processes */
		struct pts_fork fk = { .child = pid };
		send_rec(f, c, &fk, PTS_FORK, sizeof(fk), &act);
	}
	/* the first reading's peak is taken */
	checkpoint(f, 800, &v, 1, &run, 1, 12);
	nudge(f, c);
	assert_int_equal(peak_tables(f), 3); /* PUD, PMD and PTE tables */
	/* 5 records later, fewer than the 7 processes beyond 64: passed by */
	checkpoint(f, 801, &v, 1, &run, 1, 12);
	nudge(f, c);
	assert_int_equal(peak_tables(f), 3);
	assert_int_equal(ingest_report_now(f->g)->stream.peak_skipped_tables, 6);
	/* 3 readings that change nothing, 12 records: the next is taken */
	for (int32_t i = 0; i < 3; i++)
		checkpoint(f, 870, NULL, 0, NULL, 0, 0);
	checkpoint(f, 802, &v, 1, &run, 1, 12);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(lifecycle, setup, teardown),
		cmocka_unit_test_setup_teardown(child_before_fork, setup, teardown),
		cmocka_unit_test_setup_teardown(child_done_before_fork, setup_traced,
						teardown),
		cmocka_unit_test_setup_teardown(child_gone_before_connect, setup_traced,
						teardown),
		cmocka_unit_test_setup_teardown(child_adopted_before_fork, setup, teardown),
		cmocka_unit_test_setup_teardown(child_gone_before_fork, setup_traced,
						teardown),
		cmocka_unit_test_setup_teardown(pid_reused_while_fork_owed,
						setup_traced, teardown),
		cmocka_unit_test_setup_teardown(listed_mappings_stay_apart, setup, teardown),
		cmocka_unit_test_setup_teardown(hostile, setup, teardown),
		cmocka_unit_test_setup_teardown(cgroup_from_reading, setup, teardown),
		cmocka_unit_test_setup_teardown(reconcile_from_proc, setup, teardown),
		cmocka_unit_test_setup_teardown(record_after_checkpoint, setup, teardown),
		cmocka_unit_test_setup_teardown(mmap_after_checkpoint, setup, teardown),
		cmocka_unit_test_setup_teardown(zero_page_in_trace, setup_traced,
						teardown),
		cmocka_unit_test_setup_teardown(superseded_connection, setup, teardown),
		cmocka_unit_test_setup_teardown(peak_waits_for_records, setup_traced,
						teardown),
		cmocka_unit_test_setup_teardown(readings_owed_since_are_one, setup,
						teardown),
	};
	return cmocka_run_group_tests_name("ingest", tests, NULL, NULL);
}
