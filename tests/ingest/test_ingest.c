/* SPDX-License-Identifier: MIT */
/*
 * The ingest fed records by hand, as a replay feeds them (no /proc): the
 * session life cycle, forks in every order, the records becoming model
 * operations, and hostile input refused.
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
#include "ck_reading.h"
#include "ingest/ingest_internal.h"
#include "json_read.h"
#include "schema_check.h"

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

/* A run left on: past the count ingest_keep_finals() sets, a process that
 * ends exact with nothing else to say is summed, not listed; one with
 * something to say (a record the model refused) is still listed.  The
 * text and the JSON (checked against its schema) count both. */
static void finals_folded(void **state)
{
	struct fixture *f = *state;
	struct ingest_action act;
	struct pts_ck_vma v = { .start = BASE, .end = BASE + 4 * MIB,
				.kind = MM_OBJ_ANON,
				.prot = MM_PROT_READ | MM_PROT_WRITE };
	struct pts_ck_run run = { BASE, BASE + 4 * MIB, PTS_RUN_ANON, 0 };
	ingest_keep_finals(f->g, 2);
	for (int32_t pid = 300; pid < 306; pid++) {
		uint32_t c = hello(f, pid, 0, &act);
		mmap_rec(f, c, BASE, 4 * MIB,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED);
		checkpoint(f, pid, &v, 1, &run, 1, 16);
		struct pts_fork fk = { .child = pid }; /* known: refused */
		if (pid == 304)
			send_rec(f, c, &fk, PTS_FORK, sizeof(fk), &act);
		struct pts_exit ex = { .status = 0 };
		send_rec(f, c, &ex, PTS_EXIT, sizeof(ex), &act);
		ingest_disconnect(f->g, c);
	}
	const struct report *r = ingest_report(f->g);
	assert_int_equal(r->nfinals, 3); /* 300, 301; 304 */
	assert_int_equal(final_of_pid(r, 304)->refused, 1);
	assert_int_equal(r->finals_exact, 3);
	assert_int_equal(r->folded.processes, 3); /* 302, 303, 305 */
	assert_int_equal(r->folded.vmpte_kb, 3 * 16);
	for (size_t k = 0; k < r->npol; k++)
		assert_int_equal(r->folded.policy_kb[k], 3 * 16);
	assert_int_equal(r->folded.records, 3 * 3); /* HELLO, mmap, EXIT */
	assert_int_equal(report_finals_seen(r), 6);

	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	assert_non_null(m);
	report_text(m, r, "test", 5, false);
	fclose(m);
	assert_non_null(strstr(buf, "at the peak, 6 seen in all"));
	assert_non_null(strstr(buf, "last checkpoint: 6 of 6 exact (3 of them "
				    "summed, not listed"));
	free(buf);
	m = open_memstream(&buf, &len);
	assert_non_null(m);
	report_json(m, r);
	fclose(m);
	assert_true(schema_valid(buf, len, "the folded report"));
	struct jr_error err;
	struct jr_value *doc = jr_parse(buf, len, &err);
	assert_non_null(doc);
	assert_int_equal(jr_len(jr_get(doc, "final_checkpoints")), 3);
	assert_int_equal(jr_path_u64(doc, "final_checkpoints_folded.processes", 0), 3);
	assert_int_equal(jr_path_i64(doc, "final_checkpoints_folded.vmpte_kb", 0), 48);
	assert_int_equal(jr_path_i64(doc, "final_checkpoints_folded.models.linux.tables_kb", 0), 48);
	jr_free(doc);
	free(buf);
}

/* A reading as ck_reading() makes it, naming a file (ino 1) and the
 * process's memfd (ino pid) after its CK_BEGIN. */
struct naming {
	struct fixture *f;
	union {
		struct pts_ck_name n;
		uint8_t buf[sizeof(struct pts_ck_name) + 32];
	} name[2];
};

static void emit_naming(void *arg, int32_t pid, const void *rec, size_t len)
{
	struct naming *e = arg;
	assert_int_equal(ingest_replay(e->f->g, pid, 0, rec, len), 0);
	if (((const struct pts_hdr *)rec)->type != PTS_CK_BEGIN)
		return;
	for (size_t i = 0; i < 2; i++)
		assert_int_equal(ingest_replay(e->f->g, pid, 0, &e->name[i],
					       e->name[i].n.h.size), 0);
}

static void name_rec(struct naming *e, size_t i, uint32_t kind, uint64_t ino,
		     const char *name)
{
	struct pts_ck_name *n = &e->name[i].n;
	*n = (struct pts_ck_name){ .dev = 5 + kind, .ino = ino, .kind = kind,
				   .len = (uint32_t)strlen(name) };
	memcpy(n->name, name, n->len);
	n->h = (struct pts_hdr){ .type = PTS_CK_NAME,
				 .size = (uint16_t)(sizeof(*n) + n->len) };
}

/* A run left on: every process names a memfd of its own (the shim's ring
 * is one); once nothing maps it, its name goes (ingest_names_prune), while
 * a file's stays (call sites name their code) and so does a memfd still
 * mapped.  The processes are children /proc alone shows, so many. */
static void names_pruned(void **state)
{
	struct fixture *f = *state;
	struct ingest_action act;
	struct naming e = { .f = f };
	uint32_t live = hello(f, 999, 0, &act);
	for (int32_t pid = 999; pid < 4000; pid++) {
		struct pts_ck_vma v[2] = {
			{ .start = BASE, .end = BASE + 4096, .dev = 6, .ino = 1,
			  .kind = MM_OBJ_FILE, .prot = MM_PROT_READ },
			{ .start = BASE + 2 * MIB, .end = BASE + 2 * MIB + 4096,
			  .dev = 5 + MM_OBJ_SHMEM, .ino = (uint64_t)pid,
			  .kind = MM_OBJ_SHMEM, .prot = MM_PROT_READ,
			  .flags = MM_VMA_SHARED },
		};
		name_rec(&e, 0, MM_OBJ_FILE, 1, "/usr/bin/prog");
		name_rec(&e, 1, MM_OBJ_SHMEM, (uint64_t)pid, "/memfd:ring (deleted)");
		if (pid != 999) { /* its child, read from /proc alone */
			struct pts_fork fk = { .child = pid };
			send_rec(f, live, &fk, PTS_FORK, sizeof(fk), &act);
		}
		/* the file, only the children that go map */
		ck_reading(pid, v + (pid == 999), 2 - (pid == 999), NULL, 0, -1,
			   emit_naming, &e);
		if (pid != 999)
			checkpoint_gone(f, pid);
	}
	assert_true(f->g->nnames <= 1024);
	/* names enough for the next reading's start to prune, the file no
	 * longer mapped */
	for (uint64_t ino = 1; ino <= 1024; ino++)
		ingest_name_object(f->g, &(struct mm_object_id){
			MM_OBJ_SYSV, 9, ino }, "/SYSV", 5);
	struct pts_ck_vma mine = { .start = BASE, .end = BASE + 4096,
				   .dev = 5 + MM_OBJ_SHMEM, .ino = 999,
				   .kind = MM_OBJ_SHMEM, .prot = MM_PROT_READ,
				   .flags = MM_VMA_SHARED };
	name_rec(&e, 0, MM_OBJ_SHMEM, 999, "/memfd:ring (deleted)");
	ck_reading(999, &mine, 1, NULL, 0, -1, emit_naming, &e);
	assert_true(f->g->nnames <= 4);
	const char *file = ingest_object_name(f->g, &(struct mm_object_id){
		MM_OBJ_FILE, 6, 1 });
	const char *mapped = ingest_object_name(f->g, &(struct mm_object_id){
		MM_OBJ_SHMEM, 5 + MM_OBJ_SHMEM, 999 });
	assert_non_null(file);
	assert_non_null(mapped);
	assert_string_equal(file, "/usr/bin/prog");
	assert_string_equal(mapped, "/memfd:ring (deleted)");
	assert_null(ingest_object_name(f->g, &(struct mm_object_id){
		MM_OBJ_SHMEM, 5 + MM_OBJ_SHMEM, 1000 }));
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
		cmocka_unit_test_setup_teardown(superseded_connection, setup, teardown),
		cmocka_unit_test_setup_teardown(finals_folded, setup, teardown),
		cmocka_unit_test_setup_teardown(names_pruned, setup, teardown),
	};
	return cmocka_run_group_tests_name("ingest", tests, NULL, NULL);
}
