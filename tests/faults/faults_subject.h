/* SPDX-License-Identifier: MIT */
/* What faults_subject's script does, as the tests that count its faults
 * need it (faults_subject.c). */
#ifndef PTSHARE_TESTS_FAULTS_SUBJECT_H
#define PTSHARE_TESTS_FAULTS_SUBJECT_H

/* Three regions of shared memory, each touched from its first 2 MiB
 * boundary on: a tmpfs file, a memfd, shared anonymous memory. */
enum { REGION_SHM, REGION_MEMFD, REGION_ANON, REGIONS };
#define REGION_BYTES (16UL << 20)

/* The parent writes pages [0, n) of each region (2, 3 and 3 spans of
 * 2 MiB), then reads PARENT_ZERO_READS pages after its memfd pages, never
 * written (zeros; in a span it wrote), and forks. */
#define PARENT_WRITES 600, 1100, 1536
#define PARENT_WRITES_ANON 1536
#define PARENT_ZERO_READS 5
/* The child reads pages [0, n) of each region (1, 2 and 3 spans), then
 * writes CHILD_WRITES pages after the parent's in the anonymous region (a
 * fourth span, which the parent never touched), which the parent reads
 * once the child has exited. */
#define CHILD_READS 100, 600, 1536
#define CHILD_WRITES 10

/* events (all mode): a memfd region written, the first pages punched and
 * read back, the region moved and more written, its tail replaced by
 * shared anonymous memory and written: each page a fault. */
#define EVENTS_WRITES 100
#define EVENTS_REMOVED 40
#define EVENTS_MOVED_WRITES 20
#define EVENTS_TAIL_WRITES 30

/* hugetlb: 4 pages of 2 MiB, two written and one read by the parent. */
#define HUGE_BYTES (8UL << 20)
#define HUGE_WRITTEN 2

#endif
