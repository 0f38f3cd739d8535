/* SPDX-License-Identifier: MIT */
/* Places in ELF files symbolised with libdw: DWARF first, the symbol table
 * next; libdwfl finds the DWARF by build id.  One entry per object path,
 * opened on first use. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <libiberty/demangle.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/grow.h"
#include "lib/hex.h"
#include "lib/ptr_map.h"
#include "symbols.h"
#include "lib/bsearch.h"
#include "ptshare/wire.h"

struct func {
	uint64_t start, end;
	const char *name;
};

/* One ELF file, and its separate debug file when its DWARF is there. */
struct object {
	char *path;
	int fd;
	Elf *elf;
	Dwfl *dwfl;          /* the file as libdwfl's offline module */
	Elf *debug_elf;      /* the separate debug file, or NULL (dwfl's) */
	Dwarf *dwarf;        /* NULL: no debug info (dwfl's) */
	GElf_Phdr *load;     /* PT_LOAD headers: file offsets to addresses */
	size_t nload;
	struct func *funcs;  /* by address */
	size_t nfuncs;
};

struct symbols {
	struct object *o;
	size_t n, cap;
	struct ptr_map names; /* struct demangled, by the mangled name's address */
};

/* A name in a symbol table or DWARF (there as long as the cache), and how
 * a reader writes it (ours). */
struct demangled {
	const char *mangled;
	char *name;
};

struct symbols *report_symbols_new(void)
{
	elf_version(EV_CURRENT);
	return calloc(1, sizeof(struct symbols));
}

static void object_close(struct object *o)
{
	if (o->dwfl)
		dwfl_end(o->dwfl);
	if (o->elf)
		elf_end(o->elf);
	if (o->fd >= 0)
		close(o->fd);
	free(o->load);
	free(o->funcs);
	free(o->path);
}

void report_symbols_free(struct symbols *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		object_close(&s->o[i]);
	for (size_t i = 0; i < s->names.cap; i++) {
		struct demangled *d = s->names.slot[i].item;
		if (d)
			free(d->name);
		free(d);
	}
	ptr_map_free(&s->names);
	free(s->o);
	free(s);
}

/* Paths come from traces too: O_NONBLOCK and a regular file only, so
 * that a FIFO or a device named there cannot block a report. */
static Elf *open_elf(const char *path, int *fd)
{
	struct stat st;
	*fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (*fd < 0)
		return NULL;
	Elf *e = fstat(*fd, &st) || !S_ISREG(st.st_mode)
		 ? NULL : elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	if (e && elf_kind(e) == ELF_K_ELF)
		return e;
	if (e)
		elf_end(e);
	close(*fd);
	*fd = -1;
	return NULL;
}

size_t report_build_id(const char *path, uint64_t dev, uint64_t ino,
		       uint8_t *id, size_t cap)
{
	int fd;
	struct stat st;
	const void *bits;
	elf_version(EV_CURRENT);
	Elf *e = open_elf(path, &fd);
	if (!e)
		return 0;
	ssize_t n = fstat(fd, &st) || ((dev || ino) && (st.st_dev != dev ||
							st.st_ino != ino))
		    ? 0 : dwelf_elf_gnu_build_id(e, &bits);
	if (n > 0 && (size_t)n <= cap)
		memcpy(id, bits, (size_t)n);
	elf_end(e);
	close(fd);
	return n > 0 && (size_t)n <= cap ? (size_t)n : 0;
}

/* Whether a file named name is in dir, dir/.debug, or under
 * /usr/lib/debug at dir or one of its suffixes: where libdwfl's default
 * path (":.debug:/usr/lib/debug") looks for a debug file by name. */
static bool named_debug_file_in(const char *dir, const char *name)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!access(path, F_OK))
		return true;
	snprintf(path, sizeof(path), "%s/.debug/%s", dir, name);
	if (!access(path, F_OK))
		return true;
	for (const char *sub = dir; sub; sub = strchr(sub + 1, '/')) {
		snprintf(path, sizeof(path), "/usr/lib/debug%s/%s", sub, name);
		if (!access(path, F_OK))
			return true;
	}
	return false;
}

/* Whether libdwfl could find file's debug file without debuginfod: by
 * its build id under /usr/lib/debug/.build-id, or by name (its
 * .gnu_debuglink, else its own name with and without .debug), beside the
 * file or its real path. */
static bool debug_file_on_disk(Dwfl_Module *mod, const char *file,
			       const char *debuglink)
{
	const unsigned char *id;
	GElf_Addr vaddr;
	int n = dwfl_module_build_id(mod, &id, &vaddr);
	if (n > 1 && n <= PTS_BUILD_ID_MAX) {
		char text[2 * PTS_BUILD_ID_MAX + 1], path[PATH_MAX];
		hex_text(text, id, (size_t)n);
		snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%.2s/%s.debug",
			 text, text + 2);
		if (!access(path, F_OK))
			return true;
	}
	char *real = file ? realpath(file, NULL) : NULL;
	const char *names[] = { file, real };
	bool found = false;
	for (size_t i = 0; i < 2 && !found; i++) {
		const char *slash = names[i] ? strrchr(names[i], '/') : NULL;
		if (!slash)
			continue;
		char dir[PATH_MAX], own[NAME_MAX + 8];
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - names[i]),
			 names[i]);
		snprintf(own, sizeof(own), "%s.debug", slash + 1);
		found = debuglink ? named_debug_file_in(dir, debuglink)
				  : named_debug_file_in(dir, own) ||
				    named_debug_file_in(dir, slash + 1);
	}
	free(real);
	return found;
}

/* libdwfl's search, but without debuginfod when no server is set: libdw
 * 0.188 (Debian 12) loads libdebuginfod, and libcurl's twenty libraries
 * with it, at the first file whose debug file is on no disk, whether or
 * not DEBUGINFOD_URLS names a server: 3-4 ms of the daemon's CPU in a run
 * of a Python program.  (A dwz file's alternate, which its path names, is
 * searched as libdwfl does.) */
static int find_debuginfo(Dwfl_Module *mod, void **userdata,
			  const char *modname, GElf_Addr base,
			  const char *file, const char *debuglink,
			  GElf_Word crc, char **debug_file)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	bool alt = debuglink && strchr(debuglink, '/');
	if ((!urls || !*urls) && !alt &&
	    !debug_file_on_disk(mod, file, debuglink)) {
		errno = 0;
		return -1;
	}
	return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file,
					    debuglink, crc, debug_file);
}

/* Where libdwfl looks for an offline file's DWARF: in the file, else in
 * the debug file its build id (or .gnu_debuglink) names under
 * /usr/lib/debug, else from the debuginfod servers of DEBUGINFOD_URLS. */
static const Dwfl_Callbacks offline = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

/* o's DWARF, and its separate debug file when the DWARF is there.  The
 * DWARF's addresses are the file's own, as ours are (the module's bias
 * is not needed). */
static void find_dwarf(struct object *o)
{
	Dwarf_Addr bias;
	/* libdwfl takes the descriptor: the one we checked is a file. */
	int fd = fcntl(o->fd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0 || !(o->dwfl = dwfl_begin(&offline))) {
		if (fd >= 0)
			close(fd);
		return;
	}
	Dwfl_Module *m = dwfl_report_offline(o->dwfl, o->path, o->path, fd);
	if (dwfl_report_end(o->dwfl, NULL, NULL) || !m ||
	    !(o->dwarf = dwfl_module_getdwarf(m, &bias)))
		return;
	Elf *debug = dwarf_getelf(o->dwarf);
	if (debug != dwfl_module_getelf(m, &bias))
		o->debug_elf = debug;
}

static int by_start(const void *x, const void *y)
{
	const struct func *a = x, *b = y;
	return (a->start > b->start) - (a->start < b->start);
}

/* The functions of e's symbol table (.symtab, else .dynsym). */
static int read_funcs(struct object *o, Elf *e)
{
	Elf_Scn *scn = NULL, *dynsym = NULL, *symtab = NULL;
	GElf_Shdr sh;
	while ((scn = elf_nextscn(e, scn)))
		if (gelf_getshdr(scn, &sh)) {
			if (sh.sh_type == SHT_SYMTAB)
				symtab = scn;
			else if (sh.sh_type == SHT_DYNSYM)
				dynsym = scn;
		}
	scn = symtab ? symtab : dynsym;
	Elf_Data *d = scn && gelf_getshdr(scn, &sh) ? elf_getdata(scn, NULL) : NULL;
	if (!d || !sh.sh_entsize)
		return 0;
	size_t n = sh.sh_size / sh.sh_entsize;
	if (!(o->funcs = calloc(n + 1, sizeof(*o->funcs))))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		GElf_Sym sym;
		int type;
		if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
		    !sym.st_size ||
		    ((type = GELF_ST_TYPE(sym.st_info)) != STT_FUNC &&
		     type != STT_GNU_IFUNC))
			continue;
		const char *name = elf_strptr(e, sh.sh_link, sym.st_name);
		if (name && *name)
			o->funcs[o->nfuncs++] = (struct func){
				sym.st_value, sym.st_value + sym.st_size, name };
	}
	qsort(o->funcs, o->nfuncs, sizeof(*o->funcs), by_start);
	return 0;
}

static int object_open(struct object *o, const char *path)
{
	*o = (struct object){ .fd = -1 };
	if (!(o->path = strdup(path)))
		return -ENOMEM;
	if (!(o->elf = open_elf(path, &o->fd)))
		return 0; /* kept: known to be unreadable */
	size_t nph;
	if (!elf_getphdrnum(o->elf, &nph) &&
	    (o->load = calloc(nph + 1, sizeof(*o->load))))
		for (size_t i = 0; i < nph; i++)
			if (gelf_getphdr(o->elf, (int)i, &o->load[o->nload]) &&
			    o->load[o->nload].p_type == PT_LOAD)
				o->nload++;
	find_dwarf(o);
	/* A debug file keeps the full symbol table the binary was stripped of. */
	if (o->debug_elf && read_funcs(o, o->debug_elf))
		return -ENOMEM;
	if (!o->nfuncs) {
		free(o->funcs);
		o->funcs = NULL;
		return read_funcs(o, o->elf);
	}
	return 0;
}

static struct object *object_of(struct symbols *s, const char *path)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->o[i].path, path))
			return &s->o[i];
	if (grow_array((void **)&s->o, &s->cap, s->n + 1, sizeof(*s->o)))
		return NULL;
	struct object *o = &s->o[s->n];
	if (object_open(o, path)) {
		object_close(o);
		return NULL;
	}
	s->n++;
	return o;
}

static bool address_of(const struct object *o, uint64_t off, uint64_t *addr)
{
	for (size_t i = 0; i < o->nload; i++) {
		const GElf_Phdr *p = &o->load[i];
		if (off >= p->p_offset && off - p->p_offset < p->p_filesz) {
			*addr = p->p_vaddr + (off - p->p_offset);
			return true;
		}
	}
	return false;
}

/* The compilation unit holding pc: through .debug_aranges, else by asking
 * each unit (compilers may leave the ranges out). */
static bool unit_of(Dwarf *dw, uint64_t pc, Dwarf_Die *cu)
{
	if (dwarf_addrdie(dw, pc, cu))
		return true;
	Dwarf_CU *unit = NULL;
	while (!dwarf_get_units(dw, unit, &unit, NULL, NULL, cu, NULL))
		if (dwarf_haspc(cu, pc) > 0)
			return true;
	return false;
}

/* A die's name: its linkage name (mangled, so that a C++ or Rust
 * function's scope and parameters can be told), else its plain name. */
static const char *die_name(Dwarf_Die *die)
{
	static const int attrs[] = { DW_AT_linkage_name, DW_AT_MIPS_linkage_name,
				     DW_AT_name };
	Dwarf_Attribute a;
	const char *name = NULL;
	for (size_t i = 0; i < sizeof(attrs) / sizeof(attrs[0]) && !name; i++)
		name = dwarf_formstring(dwarf_attr_integrate(die, attrs[i], &a));
	return name;
}

/* The innermost function around pc: an inlined one names the code the
 * line table's line belongs to. */
static const char *dwarf_function(Dwarf_Die *cu, uint64_t pc)
{
	Dwarf_Die *scopes = NULL;
	const char *name = NULL;
	int n = dwarf_getscopes(cu, pc, &scopes);
	for (int i = 0; i < n && !name; i++) {
		int tag = dwarf_tag(&scopes[i]);
		if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine)
			name = die_name(&scopes[i]);
	}
	free(scopes);
	return name;
}

static bool demangled_of(const void *item, const void *mangled)
{
	return ((const struct demangled *)item)->mangled == mangled;
}

/* name as a reader writes it: a C++ or Rust symbol (_Z..., _R...)
 * demangled, once per name and cache; anything else as it is. */
static const char *demangled(struct symbols *s, const char *name)
{
	if (!name || name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return name;
	uint64_t h = ptr_map_hash((uintptr_t)name);
	struct demangled *d = ptr_map_get(&s->names, h, demangled_of, name);
	if (d)
		return d->name;
	char *text = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
	if (!text || !(d = malloc(sizeof(*d)))) {
		free(text);
		return name;
	}
	*d = (struct demangled){ name, text };
	if (ptr_map_put(&s->names, h, d)) {
		free(text);
		free(d);
		return name;
	}
	return text;
}

static const char *elf_function(const struct object *o, uint64_t pc)
{
	size_t lo = bsearch_first(o->funcs, o->nfuncs, f, f->start <= pc);
	/* Symbols may nest (aliases, local labels): the nearest below first. */
	for (size_t i = lo; i-- > 0 && lo - i <= 8;)
		if (pc < o->funcs[i].end)
			return o->funcs[i].name;
	return NULL;
}

int report_symbols_lookup(struct symbols *s, const char *path, uint64_t off,
			  struct symbol *out)
{
	*out = (struct symbol){ 0 };
	struct object *o = object_of(s, path);
	uint64_t pc;
	/* The call instruction ends at the return address: one byte before it
	 * is inside the call, on the call's line. */
	if (!o || !off || !address_of(o, off - 1, &pc))
		return -ENOENT;
	Dwarf_Die cu;
	if (o->dwarf && unit_of(o->dwarf, pc, &cu)) {
		Dwarf_Line *line = dwarf_getsrc_die(&cu, pc);
		int n;
		if (line && !dwarf_lineno(line, &n) && n > 0) {
			out->file = dwarf_linesrc(line, NULL, NULL);
			out->line = out->file ? (uint32_t)n : 0;
		}
		out->function = dwarf_function(&cu, pc);
	}
	if (!out->function)
		out->function = elf_function(o, pc);
	out->function = demangled(s, out->function);
	return out->function || out->file ? 0 : -ENOENT;
}
