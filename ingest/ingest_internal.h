/* SPDX-License-Identifier: MIT */
/* The ingest's private types and functions, shared by the files of
 * ingest/ and by none outside it.  The files call each other in one
 * direction, from the top of this list to its bottom:
 *
 *   ingest.c           the public entries, the records applied by type,
 *                      the shim's HELLO, FORK, EXIT; held records
 *   readings_owed.c    the readings of /proc owed to the caller
 *   checkpoint.c       checkpoint records applied: reconciled, observed
 *   reconcile.c        the model's mappings brought to what /proc listed
 *   ingest_calls.c     the shim's calls as model operations; devices
 *   ingest_report.c    the report of the run: names, the peak, finals
 *   session.c          sessions, connections, the trace written
 *   ingest_limits.c    what a process's records may cost
 *   actions.c          what a record asks of the daemon (acks, uffd):
 *                      ingest_record_actions, public
 *   record_check.c     whether a record is well formed
 *
 * (callsite.c, callsite_ranges.c and trace.c sit aside: the first two use
 * none of these, trace.c only the public entries.) */
#ifndef PTSHARE_INGEST_INTERNAL_H
#define PTSHARE_INGEST_INTERNAL_H

#include <stdio.h>

#include "callsite.h"
#include "ingest.h"
#include "lib/grow.h"
#include "ptshare/procfs.h"
#include "lib/ptr_map.h"

/* Synthetic objects: shared anonymous memory has no file the shim can
 * fstat.  Only fork shares it, so a number of our own identifies it. */
#define SYNTH_DEV UINT64_MAX

/* Records are copied here before use: packets and trace frames need not
 * be aligned for the structs. */
union aligned_rec {
	struct pts_hdr h;
	uint64_t align;
	uint8_t b[PTS_REC_MAX];
};
/* A /proc reading being assembled from checkpoint records. */
struct ck_accum {
	bool open;
	uint32_t reason;
	uint64_t begun_ns;       /* when the last reading began */
	uint64_t rest;           /* this reading's PTS_CK_REST mark, 0: none */
	uint64_t rest_last;      /* the last reading's (ingest_reading.rest) */
	size_t nvma_last;        /* mappings the last reading that read them saw */
	struct pts_ck_vma *vma;
	size_t nvma, cap_vma;
	struct mm_run *run;
	size_t nrun, cap_run;
};

/* Packets that arrived before the process existed in the model: a forked
 * child's, until its parent's PTS_FORK.  Its connection's close comes
 * after them, and is traced where they are, so that a replay applies them
 * by the connection as the daemon did. */
struct held {
	uint8_t *buf; /* uint32 length, then the packet; repeated */
	size_t len, cap;
	bool overflowed;
	struct pts_conn close; /* PTS_CONN_CLOSE when it closed, else type 0 */
};

/* session.first_read_ns of a forked copy: no time, it waits to be asked */
#define FIRST_READ_ASKED UINT64_MAX

struct session {
	int32_t pid, ppid;
	uint32_t uid;
	uint32_t conn;           /* its connection, 0 when none */
	uint32_t next_seq;
	uint32_t applied_seq;    /* of the last shim record applied */
	uint32_t hello_seq;      /* a HELLO waiting for its ACK, or 0 */
	bool in_model;           /* the worlds know it */
	bool exec_pending;       /* PTS_EXEC sent, the new image not yet seen */
	bool exec_no_fd;         /* and it said the image runs without the shim */
	bool exiting;            /* PTS_EXIT sent */
	uint32_t exit_seq;       /* its number (the connection's last) */
	bool untraced;           /* lives without a shim */
	bool unserved;           /* runs as a user the daemon does not serve */
	bool connected;          /* a connection of it was opened */
	bool gone;               /* it runs no more: see session_over() */
	/* in the worlds before its parent's PTS_FORK came: taken from /proc,
	 * or forked at its parent's fork_seq */
	bool adopted;
	uint32_t fork_seq;       /* its HELLO's parent_seq (0: unknown) */
	bool fork_seen;          /* its parent's PTS_FORK came; not forked yet */
	bool forks_waiting;      /* a child waits for it to reach its fork_seq */
	char name[REPORT_NAME_MAX];
	struct report_final last; /* its last checkpoint */
	struct ck_accum ck;
	struct held held;
	uint64_t malformed_run;  /* malformed records in a row */
	bool in_checkpoint;      /* applying one: a refusal does not resync */
	uint64_t claims;         /* model work its records asked since a reading */
	uint32_t resync_wait;    /* its packets before an owed reading may be done */
	bool reading_due;        /* a reading of its /proc is owed */
	/* Its first reading waits (readings_owed.c): since a new image's
	 * HELLO, or FIRST_READ_ASKED (a forked copy's, until asked); 0: none */
	uint64_t first_read_ns;
	uint32_t first_read_reason; /* and will say why (CONNECT, EXEC, FORK) */
	bool unread;             /* in the worlds, no reading of it over since */
	bool uffd;               /* its image handed a userfaultfd over */
	uint32_t new_sites;      /* call sites its records added */
	struct code_map code;    /* its code, at its last checkpoint */
	struct site_ranges sites; /* which call made which range */
};

struct named {
	struct mm_object_id id;
	char *name;
	uint16_t build_id_len;  /* 0: the trace holds none (PTS_CK_BUILD_ID) */
	uint8_t build_id[PTS_BUILD_ID_MAX];
};

struct dev_kind {
	uint64_t dev;
	uint32_t kind, huge_shift;
};

/* A reading of /proc owed to the caller (ingest_reading_next): of one
 * process, or one of every process's (a full read: first the adoption of
 * a forked child whose parent's PTS_FORK never came, then its reading), or
 * one an earlier reading of the process took on (ingest_reading_wanted). */
struct owed {
	int32_t pid;
	uint32_t reason;
	enum { OWED_ONE, OWED_ALL_ADOPT, OWED_ALL, OWED_TAKEN } kind;
};

struct ingest {
	struct mm_worlds *ws;
	FILE *trace;
	struct ingest_host host; /* the live system, or a replay's stand-in */
	struct session **sess;   /* by pid */
	size_t nsess, cap_sess;
	struct conn_of {
		uint32_t conn;
		struct session *s;
		void *owner;     /* the caller's (ingest_conn_own) */
	} *conn;                 /* the open connections, by id */
	size_t nconn, cap_conn;
	uint32_t last_conn;      /* the last one opened; numbered from 1 */
	struct report_final *finals; /* processes gone */
	size_t nfinals, cap_finals;
	/* past keep_finals of them, those with nothing to say but their
	 * figures are summed instead (report_final_plain) */
	size_t keep_finals;
	struct report_folded folded;
	struct report_stream stream;
	struct named *names;
	size_t nnames, cap_names;
	size_t names_prune_at;     /* ingest_names_prune() */
	struct ptr_map name_index; /* mm_object_id -> 1 + its index in names */
	struct dev_kind *devs;
	size_t ndevs, cap_devs;
	uint64_t next_synth;
	struct report peak;
	uint64_t peak_tables;
	uint64_t peak_worlds;    /* every world's tables then, hashed */
	bool peak_due;           /* a reading ended: take the peak after it */
	uint64_t since_peak;     /* records applied since it was taken */
	enum report_group_by group_by; /* the reports' groups */
	bool flames;             /* the reports keep flame graphs' stacks */
	bool peak_symbolized;    /* its call sites named, once per peak */
	struct report_series series; /* a point after each round of readings */
	bool series_due;         /* a reading ended: a point after its round */
	bool started;            /* a record came: first_ns is its time */
	uint64_t first_ns;
	uint64_t reading_ns;     /* when the last reading ended */
	uint64_t full_read_ns;   /* the last checkpoint of every process */
	uint64_t full_read_cost_ns; /* how long it took */
	bool full_read_open;     /* its readings are still being handed out */
	struct owed *owed;       /* the readings owed, handed out in order */
	size_t nowed, next_owed, cap_owed;
	int32_t *waiting;        /* pids whose first reading waits (defer) */
	size_t nwaiting, cap_waiting;
	struct owed_ack {
		uint32_t conn, seq;
	} *owed_acks;            /* acks a reading owes (ingest_owed_acks) */
	size_t nowed_acks, cap_owed_acks;
	struct report_proc *procs;   /* the input of the report being built */
	struct report_object *objects;
	size_t nobjects, cap_objects;
	struct callsites callsites;
	struct symbols *symbols; /* opened when a report is made */
};

/* ingest.c: the forked children of p that can be copied from it now
 * (their fork's number reached, or its PTS_FORK come): forked, their acks
 * added to act. */
void ingest_forks_due(struct ingest *g, struct session *p,
		      struct ingest_action *act);

/* record_check.c: NULL when r (len bytes) is a well-formed record a shim
 * (or, for traces, the daemon) may send, else why not. */
const char *ingest_record_check(const union aligned_rec *r, size_t len,
				bool from_shim);

/* ingest_limits.c: what a process's records may cost (docs/daemon.md) */
/* A reading of s's /proc is owed: its records did something wrong or
 * asked for much.  Handed out by ingest_owe_if_due, between two packets. */
void ingest_reading_owed(struct session *s);
/* s's /proc is being read: nothing is owed, the model is the kernel's. */
void ingest_reading_done(struct session *s);
/* A packet of s came; then, its record's work counted. */
void ingest_readings_tick(struct session *s);
void ingest_claims_add(struct session *s, const struct pts_hdr *h);
/* Whether a reading owed may be made now (then, not again for a while). */
bool ingest_reading_may(struct session *s);
/* Whether a populate of pages is applied page by page; if not, the pages
 * are taken from a reading of /proc. */
bool ingest_populate_allowed(struct session *s, uint64_t pages);

/* session.c: sessions and connections */
struct session *ingest_session_of(struct ingest *g, int32_t pid);
struct session *ingest_session_new(struct ingest *g, int32_t pid,
				   uint32_t uid);
struct session *ingest_session_of_conn(const struct ingest *g, uint32_t conn);
/* conn opened by s, the last opened; false when out of memory. */
bool ingest_conn_bind(struct ingest *g, struct session *s, uint32_t conn);
void ingest_conn_unbind(struct ingest *g, uint32_t conn);
/* s at its last checkpoint, as the report shows it. */
struct report_final ingest_final_of(const struct ingest *g,
				    const struct session *s, bool alive);
/* A process that is gone: its last checkpoint joins the finals, s is
 * freed. */
void ingest_session_end(struct ingest *g, struct session *s);
void ingest_session_leave_model(struct ingest *g, struct session *s);
void ingest_session_free(struct session *s);
/* A record the model or the protocol refused (why: a sentence kept as the
 * process's last refusal): counted, and the process will be read again
 * from /proc. */
void ingest_session_refused(struct ingest *g, struct session *s,
			    const char *why);
bool ingest_enter_model(struct ingest *g, struct session *s, int32_t parent);
/* Ends s's session when nothing more can come for it: true if it did (s
 * is freed).  A child gone that waits for a half of its fork leaves the
 * worlds instead. */
bool ingest_session_end_if_over(struct ingest *g, struct session *s);
/* Appends a record to the trace (--record), framed with pid and conn. */
void ingest_trace_write(struct ingest *g, int32_t pid, uint32_t conn,
			const struct pts_hdr *h);
/* Memory ran out and state was dropped: counted (stream.out_of_memory). */
void ingest_out_of_memory(struct ingest *g);

/* ingest_report.c */
/* A round of readings is over (a record of another kind came, or the
 * run's end): a point of the series if one is due, and the peak if the
 * moment is higher, once enough records came since the last (always:
 * whatever came). */
void ingest_readings_over(struct ingest *g, bool always);
/* The peak alone (a live report, between two records of a round). */
void ingest_capture_peak(struct ingest *g, bool always);
/* The name the checkpoints gave an object, or NULL; a name given. */
const char *ingest_object_name(const struct ingest *g,
			       const struct mm_object_id *id);
/* The object's entry, or NULL when no checkpoint named it. */
struct named *ingest_named(const struct ingest *g,
			   const struct mm_object_id *id);
void ingest_name_object(struct ingest *g, const struct mm_object_id *id,
			const char *name, size_t len);
/* Forgets the names of memory no process maps that is no file, now and
 * then (as a reading begins: the readings before it are in the worlds). */
void ingest_names_prune(struct ingest *g);

/* build_ids.c */
/* The build id a reading gave a named object (a record of another
 * version is skipped). */
void ingest_build_id_object(struct ingest *g, const struct pts_ck_build_id *r);
/* Into r, the objects whose file here has another build id than the
 * readings gave (or none): the call sites named from it may be wrong. */
void ingest_check_build_ids(struct ingest *g, struct report *r);

/* One model operation, the same for every world. */
struct op {
	enum { OP_MAP, OP_UNMAP, OP_PROTECT, OP_REMAP, OP_ADVISE, OP_POPULATE } kind;
	uint32_t pid;
	struct mm_mapping map;
	uint64_t addr, len, new_addr, new_len;
	uint32_t arg;      /* prot, remap flags, advice; populate: write */
	uint64_t step;     /* populate: the page size */
	uint32_t site;     /* map, remap: the call site of the new range */
};

/* ingest_calls.c: the shim's records, on the worlds */
bool ingest_apply_op(struct ingest *g, struct session *s, const struct op *o);
void ingest_apply_fault(struct ingest *g, struct session *s,
			const struct pts_fault *r);
void ingest_apply_call(struct ingest *g, struct session *s,
		       const struct pts_hdr *h);
/* A device's kind, as a PTS_CK_FS record said. */
void ingest_dev_add(struct ingest *g, const struct pts_ck_fs *r);
/* The device of a live mmap's file classified before the record is traced
 * (its PTS_CK_FS first, as a replay needs it). */
void ingest_classify_mmap_dev(struct ingest *g, struct session *s,
			      const struct pts_hdr *h);

/* reconcile.c */
void ingest_reconcile(struct ingest *g, struct session *s,
		      const struct pts_ck_vma *v,
		      size_t n);

/* checkpoint.c: a checkpoint record applied.  When it was the
 * PTS_CK_BEGIN that took a forked child whose parent's PTS_FORK never came
 * into the worlds, the number of its HELLO, which waits for an ack (its
 * held records are to be released); else 0. */
uint32_t ingest_apply_checkpoint(struct ingest *g, struct session *s,
				 const struct pts_hdr *h);

/* readings_owed.c: the readings of /proc owed to the caller */
/* A reading of s with reason, owed now. */
void ingest_owe(struct ingest *g, const struct session *s, uint32_t reason);
/* The reading s's records made due, when one is and may be made now. */
void ingest_owe_if_due(struct ingest *g, struct session *s);
/* The readings a caller that makes none (a replay) left: forgotten. */
void ingest_owed_forget(struct ingest *g);
/* s's first reading, owed later (ingest_readings_waiting); now, if it
 * still waits. */
void ingest_owe_later(struct ingest *g, struct session *s, uint32_t reason);
void ingest_owe_now(struct ingest *g, struct session *s);
/* c's first reading, its model its parent's copy: when asked for
 * (ingest_owe_now).  And that of s, a forked child that said HELLO: now,
 * unless it waits so. */
void ingest_owe_copy_later(struct session *c);
void ingest_owe_forked(struct ingest *g, struct session *s);

#endif
