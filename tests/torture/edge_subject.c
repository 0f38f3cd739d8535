/* SPDX-License-Identifier: MIT */
/*
 * The tables of edge_table.h, one per argument: `calls` (edge-case
 * arguments), `early` (the same, from a constructor that runs before the
 * shim's: edge_table.c), `bad-pointers`; `leaf`, or no argument at all
 * (an exec with a NULL argv), is what the exec rows run.
 * Built without sanitizers: the shim is preloaded into it.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "edge_table.h"

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "leaf";
	if (!strcmp(what, "leaf"))
		return EDGE_LEAF_STATUS;
	if (!strcmp(what, "early"))
		return 0;
	if (!strcmp(what, "calls"))
		edge_run(edge_calls);
	else if (!strcmp(what, "bad-pointers"))
		edge_run(edge_bad_ptrs);
	else {
		fprintf(stderr, "usage: edge_subject calls|early|bad-pointers|leaf\n");
		return 2;
	}
	return 0;
}
