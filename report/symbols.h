/* SPDX-License-Identifier: MIT */
/*
 * Symbolising places in files (object path, file offset of a return
 * address): the function, source file and line from the DWARF line table
 * where the file (or its separate debug file, found by build id under
 * /usr/lib/debug, or from the debuginfod servers DEBUGINFOD_URLS names)
 * has debug info; else the function from the ELF symbol table; C++ and
 * Rust names demangled (libiberty).  elfutils' libdwfl finds the DWARF,
 * libdw reads it.  The files are read as they are on disk when asked: a
 * binary rebuilt since the run gives the new binary's answer.  Each object
 * file is opened once per cache.
 */
#ifndef PTSHARE_SYMBOLS_H
#define PTSHARE_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

struct symbols;

/* What is at a place; NULL / 0 for what is not known.  The strings live
 * as long as the cache. */
struct symbol {
	const char *function;
	const char *file;  /* the source file as the line table names it */
	uint32_t line;
};

struct symbols *report_symbols_new(void);
void report_symbols_free(struct symbols *s);

/* The call made just before the return address at file offset off of the
 * ELF file at path.  0, or -ENOENT when nothing is known of it (the file
 * cannot be read, is no ELF file, or has no symbol there). */
int report_symbols_lookup(struct symbols *s, const char *path, uint64_t off,
			  struct symbol *out);

/* The GNU build id of the ELF file at path into id (room for cap bytes):
 * its length, or 0 when the file cannot be read, is no regular ELF file,
 * has none (or a longer one), or, when dev or ino is not 0, is not that
 * device's inode. */
size_t report_build_id(const char *path, uint64_t dev, uint64_t ino,
		       uint8_t *id, size_t cap);

#endif
