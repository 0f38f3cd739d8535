/* SPDX-License-Identifier: MIT */
/*
 * The input of fuzz_ingest: a script of what a daemon does to its ingest,
 * one operation after another, until the input ends.  Each starts with a
 * byte: the kind in the low 3 bits, a connection slot (of 8) in the top 3.
 * Integers are little-endian.  A payload is `len` bytes; when the input
 * ends first, the rest is zeros, so that short inputs can send the long
 * packets a lying sender would.  Kinds 6 and 7 do nothing.
 *
 *   CONNECT     pid:i32              slot = ingest_connect(pid, uid 0)
 *   PACKET      len:u16 payload      ingest_packet on the slot's connection
 *   DISCONNECT                       ingest_disconnect of the slot's
 *                                    connection (kept: later packets on it
 *                                    are those of a replaced image)
 *   REPLAY      pid:i32 conn:u32 len:u16 payload
 *                                    ingest_replay, as a trace frame
 *   REPORT                           ingest_report in the middle of a run
 *   DEAF                             ingest_drop(REPORT_DROP_DEAF) of the
 *                                    slot's connection: an ack could not
 *                                    be sent (a DISCONNECT follows when
 *                                    the script says)
 *
 * fuzz_seeds turns a trace into such a script (docs/fuzzing.md).
 */
#ifndef PTSHARE_FUZZ_OPS_H
#define PTSHARE_FUZZ_OPS_H

enum fops_kind {
	FOPS_CONNECT,
	FOPS_PACKET,
	FOPS_DISCONNECT,
	FOPS_REPLAY,
	FOPS_REPORT,
	FOPS_DEAF,
};

#define FOPS_SLOTS 8
#define FOPS_KIND(op) ((op) & 7u)
#define FOPS_SLOT(op) ((op) >> 5)
#define FOPS_OP(kind, slot) ((unsigned char)((kind) | (slot) << 5))

#endif
