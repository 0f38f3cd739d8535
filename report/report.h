/* SPDX-License-Identifier: MIT */
/*
 * The report: per process today's tables (the `linux` model beside the
 * kernel's VmPTE) and the tables under each policy, totals, and the big
 * mappings with why each can or cannot share.  Built once from the worlds,
 * printed as text for people or as JSON (docs/report-json.md) for machines.
 */
#ifndef PTSHARE_REPORT_H
#define PTSHARE_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "ptshare/wire.h"
#include "ptshare/mm.h"

#define REPORT_NAME_MAX 64
#define REPORT_OWN_UFFD_MAX 4 /* a process's own registrations listed */
#define REPORT_WHY_MAX 96     /* a refusal's reason */
#define REPORT_CGROUP_MAX 256 /* a cgroup's path, and a group's key */

/* What the kernel says of a process, next to the model. */
struct report_proc {
	uint32_t pid, ppid, uid;
	char name[REPORT_NAME_MAX];
	int64_t vmpte_kb; /* -1: unknown */
	bool stable;      /* VmPTE did not change while the process was read */
	char cgroup[REPORT_CGROUP_MAX]; /* its cgroup v2 path; "": unknown */
};

/* A process that could not be read or modelled, and why. */
struct report_skip {
	uint32_t pid;
	int err; /* negative errno */
	char what[128];
};

struct report_object {
	struct mm_object_id id;
	const char *name;
};

/* A process at its last checkpoint (ptshare run). */
struct report_final {
	struct report_proc proc;  /* vmpte_kb as that checkpoint read it */
	int64_t model_kb;         /* the linux model at that moment; -1: none */
	/* each policy's tables of the process at that moment, as VmPTE counts
	 * them (kB; [0] is model_kb); -1: none */
	int64_t policy_kb[MM_WORLDS_MAX];
	uint32_t reason;          /* enum pts_ck_reason of that checkpoint */
	bool alive;               /* still running when the report was made */
	bool untraced;            /* lost its shim: static or setuid exec... */
	uint32_t untraced_why;    /* enum report_untraced: why */
	uint64_t records, lost, malformed, refused, resyncs;
	char refused_why[REPORT_WHY_MAX]; /* the last refusal's reason, or "" */
	uint32_t dropped;         /* enum report_drop: why the daemon hung up */
	uint32_t fault_mode;      /* enum pts_faults for this process */
	int32_t fault_err;        /* why it is off (errno), 0 if not asked */
	/* per policy: faults seen (userfaultfd) and first touches that only
	 * pagemap showed, over the process's life */
	uint64_t faults[MM_WORLDS_MAX], observed[MM_WORLDS_MAX];
	/* the ranges it registered with a userfaultfd of its own, over its
	 * life: their faults are the program's, seen here through pagemap
	 * only (docs/faults.md); how many, their bytes, the first ones */
	uint64_t own_uffd_ranges, own_uffd_bytes;
	struct {
		uint64_t start, end;
	} own_uffd[REPORT_OWN_UFFD_MAX];
};

/*
 * The processes that ended after the first REPORT_FINALS_KEPT, each with
 * nothing to say beyond its figures (report_final_plain): counted and
 * summed rather than listed, so that a run left on keeps a bounded number
 * of lines (docs/report-json.md, final_checkpoints_folded).
 */
#define REPORT_FINALS_KEPT 4096
struct report_folded {
	uint64_t processes;
	uint64_t records, resyncs;
	uint64_t no_uffd;                 /* of them, fault_mode off */
	int64_t vmpte_kb;                 /* = the linux model's: exact */
	int64_t policy_kb[MM_WORLDS_MAX]; /* each policy's tables */
	uint64_t faults[MM_WORLDS_MAX], observed[MM_WORLDS_MAX];
};
/* Of npol policies: exact at its last checkpoint (stable, every policy
 * modelled), ended, traced, and nothing lost, malformed, refused, dropped
 * or its own (userfaultfd). */
bool report_final_plain(const struct report_final *x, size_t npol);
void report_fold_final(struct report_folded *f, const struct report_final *x,
		       size_t npol);

/* Why the daemon ended a process's connection (docs/daemon.md, Hostile
 * clients): none, 64 malformed records in a row, acks it did not read. */
enum report_drop { REPORT_DROP_NONE, REPORT_DROP_MALFORMED, REPORT_DROP_DEAF };

/* Why a process ran on without the shim: traced; its connection closed
 * while it lived (the program took the shim's fd); the image it exec'd
 * never connected (static, set-user-ID, an environment without the shim);
 * the shim left itself out of that image, which had no fd to load it; it
 * ran as a user the daemon does not serve (runuser, su, sudo -u). */
enum report_untraced {
	REPORT_TRACED, REPORT_UNTRACED_CLOSED, REPORT_UNTRACED_EXEC,
	REPORT_UNTRACED_NO_FD, REPORT_UNTRACED_USER,
};

/* Room for why a report ends before its run: "ptshare run ended
 * ptshared, which " and the watch's reason (run_watch.c, under 160). */
#define REPORT_CUT_WHY_MAX 224

/* What the shims and /proc told (ptshare run). */
struct report_stream {
	uint64_t records, failed_calls, lost, malformed, refused, resyncs;
	/* readings of /proc made while a traced call of the process ran (its
	 * calls could not be held: docs/wire-protocol.md, Readings between
	 * calls), taken as they came */
	uint64_t readings_raced;
	/* readings of a process found at rest since its last one: status
	 * read alone, its mappings and pages taken as they were */
	uint64_t readings_at_rest;
	/* records on a connection a newer one of its process had replaced:
	 * not applied, and no process's (it may have ended meanwhile) */
	uint64_t superseded;
	/* connections served, ended by the daemon, and refused: their user
	 * may not connect (--allow-users; a process of another user that
	 * ran untraced, which the socket's mode kept out, counts too),
	 * --max-clients were open, their user had --max-clients-per-user
	 * open */
	uint64_t connections, dropped, refused_user, refused_full;
	uint64_t refused_user_full;
	uint64_t intercepted_bytes, proc_only_bytes;
	uint32_t fault_mode;      /* enum pts_faults asked for the run */
	uint64_t faults_outside;  /* faults at no mapping the model knew */
	/* times the ingest ran out of memory and dropped what it was
	 * keeping (a process, a connection, a reading's part, a name) */
	uint64_t out_of_memory;
	/* The most table pages (today's model) held at a reading after which
	 * the peak was not taken (past 64 processes, a capture waits for a
	 * record per process beyond them): 0 unless above the peak shown. */
	uint64_t peak_skipped_tables;
	/* The daemon ended before the program, and `ptshare run` rebuilt the
	 * report from its trace (ingest_cut_short): why ("" when it did
	 * not), the processes still running then, read last at an earlier
	 * checkpoint, and whether the trace ended inside a record. */
	char cut_why[REPORT_CUT_WHY_MAX];
	uint64_t cut_running;
	bool cut_torn;
	/* The run's details (host, settings, command, times, exit status), as
	 * the daemon last recorded them (PTS_RUN_INFO), when it did. */
	bool has_run;
	struct pts_run_info run;
};

/* A frame of the call site that created a mapping (ptshare run): the place
 * in a file the ingest found, symbolised when the report is made
 * (report_symbolize). */
struct report_frame {
	const char *object;   /* its path; NULL: in no file, offset is the address */
	uint64_t offset;      /* file offset of the return address */
	const char *function; /* NULL when unknown */
	const char *file;     /* source file; NULL when unknown */
	uint32_t line;        /* 0 when unknown */
};

/* Innermost frame first: f[0] is the line that called mmap (shmat...). */
struct report_site {
	size_t n;
	struct report_frame f[PTS_MAX_FRAMES];
};

/*
 * The run over time (report_series.c): one point per reading of every
 * process (a round of checkpoints; a snapshot's interval).  At most
 * REPORT_SERIES_MAX points: past them, neighbours are merged two by two,
 * each pair into the one of the two with more of today's tables (a real
 * reading, the peaks kept), and each point then stands for twice as many
 * readings (per_point).
 */
#define REPORT_SERIES_MAX 240
struct report_point {
	uint64_t t_ns;        /* since the run's first record, the snapshot's start */
	uint32_t processes;   /* modelled */
	uint64_t vmpte_kb;    /* the sum of their VmPTE, as last read */
	uint64_t tables[MM_WORLDS_MAX]; /* distinct table pages, per policy */
};
struct report_series {
	struct report_point *p;   /* REPORT_SERIES_MAX, once one is added */
	size_t n;
	uint64_t readings;        /* points added in all */
	uint32_t per_point;       /* readings a point stands for, at most */
	uint32_t in_last;         /* readings the last point stands for */
};
/* The worlds' tables now into pt (its other members the caller's). */
void report_point_tables(struct report_point *pt, const struct mm_worlds *ws);
/* pt added, after every point added before it: 0, or -ENOMEM (the
 * point is not kept). */
int report_series_add(struct report_series *s, const struct report_point *pt);
/* The point with the most of today's tables (the first of equals). */
size_t report_series_peak(const struct report_series *s);
void report_series_free(struct report_series *s);
/* What --group-by gathers processes by (cli_options.h CLI_GROUP_BY_NAMES,
 * in this order). */
enum report_group_by {
	REPORT_GROUP_NONE, REPORT_GROUP_PROCESS, REPORT_GROUP_COMMAND,
	REPORT_GROUP_USER, REPORT_GROUP_CGROUP, REPORT_GROUP_NR,
};

/* The processes of one group, summed: their tables today and their share
 * (pss) of the tables under each policy, whose sum over the groups is the
 * policy's total. */
struct report_group {
	char key[REPORT_CGROUP_MAX]; /* pid, command, user or cgroup path */
	size_t nprocs, exact;        /* exact: model == VmPTE */
	uint64_t kernel_kb;          /* VmPTE, of the processes with one */
	uint64_t model_kb;           /* today's tables, modelled */
	double pss[MM_WORLDS_MAX];   /* bytes */
};

struct report_input {
	const char *command;
	enum report_group_by group_by; /* REPORT_GROUP_NONE: no groups */
	struct mm_worlds *ws;
	const struct report_proc *procs; /* one per process in the worlds */
	size_t nprocs;
	const struct report_object *objects; /* names for the mappings */
	size_t nobjects;
	const struct report_skip *skips;
	size_t nskips;
	uint64_t min_mapping; /* list mappings at least this big */
	bool flames;          /* keep the flame graphs' stacks (--flamegraph) */
	const struct report_stream *stream; /* ptshare run, else NULL */
	/* ptshare run: the call site that created pid's mapping at addr, into
	 * out (its strings need only last until report_build returns); false
	 * when none is known. */
	bool (*site_of)(void *ctx, uint32_t pid, uint64_t addr,
			struct report_site *out);
	void *site_ctx;
};

/* Why a mapping does or does not share, beyond the model's own reason. */
enum report_why {
	WHY_MODEL,           /* the model's reason says it */
	WHY_SHARED,          /* some of its tables are shared */
	WHY_ALONE,           /* no other process maps the object */
	WHY_OTHER_ADDRESS,   /* other processes map it at other addresses */
	WHY_OTHER_SLOT,      /* ...and offset modulo the table span differs */
	WHY_FLAGS_DIFFER,    /* same range elsewhere, other protection/flags */
	WHY_NOT_POPULATED,   /* no span populated by two sharers */
};

struct report_mapping {
	struct mm_object_id obj;
	const char *name;
	uint64_t start, end, offset;
	uint32_t prot, flags;
	bool anon_pages;
	uint32_t nprocs, first_pid;
	struct {
		enum mm_reason reason;
		enum report_why why;
		uint64_t tables, shared;
	} pol[MM_WORLDS_MAX];
	struct report_site site;  /* n == 0: not created by a call seen */
};

/* Consecutive mappings of a process with the same reason under every
 * policy, and the PTE tables each meets (summed, as for mappings): the
 * process's address space as the HTML report draws it. */
struct report_region {
	uint64_t start, end;
	uint32_t nmaps;
	struct {
		enum mm_reason reason;
		uint64_t tables, shared;
	} pol[MM_WORLDS_MAX];
};

struct report_row {
	const struct report_proc *proc;
	struct mm_proc_stats s[MM_WORLDS_MAX];
	const struct report_region *regions; /* in address order */
	size_t nregions;
};

/* The PTE tables the mappings one call stack made hold, in the processes
 * of one command, per policy: each table once, to the first mapping that
 * meets it (mm_world_pte_owners; report_flame.c). */
struct report_flame {
	const char *command;     /* owned by the report, as every string here */
	const char *object;      /* the mappings' object, or "[anonymous]" */
	struct report_site site; /* n == 0: no call seen making them */
	uint64_t tables[MM_WORLDS_MAX];
};

/* A policy as the report shows it, findings included. */
struct report_policy {
	struct mm_policy p;
	char label[64];
	struct mm_finding findings[8];
	size_t nfindings;
};

/* Owns everything it shows: it outlives the worlds and the input. */
/* An object whose file here has another build id than the run's (the
 * trace's PTS_CK_BUILD_ID): its call sites are named from another build. */
struct report_build_id {
	char *object;   /* its path */
	char trace[2 * PTS_BUILD_ID_MAX + 1]; /* hex */
	char here[2 * PTS_BUILD_ID_MAX + 1];  /* hex; "": none (no file, no id) */
};

struct report {
	char command[32];
	struct report_policy pol[MM_WORLDS_MAX];
	size_t npol;
	struct report_proc *procs;
	struct report_row *rows; /* by pid */
	size_t nrows;
	struct mm_world_totals totals[MM_WORLDS_MAX];
	double pss[MM_WORLDS_MAX];
	struct report_mapping *maps; /* by today's tables, largest first */
	size_t nmaps;
	struct report_region *regions; /* the rows point into it */
	size_t nregions;
	char **strings;              /* owned strings the mappings point to */
	size_t nstrings, cap_strings;
	struct report_skip *skips;
	size_t nskips;
	uint64_t min_mapping;
	size_t exact;            /* processes whose model equals VmPTE */
	uint64_t model_kb, kernel_kb; /* sums over processes with a VmPTE */
	struct report_final *finals;
	size_t nfinals;
	size_t finals_exact;     /* of them, model == VmPTE at that checkpoint */
	struct report_folded folded; /* and those summed, all exact */
	bool has_stream;
	struct report_stream stream;
	struct report_series series; /* report_set_series */
	struct report_flame *flames;
	size_t nflames;
	struct report_build_id *build_ids; /* ingest_check_build_ids */
	size_t nbuild_ids, cap_build_ids;
	enum report_group_by group_by;
	struct report_group *groups; /* by today's tables, largest first */
	size_t ngroups;
};

int report_build(struct report *r, const struct report_input *in);
/* A string kept as long as the report (its strings): NULL for NULL, and
 * on failure, *err then -ENOMEM. */
const char *report_keep(struct report *r, const char *s, int *err);
/* report_build's flames (report_flame.c): 0, or -ENOMEM. */
int report_flames_build(struct report *r, const struct report_input *in);
/*
 * Collapsed stacks, the format flamegraph.pl and speedscope read: a line
 * per stack, "command;outermost frame;...;innermost frame;object N".
 * Policy 0 (linux): N is today's PTE tables; policy k > 0: the tables k
 * saves against today (stacks where it saves none are left out).
 */
void report_flamegraph(FILE *f, const struct report *r, size_t k);
/* The file of policy k's flame graph: path for 0, path.LABEL for k. */
const char *report_flamegraph_path(const struct report *r, size_t k,
				   const char *path, char *buf, size_t len);
/* r->groups of r->rows by r->group_by (report_group.c): 0, or -ENOMEM. */
int report_group(struct report *r);
/* "process", "command", "user", "cgroup"; NULL for REPORT_GROUP_NONE. */
const char *report_group_by_name(enum report_group_by by);

/* The run's details (report_run.c; stream.run): the JSON's "run" (null
 * without them), and the text's lines, none without them. */
struct json;
void report_run_json(struct json *j, const struct report *r);
void report_run_text(FILE *f, const struct report *r);

/* "What would help": a policy beside today's kernel (report_help.c). */
struct report_help {
	size_t k;                  /* the policy, an index of r->pol */
	int64_t saved_bytes;       /* today's distinct table bytes - its own */
	double saved_pct;          /* of today's */
	/* first touches (faults seen and pagemap's) it avoids: over the run
	 * (ptshare run), at the snapshot otherwise */
	int64_t faults_avoided;
	/* tables and pages the forks of the processes modelled did not copy */
	int64_t fork_tables_avoided, fork_pages_avoided;
	/* cow-pte: tables copied later, when a process wrote a shared one */
	uint64_t deferred_copies;
	const char *assumption;    /* what it needs, in a few words */
};
/* Every policy but linux, by bytes saved then faults avoided, the most
 * first, into out (room for MM_WORLDS_MAX); returns how many. */
size_t report_help(const struct report *r, struct report_help *out);

/* Under mshare (policy k): the host's tables, held once; the tables the
 * processes still pay for (their private and unplaced mappings'); of
 * them, the PTE tables of private mappings, which mshare cannot hold. */
struct report_mshare {
	uint64_t host_tables, process_tables, private_pte_tables;
};
void report_mshare_cover(const struct report *r, size_t k,
			 struct report_mshare *out);
/* Replaces the processes' last checkpoints (those listed, and those
 * folded: NULL for none) and the stream figures. */
int report_set_finals(struct report *r, const struct report_final *finals,
		      size_t n, const struct report_folded *folded,
		      const struct report_stream *stream);
/* Over the processes' lives, listed and folded: how many, and under
 * policy k the faults seen and the first touches only pagemap showed. */
uint64_t report_finals_seen(const struct report *r);
void report_finals_faults(const struct report *r, size_t k, uint64_t *seen,
			  uint64_t *pagemap);
/* Replaces the report's series with a copy of s: 0, or -ENOMEM. */
int report_set_series(struct report *r, const struct report_series *s);
/* The series as the JSON's "series" and as the text's lines. */
struct json;
void report_series_json(struct json *j, const struct report *r);
void report_series_text(FILE *f, const struct report *r);
void report_free(struct report *r);
struct symbols;
/* Names the functions, files and lines of the call sites, from the object
 * files as they are on disk now (symbols.h). */
int report_symbolize(struct report *r, struct symbols *sy);
/* Headed "ptshare COMMAND:", the command that prints it (a replay prints
 * a run's report); top: rows of processes and mappings to print, 0 for
 * all; verbose: also why the model refused each process's records. */
void report_text(FILE *f, const struct report *r, const char *command,
		 size_t top, bool verbose);
void report_json(FILE *f, const struct report *r);
/* The JSON report in a self-contained page that draws it (docs/html.md):
 * 0, or -ENOMEM. */
int report_html(FILE *f, const struct report *r);
/* The totals in the OpenMetrics text format, for Prometheus
 * (docs/fleet.md): per policy, no per-process series. */
void report_openmetrics(FILE *f, const struct report *r);
struct json;
/* The same document as a value inside another (ptshare aslr holds two). */
void report_json_value(struct json *j, const struct report *r);
/* key: an object of a member per policy of r, under its label (as every
 * per-policy part of the JSON documents is), whose members fn(j, k, arg)
 * writes for policy k. */
void report_json_by_policy(struct json *j, const char *key,
			   const struct report *r,
			   void (*fn)(struct json *j, size_t k, const void *arg),
			   const void *arg);

const char *report_why_text(const struct report_mapping *m, size_t policy);
uint64_t report_sum3(const uint64_t *levels);
const char *report_checkpoint_name(uint32_t reason); /* enum pts_ck_reason */
/* enum report_drop as the report says it; NULL for REPORT_DROP_NONE. */
const char *report_drop_name(uint32_t why);
/* enum report_untraced likewise; NULL for REPORT_TRACED. */
const char *report_untraced_name(uint32_t why);
/* "name" or "name:levels" when the levels are not the policy's own. */
const char *report_policy_label(const struct mm_policy *p, char *buf,
				size_t len);
const char *report_kind_name(enum mm_obj_kind kind);
/* "12.3 MiB": a size as the text report prints it (at most 9 characters). */
const char *report_human(uint64_t bytes, char *buf, size_t len);
/* "func (file.c:123)", "func (lib.so+0x1a2b)", "lib.so+0x1a2b" or
 * "0x7f0012345678": a frame in one short line. */
const char *report_frame_text(const struct report_frame *f, char *buf,
			      size_t len);

#endif
