/* SPDX-License-Identifier: MIT */
#include "ck_reading.h"

#include <string.h>

void ck_reading(int32_t pid, const struct pts_ck_vma *v, size_t nv,
		const struct pts_ck_run *runs, size_t nr, int64_t vmpte_kb,
		ck_emit_fn *emit, void *arg)
{
	union {
		struct pts_hdr h;
		struct pts_ck_begin b;
		struct pts_ck_vmas vmas;
		struct pts_ck_runs runs;
		struct pts_ck_end e;
		uint8_t buf[PTS_REC_MAX];
	} r;
	memset(&r, 0, sizeof(r));
	r.b.pid = pid;
	r.b.reason = PTS_CK_TIMER;
	r.h = (struct pts_hdr){ .type = PTS_CK_BEGIN, .size = sizeof(r.b) };
	emit(arg, pid, &r, sizeof(r.b));
	r.vmas.n = (uint32_t)nv;
	if (nv)
		memcpy(r.vmas.vma, v, nv * sizeof(*v));
	size_t size = sizeof(r.vmas) + nv * sizeof(*v);
	r.h = (struct pts_hdr){ .type = PTS_CK_VMAS, .size = (uint16_t)size };
	emit(arg, pid, &r, size);
	r.runs.n = (uint32_t)nr;
	if (nr)
		memcpy(r.runs.run, runs, nr * sizeof(*runs));
	size = sizeof(r.runs) + nr * sizeof(*runs);
	r.h = (struct pts_hdr){ .type = PTS_CK_RUNS, .size = (uint16_t)size };
	emit(arg, pid, &r, size);
	memset(&r, 0, sizeof(r));
	r.e.vmpte_kb = vmpte_kb;
	r.e.flags = PTS_CK_STABLE;
	r.h = (struct pts_hdr){ .type = PTS_CK_END, .size = sizeof(r.e) };
	emit(arg, pid, &r, sizeof(r.e));
}
