/* SPDX-License-Identifier: MIT */
/* The ingest's private types and functions, shared by the files of
 * ingest/ and by none outside it. */
#ifndef PTSHARE_INGEST_INTERNAL_H
#define PTSHARE_INGEST_INTERNAL_H

#include <stdio.h>

#include "callsite.h"
#include "ingest.h"
#include "proc_image.h"
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
	bool untraced;           /* lives without a shim */
	bool unserved;           /* runs as a user the daemon does not serve */
	bool connected;          /* a connection of it was opened */
	bool gone;               /* it runs no more: see session_over() */
	bool adopted;            /* taken from /proc before its parent's PTS_FORK */
	char name[REPORT_NAME_MAX];
	struct report_final last; /* its last checkpoint */
	struct ck_accum ck;
	struct held held;
	uint64_t malformed_run;  /* malformed records in a row */
	bool in_checkpoint;      /* applying one: a refusal does not resync */
	uint64_t claims;         /* model work its records asked since a reading */
	uint32_t resync_wait;    /* its packets before an owed reading may be done */
	bool reading_due;        /* a reading of its /proc is owed */
	uint32_t new_sites;      /* call sites its records added */
	struct code_map code;    /* its code, at its last checkpoint */
	struct site_ranges sites; /* which call made which range */
};

struct named {
	struct mm_object_id id;
	char *name;
};

struct dev_kind {
	uint64_t dev;
	uint32_t kind, huge_shift;
};

struct ingest {
	struct mm_worlds *ws;
	FILE *trace;
	bool live;               /* may read /proc (a daemon, not a replay) */
	bool (*serves)(uid_t uid); /* live: the users the daemon serves */
	struct session **sess;   /* by pid */
	size_t nsess, cap_sess;
	struct conn_of {
		uint32_t conn;
		struct session *s;
	} *conn;                 /* the open connections, by id */
	size_t nconn, cap_conn;
	uint32_t last_conn;      /* the last one opened; numbered from 1 */
	struct report_final *finals; /* processes gone */
	size_t nfinals, cap_finals;
	struct report_stream stream;
	struct named *names;
	size_t nnames, cap_names;
	struct ptr_map name_index; /* mm_object_id -> 1 + its index in names */
	struct dev_kind *devs;
	size_t ndevs, cap_devs;
	uint64_t next_synth;
	struct fs_cache *fs;     /* live: the mounts, per mount namespace */
	struct report peak;
	uint64_t peak_tables;
	bool peak_due;           /* a reading ended: take the peak after it */
	uint64_t since_peak;     /* records applied since it was taken */
	bool peak_symbolized;    /* its call sites named, once per peak */
	uint64_t full_read_ns;   /* the last checkpoint of every process */
	uint64_t full_read_cost_ns; /* how long it took */
	struct owed_ack {
		uint32_t conn, seq;
	} *owed;                 /* acks a reading owes (ingest_owed_acks) */
	size_t nowed, cap_owed;
	struct report_proc *procs;   /* the input of the report being built */
	struct report_object *objects;
	size_t nobjects, cap_objects;
	struct callsites callsites;
	struct symbols *symbols; /* opened when a report is made */
};

/* ingest.c: act's acks kept for ingest_owed_acks (a reading has no
 * packet whose acks the daemon sends). */
void ingest_owe_acks(struct ingest *g, const struct ingest_action *act);

/* record_check.c: NULL when r (len bytes) is a well-formed record a shim
 * (or, for traces, the daemon) may send, else why not. */
const char *ingest_record_check(const union aligned_rec *r, size_t len,
				bool from_shim);

/* ingest_report.c */
/* s at its last checkpoint, as the report shows it. */
struct report_final ingest_final_of(const struct ingest *g,
				    const struct session *s, bool alive);

/* ingest.c */
struct session *ingest_session_of(struct ingest *g, int32_t pid);
void ingest_apply(struct ingest *g, int32_t pid, uint32_t conn, const void *rec,
		  struct ingest_action *act);
void ingest_session_refused(struct ingest *g, struct session *s,
			    const char *why);
void ingest_capture_peak(struct ingest *g, bool always);
bool ingest_enter_model(struct ingest *g, struct session *s, int32_t parent);
/* The name the checkpoints gave an object, or NULL; a name given. */
const char *ingest_object_name(const struct ingest *g,
			       const struct mm_object_id *id);
void ingest_name_object(struct ingest *g, const struct mm_object_id *id,
			const char *name, size_t len);
/* Ends s's session when nothing more can come for it: true if it did (s
 * is freed).  A child gone that waits for a half of its fork leaves the
 * worlds instead. */
bool ingest_session_end_if_over(struct ingest *g, struct session *s);
/* Its held records applied, then its connection's close if it came: the
 * session may end (s freed). */
void ingest_release_held(struct ingest *g, struct session *s,
			 struct ingest_action *act);

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
int ingest_classify_dev(struct ingest *g, struct session *s, uint64_t dev,
			struct dev_kind *out);
/* The device of a live mmap's file classified before the record is traced
 * (its PTS_CK_FS first, as a replay needs it). */
void ingest_classify_mmap_dev(struct ingest *g, struct session *s,
			      const struct pts_hdr *h);

/* ingest_limits.c: what a process's records may cost (docs/daemon.md) */
/* A reading of s's /proc is owed: its records did something wrong or
 * asked for much.  Done by reading_if_owed, between two packets. */
void ingest_reading_owed(struct ingest *g, struct session *s);
/* s's /proc was read: nothing is owed, the model is the kernel's. */
void ingest_reading_done(struct session *s);
/* A packet of s came; then, its record's work counted. */
void ingest_readings_tick(struct session *s);
void ingest_claims_add(struct ingest *g, struct session *s,
		       const struct pts_hdr *h);
/* The reading owed, when one is and the last was long enough ago. */
void ingest_reading_if_owed(struct ingest *g, struct session *s);
/* Whether a populate of pages is applied page by page; if not, the pages
 * are taken from a reading of /proc. */
bool ingest_populate_allowed(struct ingest *g, struct session *s,
			     uint64_t pages);
/* Whether child, which s says it forked, is its child (a daemon asks
 * /proc; a child already gone is taken as said). */
bool ingest_fork_of_child(const struct ingest *g, const struct session *s,
			  int32_t child);

/* checkpoint.c */
int ingest_checkpoint_read(struct ingest *g, struct session *s,
			   uint32_t reason);
void ingest_apply_checkpoint(struct ingest *g, struct session *s,
			     const struct pts_hdr *h);

/* reconcile.c */
void ingest_reconcile(struct ingest *g, struct session *s,
		      const struct pts_ck_vma *v,
		      size_t n);

#endif
