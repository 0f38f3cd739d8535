/* SPDX-License-Identifier: MIT */
/*
 * ptshare replay against a real recording: the demo workload run under
 * `ptshare run --record`, then replayed.  With the same policies the JSON
 * report must be the run's, byte for byte; a truncated or corrupt trace
 * gives an error naming the offset, exit status 1, and the report of what
 * was readable; other policies answer what-if questions from the same
 * trace.  A crafted trace gets no more memory than its size allows: one
 * naming 20,000 processes that map nothing replays in little, one whose
 * forks copy a process of many tables is refused with a clear error.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ck_reading.h"
#include "schema_check.h"
#include "ptshare/mm.h"
#include "ptshare/wire.h"

#define CRAFTED_MAPPINGS 63 /* one checkpoint record's worth */

static char dir[] = "/tmp/ptshare-replay-XXXXXX";
static int failures;

#define CHECK(cond, ...)                                                       \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);   \
			fprintf(stderr, __VA_ARGS__);                          \
			fputc('\n', stderr);                                   \
			failures++;                                            \
		}                                                              \
	} while (0)

/* Runs argv with stdout and stderr to files; returns the exit status,
 * and its peak RSS in *maxrss_kb unless NULL. */
static int run_measured(char *const argv[], const char *out, const char *err,
			long *maxrss_kb)
{
	fflush(stdout);
	pid_t pid = fork();
	if (!pid) {
		if (!freopen(out, "w", stdout) || !freopen(err, "w", stderr))
			_exit(127);
		execv(argv[0], argv);
		_exit(127);
	}
	int status;
	struct rusage ru;
	if (pid < 0 || wait4(pid, &status, 0, &ru) != pid)
		return -1;
	if (maxrss_kb)
		*maxrss_kb = ru.ru_maxrss;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int run(char *const argv[], const char *out, const char *err)
{
	return run_measured(argv, out, err, NULL);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	*len = 0;
	if (f && !fseek(f, 0, SEEK_END)) {
		long n = ftell(f);
		rewind(f);
		buf = malloc((size_t)n + 1);
		if (buf && fread(buf, 1, (size_t)n, f) == (size_t)n) {
			buf[n] = '\0';
			*len = (size_t)n;
		}
	}
	if (f)
		fclose(f);
	return buf;
}

static void spit(const char *path, const char *buf, size_t len)
{
	FILE *f = fopen(path, "wb");
	if (f) {
		fwrite(buf, 1, len, f);
		fclose(f);
	}
}

static char *path(const char *name)
{
	char *p;
	return asprintf(&p, "%s/%s", dir, name) < 0 ? NULL : p;
}

/* A crafted trace, written record by record. */
struct crafted {
	FILE *f;
	uint32_t seq; /* of connection 1's records */
};

static void craft_open(struct crafted *c, const char *path)
{
	static const char magic[16] = "PTSHARE-TRACE\n";
	uint32_t v[2] = { PTS_WIRE_VERSION, 0 };
	c->f = fopen(path, "wb");
	c->seq = 0;
	if (c->f) {
		fwrite(magic, sizeof(magic), 1, c->f);
		fwrite(v, sizeof(v), 1, c->f);
	}
}

/* A record about pid, in the frame of connection conn (0: a reading's). */
static void frame(struct crafted *c, int32_t pid, uint32_t conn,
		  const void *rec, size_t size)
{
	uint32_t f[2] = { (uint32_t)pid, conn };
	fwrite(f, sizeof(f), 1, c->f);
	fwrite(rec, size, 1, c->f);
}

/* A record of type and size; a shim's records are numbered. */
static void craft(struct crafted *c, int32_t pid, uint32_t conn, void *rec,
		  uint16_t type, size_t size)
{
	struct pts_hdr *h = rec;
	*h = (struct pts_hdr){ .type = type, .size = (uint16_t)size,
			       .seq = type <= PTS_LOST ? ++c->seq : 0 };
	frame(c, pid, conn, rec, size);
}

static void to_trace(void *c, int32_t pid, const void *rec, size_t len)
{
	frame(c, pid, 0, rec, len);
}

static void craft_hello(struct crafted *c, int32_t pid, uint32_t conn)
{
	struct pts_conn o = { .pid = pid };
	struct pts_hello h = { .version = PTS_WIRE_VERSION, .ppid = 1 };
	strcpy(h.exe, "crafted");
	c->seq = 0;
	craft(c, pid, conn, &o, PTS_CONN_OPEN, sizeof(o));
	craft(c, pid, conn, &h, PTS_HELLO, sizeof(h));
}

/* pid's /proc as a reading tells it: n private anonymous mappings of 2 MiB
 * a GiB apart, each with a page, so that each has a PMD table and a PTE
 * table of its own, which a fork copies. */
static void craft_reading(struct crafted *c, int32_t pid, uint32_t n)
{
	struct pts_ck_vma v[CRAFTED_MAPPINGS];
	struct pts_ck_run runs[CRAFTED_MAPPINGS];
	for (uint32_t i = 0; i < n; i++) {
		uint64_t at = (1ULL << 40) + ((uint64_t)i << 30);
		v[i] = (struct pts_ck_vma){
			.start = at, .end = at + (2u << 20), .kind = MM_OBJ_ANON,
			.prot = MM_PROT_READ | MM_PROT_WRITE,
		};
		runs[i] = (struct pts_ck_run){ at, at + 4096, PTS_RUN_ANON, 0 };
	}
	ck_reading(pid, v, n, runs, n, 4 * (2 * n + 2), to_trace, c);
}

/*
 * Memory by the trace's size.  20,000 processes that say HELLO and
 * nothing else (6.9 MB): each cost a 4 KiB root table in each world
 * before any table was needed (463 MB under AddressSanitizer); they
 * replay now, all of them, in well under 256 MB.  A process of 63
 * tables, then 2,000 forks of it (40 bytes each, 80 KB): each fork copies
 * the tables, a megabyte a fork; the replay stops with an error before
 * the bound (256 bytes per byte of trace, and 64 MiB), where it took
 * 2 GB and more.
 */
static void check_crafted(void)
{
	char *path_hello = path("hello.trace"), *path_fork = path("fork.trace"),
	     *out = path("out"), *err = path("err"), *json = path("crafted.json");
	struct crafted c;
	long kb = 0;
	craft_open(&c, path_hello);
	for (int32_t i = 0; i < 20000 && c.f; i++)
		craft_hello(&c, 100 + i, (uint32_t)i + 1);
	CHECK(c.f && !fclose(c.f), "writing %s", path_hello);
	char *hello_argv[] = { PTSHARE_BIN, "replay", path_hello, "--json", json, NULL };
	int status = run_measured(hello_argv, out, err, &kb);
	size_t n;
	char *j = slurp(json, &n);
	CHECK(status == 0 && j && strstr(j, "\"processes\": 20000"),
	      "20,000 processes replayed (exit %d)", status);
	CHECK(schema_valid_file(json), "the report of 20,000 processes is valid");
	CHECK(kb < 256 * 1024, "20,000 empty processes took %ld kB", kb);
	printf("replay: 20,000 processes that said HELLO: VmHWM %ld kB\n", kb);
	free(j);

	craft_open(&c, path_fork);
	if (c.f) {
		craft_hello(&c, 100, 1);
		craft_reading(&c, 100, CRAFTED_MAPPINGS);
		for (int32_t i = 0; i < 2000; i++) {
			struct pts_fork fk = { .child = 1000 + i };
			craft(&c, 100, 1, &fk, PTS_FORK, sizeof(fk));
		}
	}
	CHECK(c.f && !fclose(c.f), "writing %s", path_fork);
	char *fork_argv[] = { PTSHARE_BIN, "replay", path_fork, "--json", json, NULL };
	status = run_measured(fork_argv, out, err, &kb);
	char *e = slurp(err, &n);
	CHECK(status == 1 && e && strstr(e, "more memory than a trace of"),
	      "the forks refused (exit %d): %s", status, e ? e : "");
	CHECK(kb < 512 * 1024, "the forks took %ld kB", kb);
	CHECK(schema_valid_file(json), "the report of what came before is valid");
	printf("replay: 2,000 forks of 63 tables: VmHWM %ld kB: %s", kb, e ? e : "\n");
	free(e);
	unlink(path_hello), unlink(path_fork), unlink(json);
	free(path_hello), free(path_fork), free(out), free(err), free(json);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	char *trace = path("run.trace"), *live = path("live.json"),
	     *again = path("replay.json"), *out = path("out"), *err = path("err");
	/* --hold 1: every worker has touched the pool before the first ends
	 * (their first faults wait for the daemon), so the peak has all 4. */
	char *run_argv[] = { PTSHARE_BIN, "run", "--interval", "0", "--record",
			     trace, "--json", live, "--", DEMO_BIN, "--hold", "1",
			     "--pool-mib", "32", "--workers", "3", NULL };
	CHECK(run(run_argv, out, err) == 0, "ptshare run failed");

	char *replay_argv[] = { PTSHARE_BIN, "replay", trace, "--json", again, NULL };
	CHECK(run(replay_argv, out, err) == 0, "ptshare replay failed");
	size_t ln, rn;
	char *l = slurp(live, &ln), *r = slurp(again, &rn);
	CHECK(l && r && ln > 100 && ln == rn && !memcmp(l, r, ln),
	      "the replayed JSON differs from the run's");
	CHECK(l && strstr(l, "\"exact_processes\": 4"), "4 processes exact");
	CHECK(schema_valid_file(live), "the run's report is valid");
	/* The text on stdout is the replay's: it says which command wrote it. */
	size_t on;
	char *o = slurp(out, &on);
	CHECK(o && !strncmp(o, "ptshare replay: 4 processes modelled", 36),
	      "the text begins with ptshare replay: %.40s", o ? o : "(none)");
	free(o);

	/* Cut in the middle of a frame, its last (a cut half way falls
	 * between two frames now and then, a trace shorter but whole: 11
	 * of 3,571 cuts of five traces did): an error with the offset, exit
	 * 1, and a report of what came before. */
	size_t tn;
	char *t = slurp(trace, &tn);
	char *cut = path("cut.trace");
	spit(cut, t, tn > 3 ? tn - 3 : 0);
	char *cut_argv[] = { PTSHARE_BIN, "replay", cut, "--json", again, NULL };
	CHECK(run(cut_argv, out, err) == 1, "a truncated trace exits 1");
	size_t en, jn;
	char *e = slurp(err, &en), *j = slurp(again, &jn);
	CHECK(e && strstr(e, "at offset "), "the error names the offset: %s", e);
	CHECK(j && strstr(j, "\"schema\": \"ptshare.report\""),
	      "the report of what was readable is written");
	CHECK(schema_valid_file(again), "the report of what was readable is valid");

	/* A frame whose record claims an impossible size. */
	if (t && tn > 40) {
		memset(t + 24 + 8 + 2, 0xff, 2); /* first record's hdr.size */
		char *bad = path("bad.trace");
		spit(bad, t, tn);
		char *bad_argv[] = { PTSHARE_BIN, "replay", bad, NULL };
		CHECK(run(bad_argv, out, err) == 1, "a corrupt trace exits 1");
		free(e);
		e = slurp(err, &en);
		CHECK(e && strstr(e, "at offset 24"), "corrupt at offset 24: %s", e);
		unlink(bad);
		free(bad);
	}

	/* What-if: the same trace under other policies. */
	char *what_argv[] = { PTSHARE_BIN, "replay", trace, "--policy",
			      "mccracken-2005:pte+pmd+pud", "--json", "-", NULL };
	CHECK(run(what_argv, out, err) == 0, "replay with other policies");
	free(j);
	j = slurp(out, &jn);
	CHECK(j && strstr(j, "\"label\": \"mccracken-2005:pte+pmd+pud\""),
	      "the policy's label carries its levels");
	CHECK(j && schema_valid(j, jn, "--json -"), "the report on stdout is valid");

	check_crafted();

	char *usage_argv[] = { PTSHARE_BIN, "replay", NULL };
	CHECK(run(usage_argv, out, err) == 2, "no trace is a usage error");

	const char *files[] = { trace, live, again, out, err, cut };
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		unlink(files[i]);
	rmdir(dir);
	free(l), free(r), free(t), free(e), free(j);
	free(trace), free(live), free(again), free(out), free(err), free(cut);
	if (!failures)
		puts("replay: the run's report rebuilt exactly; errors name their offset");
	return failures != 0;
}
