/* SPDX-License-Identifier: MIT */
/*
 * ptshare aslr end to end (docs/aslr.md).  Unrelated processes (each a
 * fresh exec) map one 64 MiB file the workload writes, so that its page
 * cache is in small pages and every mapping needs PTE tables: randomised,
 * each maps it at an address of its own and the exact 2005 policy shares
 * none of their tables, while aslr-tolerant shares them all; without
 * randomisation they all map it at one address and the exact policy
 * shares them too.  Both formats, the layouts each run really got, exit
 * statuses and usage errors.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <unistd.h>

#include <cmocka.h>

#include "run_util.h"

#define MCC "mccracken-2005"
#define TOLERANT "aslr-tolerant"
#define READERS 3
#define FILE_MIB 64
#define PTE_SPAN_MIB 2
/* PTE tables of the file's mappings: the file is 2 MiB aligned in each. */
#define FILE_TABLES (READERS * FILE_MIB / PTE_SPAN_MIB)

/* Each test's TMPDIR, where ptshare makes its directories. */
static char tmpdir[64];

/* The tmpfs file of test_shmem_slots, which readers removes when it
 * ends normally. */
static const char *shm_path(void)
{
	static char path[64];
	snprintf(path, sizeof(path), "/dev/shm/ptshare-test-aslr-%d", (int)getpid());
	return path;
}

static int setup(void **state)
{
	tmp_make(tmpdir, sizeof(tmpdir));
	setenv("TMPDIR", tmpdir, 1);
	return 0;
}

/* Nothing may be left in TMPDIR (sockets, traces); nothing is left
 * anywhere, even after a failure. */
static int teardown(void **state)
{
	cmd_kill_leftovers();
	unlink(shm_path());
	size_t left = dir_entries(tmpdir);
	cleanup_leftovers();
	if (left)
		print_error("%zu entries left behind in TMPDIR\n", left);
	return left ? -1 : 0;
}

/* ptshare aslr OPTS -- readers --file FILE, which must succeed, with the
 * command's output in c. */
static void aslr_readers(struct cmd *c, const char *file, const char *const opts[])
{
	const char *argv[32] = { PTSHARE_PATH, "aslr", "--interval", "0" };
	size_t n = 4;
	char readers[16], mib[16];
	snprintf(readers, sizeof(readers), "%d", READERS);
	snprintf(mib, sizeof(mib), "%d", FILE_MIB);
	for (size_t i = 0; opts[i]; i++)
		argv[n++] = opts[i];
	const char *const tail[] = { "--", READERS_PATH, "--readers", readers,
				     "--mib", mib, "--file", file, NULL };
	for (size_t i = 0; tail[i]; i++)
		argv[n++] = tail[i];
	int status = cmd_run(c, argv, NULL);
	assert_no_sanitizer_report(c);
	if (status)
		fail_msg("ptshare aslr: status %d; stderr:\n%s", status, c->text[1]);
	assert_int_equal(dir_entries(tmpdir), 0);
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

static uint64_t shared_tables(const struct jr_value *m, const char *run,
			      const char *policy)
{
	const struct jr_value *p = jr_get(jr_get(jr_get(m, run), "policies"), policy);
	assert_int_equal(jr_path_u64(p, "pte_tables", 0), FILE_TABLES);
	return jr_path_u64(p, "shared_tables", UINT64_MAX);
}

static const char *why(const struct jr_value *m, const char *run,
		       const char *policy)
{
	return jr_str(jr_get(jr_get(jr_get(jr_get(m, run), "policies"), policy),
			     "why"));
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

/* Where the readers of one run mapped the file, as they print it (each
 * run's readers print READERS lines; run 0 first): how many distinct
 * addresses, and how many distinct slots in a 2 MiB table span (the file
 * is mapped from offset 0). */
static void reader_layout(const char *out, size_t run, size_t *addresses,
			  size_t *slots)
{
	unsigned long addr[READERS];
	size_t n = 0, lines = 0;
	for (const char *p = out; (p = strstr(p, " at 0x")); p++, lines++)
		if (lines / READERS == run)
			addr[n++] = strtoul(p + 4, NULL, 16);
	assert_int_equal(lines, 2 * READERS);
	*addresses = distinct(addr, n, ~0ul);
	*slots = distinct(addr, n, (2ul << 20) - 1);
}

static void test_json(void **state)
{
	char dir[64];
	struct cmd c;
	tmp_make(dir, sizeof(dir));
	const char *json = tmp_path(dir, "aslr.json");
	aslr_readers(&c, tmp_path(dir, "data"), (const char *[]){ "--json", json, NULL });
	/* Each run's readers say where they mapped the file: the layouts
	 * really were randomised, then not; the file always 2 MiB aligned. */
	size_t addresses, slots;
	reader_layout(c.text[0], 0, &addresses, &slots);
	assert_int_equal(addresses, READERS);
	assert_int_equal(slots, 1);
	reader_layout(c.text[0], 1, &addresses, &slots);
	assert_int_equal(addresses, 1);

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
	assert_string_equal(jr_path_str(m, "prot"), "r--");
	assert_int_equal(jr_path_u64(m, "size", 0), (uint64_t)FILE_MIB << 20);
	assert_int_equal(jr_path_u64(m, "randomised.processes", 0), READERS);
	assert_int_equal(jr_path_u64(m, "randomised.addresses", 0), READERS);
	assert_int_equal(jr_path_u64(m, "randomised.slots", 0), 1);
	assert_int_equal(jr_path_u64(m, "not_randomised.processes", 0), READERS);
	assert_int_equal(jr_path_u64(m, "not_randomised.addresses", 0), 1);
	/* Randomised: the exact policy shares nothing between them, and says
	 * why; matching by table slot shares every table. */
	assert_int_equal(shared_tables(m, "randomised", MCC), 0);
	assert_string_equal(why(m, "randomised", MCC),
			    "different address in other processes");
	assert_int_equal(shared_tables(m, "randomised", TOLERANT), FILE_TABLES);
	/* Not randomised: the exact policy shares them all too. */
	assert_int_equal(shared_tables(m, "not_randomised", MCC), FILE_TABLES);
	assert_string_equal(why(m, "not_randomised", MCC), "shared");
	assert_int_equal(shared_tables(m, "not_randomised", TOLERANT), FILE_TABLES);

	/* The totals agree: every reader but one saves its 32 tables. */
	const int64_t saved = (READERS - 1) * (FILE_TABLES / READERS) * 4096;
	const struct jr_value *pol = jr_get(doc, "policies");
	assert_int_equal(jr_path_i64(jr_get(pol, MCC), "randomised.saved_bytes", -1), 0);
	assert_true(jr_path_i64(jr_get(pol, MCC), "not_randomised.saved_bytes", 0) >= saved);
	assert_true(jr_path_i64(jr_get(pol, TOLERANT), "randomised.saved_bytes", 0) >= saved);
	assert_int_equal(jr_path_u64(jr_get(pol, MCC), "randomised.shared", 1), 0);
	/* The comparison agrees with the reports it came from. */
	assert_int_equal(jr_path_u64(jr_get(pol, MCC), "not_randomised.tables", 0),
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

static void test_text(void **state)
{
	char dir[64];
	struct cmd c;
	tmp_make(dir, sizeof(dir));
	aslr_readers(&c, tmp_path(dir, "data"),
		     (const char *[]){ "--policy", MCC "," TOLERANT, NULL });
	const char *t = c.text[1];
	char line[256];
	assert_non_null(strstr(t, "kernel.randomize_va_space = "));
	assert_non_null(strstr(t, "mappings whose sharing changed (1 of "));
	snprintf(line, sizeof(line), "file %s, 64.0 MiB at offset 0, r--s, in readers",
		 tmp_path(dir, "data"));
	assert_non_null(strstr(t, line));
	snprintf(line, sizeof(line), "%d processes at %d addresses", READERS, READERS);
	assert_non_null(strstr(t, line));
	assert_non_null(strstr(t, "all at one offset within a 2 MiB table span"));
	snprintf(line, sizeof(line), "%d processes at 1 address", READERS);
	assert_non_null(strstr(t, line));
	snprintf(line, sizeof(line), MCC "%*srandomised      %5d of %5d PTE tables "
		 "shared: different address in other processes", 9, "", 0, FILE_TABLES);
	if (!strstr(t, line))
		fail_msg("no '%s' in:\n%s", line, t);
	snprintf(line, sizeof(line), "not randomised  %5d of %5d PTE tables "
		 "shared: shared", FILE_TABLES, FILE_TABLES);
	assert_non_null(strstr(t, line));
	snprintf(line, sizeof(line), TOLERANT "%*sboth runs       %5d of %5d PTE "
		 "tables shared: shared", 10, "", FILE_TABLES, FILE_TABLES);
	if (!strstr(t, line))
		fail_msg("no '%s' in:\n%s", line, t);
	/* Only the policies asked for. */
	assert_null(strstr(t, "hugetlb-pmd"));
	cmd_free(&c);
	tmp_remove(dir, NULL);
}

/*
 * The same readers on a tmpfs file (shmem): such mappings are not placed
 * 2 MiB aligned, so randomised each reader's pages fall on other slots of
 * its tables and even aslr-tolerant cannot share, for the reason it says;
 * without randomisation the exact policy shares the whole spans.
 */
static void test_shmem_slots(void **state)
{
	char dir[64];
	const char *path = shm_path();
	struct cmd c;
	tmp_make(dir, sizeof(dir));
	aslr_readers(&c, path, (const char *[]){ "--json", tmp_path(dir, "aslr.json"),
						 NULL });
	assert_int_equal(access(path, F_OK), -1); /* readers removed it */
	struct jr_value *doc = report_read(tmp_path(dir, "aslr.json"));
	const struct jr_value *m = file_mapping(doc, path);
	assert_string_equal(jr_path_str(m, "kind"), "shmem");
	size_t addresses, printed_slots;
	reader_layout(c.text[0], 0, &addresses, &printed_slots);
	uint64_t slots = jr_path_u64(m, "randomised.slots", 0);
	assert_int_equal(slots, printed_slots);
	assert_int_equal(jr_path_u64(m, "not_randomised.slots", 0), 1);
	const struct jr_value *rand = jr_get(jr_get(m, "randomised"), "policies");
	const struct jr_value *fixed = jr_get(jr_get(m, "not_randomised"), "policies");
	uint64_t tables = jr_path_u64(jr_get(rand, TOLERANT), "pte_tables", 0);
	/* 64 MiB not 2 MiB aligned meets 33 tables, 31 of them whole. */
	assert_int_equal(tables, READERS * (FILE_MIB / PTE_SPAN_MIB + 1));
	assert_int_equal(jr_path_u64(jr_get(rand, MCC), "shared_tables", 1), 0);
	/* Two of three random slots out of 512 may coincide: those two share. */
	if (slots == READERS) {
		assert_int_equal(jr_path_u64(jr_get(rand, TOLERANT), "shared_tables", 1), 0);
		assert_string_equal(jr_path_str(jr_get(rand, TOLERANT), "why"),
				    "offset modulo the table span differs in other "
				    "processes");
	} else {
		assert_true(jr_path_u64(jr_get(rand, TOLERANT), "shared_tables", 0) > 0);
	}
	assert_int_equal(jr_path_u64(jr_get(fixed, MCC), "shared_tables", 0),
			 READERS * (FILE_MIB / PTE_SPAN_MIB - 1));
	assert_string_equal(jr_path_str(jr_get(fixed, MCC), "why"), "shared");
	jr_free(doc);
	cmd_free(&c);
	tmp_remove(dir, (const char *[]){ "aslr.json", NULL });
}

/* A workload without big mappings, its JSON on stdout, and its status:
 * a shell that tells the layout it got by its exit status, run by a
 * ptshare that itself runs without randomisation (as under `setarch -R`):
 * the first run is randomised all the same. */
static void test_layouts_and_status(void **state)
{
	static const char *const argv[] = {
		PTSHARE_PATH, "aslr", "--interval", "0", "--json", "-", "--",
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
	struct jr_error err;
	struct jr_value *doc = jr_parse(c.text[0], c.len[0], &err);
	if (!doc)
		fail_msg("stdout is not JSON (%s at %zu):\n%s", err.what,
			 err.offset, c.text[0]);
	assert_int_equal(jr_path_i64(doc, "runs.randomised.exit_status", -1), 0);
	assert_int_equal(jr_path_i64(doc, "runs.not_randomised.exit_status", -1), 5);
	assert_int_equal(jr_len(jr_get(doc, "changed_mappings")), 0);
	jr_free(doc);
	cmd_free(&c);
	assert_int_equal(dir_entries(tmpdir), 0);
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
	assert_int_equal(dir_entries(tmpdir), 0);
	cmd_free(&c);
}

static void test_usage(void **state)
{
	expect((const char *[]){ "aslr", NULL }, 2, "no command to run");
	expect((const char *[]){ "aslr", "--bogus", "--", "/bin/true", NULL }, 2,
	       "usage: ptshare aslr");
	expect((const char *[]){ "aslr", "--record", "t", "--", "/bin/true", NULL },
	       2, "--record is for ptshare run");
	expect((const char *[]){ "aslr", "--html", "h", "--", "/bin/true", NULL },
	       2, "--html is for ptshare run");
	expect((const char *[]){ "aslr", "--faults", "some", "--", "/bin/true",
				 NULL }, 2, "--faults is table, all or off");
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
		cmocka_unit_test_setup_teardown(test_json, setup, teardown),
		cmocka_unit_test_setup_teardown(test_text, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shmem_slots, setup, teardown),
		cmocka_unit_test_setup_teardown(test_layouts_and_status, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_usage, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
