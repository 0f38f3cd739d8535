/* SPDX-License-Identifier: MIT */
/* The run's details (wire.h, PTS_RUN_INFO): the host and the settings that
 * shape page tables, read when the daemon starts. */
#ifndef PTSHARED_RUN_INFO_H
#define PTSHARED_RUN_INFO_H

#include <signal.h>
#include <sys/signalfd.h>

#include "ptshare/wire.h"

/* i filled as the run starts (no end, status unknown); command_line may
 * be NULL. */
void run_info_start(struct pts_run_info *i, const char *command_line);
/* The end, now; and the program's wait status when the stop signal si
 * carries it (sent by our parent with sigqueue: `ptshare run`). */
void run_info_end(struct pts_run_info *i, const struct signalfd_siginfo *si);

#endif
