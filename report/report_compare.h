/* SPDX-License-Identifier: MIT */
/*
 * Two reports of one workload compared mapping by mapping (`ptshare aslr`:
 * the same program run with and without address randomisation).  A
 * mapping is the same in both runs when it maps the same object, by kind
 * and name (a file written afresh, or shared anonymous memory, gets another
 * inode each run), at the same offset, with the same size, protection and
 * flags, in processes of the same command.  Its addresses may differ: that
 * is what is compared.
 */
#ifndef PTSHARE_REPORT_COMPARE_H
#define PTSHARE_REPORT_COMPARE_H

#include "report.h"

#define COMPARE_RUNS 2

/* A mapping in one run: the report's groups of it (one per address, range,
 * anon pages...) summed over every process. */
struct compare_side {
	bool present;
	uint32_t nprocs;
	uint32_t addresses; /* distinct start addresses */
	uint32_t slots;     /* distinct (start - offset) mod 2 MiB: where the
			     * object's pages fall in a PTE table */
	uint64_t start;     /* the lowest address */
	struct {
		uint64_t tables, shared; /* PTE tables met, and shared */
		uint32_t whys;           /* 1 << enum report_why, each seen */
		enum mm_reason reason;   /* the model's, for WHY_MODEL */
	} pol[MM_WORLDS_MAX];
};

struct compare_mapping {
	enum mm_obj_kind kind;
	const char *name;    /* the reports' strings */
	const char *command;
	uint64_t offset, size;
	uint32_t prot, flags;
	struct compare_side run[COMPARE_RUNS];
	uint64_t change; /* |shared tables a - b|, summed over the policies */
};

/* A policy's totals in one run, as the text report shows them. */
struct compare_totals {
	uint64_t tables;      /* distinct table pages */
	uint64_t shared;      /* shared tables in the processes' views, summed */
	uint64_t bytes;       /* tables x 4 KiB */
	int64_t saved_bytes;  /* linux's bytes - these */
};

struct report_compare {
	struct compare_totals totals[COMPARE_RUNS][MM_WORLDS_MAX];
	struct compare_mapping *maps; /* whose sharing changed under some
				       * policy, the biggest change first */
	size_t nmaps;
	size_t compared;              /* mappings matched or not */
};

/* Compares a and b, which must have the same policies in the same order
 * (-EINVAL otherwise); -ENOMEM.  c points into both reports: they must
 * outlive it. */
int report_compare(struct report_compare *c, const struct report *a,
		   const struct report *b);
void report_compare_free(struct report_compare *c);
/* The reasons seen for policy k on side s (report_why_text), joined by
 * "; " into buf. */
const char *report_compare_why_text(const struct compare_side *s, size_t k,
				    char *buf,
				    size_t len);

#endif
