/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Test helper: runs a command under ptrace and, when it exits (PTRACE_EVENT_EXIT, before its
 * memory is gone), writes the shared objects it has mapped and its peak RSS to a file.
 * Usage: maps-at-exit OUTFILE COMMAND [ARG...]; exits with the command's status. */

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "macro.h"
#include "string-util.h"

/* One line per distinct file whose name has ".so" in it (the loader too), then "VmHWM: N kB". */
static int dump(pid_t pid, FILE *out) {
        char path[64], line[4096], seen[64][256];
        size_t n_seen = 0;
        FILE *f;

        (void) snprintf(path, sizeof path, "/proc/%d/maps", (int) pid);
        f = fopen(path, "re");
        if (!f)
                return -errno;
        while (fgets(line, sizeof line, f)) {
                char *file = strchr(line, '/'), *base;
                bool dup = false;

                if (!file)
                        continue;
                file[strcspn(file, "\n")] = '\0';
                base = strrchr(file, '/') + 1;
                if (!strstr(base, ".so"))
                        continue;
                for (size_t i = 0; i < n_seen && !dup; i++)
                        dup = streq(seen[i], base);
                if (dup || n_seen == ELEMENTSOF(seen))
                        continue;
                (void) snprintf(seen[n_seen++], sizeof seen[0], "%s", base);
                fprintf(out, "%s\n", base);
        }
        fclose(f);
        (void) snprintf(path, sizeof path, "/proc/%d/status", (int) pid);
        f = fopen(path, "re");
        if (!f)
                return -errno;
        while (fgets(line, sizeof line, f))
                if (startswith(line, "VmHWM:"))
                        fputs(line, out);
        fclose(f);
        return 0;
}

static int trace(pid_t pid, FILE *out) {
        int status;

        if (waitpid(pid, &status, 0) < 0 || !WIFSTOPPED(status)) /* the SIGTRAP of execve */
                return 127;
        if (ptrace(PTRACE_SETOPTIONS, pid, 0, PTRACE_O_TRACEEXIT | PTRACE_O_EXITKILL) < 0)
                return 127;
        (void) ptrace(PTRACE_CONT, pid, 0, 0);
        for (;;) {
                int sig = 0;

                if (waitpid(pid, &status, 0) < 0)
                        return 127;
                if (WIFEXITED(status))
                        return WEXITSTATUS(status);
                if (WIFSIGNALED(status))
                        return 128 + WTERMSIG(status);
                if (status >> 8 == (SIGTRAP | (PTRACE_EVENT_EXIT << 8))) {
                        if (dump(pid, out) < 0)
                                fprintf(stderr, "maps-at-exit: cannot read /proc/%d: %m\n", (int) pid);
                } else
                        sig = WSTOPSIG(status); /* a signal for the command: pass it on */
                (void) ptrace(PTRACE_CONT, pid, 0, sig);
        }
}

int main(int argc, char *argv[]) {
        FILE *out;
        pid_t pid;
        int rc;

        if (argc < 3) {
                fprintf(stderr, "Usage: %s OUTFILE COMMAND [ARG...]\n", argv[0]);
                return 2;
        }
        out = fopen(argv[1], "we");
        if (!out) {
                fprintf(stderr, "maps-at-exit: %s: %m\n", argv[1]);
                return 127;
        }
        pid = fork();
        if (pid < 0)
                return 127;
        if (pid == 0) {
                if (ptrace(PTRACE_TRACEME, 0, 0, 0) < 0)
                        _exit(126);
                execvp(argv[2], argv + 2);
                _exit(127);
        }
        rc = trace(pid, out);
        if (fclose(out) != 0)
                return 127;
        return rc;
}
