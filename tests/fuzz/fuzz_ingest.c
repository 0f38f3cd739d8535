/* SPDX-License-Identifier: MIT */
/*
 * fuzz_ingest: the record decoder as a daemon drives it, in replay mode (no
 * /proc): connections open and close, packets of any length arrive on
 * them, trace records are applied between them (fuzz_ops.h).  The actions
 * are honoured as the daemon does: a connection asked to drop is dropped
 * and closed.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "fuzz_ops.h"

/* A payload in a buffer of exactly its length, so that the sanitizers
 * see any read past it; NULL when the input ended or memory ran out. */
static uint8_t *payload(struct fuzz_input *in, size_t *len)
{
	uint16_t n;
	if (!fuzz_take(in, &n, sizeof(n)))
		return NULL;
	uint8_t *buf = calloc(1, n ? n : 1);
	size_t have = in->n < n ? in->n : n;
	if (buf)
		fuzz_take(in, buf, have);
	*len = n;
	return buf;
}

static void packet(struct fuzz_run *f, uint32_t conn, struct fuzz_input *in)
{
	size_t len;
	uint8_t *buf = payload(in, &len);
	if (!buf)
		return;
	struct ingest_action act = { 0 };
	ingest_packet(f->g, conn, buf, len, &act);
	free(buf);
	if (act.nack > INGEST_MAX_ACKS)
		fuzz_fail("%u acks for one packet", act.nack);
	if (act.drop) {
		ingest_drop(f->g, conn, REPORT_DROP_MALFORMED);
		ingest_disconnect(f->g, conn);
	}
}

static void replay(struct fuzz_run *f, struct fuzz_input *in)
{
	int32_t pid;
	uint32_t conn;
	size_t len;
	uint8_t *buf;
	if (!fuzz_take(in, &pid, sizeof(pid)) || !fuzz_take(in, &conn, sizeof(conn)) ||
	    !(buf = payload(in, &len)))
		return;
	ingest_replay(f->g, pid, conn, buf, len);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_run f;
	if (fuzz_begin(&f))
		return 0;
	struct fuzz_input in = { data, size };
	uint32_t conn[FOPS_SLOTS] = { 0 };
	uint8_t op;
	int32_t pid;
	while (fuzz_take(&in, &op, 1)) {
		uint32_t *c = &conn[FOPS_SLOT(op)];
		switch (FOPS_KIND(op)) {
		case FOPS_CONNECT:
			if (fuzz_take(&in, &pid, sizeof(pid)))
				*c = ingest_connect(f.g, pid, 0);
			break;
		case FOPS_PACKET:
			packet(&f, *c, &in);
			break;
		case FOPS_DISCONNECT:
			ingest_disconnect(f.g, *c);
			break;
		case FOPS_REPLAY:
			replay(&f, &in);
			break;
		case FOPS_REPORT:
			ingest_report(f.g);
			break;
		case FOPS_DEAF:
			ingest_drop(f.g, *c, REPORT_DROP_DEAF);
			break;
		}
	}
	fuzz_end(&f);
	return 0;
}
