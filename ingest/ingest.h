/* SPDX-License-Identifier: MIT */
/*
 * Ingest: the records of traced processes applied to the worlds.  One
 * mechanism for the live daemon and for a replay: every record, the
 * checkpoints the daemon reads from /proc included, goes through
 * ingest_record() in the order the daemon applied it, and a trace of those
 * records (docs/wire-protocol.md) replays to the same report.
 *
 * Identity comes from the connection (SO_PEERCRED), never from a record.
 * A record that is malformed, out of sequence or refused by the model marks
 * its process for a resync from /proc and is counted; nothing a process
 * sends can stop the others from being served.
 */
#ifndef PTSHARE_INGEST_H
#define PTSHARE_INGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "ptshare/wire.h"
#include "report/report.h"
#include "ptshare/mm.h"

struct ingest;

#define INGEST_MAX_ACKS 4

/* What the daemon must do after a packet: send acks (to this connection,
 * or to a forked child waiting for its parent's record), or drop the
 * connection, which cannot be trusted.  Zero it before the call. */
struct ingest_action {
	struct {
		uint32_t conn;
		struct pts_ack rec;
	} ack[INGEST_MAX_ACKS];
	unsigned nack;
	bool drop;
};

/* Adds an ack of record seq to conn to act (a NULL act, or one holding
 * INGEST_MAX_ACKS already, takes none). */
void ingest_action_ack(struct ingest_action *act, uint32_t conn,
		       uint32_t seq);

/*
 * live: a daemon, which reads /proc at checkpoints (a replay reads them from
 * its trace).  trace: where to append every applied record (`--record`), or
 * NULL.  The worlds and the stream stay the caller's.
 */
struct ingest *ingest_new(struct mm_worlds *ws, bool live, FILE *trace);
void ingest_free(struct ingest *g);

/* Which users the daemon serves (docs/daemon.md, Access): a process a
 * reading finds running as another uid than it was known by is told
 * apart, and one of a user not served that runs untraced is counted with
 * the connections refused for their user.  Unset: every user. */
void ingest_serves(struct ingest *g, bool (*serves)(uid_t uid));

/* A connection opened by process pid (SO_PEERCRED).  Returns its id (> 0). */
uint32_t ingest_connect(struct ingest *g, int32_t pid, uint32_t uid);
/* One packet received on connection conn (len may exceed PTS_REC_MAX when
 * the sender lied: it is refused, not truncated). */
void ingest_packet(struct ingest *g, uint32_t conn, const void *buf, size_t len,
		   struct ingest_action *act);
/* The connection ended (EOF, error or drop). */
void ingest_disconnect(struct ingest *g, uint32_t conn);
/* The daemon ends connection conn (why: enum report_drop, other than
 * none): the process's report says so.  ingest_disconnect follows. */
void ingest_drop(struct ingest *g, uint32_t conn, uint32_t why);

/* Why the daemon did not serve a connection at all. */
enum ingest_refusal {
	INGEST_REFUSED_USER, /* its user may not connect (docs/daemon.md, Access) */
	INGEST_REFUSED_FULL, /* --max-clients connections were open */
	INGEST_REFUSED_USER_FULL, /* its user had --max-clients-per-user open */
};
/* A connection refused: the report counts them. */
void ingest_refused(struct ingest *g, enum ingest_refusal why);

/* Reads every process's /proc now and applies it as checkpoint records:
 * on the daemon's timer, and at the end of a run. */
void ingest_checkpoint_all(struct ingest *g, uint32_t reason);

/* Acks owed outside a packet's: a reading adopted a forked child whose
 * HELLO waits (its parent's PTS_FORK had not come).  Moves into act as many
 * as it has room for; true when more are left. */
bool ingest_owed_acks(struct ingest *g, struct ingest_action *act);

/* A page fault of pid seen on its userfaultfd (PTS_FAULT_* flags). */
void ingest_fault(struct ingest *g, int32_t pid, uint64_t addr, uint32_t flags);
/* How faults are seen: for the run (pid 0), or for one process, with the
 * errno that turned them off for it. */
void ingest_fault_mode(struct ingest *g, int32_t pid, uint32_t mode, int err);

/* Whether the kernel maps the zero page on a read fault in private
 * anonymous memory (procfs_zero_page()): the worlds' faults follow it, and
 * the trace keeps it.  Before any connection. */
void ingest_zero_page(struct ingest *g, bool zero_page);
/* The run's details (wire.h, PTS_RUN_INFO; its header is made here): the
 * report's, and the trace's, from now on. */
void ingest_run_info(struct ingest *g, const struct pts_run_info *info);

/* Applies one record of a trace: the subject's pid, the connection it came
 * on (0 for checkpoint records), and the record. */
int ingest_replay(struct ingest *g, int32_t pid, uint32_t conn,
		  const void *rec, size_t len);

/* Processes still connected. */
size_t ingest_live(const struct ingest *g);

/* The records end before the run did (a trace of a daemon that was
 * ended): the report says why, what it misses, and whether the trace
 * ended inside a record (torn). */
void ingest_cut_short(struct ingest *g, const char *why, bool torn);

/* The report: the processes at the peak of today's tables, and every
 * process seen at its last checkpoint.  Owned by the ingest, valid until
 * its next call. */
const struct report *ingest_report(struct ingest *g);
/* The same report while the run goes on (`ptshare report`), changing
 * nothing the final one will show: the peak as the checkpoints so far
 * found it (the moment of the call is not taken), every process at its
 * last checkpoint.  Owned by the ingest, valid until its next call. */
const struct report *ingest_report_now(struct ingest *g);

#endif
