/* SPDX-License-Identifier: MIT */
/*
 * fuzz_ring: a record ring as a hostile process may leave it
 * (docs/wire-protocol.md, The record ring), read as the daemon reads it
 * (ingest/rec_ring.c) and every record it yields fed to the ingest on the
 * process's connection.  The input: the ring's size (4, 8 or 16 KiB), the
 * reader's tail to start from, then rounds of a head the process says it
 * wrote to and the bytes it wrote at the tail.  Besides the sanitizers:
 * a record is whole (a header, at most PTS_REC_MAX bytes, its size what
 * its header says), tail moves by it rounded up to the alignment and never
 * past head, and a drain ends.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "ingest/rec_ring.h"

/* The bytes of one round, written from the reader's tail on (wrapping),
 * up to the ring's size; the rest of the ring stays as it was. */
static void write_round(struct rec_ring_view *v, unsigned char *data,
			struct fuzz_input *in)
{
	uint16_t n;
	if (!fuzz_take(in, &n, sizeof(n)))
		return;
	for (uint32_t i = 0; i < n && i < v->size && in->n; i++) {
		data[(v->tail + i) & (v->size - 1)] = *in->p++;
		in->n--;
	}
}

/* Everything up to head, as drain_ring() takes it; false once the ring
 * is broken (the daemon drops the process then). */
static bool drain(struct fuzz_run *f, uint32_t conn, struct rec_ring_view *v,
		  uint64_t head)
{
	unsigned char rec[PTS_REC_MAX];
	for (uint64_t n = 0;; n++) {
		uint64_t before = v->tail;
		size_t len = 0;
		enum rec_ring_next r = rec_ring_next(v, head, rec, &len);
		if (r == REC_RING_EMPTY)
			return true;
		if (r == REC_RING_BAD) {
			if (v->tail != before)
				fuzz_fail("a bad ring moved tail");
			return false;
		}
		uint64_t step = v->tail - before;
		if (len < sizeof(struct pts_hdr) || len > PTS_REC_MAX ||
		    step < len || step >= len + PTS_RING_ALIGN ||
		    step % PTS_RING_ALIGN || head - v->tail > v->size ||
		    n > v->size / PTS_RING_ALIGN)
			fuzz_fail("record of %zu bytes moved tail %llu", len,
				  (unsigned long long)step);
		struct pts_hdr h;
		memcpy(&h, rec, sizeof(h));
		if (h.size != len)
			fuzz_fail("record says %u bytes, %zu copied", h.size, len);
		struct ingest_action act = { 0 };
		ingest_packet(f->g, conn, rec, len, &act);
		if (act.drop)
			return false;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input in = { data, size };
	uint8_t shift;
	uint64_t tail, head;
	if (!fuzz_take(&in, &shift, 1) || !fuzz_take(&in, &tail, sizeof(tail)))
		return 0;
	struct rec_ring_view v = { .size = 4096u << (shift % 3), .tail = tail };
	/* Exactly the ring's size: a read past it is caught. */
	unsigned char *ring = calloc(1, v.size);
	struct fuzz_run f;
	if (!ring || fuzz_begin(&f)) {
		free(ring);
		return 0;
	}
	v.data = ring;
	uint32_t conn = ingest_connect(f.g, 1, 0);
	while (fuzz_take(&in, &head, sizeof(head))) {
		write_round(&v, ring, &in);
		if (!drain(&f, conn, &v, head))
			break;
	}
	ingest_disconnect(f.g, conn);
	fuzz_end(&f);
	free(ring);
	return 0;
}
