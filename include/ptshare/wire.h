/* SPDX-License-Identifier: MIT */
/*
 * The record format: what the shim sends the daemon over a SOCK_SEQPACKET
 * unix socket (one record per packet), and what a trace file keeps (the same
 * records, framed; docs/wire-protocol.md).  Little-endian, fixed layouts, no
 * pointers.  A reader must check every size against the type: records come
 * from programs ptshare does not trust.
 */
#ifndef PTSHARE_WIRE_H
#define PTSHARE_WIRE_H

#include <stdint.h>

#define PTS_WIRE_VERSION 1
#define PTS_SOCKET_ENV "PTSHARE_SOCKET"   /* the daemon's socket path */
#define PTS_OPTIONS_ENV "PTSHARE_OPTIONS" /* shim options, see below */
#define PTS_MAX_FRAMES 16                 /* call-stack frames in a record */
#define PTS_REC_MAX 4096                  /* no valid record is larger */

enum pts_rec_type {
	/* shim -> daemon */
	PTS_HELLO = 1,  /* first record of every connection */
	PTS_MMAP,
	PTS_MUNMAP,
	PTS_MPROTECT,
	PTS_MREMAP,
	PTS_MADVISE,
	PTS_SHMAT,
	PTS_SHMDT,
	PTS_FORK,       /* in the parent, after fork() returned the child's pid */
	PTS_EXEC,       /* just before an exec; PTS_EXEC_FAILED if it returns */
	PTS_EXEC_FAILED,
	PTS_EXIT,       /* exit(), _exit(): the daemon checkpoints, then acks */
	PTS_LOST,       /* the shim dropped records it could not send */
	PTS_OWN_UFFD,   /* after the program's UFFDIO_(UN)REGISTER of its own */
	PTS_SHIM_LAST = PTS_OWN_UFFD, /* the shim's types are 1 to this */
	/* shim -> daemon, on the socket, never a record: "read my ring" */
	PTS_RING_KICK = 63,
	/* daemon -> shim */
	PTS_ACK = 64,
	/* daemon-made, kept in traces: what /proc said at a checkpoint */
	PTS_CK_BEGIN = 96,
	PTS_CK_VMAS,
	PTS_CK_RUNS,
	PTS_CK_END,
	PTS_CK_NAME,    /* a path for an object the checkpoints have not named */
	PTS_CK_FS,      /* the kind of files on a device (tmpfs, hugetlbfs...) */
	PTS_CK_USER,    /* the process runs as another user than it did */
	PTS_CK_BUILD_ID, /* the GNU build id of an object PTS_CK_NAME named */
	PTS_CK_CGROUP,  /* the process is in another cgroup than it was */
	PTS_CK_REST,    /* its mark at rest, to know its next reading unchanged */
	PTS_CK_LAST = PTS_CK_REST,
	/* daemon-made, kept in traces: connections opening and closing */
	PTS_CONN_OPEN = 112,
	PTS_CONN_CLOSE,
	/* daemon-made, kept in traces: page faults seen through userfaultfd */
	PTS_FAULT = 120,
	PTS_FAULT_MODE,
	PTS_ZERO_PAGE,  /* what the kernel maps on a read of private anon memory */
	/* daemon-made, kept in traces: the run's details (host, settings) */
	PTS_RUN_INFO = 124,
	/* `ptshare report` <-> daemon, on the report socket; never in traces */
	PTS_REPORT_REQ = 128,
	PTS_REPORT_DONE,
};

/* Every record starts with this.  seq counts the records of one connection
 * from 1; a gap means records were lost. */
struct pts_hdr {
	uint16_t type;
	uint16_t size;    /* bytes, this header included */
	uint32_t seq;
	uint64_t time_ns; /* CLOCK_MONOTONIC */
	uint32_t tid;     /* the calling thread */
	uint16_t nframes; /* return addresses after the body (<= PTS_MAX_FRAMES) */
	uint16_t flags;   /* PTS_F_* */
};

enum pts_hdr_flag {
	PTS_F_FAILED = 1u << 0, /* the call failed: errno in the body's result */
};

enum pts_hello_flag {
	PTS_HELLO_FORKED = 1u << 0, /* a child of a traced fork(), before it returns */
	PTS_HELLO_EXECED = 1u << 1, /* a new image after exec */
	PTS_HELLO_UFFD = 1u << 2,   /* a userfaultfd comes with this record */
	PTS_HELLO_RING = 1u << 3,   /* a record ring's memfd comes with it (after
				     * the userfaultfd, when both do) */
};

struct pts_hello {
	struct pts_hdr h;
	uint32_t version;  /* PTS_WIRE_VERSION */
	uint32_t flags;    /* PTS_HELLO_* */
	int32_t ppid;      /* as the process sees it (getppid()) */
	int32_t uffd_errno; /* why no userfaultfd comes (0: none was asked for) */
	char exe[248];     /* argv[0]-ish, NUL-terminated, may be truncated */
	/* FORKED: the parent's last record number when it forked (its state
	 * the child copies); 0: unknown (a trace made before it was sent) */
	uint32_t parent_seq;
	uint32_t reserved;
};

/* mmap(): addr is the result.  The backing object is identified by the
 * shim with fstat() of fd: dev and ino; the daemon classifies it. */
struct pts_mmap {
	struct pts_hdr h;
	uint64_t addr, len, offset;
	int32_t prot, flags, fd;
	int32_t result_errno; /* with PTS_F_FAILED */
	uint64_t dev, ino;    /* 0 when fd < 0 or fstat failed */
};

/* munmap(), mprotect(), madvise(), shmdt(): a range and an argument. */
struct pts_range {
	struct pts_hdr h;
	uint64_t addr, len;
	int32_t arg;          /* prot, advice; 0 for munmap and shmdt */
	int32_t result_errno;
};

struct pts_mremap {
	struct pts_hdr h;
	uint64_t old_addr, old_len, new_addr, new_len; /* new_addr: the result */
	int32_t flags;
	int32_t result_errno;
};

struct pts_shmat {
	struct pts_hdr h;
	uint64_t addr, len;   /* the result, and the segment's size */
	int32_t shmid, shmflg;
	int32_t result_errno;
	uint32_t reserved;
};

struct pts_fork {
	struct pts_hdr h;
	int32_t child;
	uint32_t reserved;
};

enum pts_exec_flag {
	/* The new image runs without the shim: it would have had no fd below
	 * its RLIMIT_NOFILE for the dynamic loader to open it with. */
	PTS_EXEC_NO_FD = 1u << 0,
};

struct pts_exec {
	struct pts_hdr h;
	int32_t result_errno; /* PTS_EXEC_FAILED */
	uint32_t flags;       /* PTS_EXEC_* */
	char path[256];
};

struct pts_exit {
	struct pts_hdr h;
	int32_t status;
	uint32_t reserved;
};

struct pts_lost {
	struct pts_hdr h;
	uint64_t records;     /* dropped since the last PTS_LOST */
};

/* UFFDIO_REGISTER or UFFDIO_UNREGISTER on a userfaultfd of the program's
 * own (docs/faults.md, The program's own userfaultfd): the range (and the
 * mode) it asked for.  A call that met the daemon's registrations (EBUSY,
 * EINVAL) is acked once the daemon has released its own there; the shim
 * then makes the call once more. */
enum pts_own_uffd_request {
	PTS_OWN_UFFD_REGISTER,
	PTS_OWN_UFFD_UNREGISTER,
};

struct pts_own_uffd {
	struct pts_hdr h;
	uint64_t start, len;
	uint64_t mode;        /* UFFDIO_REGISTER_MODE_*: of a registration */
	uint32_t request;     /* enum pts_own_uffd_request */
	int32_t result_errno; /* with PTS_F_FAILED */
};

/* The daemon's reply to a record the shim waits on (PTS_HELLO, PTS_EXIT,
 * and the calls it makes once more: docs/wire-protocol.md). */
struct pts_ack {
	struct pts_hdr h;
	uint32_t acked_seq;
	uint32_t reserved;
};

/*
 * Checkpoint records, made by the daemon from /proc and kept in traces so a
 * replay sees exactly what the live run saw: CK_BEGIN, any number of CK_VMAS
 * and CK_RUNS, CK_END.  The pid is the record's subject.
 */
enum pts_ck_reason {
	PTS_CK_CONNECT, PTS_CK_FORK, PTS_CK_EXEC, PTS_CK_EXIT, PTS_CK_TIMER,
	PTS_CK_RESYNC, PTS_CK_FINAL,
};

struct pts_ck_begin {
	struct pts_hdr h;
	int32_t pid;
	uint32_t reason;      /* enum pts_ck_reason */
};

struct pts_ck_vma {
	uint64_t start, end, offset;
	uint64_t dev, ino;    /* identity, as the model takes it */
	uint32_t kind;        /* enum mm_obj_kind */
	uint32_t prot;        /* enum mm_prot */
	uint32_t flags;       /* enum mm_vma_flag */
	uint32_t huge_shift;
};

struct pts_ck_vmas {
	struct pts_hdr h;
	uint32_t n;
	uint32_t reserved;
	struct pts_ck_vma vma[]; /* n of them; the record stays <= PTS_REC_MAX */
};

enum pts_run_flag {
	PTS_RUN_HUGE = 1u << 0, /* mapped by huge leaves (struct mm_run.huge) */
	PTS_RUN_ANON = 1u << 1, /* anonymous pages (struct mm_run.anon) */
	PTS_RUN_WRITTEN = 1u << 2, /* mapped by this process alone (.written) */
};

struct pts_ck_run {
	uint64_t start, end;
	uint32_t flags;       /* PTS_RUN_* */
	uint32_t reserved;
};

struct pts_ck_runs {
	struct pts_hdr h;
	uint32_t n;
	uint32_t reserved;
	struct pts_ck_run run[];
};

struct pts_ck_name {
	struct pts_hdr h;
	uint64_t dev, ino;
	uint32_t kind;
	uint32_t len;         /* bytes of name (no NUL); size = sizeof + len */
	char name[];
};

/* A connection from pid (SO_PEERCRED) opened, or closed.  The frame's
 * conn is the connection's number. */
struct pts_conn {
	struct pts_hdr h;
	int32_t pid;
	uint32_t arg; /* OPEN: the uid; CLOSE: 1 when the process outlived it */
};

/* A page fault of pid the daemon saw on its userfaultfd: a first touch of
 * a page the process did not have. */
enum pts_fault_flag {
	PTS_FAULT_WRITE = 1u << 0,
	PTS_FAULT_MINOR = 1u << 1, /* the page was in the page cache already */
};

struct pts_fault {
	struct pts_hdr h;
	int32_t pid;
	uint32_t flags;       /* PTS_FAULT_* */
	uint64_t addr;
};

/* How faults are seen: for the run (pid 0) and for each process, with why
 * a process has none (it could not make or pass a userfaultfd). */
enum pts_faults {
	PTS_FAULTS_OFF,   /* pagemap only */
	PTS_FAULTS_TABLE, /* a process's first fault in each 2 MiB span */
	PTS_FAULTS_ALL,   /* every fault */
};

struct pts_fault_mode {
	struct pts_hdr h;
	int32_t pid;
	uint32_t mode;        /* enum pts_faults */
	int32_t err;          /* with PTS_FAULTS_OFF for a process: errno */
	uint32_t reserved;
};

/*
 * Whether the daemon's kernel maps the shared zero page on a read fault in
 * private anonymous memory (procfs_zero_page()), or an anonymous page, with
 * the anon_vma that makes fork copy the tables: the worlds take it
 * (mm_world_set_zero_page).  Made once, before any connection; a trace
 * without one replays with the zero page, as on a stock kernel.
 */
struct pts_zero_page {
	struct pts_hdr h;
	uint32_t zero_page;   /* 1: the zero page; 0: an anonymous page */
	uint32_t reserved;
};

/*
 * The run's details, for the report's "run" (docs/report-json.md): made
 * when the daemon starts (end_ns 0, status unknown) and again when it
 * finishes (the end, and the program's wait status `ptshare run` gave it
 * with its SIGTERM: sigqueue).  A replay takes the last.  Strings end in
 * a NUL; a setting that could not be read is "" or -1.
 */
#define PTS_RUN_STR 72
#define PTS_RUN_CMD 1024
struct pts_run_info {
	struct pts_hdr h;
	int64_t start_ns;       /* CLOCK_REALTIME */
	int64_t end_ns;         /* CLOCK_REALTIME; 0: not ended */
	int32_t wait_status;    /* the program's; -1: unknown */
	int32_t va_space;       /* kernel.randomize_va_space */
	int64_t nr_hugepages;   /* vm.nr_hugepages */
	char host[PTS_RUN_STR];    /* gethostname() */
	char kernel[PTS_RUN_STR];  /* uname -r */
	char version[PTS_RUN_STR]; /* ptshared's */
	char thp[PTS_RUN_STR];     /* transparent_hugepage/enabled: the choice */
	char shmem_thp[PTS_RUN_STR]; /* .../shmem_enabled: the choice */
	char command[PTS_RUN_CMD]; /* the program's command line, quoted */
};

/* How the daemon classified the files of a device, so that a replay
 * classifies them the same way without the machine's mounts. */
struct pts_ck_fs {
	struct pts_hdr h;
	uint64_t dev;
	uint32_t kind;        /* MM_OBJ_FILE, MM_OBJ_SHMEM or MM_OBJ_HUGETLB */
	uint32_t huge_shift;
};

/* Within a reading: the process runs as another (real) uid than the one
 * it was known by (its connection's, or its parent's), after runuser, su
 * or sudo -u, say; and whether the daemon serves that user (docs/daemon.md,
 * Access), so that a replay tells it as the run did. */
struct pts_ck_user {
	struct pts_hdr h;
	int32_t pid;
	uint32_t uid;
	uint32_t served;      /* 1: the daemon serves uid */
	uint32_t reserved;
};

/* After the PTS_CK_NAME of an ELF file with a GNU build id (a regular
 * file whose device and inode are the mapping's): the id, so that a replay
 * can tell a file rebuilt since the run.  A reader skips a version it does
 * not know. */
#define PTS_BUILD_ID_VERSION 1
#define PTS_BUILD_ID_MAX 64
struct pts_ck_build_id {
	struct pts_hdr h;
	uint64_t dev, ino;    /* the object, as its PTS_CK_NAME */
	uint32_t kind;
	uint16_t version;     /* PTS_BUILD_ID_VERSION */
	uint16_t len;         /* bytes of id, 1 to PTS_BUILD_ID_MAX; size = sizeof + len */
	uint8_t id[];
};

/* Within a reading: the process's cgroup v2 path (/proc/PID/cgroup's
 * "0::" line), when it is not the one it was known in (none, at its first
 * reading): --group-by cgroup, in a run and its replay. */
#define PTS_CGROUP_MAX 255
struct pts_ck_cgroup {
	struct pts_hdr h;
	uint32_t len;         /* bytes of path (no NUL), <= PTS_CGROUP_MAX */
	uint32_t reserved;
	char path[];          /* size = sizeof + len */
};

/* Within a reading: the process did not run while it was read, and rests
 * (one thread, asleep); mark says how it was (procfs_status.rest), and a
 * later reading that finds it so is PTS_CK_AT_REST.  None: it ran, or a
 * reading at rest has no mark to compare with. */
struct pts_ck_rest {
	struct pts_hdr h;
	uint64_t mark;        /* never 0 */
};

struct pts_ck_end {
	struct pts_hdr h;
	int64_t vmpte_kb;     /* -1 when /proc could not be read */
	uint32_t flags;       /* PTS_CK_STABLE, PTS_CK_RACED, PTS_CK_AT_REST */
	int32_t err;          /* why it could not be read (negative errno) */
};

#define PTS_CK_STABLE 1u /* VmPTE did not change while it was read */
#define PTS_CK_RACED 2u  /* a traced call of the process ran meanwhile */
/* It had its last reading's PTS_CK_REST mark: it has not run since, and
 * that reading's mappings and pages hold (none come with this one). */
#define PTS_CK_AT_REST 4u

/*
 * A live report (docs/report.md), on the daemon's report socket (a
 * SOCK_STREAM socket: a shim cannot connect to it, nor a report client to
 * the shims' socket).  The client sends one PTS_REPORT_REQ with one file
 * descriptor per output asked for (SCM_RIGHTS, in the order of the bits),
 * each a memfd it made and reads back; the daemon writes the report into
 * them, answers PTS_REPORT_DONE and closes the connection.
 */
enum pts_report_output {
	PTS_REPORT_TEXT = 1u << 0,
	PTS_REPORT_JSON = 1u << 1,
	PTS_REPORT_HTML = 1u << 2,
};

enum pts_report_flag {
	PTS_REPORT_NO_READ = 1u << 0, /* no checkpoint first: what is known */
};

struct pts_report_req {
	struct pts_hdr h;     /* seq 1 */
	uint32_t version;     /* PTS_WIRE_VERSION */
	uint32_t outputs;     /* PTS_REPORT_*: at least one */
	uint32_t flags;       /* PTS_REPORT_NO_READ */
	uint32_t top;         /* rows of the text report; 0: all */
};

struct pts_report_done {
	struct pts_hdr h;
	int32_t err;          /* 0: written; else the errno of why not */
	uint32_t output;      /* the PTS_REPORT_* output err is about, or 0 */
};

/*
 * The record ring (docs/wire-protocol.md, The record ring): a memfd of
 * PTS_RING_DATA + data_size bytes the shim maps shared, sealed against
 * shrinking, and hands the daemon with HELLO.  Every record after HELLO
 * goes into it, at head, 8-byte aligned, wrapping around the end of the
 * data; the daemon takes them from tail.  Counters count bytes from 0 and
 * never wrap; head - tail <= data_size.  The socket then carries only
 * PTS_RING_KICK (a struct pts_hdr of that type, seq 0), sent when the shim
 * waits for the daemon (an ACK, room) or wants it soon (past half full,
 * with a userfaultfd, after a fork).
 */
#define PTS_RING_MAGIC 0x31474e4952535450ull /* "PTSRING1" */
#define PTS_RING_DATA 4096                    /* where the records start */
#define PTS_RING_ALIGN 8

struct pts_ring {
	uint64_t magic;       /* PTS_RING_MAGIC */
	uint32_t data_size;   /* a power of two, at least PTS_REC_MAX */
	uint32_t reserved;
	/* The shim's line: */
	_Alignas(64) uint64_t head; /* bytes published (release), by the shim */
	uint32_t room_wanted; /* 1: the shim waits on tail_wake for room */
	uint32_t calls;       /* odd while a traced call runs, from before its
			       * real call to its record published */
	/* The daemon's line: */
	_Alignas(64) uint64_t tail; /* bytes taken (release), by the daemon */
	uint32_t tail_wake;   /* a futex word: bumped, and woken, when tail
			       * moved while room_wanted */
	uint32_t hold;        /* a futex word: 1 while the daemon reads the
			       * process's /proc; no traced call starts */
	uint32_t read;        /* a futex word: 1 once the daemon has read the
			       * process's /proc; a fork waits for it */
	uint32_t behind;      /* a futex word: 1 while the daemon is behind
			       * (work waiting 100 ms without a break, while
			       * processes wait at their exits), 2 when the
			       * shim sleeps on it; a new process waits for 0 */
};

/* The daemon's heartbeat (ptshared --heartbeat-fd, docs/run.md): a memory
 * file of PTS_HEARTBEAT_SIZE bytes its watcher (`ptshare run`) made, whose
 * beats the daemon adds one to at every turn of its loop and after every
 * event it handled, and an idle loop turns at least every
 * PTS_HEARTBEAT_IDLE_MS; it also says how far the run is. */
#define PTS_HEARTBEAT_SIZE 4096
#define PTS_HEARTBEAT_IDLE_MS 100

struct pts_heartbeat {
	uint64_t beats;       /* atomic: written by the daemon alone */
	/* The run so far, for the watcher's progress line: written (each
	 * atomically, on its own) at every turn of the loop. */
	uint64_t processes;   /* modelled now */
	uint64_t records;     /* received from the shims */
	uint64_t tables;      /* today's table pages now (the linux model) */
};

#endif
