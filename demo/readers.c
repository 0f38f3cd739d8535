/* SPDX-License-Identifier: MIT */
/*
 * readers: the workload of the ASLR comparison (docs/aslr.md).  Unrelated
 * processes read one big file through their own mappings, as the workers of
 * a server started one by one (not forked from a parent that mapped it
 * first) map the same data files or the same large library.
 *
 * The parent writes the file with ordinary writes, so that its page cache
 * is in small pages and every mapping of it needs PTE tables (a file read
 * in by readahead can be in 2 MiB folios mapped with no PTE table at all:
 * docs/kernel-facts.md).  It then starts the readers, each a fresh exec of
 * this program, so each gets an address layout of its own: with address
 * randomisation each maps the file somewhere else, without it all map it
 * at the same address.  Each maps the whole file read-only, reads every
 * page, prints where it mapped it and waits; once all have, the parent
 * holds for --hold seconds, lets them exit, and removes the file.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define PAGE 4096UL
#define MIB (1UL << 20)
#define READERS_MAX 64

static unsigned long arg(int argc, char **argv, const char *name,
			 unsigned long def)
{
	for (int i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], name))
			return strtoul(argv[i + 1], NULL, 0);
	return def;
}

static const char *arg_str(int argc, char **argv, const char *name)
{
	for (int i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], name))
			return argv[i + 1];
	return NULL;
}

/* A reader: maps path, reads every page, says where (on stdout) and that
 * it is done (a byte on ready_fd), then waits for go_fd's end. */
static int reader(const char *path, int ready_fd, int go_fd)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) || st.st_size <= 0) {
		fprintf(stderr, "readers: %s: %s\n", path,
			fd < 0 ? strerror(errno) : "empty");
		return 1;
	}
	volatile const char *map = mmap(NULL, (size_t)st.st_size, PROT_READ,
					MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		perror("readers: mmap");
		return 1;
	}
	unsigned long sum = 0;
	for (off_t off = 0; off < st.st_size; off += (off_t)PAGE)
		sum += (unsigned char)map[off];
	printf("reader %d: %lld MiB at %p (checksum %lu)\n", (int)getpid(),
	       (long long)(st.st_size / (off_t)MIB), (const void *)map, sum);
	fflush(stdout);
	char c;
	if (write(ready_fd, "r", 1) != 1)
		return 1;
	while (read(go_fd, &c, 1) < 0 && errno == EINTR)
		;
	return 0;
}

/* len bytes written to a new file at path (through a temporary name, so a
 * reader never sees it half written). */
static int write_file(const char *path, size_t len)
{
	char tmp[4096];
	static char chunk[MIB];
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= sizeof(tmp))
		return -1;
	int fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -1;
	for (size_t off = 0; off < len; off += sizeof(chunk)) {
		for (size_t i = 0; i < sizeof(chunk); i += PAGE)
			chunk[i] = (char)((off + i) / PAGE);
		size_t n = len - off < sizeof(chunk) ? len - off : sizeof(chunk);
		if (write(fd, chunk, n) != (ssize_t)n) {
			close(fd);
			unlink(tmp);
			return -1;
		}
	}
	if (close(fd) || rename(tmp, path)) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* A reader, exec'd afresh: its own address layout. */
static pid_t start_reader(const char *path, int ready_fd, int go_fd)
{
	char rfd[16], gfd[16];
	snprintf(rfd, sizeof(rfd), "%d", ready_fd);
	snprintf(gfd, sizeof(gfd), "%d", go_fd);
	pid_t pid = fork();
	if (pid)
		return pid;
	fcntl(ready_fd, F_SETFD, 0);
	fcntl(go_fd, F_SETFD, 0);
	execl("/proc/self/exe", "readers", "--reader", path, rfd, gfd, (char *)NULL);
	perror("readers: exec");
	_exit(127);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--help")) {
		puts("usage: readers [--mib N] [--readers N] [--hold S] [--file PATH]\n"
		     "Writes a file of N MiB (default 64) at PATH (default\n"
		     "$TMPDIR/ptshare-readers.data), starts N readers (default 4, at\n"
		     "most 64) that each map and read all of it, holds S seconds\n"
		     "(default 0) once they all have, and removes the file.");
		return 0;
	}
	if (argc == 5 && !strcmp(argv[1], "--reader"))
		return reader(argv[2], atoi(argv[3]), atoi(argv[4]));
	size_t len = arg(argc, argv, "--mib", 64) * MIB;
	unsigned long n = arg(argc, argv, "--readers", 4);
	unsigned long hold = arg(argc, argv, "--hold", 0);
	const char *tmpdir = getenv("TMPDIR");
	char path[4096];
	if (arg_str(argc, argv, "--file"))
		snprintf(path, sizeof(path), "%s", arg_str(argc, argv, "--file"));
	else
		snprintf(path, sizeof(path), "%s/ptshare-readers.data",
			 tmpdir && *tmpdir ? tmpdir : "/tmp");
	if (!len || !n || n > READERS_MAX) {
		fputs("readers: --mib and --readers must be at least 1, and "
		      "--readers at most 64\n", stderr);
		return 2;
	}
	int ready[2], go[2];
	if (pipe2(ready, O_CLOEXEC) || pipe2(go, O_CLOEXEC) ||
	    write_file(path, len)) {
		fprintf(stderr, "readers: %s: %s\n", path, strerror(errno));
		return 1;
	}
	pid_t pids[READERS_MAX];
	unsigned long started = 0, done = 0;
	while (started < n &&
	       (pids[started] = start_reader(path, ready[1], go[0])) > 0)
		started++;
	if (started < n)
		perror("readers: fork");
	close(ready[1]);
	close(go[0]);
	for (char c; done < started && read(ready[0], &c, 1) == 1;)
		done++;
	if (done == n)
		sleep((unsigned)hold);
	close(go[1]);
	int status = done == n ? 0 : 1;
	for (unsigned long i = 0; i < started; i++) {
		int ws;
		while (waitpid(pids[i], &ws, 0) < 0 && errno == EINTR)
			;
		status |= !WIFEXITED(ws) || WEXITSTATUS(ws);
	}
	unlink(path);
	return status;
}
