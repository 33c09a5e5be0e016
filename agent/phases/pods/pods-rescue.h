/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pods phase's rescue ladder, rung 2: a loopback-only CNI conflist that lets a runtime finish
 * StopPodSandbox when the real CNI plugin fails its DEL (calico without its API server). */
#pragma once

#include "agent/config/cni-conf.h"

/* Write a conflist whose only plugin is loopback into conf_dir, under a name that sorts before every
 * other config there (libcni loads the first), and arm SIGINT/SIGTERM/SIGHUP/SIGQUIT handlers and an
 * atexit() handler that remove it before the process ends. One rescue at a time. Returns the path
 * (malloc'd). */
int cni_rescue_install(const char *conf_dir, char **ret_path, char **reterr_msg);
/* Remove it and disarm the handlers; 0 when it was already gone. Safe to call without install. */
int cni_rescue_remove(void);
/* Rescue conflists in conf_dir (left by a run that was killed), NULL-terminated full paths. */
int cni_rescue_find_stale(const char *conf_dir, char ***ret);
/* Remove one of them, only if it is what node-reset writes (a regular file with one name and exactly
 * the loopback-only conflist): 1 removed, 0 already gone, -EPERM (the reason in *reterr_msg) when the
 * file there is something else, left in place. */
int cni_rescue_remove_stale(const char *path, char **reterr_msg);
