/* SPDX-License-Identifier: MIT */
/* Whether a record is one a shim, or for a trace the daemon, may send: its
 * size, its type, its frames and its strings (docs/wire-protocol.md). */
#include <string.h>

#include "ingest_internal.h"

static size_t body_size(uint16_t type)
{
	switch (type) {
	case PTS_HELLO: return sizeof(struct pts_hello);
	case PTS_MMAP: return sizeof(struct pts_mmap);
	case PTS_MUNMAP: case PTS_MPROTECT: case PTS_MADVISE: case PTS_SHMDT:
		return sizeof(struct pts_range);
	case PTS_MREMAP: return sizeof(struct pts_mremap);
	case PTS_SHMAT: return sizeof(struct pts_shmat);
	case PTS_FORK: return sizeof(struct pts_fork);
	case PTS_EXEC: case PTS_EXEC_FAILED: return sizeof(struct pts_exec);
	case PTS_EXIT: return sizeof(struct pts_exit);
	case PTS_LOST: return sizeof(struct pts_lost);
	case PTS_OWN_UFFD: return sizeof(struct pts_own_uffd);
	case PTS_CK_BEGIN: return sizeof(struct pts_ck_begin);
	case PTS_CK_VMAS: return sizeof(struct pts_ck_vmas);
	case PTS_CK_RUNS: return sizeof(struct pts_ck_runs);
	case PTS_CK_END: return sizeof(struct pts_ck_end);
	case PTS_CK_NAME: return sizeof(struct pts_ck_name);
	case PTS_CK_FS: return sizeof(struct pts_ck_fs);
	case PTS_CK_USER: return sizeof(struct pts_ck_user);
	case PTS_CK_BUILD_ID: return sizeof(struct pts_ck_build_id);
	case PTS_CK_CGROUP: return sizeof(struct pts_ck_cgroup);
	case PTS_CK_REST: return sizeof(struct pts_ck_rest);
	case PTS_CONN_OPEN: case PTS_CONN_CLOSE: return sizeof(struct pts_conn);
	case PTS_FAULT: return sizeof(struct pts_fault);
	case PTS_FAULT_MODE: return sizeof(struct pts_fault_mode);
	case PTS_ZERO_PAGE: return sizeof(struct pts_zero_page);
	case PTS_RUN_INFO: return sizeof(struct pts_run_info);
	default: return 0;
	}
}

/* Whether every string of a PTS_RUN_INFO ends within it. */
static bool run_info_terminated(const union aligned_rec *r)
{
	const struct pts_run_info *i = (const struct pts_run_info *)r;
	const char *s[] = { i->host, i->kernel, i->version, i->thp, i->shmem_thp };
	for (size_t k = 0; k < sizeof(s) / sizeof(s[0]); k++)
		if (!memchr(s[k], 0, PTS_RUN_STR))
			return false;
	return memchr(i->command, 0, PTS_RUN_CMD) != NULL;
}

/* Whether a PTS_RUN_INFO's times are a daemon's: none before 1970, the
 * end (when there is one) not before the start; the report takes their
 * difference (fuzz_trace: run-info-times). */
static bool run_info_timed(const union aligned_rec *r)
{
	const struct pts_run_info *i = (const struct pts_run_info *)r;
	return i->start_ns >= 0 && i->end_ns >= 0 &&
	       (!i->end_ns || i->end_ns >= i->start_ns);
}

/* Whether buf is a well-formed record a shim (or, for traces, the daemon)
 * may send; NULL when it is, else why not. */
const char *ingest_record_check(const union aligned_rec *r, size_t len,
				bool from_shim)
{
	const struct pts_hdr *h = &r->h;
	if (len < sizeof(*h))
		return "shorter than a record header";
	if (len > PTS_REC_MAX)
		return "larger than any record";
	if (h->size != len)
		return "its size disagrees with its packet";
	size_t body = body_size(h->type);
	if (!body)
		return "unknown record type";
	if (from_shim != (h->type <= PTS_SHIM_LAST))
		return from_shim ? "a record only the daemon makes"
				 : "a shim's record outside a connection";
	if (h->nframes > PTS_MAX_FRAMES || (!from_shim && h->nframes))
		return "too many call-stack frames";
	size_t want = body + 8u * h->nframes;
	switch (h->type) {
	case PTS_CK_VMAS:
		want = body + (size_t)((const struct pts_ck_vmas *)r)->n *
				      sizeof(struct pts_ck_vma);
		break;
	case PTS_CK_RUNS:
		want = body + (size_t)((const struct pts_ck_runs *)r)->n *
				      sizeof(struct pts_ck_run);
		break;
	case PTS_CK_CGROUP:
		if (((const struct pts_ck_cgroup *)r)->len > PTS_CGROUP_MAX)
			return "a cgroup path too long";
		want = body + ((const struct pts_ck_cgroup *)r)->len;
		break;
	case PTS_CK_NAME:
		want = body + ((const struct pts_ck_name *)r)->len;
		break;
	case PTS_CK_BUILD_ID:
		want = body + ((const struct pts_ck_build_id *)r)->len;
		break;
	}
	if (len < body || len != want)
		return "its size does not fit its type";
	if ((h->type == PTS_HELLO &&
	     !memchr(((const struct pts_hello *)r)->exe, 0,
		     sizeof(((const struct pts_hello *)r)->exe))) ||
	    ((h->type == PTS_EXEC || h->type == PTS_EXEC_FAILED) &&
	     !memchr(((const struct pts_exec *)r)->path, 0, 256)) ||
	    (h->type == PTS_RUN_INFO && !run_info_terminated(r)))
		return "an unterminated string";
	if (h->type == PTS_RUN_INFO && !run_info_timed(r))
		return "a run that ends before it starts";
	if (h->type == PTS_CK_END && ((const struct pts_ck_end *)r)->vmpte_kb < -1)
		return "a VmPTE below -1 (unknown)";
	if (h->type == PTS_CK_REST && !((const struct pts_ck_rest *)r)->mark)
		return "a rest mark of 0";
	if (h->type == PTS_CK_BUILD_ID &&
	    (!((const struct pts_ck_build_id *)r)->len ||
	     ((const struct pts_ck_build_id *)r)->len > PTS_BUILD_ID_MAX))
		return "a build id of no byte or more than 64";
	return NULL;
}
