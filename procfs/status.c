/* SPDX-License-Identifier: MIT */
/* /proc/PID/status: identity, state and VmPTE of a process. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/ptr_map.h"
#include "procfs_internal.h"

enum status_field {
	FIELD_NAME = 1u << 0,
	FIELD_STATE = 1u << 1,
	FIELD_TGID = 1u << 2,
	FIELD_PID = 1u << 3,
	FIELD_PPID = 1u << 4,
	FIELD_UID = 1u << 5,
	FIELDS_REQUIRED = (1u << 6) - 1,
};

static void copy_name(struct procfs_cursor *line, char *name)
{
	size_t n = (size_t)(line->end - line->p);

	if (n >= PROCFS_NAME_MAX)
		n = PROCFS_NAME_MAX - 1;
	memcpy(name, line->p, n);
	name[n] = '\0';
}

static bool parse_i32(struct procfs_cursor *line, int32_t *out)
{
	uint64_t v;

	if (!procfs_parse_dec(line, &v) || v > INT32_MAX)
		return false;
	*out = (int32_t)v;
	return true;
}

/* The lines that change when the process runs, or that say it has more
 * than its one thread, and those that tell it from another process (a
 * later one with its pid): they make its mark (procfs_status.rest). */
static bool marks_rest(const struct procfs_cursor *line)
{
#define PREFIX(s) { s, sizeof(s) - 1 }
	static const struct {
		const char *s;
		size_t n;
	} prefixes[] = {
		PREFIX("Vm"), PREFIX("Rss"), PREFIX("HugetlbPages:"),
		PREFIX("Threads:"), PREFIX("voluntary_ctxt_switches:"),
		PREFIX("nonvoluntary_ctxt_switches:"), PREFIX("Name:"),
		PREFIX("PPid:"), PREFIX("Uid:"), PREFIX("Gid:"),
	};
#undef PREFIX
	size_t len = (size_t)(line->end - line->p);
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (len >= prefixes[i].n &&
		    !memcmp(line->p, prefixes[i].s, prefixes[i].n))
			return true;
	return false;
}

/* FNV-1a over the lines, then ptr_map_hash's mix: the mark of two
 * readings differs when a counter does (a collision is a chance of
 * 2^-64). */
static uint64_t mark_line(uint64_t h, const struct procfs_cursor *line)
{
	for (const char *c = line->p; c < line->end; c++)
		h = (h ^ (uint8_t)*c) * 0x100000001b3ULL;
	return (h ^ '\n') * 0x100000001b3ULL;
}

/* One line; the field it filled, 0 for a line not needed, -1 if malformed. */
static int status_line(struct procfs_cursor *line, struct procfs_status *out,
		       uint32_t *threads)
{
	uint64_t v;

	/* Not procfs_parse_key: a name may begin with blanks. */
	if (line->end - line->p >= 5 && !memcmp(line->p, "Name:", 5)) {
		line->p += 5;
		procfs_parse_char(line, '\t');
		copy_name(line, out->name);
		return FIELD_NAME;
	}
	if (procfs_parse_key(line, "State")) {
		if (line->p == line->end)
			return -1;
		out->state = *line->p;
		return FIELD_STATE;
	}
	if (procfs_parse_key(line, "Tgid"))
		return parse_i32(line, &out->tgid) ? FIELD_TGID : -1;
	if (procfs_parse_key(line, "Pid"))
		return parse_i32(line, &out->pid) ? FIELD_PID : -1;
	if (procfs_parse_key(line, "PPid"))
		return parse_i32(line, &out->ppid) ? FIELD_PPID : -1;
	if (procfs_parse_key(line, "Uid")) {
		if (!procfs_parse_dec(line, &v) || v > UINT32_MAX)
			return -1;
		out->uid = (uint32_t)v;
		return FIELD_UID;
	}
	if (procfs_parse_key(line, "VmPTE")) {
		if (!procfs_parse_dec(line, &out->vmpte_kb))
			return -1;
		out->has_mm = true;
	}
	if (procfs_parse_key(line, "Threads")) {
		if (!procfs_parse_dec(line, &v) || v > UINT32_MAX)
			return -1;
		*threads = (uint32_t)v;
	}
	return 0;
}

int procfs_status_parse(const char *text, size_t len,
			struct procfs_status *out)
{
	const char *pos = text;
	struct procfs_cursor line;
	unsigned seen = 0;
	uint32_t threads = 0;
	uint64_t mark = 0xcbf29ce484222325ULL;

	*out = (struct procfs_status){ 0 };
	while (procfs_next_line(&pos, text + len, &line)) {
		if (marks_rest(&line))
			mark = mark_line(mark, &line);
		int field = status_line(&line, out, &threads);
		if (field < 0)
			return -EPROTO;
		seen |= (unsigned)field;
	}
	if (seen != FIELDS_REQUIRED)
		return -EPROTO;
	/* Asleep, alone in its address space (as far as status can say: a
	 * vfork parent waits in D, not S): nothing changes its page tables
	 * but the kernel (khugepaged, which moves VmPTE) while it sleeps. */
	if (out->state == 'S' && threads == 1 && out->has_mm)
		out->rest = ptr_map_hash(mark) | 1; /* never 0 */
	return 0;
}

int procfs_status_read(int pid, struct procfs_status *out)
{
	struct procfs_text t = { 0 };
	int err = procfs_read_file(pid, "status", &t, false);

	if (!err)
		err = procfs_status_parse(t.data, t.len, out);
	free(t.data);
	return err;
}

int procfs_vmpte_kb(int pid, uint64_t *kb)
{
	struct procfs_status st;
	int err = procfs_status_read(pid, &st);

	if (err)
		return err;
	if (!st.has_mm)
		return -ENODATA;
	*kb = st.vmpte_kb;
	return 0;
}
