/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>

#include "access.h"
#include "lib/clock.h"
#include "readings.h"
#include "report/symbols.h"

/* A record under construction, fed in when full or done. */
union ck_buf {
	struct pts_hdr h;
	struct pts_ck_begin begin;
	struct pts_ck_user user;
	struct pts_ck_cgroup cgroup;
	struct pts_ck_rest rest;
	struct pts_ck_vmas vmas;
	struct pts_ck_runs runs;
	struct pts_ck_name name;
	struct pts_ck_build_id build_id;
	struct pts_ck_end end;
	uint64_t align;
	uint8_t b[PTS_REC_MAX];
};

#define VMAS_PER_REC \
	((PTS_REC_MAX - sizeof(struct pts_ck_vmas)) / sizeof(struct pts_ck_vma))
#define RUNS_PER_REC \
	((PTS_REC_MAX - sizeof(struct pts_ck_runs)) / sizeof(struct pts_ck_run))

/* One reading's records, fed to the ingest as they are made. */
struct feed {
	struct ingest *g;
	int32_t pid;
	union ck_buf r;
};

static void emit(struct feed *f, uint16_t type, size_t size)
{
	f->r.h = (struct pts_hdr){ .type = type, .size = (uint16_t)size,
				   .time_ns = now_ns() };
	ingest_reading_record(f->g, f->pid, &f->r);
}

/* The mapping as the model and the traces take it: SysV segments by shmid
 * alone (the shim knows no device for them). */
static bool ck_vma_of(const struct procfs_vma *pv, struct pts_ck_vma *out)
{
	struct mm_mapping m;
	if (procfs_vma_mapping(pv, &m))
		return false;
	*out = (struct pts_ck_vma){
		.start = m.addr, .end = m.addr + m.len, .offset = m.offset,
		.dev = m.obj.kind == MM_OBJ_SYSV ? 0 : m.obj.dev,
		.ino = m.obj.ino, .kind = m.obj.kind, .prot = m.prot,
		.flags = m.flags, .huge_shift = m.huge_shift,
	};
	return true;
}

/* After its name, the build id of an ELF file, read from its path when
 * that is still the file mapped (same device and inode). */
static void emit_build_id(struct feed *f, const struct procfs_vma *pv,
			  const struct pts_ck_vma *v)
{
	struct pts_ck_build_id *r = &f->r.build_id;
	if (v->kind != MM_OBJ_FILE || pv->deleted)
		return;
	size_t n = report_build_id(pv->path, v->dev, v->ino, r->id,
				   PTS_BUILD_ID_MAX);
	if (!n)
		return;
	r->dev = v->dev;
	r->ino = v->ino;
	r->kind = v->kind;
	r->version = PTS_BUILD_ID_VERSION;
	r->len = (uint16_t)n;
	emit(f, PTS_CK_BUILD_ID, sizeof(*r) + n);
}

/* The paths of the objects the ingest has not named yet, and the build
 * ids of those that are ELF files. */
static void emit_names(struct feed *f, const struct procfs_image *img)
{
	struct pts_ck_name *r = &f->r.name;
	for (size_t i = 0; i < img->maps.n; i++) {
		const struct procfs_vma *pv = &img->maps.vmas[i];
		struct pts_ck_vma v;
		if (!*pv->path || !ck_vma_of(pv, &v) || v.kind == MM_OBJ_ANON ||
		    ingest_object_named(f->g, &(struct mm_object_id){
			    v.kind, v.dev, v.ino }))
			continue;
		size_t len = strlen(pv->path);
		size_t max = sizeof(f->r) - sizeof(*r) - 10;
		len = len < max ? len : max;
		r->dev = v.dev;
		r->ino = v.ino;
		r->kind = v.kind;
		memcpy(r->name, pv->path, len);
		if (pv->deleted) {
			memcpy(r->name + len, " (deleted)", 10);
			len += 10;
		}
		r->len = (uint32_t)len;
		emit(f, PTS_CK_NAME, sizeof(*r) + len);
		emit_build_id(f, pv, &v);
	}
}

static void emit_vmas(struct feed *f, const struct procfs_image *img)
{
	struct pts_ck_vmas *r = &f->r.vmas;
	r->n = 0;
	for (size_t i = 0; i < img->maps.n; i++) {
		if (!ck_vma_of(&img->maps.vmas[i], &r->vma[r->n]))
			continue;
		if (++r->n == VMAS_PER_REC) {
			emit(f, PTS_CK_VMAS, sizeof(*r) + r->n * sizeof(r->vma[0]));
			r->n = 0;
		}
	}
	if (r->n)
		emit(f, PTS_CK_VMAS, sizeof(*r) + r->n * sizeof(r->vma[0]));
}

static void emit_runs(struct feed *f, const struct procfs_image *img)
{
	struct pts_ck_runs *r = &f->r.runs;
	r->n = 0;
	for (size_t i = 0; i < img->nruns; i++) {
		const struct mm_run *m = &img->runs[i];
		r->run[r->n] = (struct pts_ck_run){
			m->start, m->end,
			(m->huge ? PTS_RUN_HUGE : 0) | (m->anon ? PTS_RUN_ANON : 0) |
				(m->written ? PTS_RUN_WRITTEN : 0),
			0,
		};
		if (++r->n == RUNS_PER_REC) {
			emit(f, PTS_CK_RUNS, sizeof(*r) + r->n * sizeof(r->run[0]));
			r->n = 0;
		}
	}
	if (r->n)
		emit(f, PTS_CK_RUNS, sizeof(*r) + r->n * sizeof(r->run[0]));
}

/* A process with this many mappings has its maps read a mapping at a time
 * (PROCMAP_QUERY), the paths of the files met before not printed again:
 * a postgres backend's reading of 244 mappings took 917-951 us instead of
 * 988-1,147.  Fewer are cheaper as text: an ioctl a mapping (two for an
 * anonymous one, whose name says what it is) cost a shell's reading of 25
 * mappings 88-137 us against 79-92 (bench/procfs_cost). */
#define QUERY_VMAS_MIN 64

/* Reads the process's /proc and feeds it in as checkpoint records: its
 * user when it changed (and whether the daemon serves that one), its
 * cgroup when it changed, the
 * objects' names, the mappings, the populated pages, VmPTE. */
static void read_one(struct readings *rd, struct ingest *g,
		     struct ingest_reading *want)
{
	struct procfs_image img = {
		.written = want->written,
		.names = want->vmas >= QUERY_VMAS_MIN ? rd->names : NULL,
	};
	struct feed f = { .g = g, .pid = want->pid };
	const struct readings_gate *gate = &rd->gate;
	uint32_t mark;
	bool held = gate->hold && gate->hold(gate->arg, want->pid, &mark);
	if (held && !ingest_reading_wanted(g, want)) {
		gate->let_go(gate->arg, want->pid, mark);
		return;
	}
	/* As the records its ring held leave them (ingest_reading_wanted). */
	img.rest = want->rest;
	img.last = want->reason == PTS_CK_EXIT;
	int err = procfs_image_read(
		want->pid, procfs_fs_cache_get(&rd->fs, want->pid), &img);
	char cgroup[PTS_CGROUP_MAX + 1];
	bool moved = !err && !procfs_cgroup_read(want->pid, cgroup, sizeof(cgroup)) &&
		     strcmp(cgroup, want->cgroup);
	/* All of /proc that is read is read: the process may go on (and
	 * one at its EXIT end) while the models take the reading. */
	bool raced = held && !gate->let_go(gate->arg, want->pid, mark);
	f.r.begin = (struct pts_ck_begin){ .pid = want->pid,
					   .reason = want->reason };
	emit(&f, PTS_CK_BEGIN, sizeof(f.r.begin));
	if (!err && img.status.uid != want->uid) {
		f.r.user = (struct pts_ck_user){
			.pid = want->pid, .uid = img.status.uid,
			.served = access_may_connect(img.status.uid),
		};
		emit(&f, PTS_CK_USER, sizeof(f.r.user));
	}
	if (moved) {
		size_t len = strlen(cgroup);
		f.r.cgroup = (struct pts_ck_cgroup){ .len = (uint32_t)len };
		memcpy(f.r.cgroup.path, cgroup, len);
		emit(&f, PTS_CK_CGROUP, sizeof(f.r.cgroup) + len);
	}
	if (!err && !img.at_rest) {
		emit_names(&f, &img);
		emit_vmas(&f, &img);
		emit_runs(&f, &img);
	}
	/* A traced call that ran meanwhile ran: no rest to compare with. */
	if (!err && img.rest && !raced) {
		f.r.rest = (struct pts_ck_rest){ .mark = img.rest };
		emit(&f, PTS_CK_REST, sizeof(f.r.rest));
	}
	f.r.end = (struct pts_ck_end){
		.vmpte_kb = err ? -1 : (int64_t)img.status.vmpte_kb,
		.flags = (!err && img.stable ? PTS_CK_STABLE : 0) |
			  (raced ? PTS_CK_RACED : 0) |
			  (!err && img.at_rest ? PTS_CK_AT_REST : 0),
		.err = err,
	};
	emit(&f, PTS_CK_END, sizeof(f.r.end));
	procfs_image_free(&img);
}

void readings_make(struct readings *rd, struct ingest *g)
{
	struct ingest_reading want;
	while (ingest_reading_next(g, &want)) {
		read_one(rd, g, &want);
		if (rd->gate.busy)
			rd->gate.busy(rd->gate.arg);
	}
}

/* Whether pid still runs (a zombie does not: it has no address space). */
static bool host_runs(void *arg, int32_t pid)
{
	struct procfs_status st;
	(void)arg;
	return procfs_status_read(pid, &st) == 0 && st.has_mm;
}

static bool host_child_of(void *arg, int32_t child, int32_t parent)
{
	struct procfs_status st;
	(void)arg;
	return procfs_status_read(child, &st) || st.ppid == parent;
}

/* The device as pid's mounts say (files when they do not know it). */
static int host_fs_of(void *arg, int32_t pid, uint64_t dev, uint32_t *kind,
		      uint32_t *huge_shift)
{
	struct procfs_fs_table fs = { 0 };
	(void)arg;
	*kind = MM_OBJ_FILE;
	*huge_shift = 0;
	if (procfs_fs_table_read(pid, &fs) >= 0) {
		for (size_t i = 0; i < fs.n; i++)
			if (fs.fs[i].dev == dev) {
				*kind = fs.fs[i].kind;
				*huge_shift = fs.fs[i].huge_shift;
			}
	}
	procfs_fs_table_free(&fs);
	return 0;
}

struct ingest_host readings_host(struct readings *rd)
{
	return (struct ingest_host){
		.runs = host_runs, .child_of = host_child_of,
		.fs_of = host_fs_of, .arg = rd,
	};
}

void readings_init(struct readings *rd)
{
	*rd = (struct readings){ .names = procfs_names_new() };
}

void readings_free(struct readings *rd)
{
	procfs_fs_cache_free(&rd->fs);
	procfs_names_free(rd->names);
	rd->names = NULL;
}
