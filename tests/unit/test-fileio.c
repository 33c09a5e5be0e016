/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for agent/os/fileio.c: reads beneath a root (the resolver itself is test-chase.c's), atomic writes,
 * and the rule that nothing is written into a file node-reset did not create or cannot account for. */

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/os/fileio.h"
#include "chase.h"
#include "macro.h"
#include "string-util.h"

static char dir[] = "/tmp/test-fileio.XXXXXX";
static int root_fd = -EBADF;

static void put(const char *name, const char *content) {
        char p[512];
        FILE *f;

        snprintf(p, sizeof p, "%s/%s", dir, name);
        f = fopen(p, "we");
        assert_non_null(f);
        fputs(content, f);
        fclose(f);
}

static void link_(const char *target, const char *name) {
        char p[512];

        snprintf(p, sizeof p, "%s/%s", dir, name);
        assert_int_equal(symlink(target, p), 0);
}

static int setup(void **state) {
        char p[600];

        if (!mkdtemp(dir))
                return -1;
        snprintf(p, sizeof p, "mkdir -p %s/etc/k %s/var/lib/pki %s/d", dir, dir, dir);
        if (system(p) != 0)
                return -1;
        put("etc/k/conf", "conf");
        put("var/lib/pki/real.pem", "pem");
        put("d/file", "file");
        link_("/var/lib/pki/real.pem", "var/lib/pki/current.pem"); /* absolute: beneath the root */
        link_("../../etc/k/conf", "var/lib/rel");                  /* relative */
        link_("../../../../../../etc/k/conf", "d/escape");         /* ".." stops at the root */
        link_("/var/lib", "d/libdir");                             /* a symlinked directory */
        link_("loop2", "d/loop1");
        link_("loop1", "d/loop2");
        link_("/nonexistent", "d/dangling");
        root_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        return root_fd >= 0 ? 0 : -1;
}

static int teardown(void **state) {
        char p[600];

        close(root_fd);
        snprintf(p, sizeof p, "rm -rf %s", dir);
        return system(p) == 0 ? 0 : -1;
}

static void test_read_and_write(void **state) {
        cleanup_free char *text = NULL;
        char p[512];
        size_t n;
        int dfd;

        assert_int_equal(fileio_read_beneath(root_fd, "/var/lib/pki/current.pem", 1024, &text, &n), 0);
        assert_string_equal(text, "pem");
        assert_int_equal(n, 3);
        text = mfree(text);
        assert_int_equal(fileio_read_beneath(root_fd, "/etc/k/conf", 4, &text, &n), 0);
        text = mfree(text);
        assert_int_equal(fileio_read_beneath(root_fd, "/etc/k/conf", 3, &text, &n), -EFBIG);

        dfd = fileio_mkdir_beneath(root_fd, "/var/lib/node-reset", 0755);
        assert_true(dfd >= 0);
        assert_int_equal(fileio_write_atomic(dfd, "state", "one\n", 4, 0644), 0);
        assert_int_equal(fileio_write_atomic(dfd, "state", "two\n", 4, 0644), 0);
        close(dfd);
        assert_int_equal(fileio_read_beneath(root_fd, "/var/lib/node-reset/state", 64, &text, &n), 0);
        assert_string_equal(text, "two\n");
        snprintf(p, sizeof p, "ls -A %s/var/lib/node-reset | grep -q '^\\.#'", dir);
        assert_int_not_equal(system(p), 0); /* no temporary file left */

        /* mkdir never goes through a symlink. */
        dfd = fileio_mkdir_beneath(root_fd, "/d/libdir/x", 0755);
        assert_true(dfd == -ENOTDIR || dfd == -ELOOP);
}

static void assert_content(const char *name, const char *content) {
        cleanup_free char *text = NULL;

        assert_int_equal(fileio_read_beneath(root_fd, name, 1024, &text, NULL), 0);
        assert_string_equal(text, content);
}

static void hard_link(const char *target, const char *name) {
        char a[512], b[512];

        snprintf(a, sizeof a, "%s/%s", dir, target);
        snprintf(b, sizeof b, "%s/%s", dir, name);
        assert_int_equal(link(a, b), 0);
}

/* A hard link to a PV's file at the name written: the name gets the new content, the PV keeps its own. */
static void test_write_atomic_hard_link(void **state) {
        char tmp[512];
        int dfd;

        dfd = fileio_mkdir_beneath(root_fd, "/w1", 0755);
        assert_true(dfd >= 0);
        put("w1/pv-data", "the volume's data\n");
        hard_link("w1/pv-data", "w1/state");
        assert_int_equal(fileio_write_atomic(dfd, "state", "new\n", 4, 0644), 0);
        assert_content("/w1/state", "new\n");
        assert_content("/w1/pv-data", "the volume's data\n");

        /* A name planted where the temporary file of an earlier version would go is neither written nor
         * removed: the temporary name is one nobody could have prepared. */
        snprintf(tmp, sizeof tmp, "w1/.#state.%d", (int) getpid());
        hard_link("w1/pv-data", tmp);
        assert_int_equal(fileio_write_atomic(dfd, "state", "newer\n", 6, 0644), 0);
        assert_content("/w1/state", "newer\n");
        snprintf(tmp, sizeof tmp, "/w1/.#state.%d", (int) getpid());
        assert_content(tmp, "the volume's data\n");
        assert_content("/w1/pv-data", "the volume's data\n");
        close(dfd);
}

/* fileio_write_new() never replaces nor writes through what is at the name. */
static void test_write_new(void **state) {
        struct stat st, now;
        char p[512];
        int dfd;

        dfd = fileio_mkdir_beneath(root_fd, "/w2", 0755);
        assert_true(dfd >= 0);
        assert_int_equal(fileio_write_new(dfd, "conf", "mine\n", 5, 0644, &st), 0);
        assert_content("/w2/conf", "mine\n");
        snprintf(p, sizeof p, "%s/w2/conf", dir);
        assert_int_equal(lstat(p, &now), 0);
        assert_true(now.st_ino == st.st_ino && now.st_nlink == 1);
        assert_int_equal(fileio_write_new(dfd, "conf", "again\n", 6, 0644, &st), -EEXIST);
        assert_content("/w2/conf", "mine\n");

        put("w2/pv-data", "the volume's data\n");
        hard_link("w2/pv-data", "w2/linked");
        assert_int_equal(fileio_write_new(dfd, "linked", "x\n", 2, 0644, &st), -EEXIST);
        link_("/w2/pv-data", "w2/symlink");
        assert_int_equal(fileio_write_new(dfd, "symlink", "x\n", 2, 0644, &st), -EEXIST);
        link_("/w2/nonexistent", "w2/dangling");
        assert_int_equal(fileio_write_new(dfd, "dangling", "x\n", 2, 0644, &st), -EEXIST);
        assert_content("/w2/pv-data", "the volume's data\n");
        snprintf(p, sizeof p, "%s/w2/nonexistent", dir);
        assert_int_equal(access(p, F_OK), -1);
        snprintf(p, sizeof p, "ls -A %s/w2 | grep -q '^\\.#'", dir);
        assert_int_not_equal(system(p), 0);
        close(dfd);
}

static void assert_open_refused(int dfd, const char *name, const char *why) {
        cleanup_free char *err = NULL;
        bool created = true;
        int fd;

        fd = fileio_open_own(dfd, name, O_RDWR, 0600, &created, &err);
        if (fd >= 0)
                close(fd);
        assert_int_equal(fd, -EPERM);
        assert_non_null(err);
        if (!strstr(err, why))
                fail_msg("\"%s\" does not say \"%s\"", err, why);
}

/* The rule itself: a file written in place is ours, or a regular file with one name owned by root. */
static void test_open_own(void **state) {
        cleanup_free char *err = NULL;
        bool created = false;
        char p[512];
        struct stat st;
        int dfd, fd;

        dfd = fileio_mkdir_beneath(root_fd, "/w3", 0755);
        assert_true(dfd >= 0);
        fd = fileio_open_own(dfd, "new", O_RDWR, 0600, &created, &err);
        assert_true(fd >= 0 && created);
        close(fd);
        fd = fileio_open_own(dfd, "new", O_RDWR, 0600, &created, &err);
        assert_true(fd >= 0 && !created);
        close(fd);

        put("w3/pv-data", "the volume's data\n");
        hard_link("w3/pv-data", "w3/linked");
        assert_open_refused(dfd, "linked", "is a hard link (2 names)");
        assert_open_refused(dfd, "pv-data", "is a hard link (2 names)");
        link_("/w3/new", "w3/symlink");
        assert_open_refused(dfd, "symlink", "is a symbolic link");
        snprintf(p, sizeof p, "%s/w3/fifo", dir);
        assert_int_equal(mkfifo(p, 0600), 0);
        assert_open_refused(dfd, "fifo", "is a FIFO");
        assert_int_equal(mkdirat(dfd, "dir", 0755), 0);
        assert_open_refused(dfd, "dir", "is a directory");
        if (geteuid() == 0) {
                snprintf(p, sizeof p, "%s/w3/new", dir);
                assert_int_equal(chown(p, 1234, 1234), 0);
                assert_open_refused(dfd, "new", "belongs to UID 1234");
        }
        assert_content("/w3/pv-data", "the volume's data\n");

        /* Removal by inode: a name that now refers to another file is left alone. */
        fd = fileio_open_regular(dfd, "pv-data", O_RDONLY, &st, NULL);
        assert_int_equal(fd, -EPERM);
        snprintf(p, sizeof p, "%s/w3/own", dir);
        put("w3/own", "x");
        put("w3/other", "y");
        assert_int_equal(lstat(p, &st), 0);
        assert_int_equal(renameat(dfd, "other", dfd, "own"), 0);
        assert_int_equal(fileio_unlink_if_same(dfd, "own", &st), -ESTALE);
        assert_content("/w3/own", "y");
        assert_int_equal(lstat(p, &st), 0);
        assert_int_equal(fileio_unlink_if_same(dfd, "own", &st), 1);
        assert_int_equal(fileio_unlink_if_same(dfd, "own", &st), 0);
        close(dfd);
}

/* A FIFO, a device or a directory where a file is read (a kubeconfig, the orphan state, a header
 * file) is refused at once: opening a FIFO for reading would otherwise wait for a writer forever. */
static void test_read_not_regular(void **state) {
        cleanup_free char *text = NULL;
        char p[512];

        snprintf(p, sizeof p, "%s/fifo", dir);
        assert_int_equal(mkfifo(p, 0600), 0);
        alarm(10);
        assert_int_equal(fileio_read_file(p, 1024, &text, NULL), -EBADFD);
        assert_int_equal(fileio_read_beneath(root_fd, "/fifo", 1024, &text, NULL), -EBADFD);
        assert_int_equal(fileio_read_file("/dev/null", 1024, &text, NULL), -EBADFD);
        assert_int_equal(fileio_read_file(dir, 1024, &text, NULL), -EISDIR);
        alarm(0);
        assert_null(text);
        assert_int_equal(unlink(p), 0);
}

/* A listening unix socket at path. */
static int listener(const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

        assert_true(fd >= 0);
        assert_true(strlen(path) < sizeof sa.sun_path);
        strcpy(sa.sun_path, path);
        assert_int_equal(bind(fd, (struct sockaddr *) &sa, sizeof sa), 0);
        assert_int_equal(listen(fd, 4), 0);
        return fd;
}

/* Which of the listeners the proc name reaches: connect through it, see who has a connection. */
static int reached(const char *proc, int inside, int outside) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), a, who = 0;

        assert_true(c >= 0);
        strcpy(sa.sun_path, proc);
        assert_int_equal(connect(c, (struct sockaddr *) &sa, sizeof sa), 0);
        if ((a = accept4(inside, NULL, NULL, SOCK_CLOEXEC)) >= 0)
                who = 1, close(a);
        if ((a = accept4(outside, NULL, NULL, SOCK_CLOEXEC)) >= 0)
                who = who ? -1 : 2, close(a);
        close(c);
        return who;
}

/* One socket path through fileio_socket_beneath(): its error, or 1 when it reached the tree's
 * listener through /proc/self/fd/N (2: the running system's). */
static int socket_try(const char *path, int inside, int outside) {
        char proc[FILEIO_PROC_FD_MAX], want[FILEIO_PROC_FD_MAX];
        int fd = fileio_socket_beneath(root_fd, path, proc), who;

        if (fd < 0)
                return fd;
        snprintf(want, sizeof want, "/proc/self/fd/%d", fd);
        assert_string_equal(proc, want);
        who = reached(proc, inside, outside);
        close(fd);
        return who;
}

/* The tree's sockets (its systemd and bus, docker.sock) are reached only by the inode resolved beneath
 * the root with no symlink on the way: a socket planted as a symlink (to the running system's or to
 * the tree's own), a symlinked directory, a ".." out of the tree and anything that is no socket are
 * refused; a real socket beneath the root is reached, never the one outside. Both walks: openat2 and
 * the one by hand. */
static void test_socket_beneath(void **state) {
        char out[] = "/tmp/test-fileio-out.XXXXXX", p[512], up[512];
        int inside, outside;

        assert_non_null(mkdtemp(out));
        snprintf(p, sizeof p, "%s/run", dir);
        assert_int_equal(mkdir(p, 0755), 0);
        snprintf(p, sizeof p, "%s/run/app.sock", dir);
        inside = listener(p);
        snprintf(p, sizeof p, "%s/app.sock", out);
        outside = listener(p);
        link_(p, "run/host.sock");         /* the running system's socket, planted as a symlink */
        link_("app.sock", "run/self.sock"); /* even one to the tree's own socket */
        link_(out, "run2");                /* a symlinked directory on the way */
        snprintf(up, sizeof up, "/../%s/app.sock", out + strlen("/tmp/"));
        for (int walk = 0; walk < 2; walk++) {
                assert_int_equal(setenv(CHASE_NO_OPENAT2_ENV, walk ? "1" : "0", 1), 0);
                assert_int_equal(socket_try("/run/app.sock", inside, outside), 1);
                assert_int_equal(socket_try("run/app.sock", inside, outside), 1);
                assert_int_equal(socket_try("/run/host.sock", inside, outside), -ELOOP);
                assert_int_equal(socket_try("/run/self.sock", inside, outside), -ELOOP);
                assert_int_equal(socket_try("/run2/app.sock", inside, outside), -ELOOP);
                assert_int_equal(socket_try(up, inside, outside), -EXDEV);
                assert_int_equal(socket_try("/etc/k/conf", inside, outside), -ENOTSOCK);
                assert_int_equal(socket_try("/etc/k", inside, outside), -ENOTSOCK);
                assert_int_equal(socket_try("/run/none.sock", inside, outside), -ENOENT);
        }
        assert_int_equal(unsetenv(CHASE_NO_OPENAT2_ENV), 0);
        assert_non_null(strstr(fileio_socket_strerror(-ELOOP), "symlink on the way, refused"));
        assert_string_equal(fileio_socket_strerror(-ENOTSOCK), "not a socket");
        close(inside);
        close(outside);
        snprintf(p, sizeof p, "rm -rf %s %s/run %s/run2", out, dir, dir);
        assert_int_equal(system(p), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_read_and_write),   cmocka_unit_test(test_write_atomic_hard_link),
                cmocka_unit_test(test_write_new),        cmocka_unit_test(test_open_own),
                cmocka_unit_test(test_read_not_regular), cmocka_unit_test(test_socket_beneath),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
