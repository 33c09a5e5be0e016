/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The installers' and CNIs' tables and what is written from them elsewhere agree: each installer has its
 * profile, each snapshot directory is protected by every profile, each CNI with a fragment has it, the
 * CNIs' chain prefixes are netreset's, and a profile's data dir lines follow the table's entries. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "agent/config/cnis.h"
#include "agent/config/installers.h"
#include "agent/config/manifest.h"
#include "agent/config/profile.h"
#include "macro.h"
#include "netreset/fwclass.h"
#include "string-util.h"
#include "tests/support/profiles.h"

/* Every installer is a name that round-trips, with a built-in profile of that name. */
static void test_installer_rows(void **state) {
        profile_configure(NULL);
        INSTALLER_FOREACH(info) {
                Manifest *m;

                assert_int_equal(installer_from_string(info->name), info->id);
                assert_true(profile_is_selectable(info->name));
                m = test_parse_profile(info->name, 0);
                assert_true(m->n_entries > 10);
                manifest_free(m);
                /* A row with a data directory names the entries it makes there. */
                assert_true(!info->data.dir || info->entries[0]);
        }
        assert_null(installer_info(INSTALLER_NONE));
        assert_string_equal(installer_to_string(INSTALLER_NONE), "none");
}

/* Each snapshot directory in the table is protected by every installer's profile and by "all". */
static void test_snapshots_protected(void **state) {
        static const char *const profiles[] = { "kubeadm", "kubespray", "kubekey", "k3s", "rke2", "all" };

        profile_configure(NULL);
        for (size_t i = 0; i < ELEMENTSOF(profiles); i++) {
                Manifest *m = test_parse_profile(profiles[i], 0);

                INSTALLER_FOREACH(info)
                        INSTALLER_LIST_FOREACH(s, info->snapshot_dirs) {
                                cleanup_free char *p = installer_path(info, NULL, *s);

                                assert_non_null(p);
                                if (!manifest_find_covering(m, DIRECTIVE_PROTECT, p))
                                        fail_msg("profile:%s does not protect %s's %s", profiles[i], info->name, p);
                        }
                manifest_free(m);
        }
}

/* "data-dir: /data": the profile removes k3s's entries beneath it, never /data, and protects its
 * storage and snapshots there as at the default. */
static void test_shared_data_dir(void **state) {
        Detection d = { .installer = INSTALLER_K3S };
        ProfileSettings s = { .detection = &d };
        Manifest *m;

        d.data_dir[INSTALLER_K3S] = (char *) "/data";
        profile_configure(&s);
        m = test_parse_profile("k3s", 0);
        assert_false(test_manifest_has_line(m, DIRECTIVE_REMOVE, "/data"));
        assert_false(test_manifest_has_line(m, DIRECTIVE_REMOVE, "/var/lib/rancher/k3s"));
        INSTALLER_LIST_FOREACH(e, installer_info(INSTALLER_K3S)->entries) {
                cleanup_free char *p = strprintf("/data/%s", *e);

                assert_true(test_manifest_has_line(m, DIRECTIVE_REMOVE, p));
        }
        assert_true(test_manifest_has_line(m, DIRECTIVE_PROTECT, "/data/storage"));
        assert_true(test_manifest_has_line(m, DIRECTIVE_PROTECT, "/data/server/db/snapshots"));
        assert_true(test_manifest_has_line(m, DIRECTIVE_PROTECT, "/var/lib/rancher/k3s/storage"));
        assert_true(test_manifest_has_line(m, DIRECTIVE_PROCESS, "/data/data/*/bin/k3s"));
        manifest_free(m);

        /* The default dir a symlink to the disk: the link goes too, and the default's protect lines,
         * beneath which only the link lies, are not kept (they would keep the link). */
        d.data_dir_link[INSTALLER_K3S] = (char *) "/var/lib/rancher/k3s";
        m = test_parse_profile("k3s", 0);
        assert_true(test_manifest_has_line(m, DIRECTIVE_REMOVE, "/var/lib/rancher/k3s"));
        assert_true(test_manifest_has_line(m, DIRECTIVE_REMOVE, "/data/server"));
        assert_false(test_manifest_has_line(m, DIRECTIVE_PROTECT, "/var/lib/rancher/k3s/storage"));
        assert_true(test_manifest_has_line(m, DIRECTIVE_PROTECT, "/data/storage"));
        manifest_free(m);
        profile_configure(NULL);
}

/* The links k3s's install makes to its binary are what its uninstall removes; a real crictl, or a
 * link elsewhere, is not; no other installer's. */
static void test_uninstall_links(void **state) {
        char tree[] = "/tmp/test-tables.XXXXXX", cmd[256];
        int fd;

        assert_non_null(mkdtemp(tree));
        snprintf(cmd, sizeof cmd,
                 "cd %s && mkdir -p usr/local/bin && touch usr/local/bin/k3s usr/local/bin/ctr && "
                 "ln -s k3s usr/local/bin/crictl && ln -s /usr/local/bin/k3s usr/local/bin/kubectl",
                 tree);
        assert_int_equal(system(cmd), 0);
        fd = open(tree, O_PATH | O_DIRECTORY | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_true(installer_uninstall_removes(fd, INSTALLER_K3S, "/usr/local/bin/crictl"));
        assert_true(installer_uninstall_removes(fd, INSTALLER_K3S, "/usr/local/bin/kubectl"));
        assert_false(installer_uninstall_removes(fd, INSTALLER_K3S, "/usr/local/bin/ctr"));
        assert_false(installer_uninstall_removes(fd, INSTALLER_KUBEADM, "/usr/local/bin/crictl"));
        assert_false(installer_uninstall_removes(fd, INSTALLER_NONE, "/usr/local/bin/crictl"));
        assert_false(installer_uninstall_removes(fd, INSTALLER_K3S, "/usr/local/bin/k3s"));
        close(fd);
        snprintf(cmd, sizeof cmd, "rm -rf %s", tree);
        assert_int_equal(system(cmd), 0);
}

/* Each CNI with a fragment has its built-in profile text, and each type names one row only. */
static void test_cni_rows(void **state) {
        profile_configure(NULL);
        CNI_FOREACH(c) {
                if (c->fragment) {
                        cleanup_free char *name = strprintf("cni-%s", c->name);

                        manifest_free(test_parse_profile(name, 0));
                }
                CNI_LIST_FOREACH(t, c->types)
                        assert_ptr_equal(cni_by_type(*t), c);
        }
        assert_null(cni_by_type("dhcp"));
        assert_non_null(cni_by_name("flannel"));
}

/* netreset/ may not include agent/: its built-in chain prefixes are kept there, and must be exactly
 * the CNIs' (plus kube-proxy's KUBE-, which no CNI owns). */
static void test_cni_chains_agree_with_fwclass(void **state) {
        FwClass *cls = fwclass_new();
        const char *const *builtin;
        size_t n = 0, n_builtin;

        assert_non_null(cls);
        CNI_FOREACH(c)
                CNI_LIST_FOREACH(p, c->chain_prefixes) {
                        cleanup_free char *chain = strprintf("%sX", *p);

                        if (!fwclass_chain_owned(cls, chain))
                                fail_msg("%s's chains (%s) are not netreset/fwclass.c's", c->name, *p);
                        n++;
                }
        builtin = fwclass_builtin_prefixes(&n_builtin);
        for (size_t i = 0; i < n_builtin; i++) {
                const char *p = builtin[i];
                bool found = streq(p, "KUBE-");

                CNI_FOREACH(c)
                        CNI_LIST_FOREACH(q, c->chain_prefixes)
                                found = found || streq(*q, p);
                if (!found)
                        fail_msg("netreset/fwclass.c's prefix %s is no CNI's in agent/config/cnis.c", p);
        }
        assert_true(n > 0);
        fwclass_free(cls);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_installer_rows),  cmocka_unit_test(test_snapshots_protected),
                cmocka_unit_test(test_shared_data_dir), cmocka_unit_test(test_uninstall_links),
                cmocka_unit_test(test_cni_rows),        cmocka_unit_test(test_cni_chains_agree_with_fwclass),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
