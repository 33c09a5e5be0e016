/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pods phase's rescue ladder, rung 2: the loopback-only CNI conflist a runtime's StopPodSandbox
 * runs through when the real CNI plugin fails its DEL, in place only while the phase needs it and
 * removed on every way out (return, exit(), a fatal signal); and the ones a killed run left. */

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "agent/base/log.h"
#include "agent/os/fileio.h"
#include "agent/phases/pods/pods-rescue.h"
#include "dirent-util.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"

/* cniVersion 0.4.0: every libcni a supported runtime vendors understands it, and so does loopback. */
#define RESCUE_CONFLIST \
        "{\"cniVersion\":\"0.4.0\",\"name\":\"node-reset-rescue\",\"plugins\":[{\"type\":\"loopback\"}]}\n"

/* The one rescue conflist that may exist, for the signal handler: a fixed buffer, no allocation. The
 * directory's fd and the inode let it remove that file only, never what the name may refer to by then. */
static char rescue_path[PATH_MAX];
static char rescue_file[NAME_MAX + 1];
static int rescue_dir_fd = -EBADF;
static struct stat rescue_st;
static volatile sig_atomic_t rescue_armed;
static const int rescue_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
static struct sigaction rescue_saved[ELEMENTSOF(rescue_signals)];
static bool rescue_installed[ELEMENTSOF(rescue_signals)];

/* Remove the conflist, put the old disposition back and let the signal do what it came to do. */
static void on_fatal_signal(int sig) {
        int saved_errno = errno;

        if (rescue_armed)
                (void) fileio_unlink_if_same(rescue_dir_fd, rescue_file, &rescue_st);
        rescue_armed = 0;
        for (size_t i = 0; i < ELEMENTSOF(rescue_signals); i++)
                if (rescue_signals[i] == sig && rescue_installed[i])
                        (void) sigaction(sig, &rescue_saved[i], NULL);
        errno = saved_errno;
        (void) raise(sig); /* blocked until this handler returns, then delivered as before */
}

static void handlers_arm(void) {
        struct sigaction sa = { .sa_handler = on_fatal_signal };

        (void) sigfillset(&sa.sa_mask);
        for (size_t i = 0; i < ELEMENTSOF(rescue_signals); i++) {
                struct sigaction old;

                rescue_installed[i] = false;
                /* A signal the operator ignores (nohup) stays ignored. */
                if (sigaction(rescue_signals[i], NULL, &old) < 0 || old.sa_handler == SIG_IGN)
                        continue;
                rescue_saved[i] = old;
                rescue_installed[i] = sigaction(rescue_signals[i], &sa, NULL) >= 0;
        }
}

static void handlers_disarm(void) {
        for (size_t i = 0; i < ELEMENTSOF(rescue_signals); i++)
                if (rescue_installed[i]) {
                        (void) sigaction(rescue_signals[i], &rescue_saved[i], NULL);
                        rescue_installed[i] = false;
                }
}

/* A name that sorts (bytewise, as libcni sorts) before every config in the directory: "00-" first,
 * then prefixes of ever smaller bytes for a directory that already has "00-..." names. */
static int rescue_name(const char *conf_dir, char *buf, size_t size, char **reterr_msg) {
        static const char *const prefixes[] = { "00-", "0-", "-", "!" };
        cleanup_closedir DIR *d = NULL;
        cleanup_free char *first = NULL;

        d = opendir(conf_dir);
        if (!d)
                return set_errmsg(reterr_msg, negative_errno(), "cannot open the CNI conf dir %s: %m", conf_dir);
        FOREACH_DIRENT(de, d)
        if (cni_conf_name_loaded(de->d_name) && !cni_conf_name_is_rescue(de->d_name) &&
            (!first || strcmp(de->d_name, first) < 0)) {
                free(first);
                first = strdup(de->d_name);
        }
        for (size_t i = 0; i < ELEMENTSOF(prefixes); i++) {
                snprintf(buf, size, "%s%s", prefixes[i], CNI_RESCUE_SUFFIX);
                if (!first || strcmp(buf, first) < 0)
                        return 0;
        }
        return set_errmsg(reterr_msg, -EEXIST, "no name sorts before %s in %s", first, conf_dir);
}

/* The last exit path: a normal exit() with the conflist still in place (a phase cut short). */
static void rescue_atexit(void) {
        (void) cni_rescue_remove();
}

static void signals_block(bool block, sigset_t *old) {
        sigset_t set;

        (void) sigemptyset(&set);
        for (size_t i = 0; i < ELEMENTSOF(rescue_signals); i++)
                (void) sigaddset(&set, rescue_signals[i]);
        (void) sigprocmask(block ? SIG_BLOCK : SIG_SETMASK, block ? &set : old, block ? old : NULL);
}

int cni_rescue_install(const char *conf_dir, char **ret_path, char **reterr_msg) {
        static bool atexit_done;
        cleanup_close int dir_fd = -EBADF;
        sigset_t saved;
        int r;

        if (rescue_armed)
                return set_errmsg(reterr_msg, -EBUSY, "a rescue conflist is already in place");
        if (!atexit_done && atexit(rescue_atexit) == 0)
                atexit_done = true;
        r = rescue_name(conf_dir, rescue_file, sizeof rescue_file, reterr_msg);
        if (r < 0)
                return r;
        if ((size_t) snprintf(rescue_path, sizeof rescue_path, "%s/%s", conf_dir, rescue_file) >= sizeof rescue_path)
                return set_errmsg(reterr_msg, -ENAMETOOLONG, "%s: path too long", conf_dir);
        dir_fd = open(conf_dir, O_DIRECTORY | O_CLOEXEC | O_RDONLY);
        if (dir_fd < 0)
                return set_errmsg(reterr_msg, negative_errno(), "cannot open %s: %m", conf_dir);
        handlers_arm();
        /* Created whole under its name, never over a file already there, and armed in the same breath:
         * a signal that comes meanwhile is handled once the handler knows which inode is ours. */
        signals_block(true, &saved);
        r = fileio_write_new(dir_fd, rescue_file, RESCUE_CONFLIST, strlen(RESCUE_CONFLIST), 0644, &rescue_st);
        if (r >= 0) {
                rescue_dir_fd = TAKE_FD(dir_fd);
                rescue_armed = 1;
        }
        signals_block(false, &saved);
        if (r < 0) {
                handlers_disarm();
                return set_errmsg(reterr_msg, r, "cannot create %s: %s", rescue_path,
                                  r == -EEXIST ? "a file of that name exists (not written by this run)" : strerror(-r));
        }
        *ret_path = strdup(rescue_path);
        if (!*ret_path) {
                (void) cni_rescue_remove();
                return -ENOMEM;
        }
        return 0;
}

int cni_rescue_remove(void) {
        int r = 0;

        if (rescue_armed) {
                r = fileio_unlink_if_same(rescue_dir_fd, rescue_file, &rescue_st);
                rescue_armed = 0;
                /* Not ours any more (replaced since): someone else's file, left where it is. */
                if (r == -ESTALE) {
                        log_warning("%s is no longer the rescue conflist this run wrote; left in place.", rescue_path);
                        r = 0;
                }
                closep(&rescue_dir_fd);
                rescue_dir_fd = -EBADF;
        }
        handlers_disarm();
        return r;
}

/* A stale rescue conflist is removed only if it is one node-reset wrote: a regular file with one name
 * holding exactly RESCUE_CONFLIST. Anything else named so is someone's data, left in place. */
int cni_rescue_remove_stale(const char *path, char **reterr_msg) {
        cleanup_close int dir_fd = -EBADF, fd = -EBADF;
        cleanup_free char *why = NULL;
        size_t len = strlen(RESCUE_CONFLIST);
        char dir[PATH_MAX], buf[sizeof RESCUE_CONFLIST + 1];
        const char *name = strrchr(path, '/');
        struct stat st;
        ssize_t n;
        int r;

        if (!name || (size_t) (name - path) >= sizeof dir)
                return set_errmsg(reterr_msg, -EINVAL, "not an absolute path");
        snprintf(dir, sizeof dir, "%.*s", (int) (name - path), path);
        name++;
        dir_fd = open(*dir ? dir : "/", O_DIRECTORY | O_RDONLY | O_CLOEXEC);
        if (dir_fd < 0)
                return set_errmsg(reterr_msg, negative_errno(), "cannot open %s: %m", dir);
        fd = fileio_open_regular(dir_fd, name, O_RDONLY, &st, &why);
        if (fd == -ENOENT)
                return 0;
        if (fd < 0)
                return set_errmsg(reterr_msg, fd, "not node-reset's rescue conflist, left in place: %s",
                                  why ?: strerror(-fd));
        n = pread(fd, buf, sizeof buf, 0);
        if (n < 0)
                return set_errmsg(reterr_msg, negative_errno(), "cannot read it: %m");
        if ((size_t) n != len || memcmp(buf, RESCUE_CONFLIST, len) != 0)
                return set_errmsg(reterr_msg, -EPERM,
                                  "not node-reset's rescue conflist, left in place: it holds something else");
        r = fileio_unlink_if_same(dir_fd, name, &st);
        if (r == -ESTALE)
                return set_errmsg(reterr_msg, r, "it was replaced while being checked, left in place");
        if (r < 0)
                return set_errmsg(reterr_msg, r, "unlink: %s", strerror(-r));
        return r;
}

int cni_rescue_find_stale(const char *conf_dir, char ***ret) {
        cleanup_closedir DIR *d = NULL;
        cleanup_strv char **l = NULL;

        l = calloc(1, sizeof(char *));
        if (!l)
                return -ENOMEM;
        d = opendir(conf_dir);
        if (!d) {
                *ret = TAKE_PTR(l); /* no conf dir: nothing stale */
                return 0;
        }
        FOREACH_DIRENT(de, d) {
                if (!cni_conf_name_is_rescue(de->d_name))
                        continue;
                if (strv_consume(&l, strprintf("%s/%s", conf_dir, de->d_name)) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(l);
        return 0;
}
