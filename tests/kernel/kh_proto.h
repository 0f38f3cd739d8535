/* SPDX-License-Identifier: MIT */
/* What kernel_hugetlb and its subject (kh_subject) agree on. */
#ifndef PTSHARE_KH_PROTO_H
#define PTSHARE_KH_PROTO_H

#define KH_GIB (1ULL << 30)
#define KH_HUGE (2ULL << 20)
/* 80 TiB: 512 GiB-aligned, a slot of the address space nothing else uses,
 * so the touches allocate a PUD page there in each process. */
#define KH_ADDR 0x500000000000ULL
#define KH_MAX_KIDS 16

#endif
