/* SPDX-License-Identifier: MIT */
/*
 * prefork-pool: the bundled demo workload.  A pre-forking server in
 * miniature: the parent maps a shared buffer pool (MAP_SHARED|MAP_ANONYMOUS,
 * as PostgreSQL's shared_buffers), warms it, and forks workers that each
 * read the whole pool and keep some private memory of their own, then wait.
 *
 * It prints "ready <pid>" once every worker has touched the pool, and exits
 * (with its workers) after --hold seconds or on SIGTERM/SIGINT.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define PAGE 4096UL

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static unsigned long arg(int argc, char **argv, const char *name,
			 unsigned long def)
{
	for (int i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], name))
			return strtoul(argv[i + 1], NULL, 0);
	return def;
}

/* A worker reads every page of the pool and writes its own 8 MiB. */
static int worker(volatile const char *pool, size_t len, int ready_fd,
		  unsigned long hold)
{
	unsigned long sum = 0;
	for (size_t off = 0; off < len; off += PAGE)
		sum += pool[off];
	char *priv = mmap(NULL, 8 << 20, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (priv == MAP_FAILED)
		return 1;
	memset(priv, (int)(sum & 0x7f) | 1, 8 << 20);
	if (write(ready_fd, "w", 1) != 1)
		return 1;
	for (unsigned long s = 0; s < hold && !stop; s++)
		sleep(1);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--help")) {
		puts("usage: prefork-pool [--pool-mib N] [--workers N] [--hold S]");
		return 0;
	}
	size_t len = arg(argc, argv, "--pool-mib", 1024) << 20;
	unsigned long workers = arg(argc, argv, "--workers", 8);
	unsigned long hold = arg(argc, argv, "--hold", 60);
	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	char *pool = mmap(NULL, len, PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int ready[2];
	if (pool == MAP_FAILED || pipe(ready)) {
		perror("prefork-pool");
		return 1;
	}
	for (size_t off = 0; off < len; off += PAGE) /* the buffer pool warms */
		pool[off] = (char)(off / PAGE);
	pid_t pids[256];
	if (workers > 256)
		workers = 256;
	for (unsigned long i = 0; i < workers; i++) {
		pids[i] = fork();
		if (pids[i] < 0) {
			perror("prefork-pool: fork");
			return 1;
		}
		if (!pids[i])
			_exit(worker(pool, len, ready[1], hold));
	}
	for (unsigned long i = 0; i < workers; i++) {
		char c;
		if (read(ready[0], &c, 1) != 1)
			return 1;
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (unsigned long s = 0; s < hold && !stop; s++)
		sleep(1);
	int status = 0;
	for (unsigned long i = 0; i < workers; i++) {
		kill(pids[i], SIGTERM);
		int ws;
		while (waitpid(pids[i], &ws, 0) < 0 && errno == EINTR)
			;
		status |= !WIFEXITED(ws) || WEXITSTATUS(ws);
	}
	return status;
}
