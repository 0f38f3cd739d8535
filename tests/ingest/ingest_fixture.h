/* SPDX-License-Identifier: MIT */
/*
 * The ingest fed records by hand, as a replay feeds them (no /proc): the
 * fixture of test_ingest (sessions) and test_ingest_readings (readings).
 */
#ifndef PTSHARE_TESTS_INGEST_FIXTURE_H
#define PTSHARE_TESTS_INGEST_FIXTURE_H

#include <stdint.h>
#include <stdio.h>

#include "ingest/ingest.h"

#define BASE 0x100000000000ULL
#define MIB (1ULL << 20)

struct fixture {
	struct mm_worlds ws;
	struct ingest *g;
	FILE *trace;      /* what the ingest applied, or NULL */
	uint32_t seq[64]; /* per connection */
};

/* A fixture whose ingest writes what it applies to trace (or NULL). */
struct fixture *fixture_new(FILE *trace);
void fixture_free(struct fixture *f);
/* cmocka setup and teardown: a fixture, with its trace kept or not. */
int setup(void **state);
int setup_traced(void **state);
int teardown(void **state);

/* Sends rec (of size bytes) on conn with the next sequence number. */
void send_rec(struct fixture *f, uint32_t conn, void *rec, uint16_t type,
	      size_t size, struct ingest_action *act);
/* pid's connection, its HELLO (flags) sent. */
uint32_t hello(struct fixture *f, int32_t pid, uint32_t flags,
	       struct ingest_action *act);
/* pid's page tables in the fixture's world-th world; UINT64_MAX: none. */
uint64_t tables(struct fixture *f, size_t world, int32_t pid);
/* Observes pages through a checkpoint, as the daemon's /proc reading. */
void checkpoint(struct fixture *f, int32_t pid, const struct pts_ck_vma *v,
		size_t nv, const struct pts_ck_run *runs, size_t nr,
		int64_t vmpte_kb);
/* A reading that found the process gone. */
void checkpoint_gone(struct fixture *f, int32_t pid);
/* The report's one line for pid: there is exactly one. */
const struct report_final *final_of_pid(const struct report *r, int32_t pid);
/* An mmap record of anonymous memory, read and write, with flags. */
void mmap_rec(struct fixture *f, uint32_t conn, uint64_t addr, uint64_t len,
	      int flags);
/* The fixture's trace replayed gives the lines and the stream the fixture
 * has. */
void assert_replays_same(struct fixture *f);

#endif
