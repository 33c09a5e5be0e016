/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A systemd service's main command line as systemd builds it from the unit file: its [Service]
 * section's Environment=, EnvironmentFile= and ExecStart=, the variables expanded. */
#pragma once

typedef struct UnitExec {
        char **argv;      /* ExecStart=, $VAR split at blanks, ${VAR} substituted; NULL without one */
        char **env;       /* "KEY=value": Environment=, then each EnvironmentFile= (which wins) */
        char **env_files; /* the node paths of the EnvironmentFile= lines that were read */
} UnitExec;

/* Read the unit file at node path (beneath root_fd) named unit (for the %n/%p/%N specifiers). Drop-ins
 * are not read. 0 and *ret; -ENOENT without the file, -EBADMSG for a line that is no assignment or a
 * command line that does not split, -ENOMEM. */
int unit_file_exec(int root_fd, const char *path, const char *unit, UnitExec *ret);
void unit_exec_done(UnitExec *u);
