/* SPDX-License-Identifier: MIT */
/* What shim_subject and the tests that run it agree on. */
#ifndef PTSHARE_TEST_SUBJECT_PROTO_H
#define PTSHARE_TEST_SUBJECT_PROTO_H

#define SUBJECT_THREADS 8
/* closefds: dup2 over every fd below this, the shim's (from 1000) too. */
#define SUBJECT_FD_SPAN 1100
#define SUBJECT_SHIM_FD 1000
/* The lengths the signal handlers map, told apart from the others. */
#define SUBJECT_HANDLER_LEN (17ul * 4096)
#define SUBJECT_SIGSYS_LEN 0x12345000ul

#endif
