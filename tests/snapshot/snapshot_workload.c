/* SPDX-License-Identifier: MIT */
/*
 * ptshare snapshot on a workload whose answer is known exactly.
 *
 * snap_subject (built without sanitizers) sets up, in the 512 GiB slot at
 * SLOT_BASE = 0x300000000000 that nothing else uses (it checks
 * /proc/self/maps), each in a 1 GiB span of its own, before forking:
 *   A  64 MiB MAP_SHARED|MAP_ANONYMOUS at SLOT_BASE           (shmem)
 *   B   8 MiB SysV segment shmat'ed at +1 GiB, IPC_RMID'ed      (sysv)
 *   C  16 MiB memfd, MAP_SHARED at +2 GiB                       (shmem)
 *   D  32 MiB file written by this test, PROT_READ MAP_PRIVATE at
 *      +3 GiB + 4 KiB, offset 0 (address and offset differ modulo 2 MiB,
 *      so the kernel can never map it with a PMD entry)           (file)
 *   E   8 MiB private anonymous at +4 GiB                       (anon)
 * The parent writes every page of A, B, C and E and reads every page of D;
 * then it forks 3 workers, each of which reads every page of A-D and
 * touches nothing of E.  The test runs
 *     ptshare snapshot --pid PARENT --tree --json FILE
 * and checks the report exactly.
 *
 * Expected figures, from docs/model.md:
 *
 * - today (linux): the model must equal VmPTE for every process: a quiet
 *   process read from /proc (maps, pagemap, VmPTE) is what the baseline
 *   rules describe.  Nothing is assumed about the tables outside the slot.
 *
 * - mccracken-2005 and aslr-tolerant (scope file, levels PTE+PMD).  A
 *   shareable VMA is file-backed (shmem, SysV and memfd count), not
 *   private-and-writable, at least 2 MiB, and not private with anon pages;
 *   a table is shareable when its whole aligned span lies inside one
 *   shareable VMA.  Per process, PTE tables (2 MiB spans):
 *     A  64 MiB from a 1 GiB boundary: 32 whole spans          -> 32
 *     B   8 MiB from a 1 GiB boundary:                          ->  4
 *     C  16 MiB:                                                -> 8
 *     D  [3 GiB + 4 KiB, 3 GiB + 32 MiB + 4 KiB) meets 17 spans; the
 *        first and the last are only partly covered             -> 15
 *        (read-only private, never written: no anon pages)
 *     E  private anonymous: never shareable                     ->  0
 *   total 59 shareable PTE tables per process.  Every process maps A-D at
 *   the same address with the same offset, flags and protection (inherited
 *   through fork), and every process has every page of A-D present, so
 *   each of the 59 is shared by all 4 processes: shared.pte == 59 (a
 *   process's view counts a table it uses through sharing).  No VMA covers
 *   a whole aligned 1 GiB span, so no PMD page is shareable: shared.pmd ==
 *   0; PUD is not a level of these policies: shared.pud == 0.  The views
 *   are the same as today's (every table a process uses is counted), so
 *   tables == linux tables.  pss_bytes sums 4096/users over the process's
 *   tables: (T - 59) * 4096 + 59 * 4096/4 with T the process's linux
 *   tables; saved_bytes = T * 4096 - pss = 59 * 3072.
 *   Totals: the 59 tables exist once instead of 4 times: distinct PTE
 *   tables drop by 3 * 59 = 177 and saved_bytes == 177 * 4096 = 724992;
 *   linked (the sum of views) is unchanged; shared.pte sums to 4 * 59.
 *
 * - hugetlb-pmd shares shared hugetlb mappings only: nothing here.
 *
 * - Mapping rows (one per group of identical mappings; the 4 processes map
 *   each of A-E identically, E with anon pages in all four: the children
 *   got E's pages copied at fork): processes == 4, kinds shmem, sysv,
 *   shmem, file, anon; pte_tables sums the PTE tables whose span the
 *   mapping meets over the 4 processes: A 128, B 16, C 32, D 68 (17 * 4),
 *   E 16; shared_tables under the sharing policies: 128, 16, 32, 60
 *   (15 * 4), 0; why "shared" for A-D, the model's reason "anonymous
 *   private" for E; under hugetlb-pmd every reason is "not shared hugetlb".
 *
 * - Finding fault-search-extra-links (mccracken-2005): the snapshot loads
 *   the processes one after the other (and models no fork: each is
 *   created, mapped and observed).  When the k-th process (k = 1..4)
 *   populates one of the 59 tables, the patch's fault-time search finds
 *   the k-1 earlier processes' VMAs with a populated table there and links
 *   every one of them, one more than the first: 0, 0, 1, 2 extra links,
 *   3 per table: (0 + 1 + 2) * 59 = 177.  The other findings stay 0 (no
 *   mprotect or mremap is modelled; D has no anon pages).
 *
 * - hugetlb-2m and thp-shmem map the shared shmem and SysV mappings A, B
 *   and C by 2 MiB leaves: each whole aligned span of them has no PTE
 *   table, 32 + 4 + 8 = 44 per process, 4 * 44 in all (A covers no whole
 *   1 GiB, so hugetlb-2m shares no PMD page).  D (a file) and E (private)
 *   are as today.
 *
 * - mshare places A, B and C (MAP_SHARED, at least 2 MiB) in a region
 *   each: the host holds a PUD page, a PMD page and the object's PTE
 *   tables per region, 3 * 2 + 44 = 50 table pages, once.
 *
 * - "what would help" ranks the six policies by bytes saved: the two
 *   sharing policies first (mccracken-2005 before aslr-tolerant: equal
 *   savings and touches, then the column order), then hugetlb-2m and
 *   thp-shmem, mshare, and hugetlb-pmd, which saves nothing here, last.
 *
 * The snapshot models no fault and no fork: faults and fork_* are 0.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "json_read.h"
#include "om_read.h"
#include "snap_proto.h"
#include "skip.h"
#include "snap_util.h"

#define NPROCS (1 + WORKERS)
#define SHARED_PTE (32 + 4 + 8 + 15) /* A + B + C + D: 59 */
#define PAGE 4096ULL

static const char *const sharing[] = { "mccracken-2005", "aslr-tolerant" };

static struct {
	char dir[128], data[160], json[160], prom[160];
	struct stat data_st;
	struct pgroup subject;
	long pids[NPROCS]; /* parent, then the workers */
	int shmid;
	struct jr_value *doc;
} t = { .subject = { .pid = -1, .in_fd = -1 }, .shmid = -1 };

static int write_data_file(void)
{
	int fd = open(t.data, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	snap_cleanup_path(t.data);
	/* 4 KiB write()s: small page-cache folios, as kernel_crosscheck. */
	static char page[PAGE];
	for (uint64_t off = 0; off < D_LEN; off += PAGE) {
		memset(page, (int)(off >> 12), sizeof(page));
		if (write(fd, page, sizeof(page)) != (ssize_t)sizeof(page)) {
			close(fd);
			return -1;
		}
	}
	fstat(fd, &t.data_st);
	return close(fd);
}

static int setup(void **state)
{
	snap_init();
	if (make_temp_dir(t.dir, sizeof(t.dir), "snapwl"))
		return -1;
	snprintf(t.data, sizeof(t.data), "%s/data", t.dir);
	snprintf(t.json, sizeof(t.json), "%s/report.json", t.dir);
	snprintf(t.prom, sizeof(t.prom), "%s/totals.prom", t.dir);
	if (write_data_file()) {
		perror(t.data);
		return -1;
	}
	const char *args[] = { "workload", t.data, "--timeout", "600", NULL };
	if (subject_start(&t.subject, args))
		return -1;
	if (t.subject.nready != 2 + WORKERS) {
		fprintf(stderr, "unexpected ready line\n");
		return -1;
	}
	t.pids[0] = t.subject.ready[0];
	t.shmid = (int)t.subject.ready[1];
	for (int i = 0; i < WORKERS; i++)
		t.pids[1 + i] = t.subject.ready[2 + i];

	char pid[16];
	snprintf(pid, sizeof(pid), "%ld", t.pids[0]);
	const char *argv[] = { PTSHARE_PATH, "snapshot", "--pid", pid, "--tree",
			       "--json", t.json, "--openmetrics", t.prom,
			       "--top", "0", NULL };
	struct run r;
	snap_cleanup_path(t.json);
	snap_cleanup_path(t.prom);
	if (run_cmd(&r, argv, -1)) {
		perror("run ptshare");
		return -1;
	}
	/* The text report, for the log. */
	printf("%s", r.out);
	if (r.code != 0 || run_sanitizer_report(&r)) {
		run_dump(&r, "ptshare snapshot", false);
		run_free(&r);
		return -1;
	}
	run_free(&r);
	t.doc = parse_report_file(t.json);
	return t.doc ? 0 : -1;
}

static int teardown(void **state)
{
	int bad = 0;
	jr_free(t.doc);
	t.doc = NULL;
	if (group_stop(&t.subject))
		bad = 1;
	for (int i = 0; i < NPROCS; i++)
		if (t.pids[i] > 0 && pid_exists((pid_t)t.pids[i])) {
			fprintf(stderr, "process %ld left behind\n", t.pids[i]);
			bad = 1;
		}
	/* The segment was IPC_RMID'ed: it went with its last attacher. */
	struct shmid_ds ds;
	if (t.shmid >= 0 && shmctl(t.shmid, IPC_STAT, &ds) == 0) {
		fprintf(stderr, "SysV segment %d left behind\n", t.shmid);
		shmctl(t.shmid, IPC_RMID, NULL);
		bad = 1;
	}
	snap_cleanup_paths();
	struct stat st;
	if (t.dir[0] && stat(t.dir, &st) == 0) {
		fprintf(stderr, "%s left behind\n", t.dir);
		bad = 1;
	}
	return bad ? -1 : 0;
}

static uint64_t sum3(const struct jr_value *levels)
{
	return jr_path_u64(levels, "pte", 0) + jr_path_u64(levels, "pmd", 0) +
	       jr_path_u64(levels, "pud", 0);
}

static const struct jr_value *pol(const struct jr_value *v, const char *label)
{
	return jr_get(jr_get(v, "policies"), label);
}

static void test_header(void **state)
{
	const struct jr_value *d = t.doc;
	assert_string_equal(jr_path_str(d, "schema"), "ptshare.report");
	assert_int_equal(jr_path_u64(d, "version", 0), 1);
	assert_string_equal(jr_path_str(d, "command"), "snapshot");
	assert_int_equal(jr_path_u64(d, "page_size", 0), 4096);
	assert_int_equal(jr_path_u64(d, "min_mapping_bytes", 0), 2 * SNAP_MiB);
	static const char *const labels[] = { "linux", "mccracken-2005",
					      "aslr-tolerant", "hugetlb-pmd",
					      "hugetlb-2m", "thp-shmem",
					      "mshare" };
	const struct jr_value *p = jr_get(d, "policies");
	assert_int_equal(jr_len(p), 7);
	for (size_t i = 0; i < 7; i++)
		assert_string_equal(jr_path_str(jr_at(p, i), "label"), labels[i]);
	assert_string_equal(jr_path_str(d, "policies[1].match"), "same-range");
	assert_string_equal(jr_path_str(d, "policies[2].match"), "object-slot");
	assert_true(jr_is(jr_get(d, "not_modelled"), JR_ARRAY));
	assert_int_equal(jr_len(jr_get(d, "not_modelled")), 0);
}

/* Today's tables: the model against VmPTE, per process and in total. */
static void test_processes_exact(void **state)
{
	const struct jr_value *d = t.doc;
	assert_int_equal(jr_len(jr_get(d, "processes")), NPROCS);
	assert_int_equal(jr_path_u64(d, "totals.processes", 0), NPROCS);
	uint64_t sum = 0;
	for (int i = 0; i < NPROCS; i++) {
		const struct jr_value *p = report_proc(d, t.pids[i]);
		assert_non_null(p);
		assert_int_equal(jr_path_i64(p, "ppid", -1),
				 i ? t.pids[0] : (long)getpid());
		assert_int_equal(jr_path_u64(p, "uid", 1), 0);
		assert_string_equal(jr_path_str(p, "command"), "snap_subject");
		assert_true(jr_bool(jr_get(p, "stable")));
		uint64_t kernel;
		assert_true(jr_u64(jr_get(p, "vmpte_kb"), &kernel));
		uint64_t model = report_linux_kb(p);
		printf("pid %ld: VmPTE %" PRIu64 " kB, linux model %" PRIu64
		       " kB (pte %" PRIu64 " pmd %" PRIu64 " pud %" PRIu64 ")\n",
		       t.pids[i], kernel, model,
		       jr_path_u64(p, "policies.linux.tables.pte", 0),
		       jr_path_u64(p, "policies.linux.tables.pmd", 0),
		       jr_path_u64(p, "policies.linux.tables.pud", 0));
		assert_int_equal(model, kernel);
		sum += kernel;
	}
	assert_int_equal(jr_path_u64(d, "totals.exact_processes", 0), NPROCS);
	assert_int_equal(jr_path_u64(d, "totals.kernel_vmpte_kb", 0), sum);
	assert_int_equal(jr_path_u64(d, "totals.model_kb", 0), sum);
}

static void test_sharing_per_process(void **state)
{
	for (int i = 0; i < NPROCS; i++) {
		const struct jr_value *p = report_proc(t.doc, t.pids[i]);
		assert_non_null(p);
		const struct jr_value *lx = pol(p, "linux");
		uint64_t tables = sum3(jr_get(lx, "tables"));
		assert_int_equal(sum3(jr_get(lx, "shared")), 0);
		assert_true(jr_path_double(lx, "pss_bytes", -1) ==
			    (double)(tables * PAGE));
		for (size_t k = 0; k < 2; k++) {
			const struct jr_value *s = pol(p, sharing[k]);
			assert_non_null(s);
			/* The views are today's. */
			assert_int_equal(jr_path_u64(s, "tables.pte", 0),
					 jr_path_u64(lx, "tables.pte", 1));
			assert_int_equal(jr_path_u64(s, "tables.pmd", 0),
					 jr_path_u64(lx, "tables.pmd", 1));
			assert_int_equal(jr_path_u64(s, "tables.pud", 0),
					 jr_path_u64(lx, "tables.pud", 1));
			assert_int_equal(jr_path_u64(s, "shared.pte", 0), SHARED_PTE);
			assert_int_equal(jr_path_u64(s, "shared.pmd", 1), 0);
			assert_int_equal(jr_path_u64(s, "shared.pud", 1), 0);
			double pss = (double)((tables - SHARED_PTE) * PAGE) +
				     (double)(SHARED_PTE * PAGE / NPROCS);
			assert_true(jr_path_double(s, "pss_bytes", -1) == pss);
			assert_true(jr_path_double(s, "saved_bytes", -1) ==
				    (double)(SHARED_PTE * (PAGE - PAGE / NPROCS)));
			assert_int_equal(jr_path_u64(s, "faults", 1), 0);
			assert_int_equal(jr_path_u64(s, "fork_tables_copied", 1), 0);
			assert_int_equal(jr_path_u64(s, "fork_pages_copied", 1), 0);
			assert_int_equal(jr_path_u64(s, "fork_tables_linked", 1), 0);
		}
		const struct jr_value *h = pol(p, "hugetlb-pmd");
		assert_int_equal(sum3(jr_get(h, "tables")), tables);
		assert_int_equal(sum3(jr_get(h, "shared")), 0);
		assert_true(jr_path_double(h, "pss_bytes", -1) ==
			    (double)(tables * PAGE));
		assert_true(jr_path_double(h, "saved_bytes", -1) == 0.0);
	}
}

#define HUGE_PTE (32 + 4 + 8) /* A + B + C by 2 MiB pages: 44 */

/* "What would help", ranked, and mshare's host tables. */
static void test_help(void **state)
{
	(void)state;
	static const char *const order[] = { "mccracken-2005", "aslr-tolerant",
					     "hugetlb-2m", "thp-shmem", "mshare",
					     "hugetlb-pmd" };
	const struct jr_value *h = jr_get(t.doc, "help");
	assert_int_equal(jr_len(h), 6);
	for (size_t i = 0; i < 6; i++) {
		const struct jr_value *e = jr_at(h, i);
		assert_string_equal(jr_path_str(e, "policy"), order[i]);
		assert_true(strlen(jr_path_str(e, "assumption")) > 5);
		assert_int_equal(jr_path_i64(e, "fork_tables_avoided", 1), 0);
	}
	assert_int_equal(jr_path_i64(jr_at(h, 0), "saved_bytes", 0),
			 (int64_t)(WORKERS * SHARED_PTE * PAGE));
	assert_int_equal(jr_path_i64(jr_at(h, 2), "saved_bytes", 0),
			 (int64_t)(NPROCS * HUGE_PTE * PAGE));
	assert_int_equal(jr_path_i64(jr_at(h, 3), "saved_bytes", 0),
			 (int64_t)(NPROCS * HUGE_PTE * PAGE));
	assert_int_equal(jr_path_i64(jr_at(h, 5), "saved_bytes", 1), 0);
	const struct jr_value *m = jr_path(t.doc, "totals.policies.mshare");
	assert_int_equal(sum3(jr_get(m, "host")), 3 * 2 + HUGE_PTE);
	assert_int_equal(jr_path_u64(m, "host.pte", 0), HUGE_PTE);
}

static void test_totals(void **state)
{
	const struct jr_value *tp = jr_path(t.doc, "totals.policies");
	const struct jr_value *lx = jr_get(tp, "linux");
	uint64_t today = sum3(jr_get(lx, "distinct"));
	assert_int_equal(jr_path_u64(lx, "bytes", 0), today * PAGE);
	assert_int_equal(jr_path_i64(lx, "saved_bytes", 1), 0);
	assert_int_equal(sum3(jr_get(lx, "linked")), today);
	for (size_t k = 0; k < 2; k++) {
		const struct jr_value *s = jr_get(tp, sharing[k]);
		assert_non_null(s);
		assert_int_equal(jr_path_i64(s, "saved_bytes", 0),
				 (int64_t)(WORKERS * SHARED_PTE * PAGE));
		assert_int_equal(jr_path_u64(s, "distinct.pte", 0),
				 jr_path_u64(lx, "distinct.pte", 0) -
					 WORKERS * SHARED_PTE);
		assert_int_equal(jr_path_u64(s, "distinct.pmd", 0),
				 jr_path_u64(lx, "distinct.pmd", 1));
		assert_int_equal(jr_path_u64(s, "distinct.pud", 0),
				 jr_path_u64(lx, "distinct.pud", 1));
		assert_int_equal(sum3(jr_get(s, "linked")), today);
		assert_int_equal(jr_path_u64(s, "shared.pte", 0),
				 NPROCS * SHARED_PTE);
		assert_int_equal(jr_path_u64(s, "shared.pmd", 1), 0);
		assert_int_equal(jr_path_u64(s, "shared.pud", 1), 0);
		assert_int_equal(jr_path_u64(s, "bytes", 0),
				 (today - WORKERS * SHARED_PTE) * PAGE);
	}
	const struct jr_value *h = jr_get(tp, "hugetlb-pmd");
	assert_int_equal(jr_path_i64(h, "saved_bytes", 1), 0);
	assert_int_equal(sum3(jr_get(h, "distinct")), today);
	printf("totals: linux %" PRIu64 " table pages; mccracken-2005 saves "
	       "%" PRId64 " bytes\n", today,
	       jr_path_i64(tp, "mccracken-2005.saved_bytes", -1));
}

static void test_findings(void **state)
{
	const struct jr_value *f =
		jr_path(t.doc, "totals.policies.mccracken-2005.findings");
	assert_non_null(f);
	/* (0 + 1 + 2) extra links for each of the 59 tables. */
	assert_int_equal(jr_path_u64(f, "fault-search-extra-links", 0),
			 (0 + 1 + 2) * SHARED_PTE);
	assert_int_equal(jr_len(f), 4);
	for (size_t i = 0; i < jr_len(f); i++) {
		const char *key = jr_key_at(f, i);
		uint64_t n = 1;
		assert_true(jr_u64(jr_get(f, key), &n));
		printf("finding %s: %" PRIu64 "\n", key, n);
		if (strcmp(key, "fault-search-extra-links"))
			assert_int_equal(n, 0);
	}
	/* Only the patch's policy has findings. */
	assert_int_equal(jr_len(jr_path(t.doc,
			 "totals.policies.aslr-tolerant.findings")), 0);
}

struct expect_map {
	const char *what;
	uint64_t off, len;
	const char *kind, *prot;
	bool shared, anon_pages;
	uint64_t pte_tables, shared_tables; /* over the 4 processes */
	const char *why;                    /* under the sharing policies */
};

static const struct expect_map maps[] = {
	{ "A", A_OFF, A_LEN, "shmem", "rw-", true, false, 4 * 32, 4 * 32, "shared" },
	{ "B", B_OFF, B_LEN, "sysv", "rw-", true, false, 4 * 4, 4 * 4, "shared" },
	{ "C", C_OFF, C_LEN, "shmem", "rw-", true, false, 4 * 8, 4 * 8, "shared" },
	{ "D", D_OFF, D_LEN, "file", "r--", false, false, 4 * 17, 4 * 15, "shared" },
	{ "E", E_OFF, E_LEN, "anon", "rw-", false, true, 4 * 4, 0,
	  "anonymous private" },
};

static void test_mappings(void **state)
{
	long first = t.pids[0];
	for (int i = 1; i < NPROCS; i++)
		if (t.pids[i] < first)
			first = t.pids[i];
	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		const struct expect_map *e = &maps[i];
		const struct jr_value *m = report_mapping(t.doc, SLOT_BASE + e->off);
		printf("mapping %s: %s\n", e->what, m ? jr_path_str(m, "name") : "(none)");
		assert_non_null(m);
		assert_int_equal(jr_path_u64(m, "end", 0), SLOT_BASE + e->off + e->len);
		assert_string_equal(jr_path_str(m, "kind"), e->kind);
		assert_string_equal(jr_path_str(m, "prot"), e->prot);
		assert_int_equal(jr_bool(jr_get(m, "shared")), e->shared);
		assert_int_equal(jr_bool(jr_get(m, "anon_pages")), e->anon_pages);
		assert_int_equal(jr_path_u64(m, "processes", 0), NPROCS);
		assert_int_equal(jr_path_i64(m, "first_pid", 0), first);
		assert_int_equal(jr_path_u64(m, "policies.linux.pte_tables", 0),
				 e->pte_tables);
		assert_int_equal(jr_path_u64(m, "policies.linux.shared_tables", 1), 0);
		for (size_t k = 0; k < 2; k++) {
			const struct jr_value *s = pol(m, sharing[k]);
			assert_int_equal(jr_path_u64(s, "pte_tables", 0), e->pte_tables);
			assert_int_equal(jr_path_u64(s, "shared_tables", 0),
					 e->shared_tables);
			assert_string_equal(jr_path_str(s, "why"), e->why);
		}
		const struct jr_value *h = pol(m, "hugetlb-pmd");
		assert_int_equal(jr_path_u64(h, "shared_tables", 1), 0);
		assert_string_equal(jr_path_str(h, "why"), "not shared hugetlb");
	}
	/* The objects are the ones the subject made. */
	const struct jr_value *a = report_mapping(t.doc, SLOT_BASE + A_OFF);
	assert_string_equal(jr_path_str(a, "name"), "/dev/zero (deleted)");
	const struct jr_value *b = report_mapping(t.doc, SLOT_BASE + B_OFF);
	assert_int_equal(jr_path_u64(b, "ino", 0), (uint64_t)t.shmid);
	const struct jr_value *c = report_mapping(t.doc, SLOT_BASE + C_OFF);
	assert_string_equal(jr_path_str(c, "name"),
			    "/memfd:" C_MEMFD_NAME " (deleted)");
	const struct jr_value *dm = report_mapping(t.doc, SLOT_BASE + D_OFF);
	assert_string_equal(jr_path_str(dm, "name"), t.data);
	assert_int_equal(jr_path_u64(dm, "offset", 1), 0);
	assert_int_equal(jr_path_u64(dm, "dev", 0), (uint64_t)t.data_st.st_dev);
	assert_int_equal(jr_path_u64(dm, "ino", 0), (uint64_t)t.data_st.st_ino);
}

/* The totals for Prometheus: promtool's check passes (without a word of
 * its lint), and the file was put in place whole, 0644 (node_exporter
 * reads it as a user of its own), its temporary file gone. */
static void test_openmetrics_file(void **state)
{
	struct stat st;
	assert_int_equal(stat(t.prom, &st), 0);
	mode_t mask = umask(0);
	umask(mask);
	assert_int_equal(st.st_mode & 07777, 0644 & ~mask);
	DIR *dir = opendir(t.dir);
	assert_non_null(dir);
	size_t entries = 0;
	for (struct dirent *e; (e = readdir(dir));)
		entries += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(dir);
	assert_int_equal(entries, 3); /* data, report.json, totals.prom */
	const char *argv[] = { "/bin/sh", "-c", "command -v promtool >/dev/null "
			       "|| exit 127; exec promtool check metrics <\"$1\"",
			       "sh", t.prom, NULL };
	struct run r;
	assert_int_equal(run_cmd(&r, argv, -1), 0);
	int code = r.code;
	size_t said = r.outlen + r.errlen;
	if (code && code != 127)
		run_dump(&r, "promtool check metrics", true);
	run_free(&r);
	if (code == 127)
		test_skip("no promtool (Debian package prometheus)");
	assert_int_equal(code, 0);
	assert_int_equal(said, 0);
}

static int64_t om(const struct om_doc *d, const char *name, const char *policy,
		  const char *level)
{
	char series[160];
	int64_t v = 0;
	snprintf(series, sizeof(series), policy ? level ? "%s{policy=\"%s\","
		 "level=\"%s\"}" : "%s{policy=\"%s\"}" : "%s", name, policy, level);
	if (!om_value(d, series, &v))
		fail_msg("no %s in %s", series, t.prom);
	return v;
}

/* Every value is the JSON report's of the same snapshot; nothing else is
 * there (no per-process series). */
static void test_openmetrics_values(void **state)
{
	static const char *const lv[] = { "pte", "pmd", "pud" };
	const struct jr_value *d = t.doc, *tp = jr_path(d, "totals.policies");
	struct om_doc m;
	char err[256];
	if (om_parse_file(t.prom, &m, err, sizeof(err)))
		fail_msg("%s: %s", t.prom, err);
	for (size_t i = 0; i < m.nfam; i++) {
		assert_string_equal(m.fam[i].type, "gauge");
		assert_non_null(m.fam[i].help);
	}
	assert_int_equal(om(&m, "ptshare_processes", NULL, NULL), NPROCS);
	assert_int_equal(om(&m, "ptshare_processes", NULL, NULL),
			 jr_path_i64(d, "totals.processes", -1));
	assert_int_equal(om(&m, "ptshare_exact_processes", NULL, NULL),
			 jr_path_i64(d, "totals.exact_processes", -1));
	assert_int_equal(om(&m, "ptshare_unmodelled_processes", NULL, NULL),
			 jr_len(jr_get(d, "not_modelled")));
	assert_int_equal(om(&m, "ptshare_kernel_page_table_bytes", NULL, NULL),
			 jr_path_i64(d, "totals.kernel_vmpte_kb", -1) * 1024);
	const struct jr_value *pols = jr_get(d, "policies"), *help = jr_get(d, "help");
	for (size_t k = 0; k < jr_len(pols); k++) {
		const char *l = jr_path_str(jr_at(pols, k), "label");
		const struct jr_value *tot = jr_get(tp, l);
		assert_int_equal(om(&m, "ptshare_page_table_bytes", l, NULL),
				 jr_path_i64(tot, "bytes", -1));
		for (size_t i = 0; i < 3; i++)
			assert_int_equal(om(&m, "ptshare_page_tables", l, lv[i]),
					 jr_path_i64(jr_get(tot, "distinct"), lv[i], -1));
	}
	for (size_t i = 0; i < jr_len(help); i++) {
		const char *l = jr_path_str(jr_at(help, i), "policy");
		int64_t saved = om(&m, "ptshare_saved_bytes", l, NULL);
		assert_int_equal(saved, jr_path_i64(jr_at(help, i), "saved_bytes", -1));
		assert_int_equal(saved, jr_path_i64(jr_get(tp, l), "saved_bytes", -1));
		assert_int_equal(om(&m, "ptshare_faults_avoided", l, NULL),
				 jr_path_i64(jr_at(help, i), "faults_avoided", -1));
	}
	assert_int_equal(om(&m, "ptshare_saved_bytes", "mccracken-2005", NULL),
			 WORKERS * SHARED_PTE * PAGE);
	assert_int_equal(m.n, 4 + 4 * jr_len(pols) + 2 * jr_len(help));
	om_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header),
		cmocka_unit_test(test_processes_exact),
		cmocka_unit_test(test_sharing_per_process),
		cmocka_unit_test(test_totals),
		cmocka_unit_test(test_help),
		cmocka_unit_test(test_findings),
		cmocka_unit_test(test_mappings),
		cmocka_unit_test(test_openmetrics_file),
		cmocka_unit_test(test_openmetrics_values),
	};
	return test_group_status(cmocka_run_group_tests_name("snapshot_workload",
							     tests, setup,
							     teardown));
}
