/* SPDX-License-Identifier: MIT */
/*
 * The environment of a new image: the program's envp, plus what keeps the
 * image traced when the program left it out: LD_PRELOAD naming the shim
 * (put first when the program has an LD_PRELOAD of its own without it),
 * PTSHARE_SOCKET and PTSHARE_OPTIONS.  Built on the stack, since exec may
 * run in a vfork child or between fork and exec, where malloc is not
 * allowed; only read from shared state.  Nothing changes once tracing is
 * not wanted (no daemon): the program then runs as it would without us.
 *
 * An image that could not load the shim (no fd for the dynamic loader,
 * exec_room.c) gets the program's envp without the shim in LD_PRELOAD,
 * daemon or not: the loader would say on its stderr that it could not.
 *
 * envp is the program's, and may be bad (an unmapped array, a string
 * running into a PROT_NONE page): it is read with peek(), and when any of
 * it cannot be read, the call gets the program's envp as it is, and the
 * kernel its own EFAULT.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <string.h>

#include "env.h"
#include "peek.h"
#include "shim.h"

#define PRELOAD "LD_PRELOAD="
#define POINTERS 64 /* of envp read at a time */

enum env_var { VAR_OTHER, VAR_PRELOAD, VAR_SOCKET, VAR_OPTIONS };

/* Whether the n characters at obj, an object of LD_PRELOAD, name the shim
 * (its file name, in whatever directory). */
static bool is_shim(const char *obj, size_t n)
{
	const char *name = obj;

	for (size_t i = 0; i < n; i++)
		if (obj[i] == '/')
			name = obj + i + 1;
	size_t len = n - (size_t)(name - obj);
	return len == strlen(shim_cfg.preload_name) &&
	       !strncmp(name, shim_cfg.preload_name, len);
}

/* LD_PRELOAD lists objects separated by colons or spaces. */
static bool names_shim(const char *list)
{
	for (size_t n; *list; list += n + (list[n] != '\0'))
		if (is_shim(list, n = strcspn(list, ": ")))
			return true;
	return false;
}

/* list without the objects that name the shim, in place, each with the
 * separator after it (before it, for the last one): the program's own
 * list, before `ptshare run` put the shim first.  Whether any went. */
static bool strip_shim(char *list)
{
	char *out = list;
	bool took = false;

	for (const char *in = list; *in;) {
		size_t n = strcspn(in, ": ");
		size_t step = n + (in[n] != '\0');
		if (is_shim(in, n)) {
			took = true;
		} else {
			memmove(out, in, step);
			out += step;
		}
		in += step;
	}
	if (took && out > list && (out[-1] == ':' || out[-1] == ' '))
		out--;
	*out = '\0';
	return took;
}

/* The entries of envp before its NULL (none for a NULL envp), or -1 when
 * the array cannot be read up to it.  Read a page at a time at most: an
 * array that ends right before an unreadable page is read whole. */
static long envp_count(char *const envp[])
{
	char *piece[POINTERS];
	long n = 0;

	if (!envp)
		return 0;
	for (;;) {
		uintptr_t at = (uintptr_t)(envp + n);
		size_t k = (PEEK_PAGE - at % PEEK_PAGE) / sizeof(char *);
		k = k < 1 ? 1 : k > POINTERS ? POINTERS : k;
		if (!peek(piece, (const void *)at, k * sizeof(char *)))
			return -1;
		for (size_t i = 0; i < k; i++)
			if (!piece[i])
				return n + (long)i;
		n += (long)k;
	}
}

#define HEAD sizeof(PTS_OPTIONS_ENV "=")

/* Which of ours an entry starting with head is. */
static int var_of(const char *head)
{
	if (str_starts(head, PRELOAD))
		return VAR_PRELOAD;
	if (str_starts(head, PTS_SOCKET_ENV "="))
		return VAR_SOCKET;
	if (str_starts(head, PTS_OPTIONS_ENV "="))
		return VAR_OPTIONS;
	return VAR_OTHER;
}

/* "LD_PRELOAD=<shim>:<theirs>" at out, theirs read from the program's
 * entry e (len bytes long); e itself when it names the shim already, NULL
 * when it cannot be read. */
static char *preload_with_shim(char *out, const char *e, long len)
{
	size_t head = strlen(shim_cfg.preload_env);
	size_t value = (size_t)len - strlen(PRELOAD);
	char *theirs = out + head + 1;

	if (!peek(theirs, e + strlen(PRELOAD), value))
		return NULL;
	theirs[value] = '\0'; /* as measured, whatever another thread did since */
	if (names_shim(theirs))
		return (char *)e;
	memcpy(out, shim_cfg.preload_env, head);
	out[head] = *theirs ? ':' : '\0';
	return out;
}

/* The program's entries read into vec, which of ours each is into var,
 * and each LD_PRELOAD's length into len: the room they take rewritten,
 * or -1 when some of it cannot be read. */
static long classify(char *const envp[], long n, char **vec, int *var,
		     long *len)
{
	char head[POINTERS][HEAD]; /* the starts of a batch of entries */
	long room = 1;

	if (n && !peek(vec, envp, (size_t)n * sizeof(char *)))
		return -1;
	for (long i = 0; i < n; i++) {
		if (i % POINTERS == 0 &&
		    !peek_heads(head[0], HEAD, vec + i,
				(size_t)(n - i < POINTERS ? n - i : POINTERS)))
			return -1;
		if ((var[i] = var_of(head[i % POINTERS])) != VAR_PRELOAD)
			continue;
		if ((len[i] = peek_strlen(vec[i])) < 0)
			return -1;
		room += (long)strlen(shim_cfg.preload_env) + 1 + len[i] + 1;
	}
	return room;
}

/* vec completed, the LD_PRELOADs rewritten into buf; false when one of
 * them cannot be read after all. */
static bool complete(long n, char **vec, const int *var, const long *len,
		     char *buf)
{
	bool preload = false, socket = false, options = false;
	size_t k = 0;

	for (long i = 0; i < n; i++) {
		char *e = vec[i];
		if (var[i] == VAR_PRELOAD) {
			preload = true;
			if (!(e = preload_with_shim(buf, e, len[i])))
				return false;
			buf += strlen(shim_cfg.preload_env) + 1 + (size_t)len[i] + 1;
		}
		socket |= var[i] == VAR_SOCKET;
		options |= var[i] == VAR_OPTIONS;
		vec[k++] = e;
	}
	if (!preload)
		vec[k++] = shim_cfg.preload_env;
	if (!socket)
		vec[k++] = shim_cfg.socket_env;
	if (!options && shim_cfg.options_env[0])
		vec[k++] = shim_cfg.options_env;
	vec[k] = NULL;
	return true;
}

/* vec without the shim in its LD_PRELOADs (one left empty goes), those
 * rewritten into buf; false when one of them cannot be read after all. */
static bool without_shim(long n, char **vec, const int *var, const long *len,
			 char *buf)
{
	size_t k = 0;

	for (long i = 0; i < n; i++) {
		char *e = vec[i];
		if (var[i] == VAR_PRELOAD) {
			if (!peek(buf, e, (size_t)len[i]))
				return false;
			buf[len[i]] = '\0';
			if (strip_shim(buf + strlen(PRELOAD))) {
				if (!buf[strlen(PRELOAD)])
					continue;
				e = buf;
			}
			buf += len[i] + 1;
		}
		vec[k++] = e;
	}
	vec[k] = NULL;
	return true;
}

/* When any of envp cannot be read, fn gets it as it is: the kernel reads
 * all of it, and answers EFAULT or fails the call for a reason it finds
 * first.  peek() keeps errno. */
int env_run(char *const envp[], env_user fn, void *arg)
{
	long n;
	bool room;

	if (!shim_cfg.configured ||
	    ((room = exec_fd_room()) && !proc_tracing_wanted()) ||
	    (n = envp_count(envp)) < 0)
		return fn(arg, envp, ENV_AS_IS);
	char *vec[n + 4];
	int var[n + 1];
	long len[n + 1];
	long size = classify(envp, n, vec, var, len);
	if (size < 0)
		return fn(arg, envp, ENV_AS_IS);
	char buf[size];
	if (!(room ? complete : without_shim)(n, vec, var, len, buf))
		return fn(arg, envp, ENV_AS_IS);
	return fn(arg, vec, room ? ENV_TRACED : ENV_NO_FD);
}
