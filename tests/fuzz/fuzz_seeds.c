/* SPDX-License-Identifier: MIT */
/*
 * Seeds from a recording (docs/fuzzing.md):
 *
 *   fuzz_seeds trace|ops TRACE OUT [SLIM]
 *
 * writes the frames of TRACE to OUT as a trace (for fuzz_trace) or as a
 * fuzz_ingest script (fuzz_ops.h): the shim's records become packets on
 * the connections that carried them, everything else trace records.  With
 * SLIM, each checkpoint keeps only its SLIM largest mappings, each cut to
 * its first CLIP bytes, and the populated runs inside them, and only the
 * page faults inside the last checkpoint's; and no record keeps its call
 * stack.  The seed stays small and quick to run (the model's work grows
 * with the pages populated, and a report symbolises call sites from the
 * machine's debug files: four times the time, and not the same on every
 * machine) and still says what the workload did.  Reading stops at the
 * first frame that is not whole.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_ops.h"
#include "ptshare/wire.h"

#define HEADER 24 /* magic, version, reserved */
#define CLIP (8u << 20) /* four page tables' span */
#define HUGE_RUN (2u << 20) /* a huge run's alignment */

union rec {
	struct pts_hdr h;
	struct pts_ck_vmas vmas;
	struct pts_ck_runs runs;
	struct pts_conn conn;
	struct pts_fault fault;
	uint8_t b[PTS_REC_MAX];
};

/* The mappings the open checkpoint kept: its runs must fall in them. */
struct kept {
	struct pts_ck_vma v[256];
	size_t n;
};

static size_t slim;
static struct kept kept;

static uint64_t vma_len(const struct pts_ck_vma *v)
{
	return v->end - v->start;
}

/* Whether vma i is among the slim largest of the record (ties: the
 * first ones). */
static bool largest(const struct pts_ck_vmas *r, uint32_t i)
{
	size_t bigger = 0;
	for (uint32_t j = 0; j < r->n; j++)
		bigger += vma_len(&r->vma[j]) > vma_len(&r->vma[i]) ||
			  (j < i && vma_len(&r->vma[j]) == vma_len(&r->vma[i]));
	return bigger < slim;
}

/* The part of run inside a kept mapping (a huge run stays aligned);
 * false when there is none. */
static bool clip_run(struct pts_ck_run *run)
{
	for (size_t i = 0; i < kept.n; i++) {
		const struct pts_ck_vma *v = &kept.v[i];
		if (run->start < v->start || run->start >= v->end)
			continue;
		if (run->end > v->end)
			run->end = run->flags & PTS_RUN_HUGE
					   ? v->end & ~(uint64_t)(HUGE_RUN - 1)
					   : v->end;
		return run->end > run->start;
	}
	return false;
}

static void slim_vmas(union rec *r)
{
	/* Chosen against the record as read, then compacted. */
	bool keep[(PTS_REC_MAX - sizeof(r->vmas)) / sizeof(r->vmas.vma[0])];
	uint32_t n = 0;
	for (uint32_t i = 0; i < r->vmas.n; i++)
		keep[i] = largest(&r->vmas, i);
	for (uint32_t i = 0; i < r->vmas.n; i++) {
		struct pts_ck_vma v = r->vmas.vma[i];
		if (!keep[i] || kept.n == sizeof(kept.v) / sizeof(kept.v[0]))
			continue;
		if (vma_len(&v) > CLIP)
			v.end = v.start + CLIP;
		kept.v[kept.n++] = r->vmas.vma[n++] = v;
	}
	r->vmas.n = n;
	r->h.size = (uint16_t)(sizeof(r->vmas) + n * sizeof(r->vmas.vma[0]));
}

static void slim_runs(union rec *r)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < r->runs.n; i++)
		if (clip_run(&r->runs.run[i]))
			r->runs.run[n++] = r->runs.run[i];
	r->runs.n = n;
	r->h.size = (uint16_t)(sizeof(r->runs) + n * sizeof(r->runs.run[0]));
}

/* Whether a page fault at addr falls in a mapping the last checkpoint
 * kept: the others would only be faults outside the model. */
static bool fault_kept(uint64_t addr)
{
	for (size_t i = 0; i < kept.n; i++)
		if (addr >= kept.v[i].start && addr < kept.v[i].end)
			return true;
	return false;
}

/* r slimmed; false when the whole frame goes. */
static bool slim_rec(union rec *r)
{
	if (r->h.size >= 8u * r->h.nframes + sizeof(r->h)) {
		r->h.size -= 8u * r->h.nframes;
		r->h.nframes = 0;
	}
	switch (r->h.type) {
	case PTS_CK_BEGIN:
		kept.n = 0;
		break;
	case PTS_CK_VMAS:
		if (r->h.size == sizeof(r->vmas) + r->vmas.n * sizeof(r->vmas.vma[0]))
			slim_vmas(r);
		break;
	case PTS_CK_RUNS:
		if (r->h.size == sizeof(r->runs) + r->runs.n * sizeof(r->runs.run[0]))
			slim_runs(r);
		break;
	case PTS_FAULT:
		return r->h.size != sizeof(r->fault) || fault_kept(r->fault.addr);
	}
	return true;
}

/* fuzz_ingest's connection slots: which trace connection each holds. */
static uint32_t slot_conn[FOPS_SLOTS];

static int slot_of(uint32_t conn)
{
	for (int i = 0; i < FOPS_SLOTS; i++)
		if (conn && slot_conn[i] == conn)
			return i;
	return -1;
}

static void put(FILE *out, const void *p, size_t n)
{
	fwrite(p, 1, n, out);
}

static void put_op(FILE *out, enum fops_kind kind, int slot)
{
	unsigned char op = FOPS_OP(kind, (unsigned)slot);
	put(out, &op, 1);
}

static void put_rec(FILE *out, const union rec *r)
{
	put(out, &r->h.size, 2);
	put(out, r, r->h.size);
}

static void op_frame(FILE *out, int32_t pid, uint32_t conn, const union rec *r)
{
	int slot = slot_of(conn);
	if (r->h.type == PTS_CONN_OPEN) {
		int free_slot = 0; /* else the last one */
		while (free_slot < FOPS_SLOTS - 1 && slot_conn[free_slot])
			free_slot++;
		slot_conn[free_slot] = conn;
		put_op(out, FOPS_CONNECT, free_slot);
		put(out, &pid, 4);
	} else if (r->h.type <= PTS_SHIM_LAST && slot >= 0) {
		put_op(out, FOPS_PACKET, slot);
		put_rec(out, r);
	} else if (r->h.type == PTS_CONN_CLOSE && slot >= 0 && !r->conn.arg) {
		put_op(out, FOPS_DISCONNECT, slot);
	} else {
		put_op(out, FOPS_REPLAY, 0);
		put(out, &pid, 4);
		put(out, &conn, 4);
		put_rec(out, r);
	}
	if (r->h.type == PTS_CONN_CLOSE && slot >= 0)
		slot_conn[slot] = 0;
}

static bool read_frame(FILE *in, uint32_t frame[2], union rec *r)
{
	if (fread(frame, 2 * sizeof(*frame), 1, in) != 1 ||
	    fread(&r->h, sizeof(r->h), 1, in) != 1 || r->h.size < sizeof(r->h) ||
	    r->h.size > sizeof(*r))
		return false;
	size_t body = r->h.size - sizeof(r->h);
	return !body || fread(r->b + sizeof(r->h), body, 1, in) == 1;
}

int main(int argc, char **argv)
{
	if (argc < 4 || argc > 5 || (strcmp(argv[1], "trace") && strcmp(argv[1], "ops"))) {
		fputs("usage: fuzz_seeds trace|ops TRACE OUT [SLIM]\n", stderr);
		return 2;
	}
	bool ops = !strcmp(argv[1], "ops");
	slim = argc == 5 ? strtoul(argv[4], NULL, 10) : 0;
	/* The input is read before the output is made: OUT may name it. */
	FILE *in = fopen(argv[2], "rb"), *out;
	uint8_t header[HEADER];
	if (!in || fread(header, sizeof(header), 1, in) != 1) {
		fprintf(stderr, "fuzz_seeds: %s: %s\n", argv[2],
			in ? "shorter than a trace header" : strerror(errno));
		return 1;
	}
	if (!(out = fopen(argv[3], "wb"))) {
		perror(argv[3]);
		return 1;
	}
	if (!ops)
		put(out, header, sizeof(header));
	uint32_t frame[2];
	union rec r;
	while (read_frame(in, frame, &r)) {
		if (slim && !slim_rec(&r))
			continue;
		if (ops) {
			op_frame(out, (int32_t)frame[0], frame[1], &r);
		} else {
			put(out, frame, sizeof(frame));
			put(out, &r, r.h.size);
		}
	}
	fclose(in);
	return fclose(out) ? 1 : 0;
}
