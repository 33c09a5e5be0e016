/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A systemd service's main command line as systemd builds it from the unit file: its [Service]
 * section's Environment=, EnvironmentFile= and ExecStart=, the variables expanded. The one reader of
 * unit files. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

typedef struct UnitExec {
        char **argv;      /* ExecStart=, $VAR split at blanks, ${VAR} substituted; NULL without one */
        char **env;       /* "KEY=value": Environment=, then each EnvironmentFile= (which wins) */
        char **env_files; /* the node paths of the EnvironmentFile= lines that were read */
        char **dropins;   /* the node paths of the drop-ins read (unit_file_exec_dropins()) */
} UnitExec;

/* Read the unit file at node path (beneath root_fd) named unit (for the %n/%p/%N specifiers). Drop-ins
 * are not read. 0 and *ret; -ENOENT without the file, -EBADMSG for a line that is no assignment or a
 * command line that does not split, -ENOMEM. */
int unit_file_exec(int root_fd, const char *path, const char *unit, UnitExec *ret);
void unit_exec_done(UnitExec *u);

/* The same with the unit's drop-ins read after it, as systemd reads them (systemctl edit writes
 * /etc/systemd/system/NAME.d/override.conf): NAME.d/ *.conf in every directory of the unit search path,
 * in the order of their file names, a file in a higher directory masking one of the same name lower
 * down. A drop-in that does not read, or holds a line that is no assignment, fails it as the unit
 * itself would (-EBADMSG). The unit is named after path's last component. */
int unit_file_exec_dropins(int root_fd, const char *path, UnitExec *ret);

/* The [Service] section's assignments as systemd reads them (systemd.syntax(7)): "Key=value" in file
 * order in *ret_pairs (NULL for none), blanks around the '=' and at the ends dropped, a trailing
 * backslash joining the next line with a blank, '#' and ';' comment lines dropped (also inside a
 * continuation). *ret_malformed (when given): how many lines, in any section, are neither a section,
 * a comment nor an assignment (systemd ignores them). 0, -ENOMEM. */
int unit_file_service(const char *text, size_t size, char ***ret_pairs, unsigned *ret_malformed);

/* The command line of the last ExecStart= in [Service] (a Type=simple/notify unit has one; an empty
 * one resets it), its prefixes (@-:+!|) dropped, split into words as argv_split() does (no $VAR
 * expansion). 1 with the words, 0 when there is none, -EBADMSG when it does not split, -ENOMEM. */
int unit_exec_start_argv(const char *text, size_t size, char ***ret);

/* Is path (a node path, or a pattern) one of the directories of systemd's unit search path, or
 * beneath one: a change there makes systemd want a reload? */
bool unit_file_in_search_path(const char *path);
