/* SPDX-License-Identifier: MIT */
/*
 * ptshare replay against a real recording: the demo workload run under
 * `ptshare run --record`, then replayed.  With the same policies the JSON
 * report must be the run's, byte for byte; a truncated or corrupt trace
 * gives an error naming the offset, exit status 1, and the report of what
 * was readable; other policies answer what-if questions from the same
 * trace.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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

/* Runs argv with stdout and stderr to files; returns the exit status. */
static int run(char *const argv[], const char *out, const char *err)
{
	pid_t pid = fork();
	if (!pid) {
		if (!freopen(out, "w", stdout) || !freopen(err, "w", stderr))
			_exit(127);
		execv(argv[0], argv);
		_exit(127);
	}
	int status;
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
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
	/* The text on stdout is the replay's: it says which command wrote it. */
	size_t on;
	char *o = slurp(out, &on);
	CHECK(o && !strncmp(o, "ptshare replay: 4 processes modelled", 36),
	      "the text begins with ptshare replay: %.40s", o ? o : "(none)");
	free(o);

	/* Cut in the middle of a frame: an error with the offset, exit 1,
	 * and a report of what came before. */
	size_t tn;
	char *t = slurp(trace, &tn);
	char *cut = path("cut.trace");
	spit(cut, t, tn / 2);
	char *cut_argv[] = { PTSHARE_BIN, "replay", cut, "--json", again, NULL };
	CHECK(run(cut_argv, out, err) == 1, "a truncated trace exits 1");
	size_t en, jn;
	char *e = slurp(err, &en), *j = slurp(again, &jn);
	CHECK(e && strstr(e, "at offset "), "the error names the offset: %s", e);
	CHECK(j && strstr(j, "\"schema\": \"ptshare.report\""),
	      "the report of what was readable is written");

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
