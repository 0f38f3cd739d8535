/* SPDX-License-Identifier: MIT */
/*
 * /proc/PID/maps and /proc/PID/smaps.  The whole file is read into one
 * growing buffer and parsed in place in one pass: paths are cut out of the
 * buffer (NUL-terminated where the newline was), so a process with tens of
 * thousands of mappings costs one allocation per doubling and no copies.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "procfs_internal.h"

static const char deleted_suffix[] = " (deleted)";

static bool parse_perms(struct procfs_cursor *c, struct procfs_vma *v)
{
	static const char yes[] = "rwxs", no[] = "---p";
	static const uint32_t prot[] = { MM_PROT_READ, MM_PROT_WRITE, MM_PROT_EXEC };

	if (c->end - c->p < 4)
		return false;
	for (int i = 0; i < 4; i++, c->p++) {
		bool set = *c->p == yes[i];
		if (!set && *c->p != no[i])
			return false;
		if (i < 3 && set)
			v->prot |= prot[i];
		else if (i == 3)
			v->shared = set;
	}
	return true;
}

/*
 * "start-end perms offset major:minor inode   path", numbers in hex but the
 * inode; the path, when there is one, runs to the end of the line.
 */
static bool parse_header(struct procfs_cursor c, char *text,
			 struct procfs_vma *v)
{
	uint64_t major, minor;

	*v = (struct procfs_vma){ 0 };
	if (!procfs_parse_hex(&c, &v->start) || !procfs_parse_char(&c, '-') ||
	    !procfs_parse_hex(&c, &v->end) || !procfs_parse_char(&c, ' ') ||
	    !parse_perms(&c, v) || !procfs_parse_char(&c, ' ') ||
	    !procfs_parse_hex(&c, &v->offset) || !procfs_parse_char(&c, ' ') ||
	    !procfs_parse_hex(&c, &major) || !procfs_parse_char(&c, ':') ||
	    !procfs_parse_hex(&c, &minor) || !procfs_parse_char(&c, ' ') ||
	    !procfs_parse_dec(&c, &v->ino) || major > UINT32_MAX ||
	    minor > UINT32_MAX || v->start >= v->end)
		return false;
	if (c.p < c.end && *c.p != ' ')
		return false;
	v->dev = makedev((unsigned)major, (unsigned)minor);
	procfs_skip_blanks(&c);

	/* The text is ours: terminate the path in place. */
	char *path = text + (c.p - text);
	size_t len = (size_t)(c.end - c.p);
	v->deleted = procfs_path_cut_deleted(path, &len);
	v->path = path;
	return true;
}

bool procfs_path_cut_deleted(char *path, size_t *len)
{
	size_t slen = sizeof(deleted_suffix) - 1;
	bool deleted = *len > slen &&
		       !memcmp(path + *len - slen, deleted_suffix, slen);
	if (deleted)
		*len -= slen;
	path[*len] = '\0';
	return deleted;
}

/* Lines of smaps that follow a header: "Key:  value". */
static bool is_field_line(struct procfs_cursor c)
{
	if (c.p == c.end || *c.p < 'A' || *c.p > 'Z')
		return false;
	while (c.p < c.end && *c.p != ':' && *c.p != ' ')
		c.p++;
	return c.p < c.end && *c.p == ':';
}

static int parse_text(struct procfs_maps *m, const struct procfs_fs_table *fs)
{
	char *text = m->text.data;
	const char *pos = text;
	struct procfs_cursor line;

	m->n = 0;
	m->has_smaps = false;
	while (procfs_next_line(&pos, text + m->text.len, &line)) {
		if (m->n && is_field_line(line)) {
			m->has_smaps = true;
			int err = procfs_smaps_field(&line, &m->vmas[m->n - 1].smaps);
			if (err)
				return err;
			continue;
		}
		if (grow_array((void **)&m->vmas, &m->cap, m->n + 1,
			       sizeof(*m->vmas)))
			return -ENOMEM;
		if (!parse_header(line, text, &m->vmas[m->n]))
			return -EPROTO;
		m->n++;
	}
	/* After the smaps lines: hugetlb shows in VmFlags and KernelPageSize. */
	for (size_t i = 0; i < m->n; i++)
		procfs_classify(&m->vmas[i], fs);
	return 0;
}

/* /proc/PID/maps is printed a chunk at a time, each resuming at the end of
 * the last mapping printed: a process that maps meanwhile may show a
 * mapping grown or merged across that end again, overlapping the one
 * before it (docs/procfs.md).  PROCMAP_QUERY, asked from each end, alike. */
bool procfs_maps_ordered(const struct procfs_maps *m)
{
	for (size_t i = 1; i < m->n; i++)
		if (m->vmas[i].start < m->vmas[i - 1].end)
			return false;
	return true;
}

int procfs_maps_parse(const char *text, size_t len,
		      const struct procfs_fs_table *fs, struct procfs_maps *out)
{
	int err = procfs_text_set(&out->text, text, len);

	if (err) {
		out->n = 0;
		return err;
	}
	err = parse_text(out, fs);
	if (!err && !procfs_maps_ordered(out))
		err = -EPROTO; /* no maps file says that */
	if (err)
		out->n = 0;
	return err;
}

int procfs_maps_read(int pid, const struct procfs_fs_table *fs, unsigned flags,
		     struct procfs_maps *out)
{
	const char *name = flags & PROCFS_MAPS_SMAPS ? "smaps" : "maps";
	int err = procfs_read_file(pid, name, &out->text, true);

	if (!err)
		err = parse_text(out, fs);
	if (!err && !procfs_maps_ordered(out))
		err = -EAGAIN; /* changed while read: read again */
	if (err)
		out->n = 0;
	return err;
}

void procfs_maps_free(struct procfs_maps *m)
{
	free(m->vmas);
	free(m->text.data);
	*m = (struct procfs_maps){ 0 };
}
