/* SPDX-License-Identifier: MIT */
/*
 * A harness without libFuzzer: runs it once on each file named, and on each
 * file of each directory named (in name order, dot files skipped), as
 * libFuzzer replays a corpus.  With it the seeds and the regression inputs
 * are ordinary tests under the gcc build's sanitizers.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static size_t inputs;

/* The file's bytes in a buffer of exactly their size, so that reads past
 * the input are caught; NULL when it cannot be read. */
static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL, *exact = NULL;
	size_t cap = 0;
	bool ok = true;
	*len = 0;
	if (!f)
		return NULL;
	for (;;) {
		if (*len == cap) {
			uint8_t *p = realloc(buf, cap = 2 * cap + 4096);
			if (!(ok = p))
				break;
			buf = p;
		}
		size_t n = fread(buf + *len, 1, cap - *len, f);
		if (!n)
			break;
		*len += n;
	}
	if (ok && !ferror(f) && (exact = malloc(*len ? *len : 1)))
		memcpy(exact, buf, *len);
	fclose(f);
	free(buf);
	return exact;
}

static int run_file(const char *path)
{
	size_t len;
	uint8_t *buf = slurp(path, &len);
	if (!buf) {
		perror(path);
		return -1;
	}
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	inputs++;
	return 0;
}

static int skip_dots(const struct dirent *e)
{
	return e->d_name[0] != '.';
}

static int run_dir(const char *dir)
{
	struct dirent **names;
	int n = scandir(dir, &names, skip_dots, alphasort);
	if (n < 0) {
		perror(dir);
		return -1;
	}
	int r = 0;
	for (int i = 0; i < n; i++) {
		char *path;
		if (asprintf(&path, "%s/%s", dir, names[i]->d_name) < 0) {
			r = -1;
		} else {
			r |= run_file(path);
			free(path);
		}
		free(names[i]);
	}
	free(names);
	return r;
}

int main(int argc, char **argv)
{
	int r = 0;
	fuzz_check_schema = true;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st)) {
			perror(argv[i]);
			r = -1;
		} else if (S_ISDIR(st.st_mode) ? run_dir(argv[i]) : run_file(argv[i])) {
			r = -1;
		}
	}
	printf("%s: %zu inputs\n", argv[0], inputs);
	/* No input at all is a mistake of the caller, not a pass. */
	return r || !inputs;
}
