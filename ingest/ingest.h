/* SPDX-License-Identifier: MIT */
/*
 * Ingest: the records of traced processes applied to the worlds, a
 * function of its inputs.  One mechanism for the live daemon and for a
 * replay: every record, the checkpoints the daemon reads from /proc
 * included, is applied in the order the daemon applied it, and a trace of
 * those records (docs/wire-protocol.md) replays to the same report.  What
 * the daemon must do comes out as actions (struct ingest_action) and
 * readings owed (ingest_reading_next); what it needs of the live system
 * comes in through struct ingest_host.
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
#define INGEST_MAX_UFFD 4

/* What a record asks of the process's userfaultfd (daemon/uffd.c), the
 * kernel's registrations having changed with the call it tells of. */
enum ingest_uffd_kind {
	INGEST_UFFD_FORGET,  /* [start, end) was unmapped or mapped anew */
	INGEST_UFFD_SYNC,    /* shared memory may be mapped in [start, end) */
	INGEST_UFFD_MOVE,    /* [start, end) moved to [to, to_end) (mremap) */
	INGEST_UFFD_RELEASE, /* a failed mremap met [start, end): ours there
			      * released, so that it succeeds again */
	INGEST_UFFD_GIVE_UP, /* the program's own userfaultfd failed on
			      * [start, end) (EBUSY): ours released whole */
};

struct ingest_uffd_op {
	enum ingest_uffd_kind kind;
	uint64_t start, end;
	uint64_t to, to_end; /* INGEST_UFFD_MOVE */
};

/* What the daemon must do after a packet: send acks (to this connection,
 * or to a forked child waiting for its parent's record), take the
 * userfaultfd the packet brought, change the registrations on the
 * process's userfaultfd, or drop the connection, which cannot be trusted.
 * Zero it before the call. */
struct ingest_action {
	struct {
		uint32_t conn;
		struct pts_ack rec;
	} ack[INGEST_MAX_ACKS];
	unsigned nack;
	bool drop;
	bool take_uffd;       /* the packet's first fd is its userfaultfd */
	bool take_ring;       /* its record ring's memfd follows (wire.h) */
	int hello_uffd_errno; /* a HELLO without one: why (0: none asked) */
	struct ingest_uffd_op uffd[INGEST_MAX_UFFD];
	unsigned nuffd;
};

/* Adds an ack of record seq to conn to act (a NULL act, or one holding
 * INGEST_MAX_ACKS already, takes none). */
void ingest_action_ack(struct ingest_action *act, uint32_t conn,
		       uint32_t seq);
/* What a shim's record h, well formed, asks of the daemon besides the
 * model (its userfaultfd kept, registrations changed, the retry ack of a
 * failed call that met ours), added to act (conn: its connection):
 * ingest_packet adds it for every record it takes. */
void ingest_record_actions(struct ingest_action *act, uint32_t conn,
			   const struct pts_hdr *h);

/*
 * What the ingest asks of the live system, the one way it learns anything
 * but its records: whether pid still runs (a zombie does not), whether
 * parent is child's parent (true for a child gone already), and what the
 * files of dev are as pid's mounts say (0 and an MM_OBJ_* with the huge
 * page shift of a hugetlbfs, or non-zero: not known, files).  A daemon
 * asks /proc (daemon/readings.c); a replay has none to ask: a NULL host
 * says no process runs, every fork is of a child, no device is known,
 * and the trace's records say the rest.
 */
struct ingest_host {
	bool (*runs)(void *arg, int32_t pid);
	bool (*child_of)(void *arg, int32_t child, int32_t parent);
	int (*fs_of)(void *arg, int32_t pid, uint64_t dev, uint32_t *kind,
		     uint32_t *huge_shift);
	void *arg;
};

/*
 * host: the live system (copied), or NULL (a replay).  trace: where to
 * append every applied record (`--record`), or NULL.  The worlds and the
 * stream stay the caller's; the worlds, new, are the ingest's to feed
 * (those that can follow linux's do: mm_worlds_follow).
 */
struct ingest *ingest_new(struct mm_worlds *ws, const struct ingest_host *host,
			  FILE *trace);
void ingest_free(struct ingest *g);
/* The processes that end after the first n (REPORT_FINALS_KEPT unless
 * said) are listed in the report only if they have something to say
 * beyond their figures, and summed otherwise (report_folded): the
 * daemon's memory does not grow with every process a run left on sees. */
void ingest_keep_finals(struct ingest *g, size_t n);

/* A connection opened by process pid (SO_PEERCRED).  Returns its id (> 0). */
uint32_t ingest_connect(struct ingest *g, int32_t pid, uint32_t uid);
/* One packet received on connection conn (len may exceed PTS_REC_MAX when
 * the sender lied: it is refused, not truncated). */
void ingest_packet(struct ingest *g, uint32_t conn, const void *buf, size_t len,
		   struct ingest_action *act);
/* The table of connections is the ingest's: the caller's own object of an
 * open connection (the daemon's, with its socket) is kept beside it, and
 * found by id (where an ack goes).  NULL: none, or no longer open. */
void ingest_conn_own(struct ingest *g, uint32_t conn, void *owner);
void *ingest_conn_owner(const struct ingest *g, uint32_t conn);
/* Whether an ack of seq on conn answers its PTS_EXIT: nothing follows
 * it, and the caller may end the connection once the ack is sent. */
bool ingest_conn_exit_acked(const struct ingest *g, uint32_t conn,
			    uint32_t seq);
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

/*
 * Readings of /proc.  The ingest reads nothing: it says which readings it
 * owes (a process that said HELLO, forked, exits, or whose records asked
 * for one; every process, on the timer and at the end), and the caller
 * makes each and feeds its records in, as a replay feeds them from the
 * trace.  A caller that makes none (a replay) just does not ask.
 */
struct ingest_reading {
	int32_t pid;
	uint32_t reason; /* enum pts_ck_reason */
	uint32_t uid;    /* the process's as the ingest knows it */
	/* its cgroup as the ingest knows it ("": none yet), until the
	 * reading's first record */
	const char *cgroup;
	bool written;    /* read which anonymous pages it maps alone: a
			  * cow-pte world is fed (procfs_image.written) */
	size_t vmas;     /* its mappings at its last reading (a forked
			  * child not read yet: its parent's); 0: unknown */
	uint64_t rest;   /* its mark at its last reading (PTS_CK_REST),
			  * 0: none: procfs_image.rest */
};
/* Every process's /proc is owed now: on the daemon's timer, and at the
 * end of a run. */
void ingest_checkpoint_all(struct ingest *g, uint32_t reason);
/* The first readings that waited long enough (or wait no more: the
 * process asked, ingest_reading_asked) owed now: true when one is;
 * *next_ns the time the next one waiting is due, 0: none waits. */
bool ingest_readings_waiting(struct ingest *g, uint64_t now, uint64_t *next_ns);
/* pid asks to be read (a fork waits for its image's first reading). */
void ingest_reading_asked(struct ingest *g, int32_t pid);
/* The next reading owed, in order: false when none is. */
bool ingest_reading_next(struct ingest *g, struct ingest_reading *out);
/* Whether r is still wanted, once what the process sent before it has
 * been applied (the daemon drains its ring first): not when the process
 * has left the model.  The readings owed for it since are r (its reason
 * may change: an EXIT's, say), and its mark is the one left once those
 * records are applied. */
bool ingest_reading_wanted(struct ingest *g, struct ingest_reading *r);
/* One record of a reading the caller made of pid (PTS_CK_BEGIN, ...,
 * PTS_CK_END), applied and traced as a replay applies it. */
void ingest_reading_record(struct ingest *g, int32_t pid, const void *rec);
/* Whether the readings named the object already (PTS_CK_NAME). */
bool ingest_object_named(const struct ingest *g,
			 const struct mm_object_id *id);

/* A mapping of a process in the model of today's kernel: shared_memory
 * when it is shared shmem or hugetlb (what a userfaultfd may register;
 * huge_shift then its huge page's, 0 for shmem). */
struct ingest_range {
	uint64_t start, end;
	uint64_t dev, ino;    /* the file mapped; 0 for anonymous memory */
	uint32_t huge_shift;
	bool shared_memory;
};
/* Calls fn on each mapping of pid meeting [start, end), in address order,
 * until fn returns non-zero, and returns that (0, or -ESRCH: no such
 * process in the model). */
int ingest_ranges_of(const struct ingest *g, int32_t pid, uint64_t start,
		     uint64_t end,
		     int (*fn)(const struct ingest_range *r, void *arg),
		     void *arg);

/* Acks owed outside a packet's: a reading adopted a forked child whose
 * HELLO waits (its parent's PTS_FORK had not come), or records were
 * applied while readings were being made (ingest_owe_acks keeps theirs).
 * Moves into act as many as it has room for; true when more are left. */
bool ingest_owed_acks(struct ingest *g, struct ingest_action *act);
void ingest_owe_acks(struct ingest *g, const struct ingest_action *act);
/* Those owed to conn alone (as many as act has room for), moved into act:
 * the records its reading drained (an EXIT in its ring) are acked once
 * its /proc is read. */
void ingest_owed_acks_of(struct ingest *g, uint32_t conn,
			 struct ingest_action *act);
/* Whether the readings being handed out are a reading of every process
 * (ingest_checkpoint_all): one moment, which no process they found at its
 * EXIT should leave before the round's last reading. */
bool ingest_reading_all(const struct ingest *g);

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


/* The records end before the run did (a trace of a daemon that was
 * ended): the report says why, what it misses, and whether the trace
 * ended inside a record (torn). */
void ingest_cut_short(struct ingest *g, const char *why, bool torn);

/* How far the run is, into the watcher's page (wire.h): the processes
 * modelled, the records received and today's table pages, now. */
void ingest_progress(const struct ingest *g, struct pts_heartbeat *hb);

/* The reports' processes grouped by by (--group-by), and with flames the
 * flame graphs' stacks (--flamegraph: each peak then walks every world's
 * tables once more); before any record. */
void ingest_report_options(struct ingest *g, enum report_group_by by,
			   bool flames);

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
