/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for agent/config/unit-file.c, the one reader of unit files: [Service]'s assignments as
 * systemd reads them (continuations, comments inside them, blanks), the last ExecStart=, and the main
 * command line with Environment= and EnvironmentFile= expanded. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/config/envfile.h"
#include "agent/config/unit-file.h"
#include "macro.h"
#include "strv.h"
#include "tests/support/files.h"

/* k3s's install.sh writes one quoted word per continued line; systemd joins them with a blank. */
static void test_unit_exec_start(void **state) {
        static const char unit[] = "[Unit]\nDescription=k3s\nExecStart=/not/the/service\n"
                                   "[Service]\nExecStartPre=-/sbin/modprobe overlay\n"
                                   "ExecStart=-/usr/local/bin/k3s \\\n    server \\\n\t'--data-dir' \\\n"
                                   "# a comment inside\n\t'/data/k3s' \\\n\n[Install]\nExecStart=/nope\n";
        static const char none[] = "[Service]\nType=oneshot\nExecStart=\n";
        static const char open_quote[] = "[Service]\nExecStart=/x 'open\n";
        cleanup_strv char **argv = NULL, **empty = NULL, **bad = NULL;

        assert_int_equal(unit_exec_start_argv(unit, strlen(unit), &argv), 1);
        assert_int_equal(strv_length(argv), 4);
        assert_string_equal(argv[0], "/usr/local/bin/k3s");
        assert_string_equal(argv_flag(argv, "data-dir"), "/data/k3s");
        assert_int_equal(unit_exec_start_argv(none, strlen(none), &empty), 0);
        assert_null(empty);
        assert_int_equal(unit_exec_start_argv(open_quote, strlen(open_quote), &bad), -EBADMSG);
}

/* Only [Service]; a comment line inside a continuation is skipped and one ending in a backslash
 * continues nothing (systemd drops comments before it joins lines); a line that is no assignment is
 * counted, wherever it stands. */
static void test_service_assignments(void **state) {
        static const char unit[] = "garbage before any section\n"
                                   "[Service]\n"
                                   "  Environment = A=1 \t\r\n"
                                   "# ExecStart=/commented \\\n"
                                   "ExecStart=/bin/etcd \\\n"
                                   "; a comment inside\n"
                                   "   --name=x\n"
                                   "not an assignment\n"
                                   "[Service]x\n"
                                   "ExecStart=/not/in/service\n";
        cleanup_strv char **pairs = NULL, **none = NULL;
        unsigned malformed = 0;

        assert_int_equal(unit_file_service(unit, strlen(unit), &pairs, &malformed), 0);
        assert_int_equal(malformed, 2);
        assert_int_equal(strv_length(pairs), 2);
        assert_string_equal(pairs[0], "Environment=A=1");
        assert_string_equal(pairs[1],
                            "ExecStart=/bin/etcd  --name=x"); /* the blank before the backslash, and the joining one */
        assert_int_equal(unit_file_service("[Unit]\nA=b\n", strlen("[Unit]\nA=b\n"), &none, NULL), 0);
        assert_null(none);
}

/* The command line as systemd starts it: the environment files win over Environment=, $VAR splits
 * into words, ${VAR} is substituted in its word, prefixes are no part of it. */
static void test_unit_file_exec(void **state) {
        char dir[] = "/tmp/test-unit-file.XXXXXX";
        UnitExec u = {};
        int fd;

        assert_non_null(mkdtemp(dir));
        fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(unit_file_exec(fd, "/etcd.service", "etcd.service", &u), -ENOENT);
        test_write_at(fd, "default-etcd", "ARGS=\"--data-dir=/srv/etcd --name=e1\"\nCERTS=/etc/etcd/pki\n");
        test_write_at(
                fd, "etcd.service",
                "[Service]\nEnvironment=ARGS=--data-dir=/var/lib/etcd CERTS=/nope\nEnvironmentFile=-/default-%p\n"
                "EnvironmentFile=-/absent\n"
                "ExecStart=|/usr/bin/etcd $ARGS \\\n# --data-dir=/commented\n  --cert-file=${CERTS}/server.crt\n");
        assert_int_equal(unit_file_exec(fd, "/etcd.service", "etcd.service", &u), 0);
        assert_int_equal(strv_length(u.argv), 4);
        assert_string_equal(u.argv[0], "/usr/bin/etcd");
        assert_string_equal(u.argv[1], "--data-dir=/srv/etcd");
        assert_string_equal(u.argv[2], "--name=e1");
        assert_string_equal(u.argv[3], "--cert-file=/etc/etcd/pki/server.crt");
        assert_string_equal(u.env_files[0], "/default-etcd");
        assert_null(u.env_files[1]);
        unit_exec_done(&u);
        /* A line that is no assignment: the file does not parse as a unit. */
        test_write_at(fd, "etcd.service", "[Unit]\nDescription\n[Service]\nExecStart=/usr/bin/etcd\n");
        assert_int_equal(unit_file_exec(fd, "/etcd.service", "etcd.service", &u), -EBADMSG);
        /* No ExecStart=: no command line. */
        test_write_at(fd, "etcd.service", "[Service]\nType=notify\nExecStart=/x\nExecStart=\n");
        assert_int_equal(unit_file_exec(fd, "/etcd.service", "etcd.service", &u), 0);
        assert_null(u.argv);
        unit_exec_done(&u);
        (void) unlinkat(fd, "etcd.service", 0);
        (void) unlinkat(fd, "default-etcd", 0);
        close(fd);
        assert_int_equal(rmdir(dir), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_unit_exec_start),
                cmocka_unit_test(test_service_assignments),
                cmocka_unit_test(test_unit_file_exec),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
