/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One node-reset at a time: an flock on /run/node-reset.lock (beneath --root when given). */
#pragma once

#include <sys/types.h>

/* Take the lock without waiting. Returns the fd holding it (keep it open), -EWOULDBLOCK with
 * *ret_holder set to the holder's PID (0 when unknown) when another process has it, or -errno with
 * the reason in *reterr_msg. Writes only into a lock file it creates or that fileio_check_own()
 * accepts and that holds nothing but a PID: anything else at that name is -EPERM, left untouched. */
int lock_acquire(int root_fd, pid_t *ret_holder, char **reterr_msg);

/* The PID that holds an flock on the file open at fd, from /proc/locks; 0 when not found. */
pid_t lock_holder(int fd);
