/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include "snap_util.h"
#include "schema_check.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_GROUPS 32
#define MAX_PATHS 32
#define READY_TIMEOUT_MS 120000

/* What a signal handler must take down: plain arrays, no allocation. */
static volatile pid_t groups[MAX_GROUPS];
static char paths[MAX_PATHS][256];
static volatile int npaths;

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void on_signal(int sig)
{
	for (int i = 0; i < MAX_GROUPS; i++)
		if (groups[i] > 0)
			kill(-groups[i], SIGKILL);
	for (int i = npaths - 1; i >= 0; i--)
		if (unlink(paths[i]))
			rmdir(paths[i]);
	_exit(128 + sig);
}

void snap_init(void)
{
	if (prctl(PR_SET_CHILD_SUBREAPER, 1))
		perror("PR_SET_CHILD_SUBREAPER");
	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

void snap_cleanup_path(const char *path)
{
	if (npaths < MAX_PATHS) {
		snprintf(paths[npaths], sizeof(paths[0]), "%s", path);
		npaths++;
	}
}

void snap_cleanup_paths(void)
{
	while (npaths > 0) {
		npaths--;
		if (unlink(paths[npaths]))
			rmdir(paths[npaths]);
	}
}

static void track_group(pid_t pid, bool on)
{
	for (int i = 0; i < MAX_GROUPS; i++)
		if (on ? groups[i] == 0 : groups[i] == pid) {
			groups[i] = on ? pid : 0;
			return;
		}
}

/* ---- Running commands ---------------------------------------------- */

static char *slurp_fd(int fd, size_t *len)
{
	struct stat st;
	char *buf = NULL;
	*len = 0;
	if (fstat(fd, &st) == 0 && (buf = malloc((size_t)st.st_size + 1))) {
		ssize_t n = pread(fd, buf, (size_t)st.st_size, 0);
		*len = n > 0 ? (size_t)n : 0;
		buf[*len] = '\0';
	}
	close(fd);
	return buf ? buf : strdup("");
}

static int exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return -1;
}

/* In the forked child: stdin /dev/null, the capture files, the uid. */
static void child_setup(int out, int err, int uid)
{
	int null = open("/dev/null", O_RDONLY);
	if (null < 0 || dup2(null, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
		_exit(126);
	if (uid >= 0) {
		if (setgroups(0, NULL) || setgid((gid_t)uid) || setuid((uid_t)uid))
			_exit(125);
	}
}

static int spawn_captured(struct run *r, const char *const argv[], int uid,
			  bool traced, int *out, int *err)
{
	*r = (struct run){ 0 };
	*out = memfd_create("run-out", MFD_CLOEXEC);
	*err = memfd_create("run-err", MFD_CLOEXEC);
	if (*out < 0 || *err < 0)
		return -errno;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		child_setup(*out, *err, uid);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (traced && (ptrace(PTRACE_TRACEME, 0, NULL, NULL) || raise(SIGSTOP)))
			_exit(124);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	return pid;
}

static void finish(struct run *r, int status, int out, int err)
{
	r->code = exit_code(status);
	r->out = slurp_fd(out, &r->outlen);
	r->err = slurp_fd(err, &r->errlen);
}

int run_cmd(struct run *r, const char *const argv[], int uid)
{
	int out, err, status;
	pid_t pid = spawn_captured(r, argv, uid, false, &out, &err);
	if (pid < 0)
		return pid;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	finish(r, status, out, err);
	return 0;
}

/* The NUL-terminated string at addr in pid (as much as is readable). */
static void peek_string(pid_t pid, uint64_t addr, char *buf, size_t len)
{
	struct iovec local = { buf, len - 1 };
	struct iovec remote = { (void *)addr, len - 1 };
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	buf[n > 0 ? n : 0] = '\0';
}

int run_traced(struct run *r, const char *const argv[],
	       struct trace_trigger *t)
{
	int out, err, status;
	t->fired = false;
	pid_t pid = spawn_captured(r, argv, -1, true, &out, &err);
	if (pid < 0)
		return pid;
	if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status))
		goto fail;
	if (ptrace(PTRACE_SETOPTIONS, pid, NULL,
		   (void *)(long)(PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL |
				  PTRACE_O_TRACEEXEC)))
		goto fail;
	int seen = 0, sig = 0;
	bool armed = false; /* the matching call's exit is next */
	for (;;) {
		if (ptrace(PTRACE_SYSCALL, pid, NULL, (void *)(long)sig))
			goto fail;
		sig = 0;
		if (waitpid(pid, &status, 0) != pid)
			goto fail;
		if (WIFEXITED(status) || WIFSIGNALED(status))
			break; /* ended without the trigger */
		if (WSTOPSIG(status) != (SIGTRAP | 0x80)) {
			/* An exec event, or a signal to pass on. */
			if (status >> 16 == 0 && WSTOPSIG(status) != SIGSTOP)
				sig = WSTOPSIG(status);
			continue;
		}
		struct __ptrace_syscall_info info;
		if (ptrace(PTRACE_GET_SYSCALL_INFO, pid, (void *)sizeof(info),
			   &info) <= 0)
			goto fail;
		bool fire = false;
		if (info.op == PTRACE_SYSCALL_INFO_ENTRY &&
		    info.entry.nr == SYS_openat) {
			char path[256];
			peek_string(pid, info.entry.args[1], path, sizeof(path));
			if (!strcmp(path, t->path) && ++seen == t->nth) {
				fire = !t->at_exit;
				armed = t->at_exit;
			}
		} else if (info.op == PTRACE_SYSCALL_INFO_EXIT && armed) {
			fire = true;
		}
		if (fire) {
			t->hook(t->arg);
			t->fired = true;
			if (ptrace(PTRACE_DETACH, pid, NULL, NULL))
				goto fail;
			if (waitpid(pid, &status, 0) != pid)
				goto fail;
			break;
		}
	}
	finish(r, status, out, err);
	return 0;
fail:
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	finish(r, status, out, err);
	return -EIO;
}

void run_free(struct run *r)
{
	free(r->out);
	free(r->err);
	*r = (struct run){ 0 };
}

bool run_sanitizer_report(const struct run *r)
{
	return r->err && (strstr(r->err, "runtime error:") ||
			  strstr(r->err, "Sanitizer") ||
			  strstr(r->err, "AddressSanitizer"));
}

void run_dump(const struct run *r, const char *what, bool out)
{
	fprintf(stderr, "--- %s: exit %d; stderr:\n%s", what, r->code,
		r->err ? r->err : "");
	if (out)
		fprintf(stderr, "--- stdout:\n%s", r->out ? r->out : "");
	fprintf(stderr, "---\n");
}

/* ---- Process groups -------------------------------------------------- */

static int read_ready(struct pgroup *g, int fd)
{
	char line[256];
	size_t n = 0;
	while (n < sizeof(line) - 1) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int k = poll(&p, 1, READY_TIMEOUT_MS);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			fprintf(stderr, "snap_subject %d: not ready in time\n",
				(int)g->pid);
			return -1;
		}
		ssize_t got = read(fd, line + n, 1);
		if (got <= 0) {
			fprintf(stderr, "snap_subject %d: ended before ready\n",
				(int)g->pid);
			return -1;
		}
		if (line[n++] == '\n')
			break;
	}
	line[n] = '\0';
	if (strncmp(line, "ready ", 6)) {
		fprintf(stderr, "snap_subject %d: %s", (int)g->pid, line);
		return -1;
	}
	char *p = line + 6, *end;
	g->nready = 0;
	while (g->nready < 8) {
		long v = strtol(p, &end, 10);
		if (end == p)
			break;
		g->ready[g->nready++] = v;
		p = end;
	}
	return 0;
}

static int group_start(struct pgroup *g, const char *file,
		       const char *const argv[], bool subject)
{
	int in[2], out[2];
	*g = (struct pgroup){ .pid = -1, .in_fd = -1 };
	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC))
		return -1;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		int null = open("/dev/null", O_WRONLY);
		if (dup2(in[0], 0) < 0 || dup2(subject ? out[1] : null, 1) < 0 ||
		    (!subject && dup2(null, 2) < 0))
			_exit(126);
		if (subject)
			execv(file, (char *const *)argv);
		else
			execvp(file, (char *const *)argv);
		_exit(127);
	}
	setpgid(pid, pid); /* whichever runs first */
	track_group(pid, true);
	close(in[0]);
	close(out[1]);
	g->pid = pid;
	g->in_fd = in[1];
	int r = subject ? read_ready(g, out[0]) : 0;
	close(out[0]);
	if (r)
		group_stop(g);
	return r;
}

int subject_start(struct pgroup *g, const char *const args[])
{
	const char *argv[16] = { SNAP_SUBJECT_PATH };
	size_t n = 1;
	while (args[n - 1] && n < 15) {
		argv[n] = args[n - 1];
		n++;
	}
	argv[n] = NULL;
	return group_start(g, SNAP_SUBJECT_PATH, argv, true);
}

int program_start(struct pgroup *g, const char *const argv[])
{
	return group_start(g, argv[0], argv, false);
}

int group_stop(struct pgroup *g)
{
	if (g->pid <= 0)
		return 0;
	if (g->in_fd >= 0)
		close(g->in_fd);
	g->in_fd = -1;
	kill(-g->pid, SIGKILL);
	/* Members whose parent died are reparented to us (the subreaper):
	 * reap until the group is empty. */
	for (int i = 0; i < 30000; i++) {
		while (waitpid(-g->pid, NULL, WNOHANG) > 0)
			;
		if (kill(-g->pid, 0) && errno == ESRCH) {
			track_group(g->pid, false);
			g->pid = -1;
			return 0;
		}
		kill(-g->pid, SIGKILL);
		sleep_ms(1);
	}
	fprintf(stderr, "process group %d still has members\n", (int)g->pid);
	return -1;
}

int groups_stop_all(void)
{
	int r = 0;
	for (int i = 0; i < MAX_GROUPS; i++)
		if (groups[i] > 0) {
			struct pgroup g = { .pid = groups[i], .in_fd = -1 };
			r |= group_stop(&g);
		}
	return r;
}

/* pid's process group, state and parent from /proc/PID/stat. */
static int proc_stat(pid_t pid, pid_t *pgrp, char *state, pid_t *ppid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	int pp, pg;
	char st;
	if (!p || sscanf(p + 1, " %c %d %d", &st, &pp, &pg) != 3)
		return -1;
	if (pgrp)
		*pgrp = pg;
	if (state)
		*state = st;
	if (ppid)
		*ppid = pp;
	return 0;
}

size_t group_members(const struct pgroup *g, pid_t *pids, size_t cap)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	size_t n = 0;
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		pid_t pid = (pid_t)atoi(e->d_name), pg;
		if (pid > 0 && !proc_stat(pid, &pg, NULL, NULL) && pg == g->pid) {
			if (n < cap)
				pids[n] = pid;
			n++;
		}
	}
	closedir(d);
	return n;
}

bool pid_exists(pid_t pid)
{
	return kill(pid, 0) == 0 || errno == EPERM;
}

pid_t unused_pid(void)
{
	for (;;) {
		pid_t pid = fork();
		if (pid == 0)
			_exit(0);
		if (pid < 0)
			return -1;
		waitpid(pid, NULL, 0);
		if (!pid_exists(pid))
			return pid;
	}
}

int proc_status_field(pid_t pid, const char *field, char *out, size_t len)
{
	char path[64], line[512];
	size_t flen = strlen(field);
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "re");
	out[0] = '\0';
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, flen) && line[flen] == ':') {
			char *v = line + flen + 1;
			v += strspn(v, " \t");
			v[strcspn(v, "\n")] = '\0';
			snprintf(out, len, "%s", v);
			break;
		}
	fclose(f);
	return 0;
}

pid_t find_kthreadd(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t found = 0;
	if (!d)
		return 0;
	while (!found && (e = readdir(d))) {
		pid_t pid = (pid_t)atoi(e->d_name);
		char name[64], kthread[16], ppid[16];
		if (pid <= 0 || proc_status_field(pid, "Name", name, sizeof(name)))
			continue;
		proc_status_field(pid, "Kthread", kthread, sizeof(kthread));
		proc_status_field(pid, "PPid", ppid, sizeof(ppid));
		if (!strcmp(name, "kthreadd") && !strcmp(kthread, "1") &&
		    !strcmp(ppid, "0"))
			found = pid;
	}
	closedir(d);
	return found;
}

/* ---- The report -------------------------------------------------------- */

static const struct jr_value *find_pid(const struct jr_value *arr, long pid)
{
	for (size_t i = 0; i < jr_len(arr); i++)
		if (jr_path_i64(jr_at(arr, i), "pid", -1) == pid)
			return jr_at(arr, i);
	return NULL;
}

const struct jr_value *report_proc(const struct jr_value *doc, long pid)
{
	return find_pid(jr_get(doc, "processes"), pid);
}

const struct jr_value *report_skip(const struct jr_value *doc, long pid)
{
	return find_pid(jr_get(doc, "not_modelled"), pid);
}

const struct jr_value *report_mapping(const struct jr_value *doc,
				      uint64_t start)
{
	const struct jr_value *maps = jr_get(doc, "mappings");
	for (size_t i = 0; i < jr_len(maps); i++)
		if (jr_path_u64(jr_at(maps, i), "start", 0) == start)
			return jr_at(maps, i);
	return NULL;
}

uint64_t report_linux_kb(const struct jr_value *proc)
{
	const struct jr_value *t = jr_path(proc, "policies.linux.tables");
	return 4 * (jr_path_u64(t, "pte", 0) + jr_path_u64(t, "pmd", 0) +
		    jr_path_u64(t, "pud", 0));
}

struct jr_value *parse_report_text(const char *text, size_t len)
{
	struct jr_error e;
	struct jr_value *doc = jr_parse(text, len, &e);
	if (!doc)
		fprintf(stderr, "the report is not valid JSON: at byte %zu: %s\n",
			e.offset, e.what);
	else if (!jr_path_str(doc, "schema") ||
		 strcmp(jr_path_str(doc, "schema"), "ptshare.report") ||
		 !schema_valid(text, len, "the report")) {
		fprintf(stderr, "the document is not a valid ptshare report\n");
		jr_free(doc);
		doc = NULL;
	}
	return doc;
}

struct jr_value *parse_report_file(const char *path)
{
	struct jr_error e;
	struct jr_value *doc = jr_parse_file(path, &e);
	if (!doc) {
		fprintf(stderr, "%s: not valid JSON: at byte %zu: %s\n", path,
			e.offset, e.what);
	} else if (!schema_valid_file(path)) {
		jr_free(doc);
		doc = NULL;
	}
	return doc;
}

int make_temp_dir(char *out, size_t len, const char *tag)
{
	snprintf(out, len, "/tmp/ptshare-%s-XXXXXX", tag);
	if (!mkdtemp(out)) {
		perror("mkdtemp");
		return -1;
	}
	snap_cleanup_path(out);
	return 0;
}
