/* SPDX-License-Identifier: MIT */
/* Running a subject with pipes and bounded waits (run.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "run.h"
#include "lib/clock.h"

void run_env(struct run_env *e, bool preload, const char *socket,
	     const char *options)
{
	size_t n = 0;

	e->v[n++] = "PATH=/usr/bin:/bin";
	if (preload) {
		snprintf(e->store[0], sizeof(e->store[0]), "LD_PRELOAD=%s", SHIM_PATH);
		e->v[n++] = e->store[0];
	}
	if (socket) {
		snprintf(e->store[1], sizeof(e->store[1]), "PTSHARE_SOCKET=%s", socket);
		e->v[n++] = e->store[1];
	}
	if (options) {
		snprintf(e->store[2], sizeof(e->store[2]), "PTSHARE_OPTIONS=%s", options);
		e->v[n++] = e->store[2];
	}
	e->v[n] = NULL;
}

void run_start(struct run *r, const char *const argv[], char *const env[],
	       const struct run_limits *lim)
{
	const struct run_limits none = { 0 };
	int in[2], out[2];

	memset(r, 0, sizeof(*r));
	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC))
		abort();
	r->pid = fork();
	if (r->pid == 0) {
		unsigned long nofile = (lim ? lim : &none)->nofile;
		struct rlimit rl = { nofile ? nofile : 4096, nofile ? nofile : 4096 };
		dup2(in[0], 0);
		dup2(out[1], 1);
		setrlimit(RLIMIT_NOFILE, &rl);
		if (nice((lim ? lim : &none)->nice) == -1 && errno)
			_exit(125);
		execve(argv[0], (char *const *)argv, env);
		_exit(126);
	}
	close(in[0]);
	close(out[1]);
	r->in = in[1];
	r->out = out[0];
}

/* Reads what is there within the time left; false at EOF or timeout. */
static bool fill(struct run *r, int64_t deadline)
{
	struct pollfd p = { .fd = r->out, .events = POLLIN };
	int64_t left = deadline - now_ms();

	if (r->out < 0 || left <= 0 || poll(&p, 1, (int)left) <= 0)
		return false;
	if (r->len + 4096 + 1 > r->cap) {
		r->cap = r->cap ? 2 * r->cap : 8192;
		r->text = realloc(r->text, r->cap);
		r->text[r->len] = '\0';
	}
	ssize_t n = read(r->out, r->text + r->len, r->cap - r->len - 1);
	if (n <= 0) {
		close(r->out);
		r->out = -1;
		return false;
	}
	r->len += (size_t)n;
	r->text[r->len] = '\0';
	return true;
}

bool run_line(struct run *r, char *buf, size_t cap)
{
	int64_t deadline = now_ms() + RUN_TIMEOUT_MS;

	for (;;) {
		char *nl = r->text ? memchr(r->text + r->seen, '\n',
					    r->len - r->seen) : NULL;
		if (nl) {
			size_t n = (size_t)(nl - (r->text + r->seen));
			snprintf(buf, cap, "%.*s", (int)n, r->text + r->seen);
			r->seen += n + 1;
			return true;
		}
		if (!fill(r, deadline))
			return false;
	}
}

void run_send(struct run *r, const char *text)
{
	if (write(r->in, text, strlen(text)) != (ssize_t)strlen(text))
		abort();
}

int run_finish(struct run *r)
{
	int64_t deadline = now_ms() + RUN_TIMEOUT_MS;
	int status = -1;

	close(r->in);
	r->in = -1;
	while (fill(r, deadline))
		;
	while (waitpid(r->pid, &status, WNOHANG) == 0) {
		if (now_ms() >= deadline) {
			kill(r->pid, SIGKILL);
			waitpid(r->pid, &status, 0);
			fprintf(stderr, "run: pid %d killed after %d ms\n", r->pid,
				RUN_TIMEOUT_MS);
			break;
		}
		usleep(1000);
	}
	if (!r->text)
		r->text = calloc(1, 1);
	return status;
}

void run_free(struct run *r)
{
	if (r->in >= 0)
		close(r->in);
	if (r->out >= 0)
		close(r->out);
	free(r->text);
}

char *run_stable_text(const struct run *r)
{
	char *s = calloc(1, r->len + 1);
	size_t k = 0;

	for (const char *p = r->text; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) + 1 : strlen(p);
		if (*p != '@') {
			memcpy(s + k, p, n);
			k += n;
		}
		p += n;
	}
	return s;
}

const char *run_value(const struct run *r, const char *key)
{
	static char value[512];
	size_t klen = strlen(key);

	for (const char *p = r->text; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		if (*p == '@' && n > klen + 1 && !strncmp(p + 1, key, klen) &&
		    p[klen + 1] == ' ') {
			snprintf(value, sizeof(value), "%.*s", (int)(n - klen - 2),
				 p + klen + 2);
			return value;
		}
		p += n + (nl != NULL);
	}
	return NULL;
}
