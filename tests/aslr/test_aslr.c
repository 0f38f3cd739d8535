/* SPDX-License-Identifier: MIT */
/*
 * ptshare aslr end to end (docs/aslr.md).  Unrelated processes (each a
 * fresh exec of demo/readers) map one file the workload writes, so that
 * its page cache is in small pages and every mapping needs PTE tables:
 * randomised, each maps it at an address of its own and the exact 2005
 * policy shares none of their tables; without randomisation they all map
 * it at one address and the exact policy shares every whole span.
 * aslr-tolerant shares them randomised too when the file's pages fall on
 * the same table slots everywhere (ext4 aligns such mappings to 2 MiB), and
 * not when they do not (tmpfs: it does not).  The expectations come from
 * where the readers say they mapped the file.  Both formats, the layout
 * each run's processes really got, exit statuses and usage errors.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cmocka.h>

#include "run_util.h"

#define MCC "mccracken-2005"
#define TOLERANT "aslr-tolerant"
#define READERS 3
#define FILE_MIB 64  /* of the file on /tmp */
#define SHM_MIB 16   /* on /dev/shm, which a container may keep small */
#define SPAN (2ul << 20)
#define EXT4_SUPER_MAGIC 0xEF53

/* The tmpfs file of test_shmem_slots, which readers removes when it
 * ends normally. */
static const char *shm_path(void)
{
	static char path[64];
	snprintf(path, sizeof(path), "/dev/shm/ptshare-test-aslr-%d", (int)getpid());
	return path;
}

/* Nothing may be left in TMPDIR (sockets, traces); nothing is left
 * anywhere, even after a failure. */
static int teardown(void **state)
{
	unlink(shm_path());
	return run_tmpdir_teardown(state);
}

/* ptshare aslr OPTS -- readers --mib MIB --file FILE, which must succeed,
 * with the command's output in c. */
static void aslr_readers(struct cmd *c, const char *file, unsigned mib,
			 const char *const opts[])
{
	const char *argv[32] = { PTSHARE_PATH, "aslr", "--interval", "0" };
	size_t n = 4;
	char readers[16], size[16];
	snprintf(readers, sizeof(readers), "%d", READERS);
	snprintf(size, sizeof(size), "%u", mib);
	for (size_t i = 0; opts[i]; i++)
		argv[n++] = opts[i];
	const char *const tail[] = { "--", READERS_PATH, "--readers", readers,
				     "--mib", size, "--file", file, NULL };
	for (size_t i = 0; tail[i]; i++)
		argv[n++] = tail[i];
	int status = cmd_run(c, argv, NULL);
	assert_no_sanitizer_report(c);
	if (status)
		fail_msg("ptshare aslr: status %d; stderr:\n%s", status, c->text[1]);
	assert_int_equal(dir_entries(run_tmpdir), 0);
}

/* The changed mapping of the readers' file, or the test fails. */
static const struct jr_value *file_mapping(const struct jr_value *doc,
					   const char *path)
{
	const struct jr_value *maps = jr_get(doc, "changed_mappings");
	for (size_t i = 0; i < jr_len(maps); i++)
		if (!strcmp(jr_path_str(jr_at(maps, i), "name") ?: "", path))
			return jr_at(maps, i);
	fail_msg("no changed mapping of %s in %zu", path, jr_len(maps));
	return NULL;
}

/* How many of v[0, n) differ in the bits of mask. */
static size_t distinct(const unsigned long *v, size_t n, unsigned long mask)
{
	size_t d = 0;
	for (size_t i = 0; i < n; i++) {
		bool seen = false;
		for (size_t j = 0; j < i; j++)
			seen |= !((v[i] ^ v[j]) & mask);
		d += !seen;
	}
	return d;
}

/* Where the readers of one run mapped the file, and what follows. */
struct layout {
	size_t addresses; /* distinct */
	size_t slots;     /* distinct offsets within a 2 MiB span */
	uint64_t met;     /* PTE tables the mappings meet, summed */
	uint64_t whole;   /* of them, spans a mapping covers whole */
};

/* From what the readers print (each run's print READERS lines, run 0
 * first; the file is mapped from offset 0). */
static struct layout reader_layout(const char *out, size_t run, unsigned mib)
{
	unsigned long addr[READERS];
	struct layout l = { 0 };
	size_t n = 0, lines = 0;
	for (const char *p = out; (p = strstr(p, " at 0x")); p++, lines++)
		if (lines / READERS == run)
			addr[n++] = strtoul(p + 4, NULL, 16);
	assert_int_equal(lines, 2 * READERS);
	for (size_t i = 0; i < n; i++) {
		unsigned long end = addr[i] + ((unsigned long)mib << 20);
		l.met += ((end + SPAN - 1) / SPAN) - addr[i] / SPAN;
		l.whole += end / SPAN - (addr[i] + SPAN - 1) / SPAN;
	}
	l.addresses = distinct(addr, n, ~0ul);
	l.slots = distinct(addr, n, SPAN - 1);
	return l;
}

static const struct jr_value *policy_of(const struct jr_value *m,
					const char *run, const char *policy)
{
	return jr_get(jr_get(jr_get(m, run), "policies"), policy);
}

/*
 * The comparison of the readers' mapping m against the layouts they
 * printed: randomised they are at READERS addresses and the exact policy
 * shares nothing; not randomised at one, and every whole span is shared.
 * aslr-tolerant shares the whole spans randomised when the slots agree,
 * nothing when all differ (two of three slots may coincide by chance).
 */
static void check_readers(const struct jr_value *m, const struct layout l[2])
{
	static const char *const run[2] = { "randomised", "not_randomised" };
	assert_int_equal(l[0].addresses, READERS);
	assert_int_equal(l[1].addresses, 1);
	for (size_t i = 0; i < 2; i++) {
		const struct jr_value *side = jr_get(m, run[i]);
		assert_int_equal(jr_path_u64(side, "processes", 0), READERS);
		assert_int_equal(jr_path_u64(side, "addresses", 0), l[i].addresses);
		assert_int_equal(jr_path_u64(side, "slots", 0), l[i].slots);
		for (size_t k = 0; k < 2; k++)
			assert_int_equal(jr_path_u64(policy_of(m, run[i], k ? TOLERANT : MCC),
						     "pte_tables", 0), l[i].met);
	}
	const struct jr_value *mcc = policy_of(m, run[0], MCC);
	assert_int_equal(jr_path_u64(mcc, "shared_tables", 1), 0);
	assert_string_equal(jr_path_str(mcc, "why"),
			    "different address in other processes");
	for (size_t k = 0; k < 2; k++) {
		const struct jr_value *p = policy_of(m, run[1], k ? TOLERANT : MCC);
		assert_int_equal(jr_path_u64(p, "shared_tables", 0), l[1].whole);
		assert_string_equal(jr_path_str(p, "why"), "shared");
	}
	const struct jr_value *tol = policy_of(m, run[0], TOLERANT);
	if (l[0].slots == 1) {
		assert_int_equal(jr_path_u64(tol, "shared_tables", 0), l[0].whole);
		assert_string_equal(jr_path_str(tol, "why"), "shared");
	} else if (l[0].slots == READERS) {
		assert_int_equal(jr_path_u64(tol, "shared_tables", 1), 0);
		assert_string_equal(jr_path_str(tol, "why"),
				    "offset modulo the table span differs in "
				    "other processes");
	} else {
		assert_true(jr_path_u64(tol, "shared_tables", 0) > 0);
	}
}

static void test_json(void **state)
{
	char dir[64];
	struct cmd c;
	tmp_make(dir, sizeof(dir));
	const char *json = tmp_path(dir, "aslr.json");
	aslr_readers(&c, tmp_path(dir, "data"), FILE_MIB,
		     (const char *[]){ "--json", json, NULL });
	/* Each run's readers say where they mapped the file: the layouts
	 * really were randomised, then not. */
	const struct layout l[2] = { reader_layout(c.text[0], 0, FILE_MIB),
				     reader_layout(c.text[0], 1, FILE_MIB) };
	/* ext4 places them 2 MiB aligned (docs/kernel-facts.md): all whole
	 * spans, on one slot, whatever the address. */
	struct statfs fs;
	assert_int_equal(statfs(dir, &fs), 0);
	if (fs.f_type == EXT4_SUPER_MAGIC)
		for (size_t i = 0; i < 2; i++) {
			assert_int_equal(l[i].slots, 1);
			assert_int_equal(l[i].whole, READERS * FILE_MIB / 2);
			assert_int_equal(l[i].met, l[i].whole);
		}

	struct jr_value *doc = report_read(json);
	assert_string_equal(jr_path_str(doc, "schema"), "ptshare.aslr");
	assert_int_equal(jr_path_u64(doc, "version", 0), 1);
	for (size_t i = 0; i < 2; i++) {
		const char *run = i ? "runs.not_randomised" : "runs.randomised";
		const struct jr_value *r = jr_path(doc, run);
		assert_int_equal(jr_path_i64(r, "exit_status", -1), 0);
		assert_true(jr_bool(jr_get(r, "randomised")) == !i);
		/* Each run's whole report: the readers and their parent,
		 * the model equal to VmPTE at every last checkpoint. */
		assert_string_equal(jr_path_str(r, "report.schema"), "ptshare.report");
		assert_int_equal(jr_path_u64(r, "report.totals.processes", 0),
				 READERS + 1);
		assert_finals_exact(jr_get(r, "report"), READERS + 1);
	}

	const struct jr_value *m = file_mapping(doc, tmp_path(dir, "data"));
	assert_string_equal(jr_path_str(m, "kind"), "file");
	assert_string_equal(jr_path_str(m, "prot"), "r--");
	assert_int_equal(jr_path_u64(m, "size", 0), (uint64_t)FILE_MIB << 20);
	check_readers(m, l);

	/* The totals: the file is the only mapping that can share, so the
	 * exact policy saves nothing randomised, and without randomisation
	 * every reader but one saves its whole spans. */
	const struct jr_value *mcc = jr_get(jr_get(doc, "policies"), MCC);
	assert_int_equal(jr_path_u64(mcc, "randomised.shared", 1), 0);
	assert_int_equal(jr_path_i64(mcc, "randomised.saved_bytes", -1), 0);
	assert_int_equal(jr_path_u64(mcc, "not_randomised.shared", 0), l[1].whole);
	assert_int_equal(jr_path_i64(mcc, "not_randomised.saved_bytes", 0),
			 (int64_t)(READERS - 1) * (int64_t)(l[1].whole / READERS) * 4096);
	/* The comparison agrees with the reports it came from. */
	assert_int_equal(jr_path_u64(mcc, "not_randomised.tables", 0),
			 jr_path_u64(doc, "runs.not_randomised.report.totals.policies."
				     MCC ".distinct.pte", 1) +
			 jr_path_u64(doc, "runs.not_randomised.report.totals.policies."
				     MCC ".distinct.pmd", 1) +
			 jr_path_u64(doc, "runs.not_randomised.report.totals.policies."
				     MCC ".distinct.pud", 1));
	jr_free(doc);
	cmd_free(&c);
	tmp_remove(dir, (const char *[]){ "aslr.json", NULL });
}

/* The same comparison as text, for the policies asked for only. */
static void test_text(void **state)
{
	char dir[64], line[256];
	struct cmd c;
	tmp_make(dir, sizeof(dir));
	aslr_readers(&c, tmp_path(dir, "data"), FILE_MIB,
		     (const char *[]){ "--policy", MCC "," TOLERANT, NULL });
	const struct layout l[2] = { reader_layout(c.text[0], 0, FILE_MIB),
				     reader_layout(c.text[0], 1, FILE_MIB) };
	const char *t = c.text[1];
#define EXPECT(...)                                                            \
	do {                                                                   \
		snprintf(line, sizeof(line), __VA_ARGS__);                     \
		if (!strstr(t, line))                                          \
			fail_msg("no '%s' in:\n%s", line, t);                  \
	} while (0)
	EXPECT("kernel.randomize_va_space = ");
	EXPECT("mappings whose sharing changed (1 of ");
	EXPECT("file %s, 64.0 MiB at offset 0, r--s, in readers",
	       tmp_path(dir, "data"));
	EXPECT("%d processes at %d addresses", READERS, READERS);
	if (l[0].slots == 1)
		EXPECT("all at one offset within a 2 MiB table span");
	else
		EXPECT("at %zu offsets within a 2 MiB table span", l[0].slots);
	EXPECT("%d processes at 1 address", READERS);
	EXPECT(MCC "         randomised      %5d of %5" PRIu64 " PTE tables "
	       "shared: different address in other processes", 0, l[0].met);
	EXPECT("not randomised  %5" PRIu64 " of %5" PRIu64 " PTE tables "
	       "shared: shared", l[1].whole, l[1].met);
	if (l[0].slots == 1 && l[0].met == l[1].met)
		EXPECT(TOLERANT "          both runs       %5" PRIu64 " of %5"
		       PRIu64 " PTE tables shared: shared", l[1].whole, l[1].met);
	else
		EXPECT(TOLERANT "          randomised      ");
#undef EXPECT
	assert_null(strstr(t, "hugetlb-pmd"));
	cmd_free(&c);
	tmp_remove(dir, NULL);
}

/* The same readers on a tmpfs file (shmem), which is not placed 2 MiB
 * aligned: randomised, the readers' pages fall on other slots of their
 * tables, and aslr-tolerant cannot match them either. */
static void test_shmem_slots(void **state)
{
	char dir[64];
	const char *path = shm_path();
	struct cmd c;
	tmp_make(dir, sizeof(dir));
	aslr_readers(&c, path, SHM_MIB,
		     (const char *[]){ "--json", tmp_path(dir, "aslr.json"), NULL });
	assert_int_equal(access(path, F_OK), -1); /* readers removed it */
	const struct layout l[2] = { reader_layout(c.text[0], 0, SHM_MIB),
				     reader_layout(c.text[0], 1, SHM_MIB) };
	struct jr_value *doc = report_read(tmp_path(dir, "aslr.json"));
	const struct jr_value *m = file_mapping(doc, path);
	assert_string_equal(jr_path_str(m, "kind"), "shmem");
	check_readers(m, l);
	jr_free(doc);
	cmd_free(&c);
	tmp_remove(dir, (const char *[]){ "aslr.json", NULL });
}

/* A workload without big mappings, its JSON, and its status:
 * a shell that tells the layout it got by its exit status, run by a
 * ptshare that itself runs without randomisation (as under `setarch -R`):
 * the first run is randomised all the same. */
static void test_layouts_and_status(void **state)
{
	char dir[64];
	tmp_make(dir, sizeof(dir));
	char *json = strdup(tmp_path(dir, "aslr.json"));
	const char *const argv[] = {
		PTSHARE_PATH, "aslr", "--interval", "0", "--json", json, "--",
		"/bin/sh", "-c", "read p < /proc/self/personality; "
		"[ $p = 00040000 ] && exit 5; exit 0", NULL,
	};
	struct cmd c;
	int before = personality(0xffffffff);
	assert_true(before >= 0);
	assert_true(personality((unsigned long)before | ADDR_NO_RANDOMIZE) >= 0);
	int status = cmd_run(&c, argv, NULL);
	personality((unsigned long)before);
	assert_no_sanitizer_report(&c);
	if (status != 5)
		fail_msg("status %d, not 5; stderr:\n%s", status, c.text[1]);
	assert_non_null(strstr(c.text[1], "ptshare aslr: now without address "
				"randomisation"));
	assert_non_null(strstr(c.text[1], "the runs ended differently: exit "
				"status 0 randomised, 5 not randomised"));
	assert_non_null(strstr(c.text[1], "mappings whose sharing changed (0 of "));
	assert_string_equal(c.text[0], "");
	struct jr_value *doc = report_read(json);
	assert_int_equal(jr_path_i64(doc, "runs.randomised.exit_status", -1), 0);
	assert_int_equal(jr_path_i64(doc, "runs.not_randomised.exit_status", -1), 5);
	assert_int_equal(jr_len(jr_get(doc, "changed_mappings")), 0);
	jr_free(doc);
	cmd_free(&c);
	free(json);
	tmp_remove(dir, (const char *[]){ "aslr.json", NULL });
	assert_int_equal(dir_entries(run_tmpdir), 0);
}

/* ptshare with args: its status is want and its stderr holds says. */
static void expect(const char *const args[], int want, const char *says)
{
	const char *argv[16] = { PTSHARE_PATH };
	struct cmd c;
	for (size_t i = 0; args[i]; i++)
		argv[i + 1] = args[i];
	int status = cmd_run(&c, argv, NULL);
	if (status != want || !strstr(c.text[1], says))
		fail_msg("%s: status %d, not %d, or no '%s' in stderr:\n%s",
			 args[1], status, want, says, c.text[1]);
	assert_no_sanitizer_report(&c);
	assert_string_equal(c.text[0], "");
	assert_int_equal(dir_entries(run_tmpdir), 0);
	cmd_free(&c);
}

static void test_usage(void **state)
{
	expect((const char *[]){ "aslr", NULL }, 2, "no command to run");
	expect((const char *[]){ "aslr", "--bogus", "--", "/bin/true", NULL }, 2,
	       "ptshare aslr: unknown option '--bogus'\n"
	       "Try 'ptshare aslr --help' for more information.\n");
	expect((const char *[]){ "aslr", "--record", "t", "--", "/bin/true", NULL },
	       2, "--record is for ptshare run");
	expect((const char *[]){ "aslr", "--html", "h", "--", "/bin/true", NULL },
	       2, "--html is for ptshare run");
	expect((const char *[]){ "aslr", "--no-record", "--", "/bin/true", NULL },
	       2, "--no-record is for ptshare run: aslr keeps no trace");
	/* CMD's stdout is not the report's. */
	expect((const char *[]){ "aslr", "--json", "-", "--", "/bin/echo",
				 "ran", NULL }, 2,
	       "ptshare aslr: '-' is CMD's stdout too");
	expect((const char *[]){ "aslr", "--faults", "some", "--", "/bin/true",
				 NULL }, 2, "--faults is off, table or all");
	expect((const char *[]){ "aslr", "--top", "many", "--", "/bin/true", NULL },
	       2, "bad number 'many'");
	expect((const char *[]){ "aslr", "--policy", "no-such-policy", "--",
				 "/bin/true", NULL }, 2, "no-such-policy");
	expect((const char *[]){ "aslr", "--", "no-such-command-ptshare", NULL },
	       127, "command not found");
	/* An output that cannot be written fails before CMD runs. */
	expect((const char *[]){ "aslr", "-o", "/nonexistent/ptshare/text", "--",
				 "/bin/echo", "ran", NULL }, 1,
	       "cannot write /nonexistent/ptshare/text");

	struct cmd c;
	const char *help[] = { PTSHARE_PATH, "aslr", "--help", NULL };
	assert_int_equal(cmd_run(&c, help, NULL), 0);
	assert_non_null(strstr(c.text[0], "usage: ptshare aslr"));
	cmd_free(&c);
	const char *list[] = { PTSHARE_PATH, "--help", NULL };
	assert_int_equal(cmd_run(&c, list, NULL), 0);
	assert_non_null(strstr(c.text[0], "  aslr "));
	cmd_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_json, run_tmpdir_setup, teardown),
		cmocka_unit_test_setup_teardown(test_text, run_tmpdir_setup, teardown),
		cmocka_unit_test_setup_teardown(test_shmem_slots, run_tmpdir_setup, teardown),
		cmocka_unit_test_setup_teardown(test_layouts_and_status, run_tmpdir_setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_usage, run_tmpdir_setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
