/* SPDX-License-Identifier: MIT */
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
#include "ingest_fixture.h"
#include "ingest/trace.h"
#include "schema_check.h"

struct fixture *fixture_new(FILE *trace)
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

void fixture_free(struct fixture *f)
{
	ingest_free(f->g);
	mm_worlds_free(&f->ws);
	if (f->trace)
		fclose(f->trace);
	free(f);
}

int setup(void **state)
{
	*state = fixture_new(NULL);
	return 0;
}

/* The same, the records applied kept as a trace. */
int setup_traced(void **state)
{
	FILE *trace = tmpfile();
	assert_non_null(trace);
	*state = fixture_new(trace);
	return 0;
}

int teardown(void **state)
{
	fixture_free(*state);
	return 0;
}

/* Sends rec (of size bytes) on conn with the next sequence number. */
void send_rec(struct fixture *f, uint32_t conn, void *rec, uint16_t type,
		     size_t size, struct ingest_action *act)
{
	struct pts_hdr *h = rec;
	h->type = type;
	h->size = (uint16_t)size;
	h->seq = ++f->seq[conn];
	memset(act, 0, sizeof(*act));
	ingest_packet(f->g, conn, rec, size, act);
}

uint32_t hello(struct fixture *f, int32_t pid, uint32_t flags,
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

uint64_t tables(struct fixture *f, size_t world, int32_t pid)
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
void checkpoint(struct fixture *f, int32_t pid,
		       const struct pts_ck_vma *v, size_t nv,
		       const struct pts_ck_run *runs, size_t nr, int64_t vmpte_kb)
{
	ck_reading(pid, v, nv, runs, nr, vmpte_kb, to_ingest, f->g);
}

/* A reading that found the process gone. */
void checkpoint_gone(struct fixture *f, int32_t pid)
{
	struct pts_ck_begin b = { .h = { .type = PTS_CK_BEGIN, .size = sizeof(b) },
				  .pid = pid, .reason = PTS_CK_TIMER };
	struct pts_ck_end e = { .h = { .type = PTS_CK_END, .size = sizeof(e) },
				.vmpte_kb = -1, .err = -ESRCH };
	assert_int_equal(ingest_replay(f->g, pid, 0, &b, sizeof(b)), 0);
	assert_int_equal(ingest_replay(f->g, pid, 0, &e, sizeof(e)), 0);
}

/* The report's one line for pid: there is exactly one. */
const struct report_final *final_of_pid(const struct report *r,
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

void mmap_rec(struct fixture *f, uint32_t conn, uint64_t addr,
		     uint64_t len, int flags)
{
	struct ingest_action act;
	struct pts_mmap m = { .addr = addr, .len = len, .prot = PROT_READ | PROT_WRITE,
			      .flags = flags, .fd = -1 };
	send_rec(f, conn, &m, PTS_MMAP, sizeof(m), &act);
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
void assert_replays_same(struct fixture *f)
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
