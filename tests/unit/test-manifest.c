/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for agent/config/manifest.c: grammar, every error with its FILE:LINE, includes, printing round trip. */

#include <fcntl.h>
#include <ftw.h>
#include <glob.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "agent/config/manifest.h"
#include "macro.h"
#include "string-util.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(Manifest *, manifest_free);
#define cleanup_manifest CLEANUP(manifest_freep)

/* ---- helpers ---- */

static Manifest *parse_ok(const char *text) {
        Manifest *m = manifest_new();
        cleanup_free char *err = NULL;

        assert_non_null(m);
        assert_int_equal(manifest_parse_string(m, "t.conf", text, NULL, &err), 0);
        assert_null(err);
        return m;
}

static void check_error(const char *text, const char *want) {
        cleanup_manifest Manifest *m = manifest_new();
        cleanup_free char *err = NULL;

        assert_non_null(m);
        assert_int_equal(manifest_parse_string(m, "t.conf", text, NULL, &err), -EINVAL);
        assert_non_null(err);
        assert_string_equal(err, want);
        /* A failed parse leaves nothing behind. */
        assert_int_equal(m->n_entries, 0);
        assert_int_equal(m->n_files, 0);
        assert_null(m->files ? m->files[0] : NULL);
}

static void check_entry(const Manifest *m, size_t i, DirectiveType t, const char *arg, unsigned line) {
        const ManifestEntry *e;

        assert_true(i < m->n_entries);
        e = m->entries + i;
        assert_int_equal(e->type, t);
        assert_int_equal(e->n_args, 1);
        assert_string_equal(e->args[0], arg);
        assert_null(e->args[1]);
        assert_int_equal(e->line, line);
}

static char *print_to_string(const Manifest *m) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        assert_non_null(f);
        assert_int_equal(manifest_print(m, f), 0);
        assert_int_equal(fclose(f), 0);
        return buf;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        return remove(path);
}

static int tmpdir_setup(void **state) {
        char *d = strdup("/tmp/test-manifest-XXXXXX");

        if (!d || !mkdtemp(d)) {
                free(d);
                return -1;
        }
        *state = d;
        return 0;
}

static int tmpdir_teardown(void **state) {
        char *d = *state;
        int r = nftw(d, rm_entry, 16, FTW_DEPTH | FTW_PHYS);

        free(d);
        return r;
}

/* Write dir/name (creating the subdirectory "sub" when the name asks for it). */
static void write_file(const char *dir, const char *name, const char *text, size_t len) {
        cleanup_free char *p = NULL;
        cleanup_fclose FILE *f = NULL;

        if (startswith(name, "sub/")) {
                cleanup_free char *s = NULL;

                assert_true(asprintf(&s, "%s/sub", dir) > 0);
                assert_true(mkdir(s, 0755) == 0 || errno == EEXIST);
        }
        assert_true(asprintf(&p, "%s/%s", dir, name) > 0);
        f = fopen(p, "we");
        assert_non_null(f);
        assert_int_equal(fwrite(text, 1, len, f), len);
}

static void write_text(const char *dir, const char *name, const char *text) {
        write_file(dir, name, text, strlen(text));
}

static char *join(const char *dir, const char *name) {
        char *p;

        assert_true(asprintf(&p, "%s/%s", dir, name) > 0);
        return p;
}

/* Parse dir/name as a file and expect it to fail with r and the message fmt, where every "%1$s"
 * stands for the temporary directory. */
_printf_(4, 5) static void check_file_error(const char *dir, const char *name, int r, const char *fmt, ...) {
        cleanup_manifest Manifest *m = manifest_new();
        cleanup_free char *path = join(dir, name), *err = NULL, *want = NULL;
        va_list ap;

        va_start(ap, fmt);
        assert_true(vasprintf(&want, fmt, ap) > 0);
        va_end(ap);
        assert_int_equal(manifest_parse_file(m, path, &err), r);
        assert_non_null(err);
        assert_string_equal(err, want);
        assert_int_equal(m->n_entries, 0);
        assert_int_equal(m->n_files, 0);
}

/* ---- grammar ---- */

static void test_directive_names(void **state) {
        assert_string_equal(directive_type_to_string(DIRECTIVE_REMOVE), "remove");
        assert_string_equal(directive_type_to_string(DIRECTIVE_EMPTY), "empty");
        assert_string_equal(directive_type_to_string(DIRECTIVE_UNMOUNT), "unmount");
        assert_string_equal(directive_type_to_string(DIRECTIVE_PROTECT), "protect");
        assert_null(directive_type_to_string(_DIRECTIVE_MAX));
        assert_null(directive_type_to_string(_DIRECTIVE_INVALID));
        /* Every enum value has its row in the table. */
        for (DirectiveType t = 0; t < _DIRECTIVE_MAX; t++) {
                assert_non_null(directive_type_to_string(t));
                assert_int_equal(directive_type_from_string(directive_type_to_string(t)), t);
        }
        assert_string_equal(directive_type_to_string(DIRECTIVE_LINK_MASTER), "link-master");
        assert_string_equal(directive_type_to_string(DIRECTIVE_NFT_TABLE), "nft-table");
        assert_string_equal(directive_type_to_string(DIRECTIVE_ALLOW_SYSTEM_PATH), "allow-system-path");
        assert_int_equal(directive_type_from_string("include"), _DIRECTIVE_INVALID);
        assert_int_equal(directive_type_from_string("Remove"), _DIRECTIVE_INVALID);
        assert_int_equal(directive_type_from_string(NULL), _DIRECTIVE_INVALID);
}

static void test_basic(void **state) {
        cleanup_manifest Manifest *m = parse_ok("# a comment\n"
                                                "\n"
                                                "remove /etc/kubernetes\n"
                                                "   empty\t/var/lib/kubelet  \n"
                                                "\t\n"
                                                "unmount /var/lib/kubelet/pods\n"
                                                "protect /var/lib/kubelet/pods/*/volumes\n"
                                                "remove /run/netns/cni-*");
        size_t n = 0;

        assert_int_equal(m->n_entries, 5);
        check_entry(m, 0, DIRECTIVE_REMOVE, "/etc/kubernetes", 3);
        check_entry(m, 1, DIRECTIVE_EMPTY, "/var/lib/kubelet", 4);
        check_entry(m, 2, DIRECTIVE_UNMOUNT, "/var/lib/kubelet/pods", 6);
        check_entry(m, 3, DIRECTIVE_PROTECT, "/var/lib/kubelet/pods/*/volumes", 7);
        check_entry(m, 4, DIRECTIVE_REMOVE, "/run/netns/cni-*", 8);
        assert_string_equal(m->entries[0].file, "t.conf");
        assert_non_null(m->files);
        assert_string_equal(m->files[0], "t.conf");
        assert_null(m->files[1]);
        assert_int_equal(m->n_files, 1);

        MANIFEST_FOREACH(e, m, DIRECTIVE_REMOVE)
                n++;
        assert_int_equal(n, 2);
}

static void test_last_line_without_newline(void **state) {
        cleanup_manifest Manifest *m = parse_ok("remove /a\nremove /b");

        assert_int_equal(m->n_entries, 2);
        check_entry(m, 1, DIRECTIVE_REMOVE, "/b", 2);
}

static void test_empty_text(void **state) {
        cleanup_manifest Manifest *m = parse_ok("");
        cleanup_manifest Manifest *c = parse_ok("# nothing\n\n   \n");

        assert_int_equal(m->n_entries, 0);
        assert_int_equal(c->n_entries, 0);
        assert_int_equal(c->n_files, 1);
}

static void test_comments(void **state) {
        cleanup_manifest Manifest *m = parse_ok("remove /a # trailing comment\n"
                                                "remove /b\t# after a tab\n"
                                                "remove /c#d\n"
                                                "remove \"/e #f\"\n"
                                                "remove \"/g\" # comment \"with quotes\n"
                                                "    # indented comment\n"
                                                "#remove /h\n");

        assert_int_equal(m->n_entries, 5);
        check_entry(m, 0, DIRECTIVE_REMOVE, "/a", 1);
        check_entry(m, 1, DIRECTIVE_REMOVE, "/b", 2);
        /* '#' inside a word does not start a comment. */
        check_entry(m, 2, DIRECTIVE_REMOVE, "/c#d", 3);
        check_entry(m, 3, DIRECTIVE_REMOVE, "/e #f", 4);
        check_entry(m, 4, DIRECTIVE_REMOVE, "/g", 5);
}

static void test_quoting(void **state) {
        cleanup_manifest Manifest *m = parse_ok("remove \"/var/lib/a b\"\n"
                                                "remove \"/x/q\\\"uote\"\n"
                                                "remove \"/x/back\\\\slash\"\n"
                                                "remove \"/x/new\\nline\"\n"
                                                "remove \"/x/tab\\there\"\n"
                                                "remove \"/x/raw\ttab\"\n"
                                                "\"remove\" /x/quoted-directive\n"
                                                "remove \"/x/unicode-\xc3\xa9\"\n"
                                                "remove /x/bare\\backslash\n");

        assert_int_equal(m->n_entries, 9);
        check_entry(m, 0, DIRECTIVE_REMOVE, "/var/lib/a b", 1);
        check_entry(m, 1, DIRECTIVE_REMOVE, "/x/q\"uote", 2);
        check_entry(m, 2, DIRECTIVE_REMOVE, "/x/back\\slash", 3);
        check_entry(m, 3, DIRECTIVE_REMOVE, "/x/new\nline", 4);
        check_entry(m, 4, DIRECTIVE_REMOVE, "/x/tab\there", 5);
        check_entry(m, 5, DIRECTIVE_REMOVE, "/x/raw\ttab", 6);
        check_entry(m, 6, DIRECTIVE_REMOVE, "/x/quoted-directive", 7);
        check_entry(m, 7, DIRECTIVE_REMOVE, "/x/unicode-\xc3\xa9", 8);
        /* Outside quotes a backslash is an ordinary character. */
        check_entry(m, 8, DIRECTIVE_REMOVE, "/x/bare\\backslash", 9);
}

static void test_simplify(void **state) {
        cleanup_manifest Manifest *m = parse_ok("remove /var/lib//kubelet/\n"
                                                "protect //data///keep/\n"
                                                "empty \"/var/log/pods/\"\n");

        check_entry(m, 0, DIRECTIVE_REMOVE, "/var/lib/kubelet", 1);
        check_entry(m, 1, DIRECTIVE_PROTECT, "/data/keep", 2);
        check_entry(m, 2, DIRECTIVE_EMPTY, "/var/log/pods", 3);
}

static void test_protect_rules(void **state) {
        /* "protect" only needs an absolute, normalised path: system directories and globs are fine. */
        cleanup_manifest Manifest *m = parse_ok("protect /etc\n"
                                                "protect /\n"
                                                "protect /*\n"
                                                "protect /d*/keep\n");

        assert_int_equal(m->n_entries, 4);
        check_entry(m, 1, DIRECTIVE_PROTECT, "/", 2);
        check_error("protect data", "t.conf:1: 'protect' needs an absolute path, got 'data'");
        check_error("protect /a/../b", "t.conf:1: 'protect' refuses '.' and '..' components, got '/a/../b'");
        check_error("protect \"\"", "t.conf:1: 'protect' needs an absolute path, got an empty one");
}

static void test_network_directives(void **state) {
        cleanup_manifest Manifest *m = parse_ok("link kube-ipvs0\n"
                                                "link cali[a-f0-9]*\n"
                                                "link-master cni0\n"
                                                "netns cni-*\n"
                                                "route-proto bird\n"
                                                "route-proto 186\n"
                                                "firewall owned\n"
                                                "chain-prefix KUBE-\n"
                                                "nft-table ip kube-proxy\n"
                                                "ipset cali40*\n"
                                                "ipvs clear\n");
        const ManifestEntry *e = m->entries + 8;

        assert_int_equal(m->n_entries, 11);
        check_entry(m, 0, DIRECTIVE_LINK, "kube-ipvs0", 1);
        check_entry(m, 1, DIRECTIVE_LINK, "cali[a-f0-9]*", 2);
        check_entry(m, 2, DIRECTIVE_LINK_MASTER, "cni0", 3);
        check_entry(m, 3, DIRECTIVE_NETNS, "cni-*", 4);
        check_entry(m, 5, DIRECTIVE_ROUTE_PROTO, "186", 6);
        check_entry(m, 6, DIRECTIVE_FIREWALL, "owned", 7);
        assert_int_equal(e->type, DIRECTIVE_NFT_TABLE);
        assert_int_equal(e->n_args, 2);
        assert_string_equal(e->args[0], "ip");
        assert_string_equal(e->args[1], "kube-proxy");
        assert_null(e->args[2]);
        check_entry(m, 10, DIRECTIVE_IPVS, "clear", 11);
}

static void test_network_directive_errors(void **state) {
#define IFNAME_REASON "needs an interface name or glob without '/', ':' or whitespace"
        check_error("link a/b", "t.conf:1: 'link' " IFNAME_REASON ", got 'a/b'");
        check_error("link eth0:1", "t.conf:1: 'link' " IFNAME_REASON ", got 'eth0:1'");
        check_error("link \"a b\"", "t.conf:1: 'link' " IFNAME_REASON ", got 'a b'");
        check_error("link ..", "t.conf:1: 'link' " IFNAME_REASON ", got '..'");
        check_error("link-master \"\"", "t.conf:1: 'link-master' " IFNAME_REASON ", got ''");
#undef IFNAME_REASON
        check_error("link abcdefghijklmnop",
                    "t.conf:1: 'link' needs an interface name of at most 15 bytes, got 'abcdefghijklmnop'");
        check_error("netns /run/netns/x",
                    "t.conf:1: 'netns' needs a network namespace name or glob without '/', got '/run/netns/x'");
        check_error("route-proto 256", "t.conf:1: 'route-proto' needs a routing protocol name (bird, bgp, zebra, ...) "
                                       "or a number 0-255, got '256'");
        check_error("route-proto 9bird", "t.conf:1: 'route-proto' needs a routing protocol name (bird, bgp, zebra, "
                                         "...) or a number 0-255, got '9bird'");
        check_error("firewall all", "t.conf:1: 'firewall' needs one of owned, flush, keep; got 'all'");
        check_error("firewall", "t.conf:1: 'firewall' takes exactly 1 argument, got 0");
        check_error("chain-prefix abcdefghijklmnopqrstuvwxyz123",
                    "t.conf:1: 'chain-prefix' needs a chain name prefix of 1 to 28 bytes without whitespace, "
                    "got 'abcdefghijklmnopqrstuvwxyz123'");
        check_error("nft-table kube-proxy", "t.conf:1: 'nft-table' takes exactly 2 arguments, got 1");
        check_error("nft-table ipv4 kube-proxy",
                    "t.conf:1: 'nft-table' needs a family (ip, ip6, inet, arp, bridge, netdev), got 'ipv4'");
        check_error("nft-table inet \"\"",
                    "t.conf:1: 'nft-table' needs a table name of 1 to 255 bytes without whitespace, got ''");
        check_error("ipset abcdefghijklmnopqrstuvwxyz123456",
                    "t.conf:1: 'ipset' needs a set name of at most 31 bytes, got 'abcdefghijklmnopqrstuvwxyz123456'");
        check_error("ipvs flush", "t.conf:1: 'ipvs' needs 'clear', got 'flush'");
}

/* ---- errors ---- */

static void test_error_directives(void **state) {
        check_error("remove /a\n\n# c\nremov /b\n", "t.conf:4: unknown directive 'remov'");
        check_error("Remove /a", "t.conf:1: unknown directive 'Remove'");
        check_error("\"\" /a", "t.conf:1: unknown directive ''");
        check_error("remove", "t.conf:1: 'remove' takes exactly 1 argument, got 0");
        check_error("\n\nempty /a /b", "t.conf:3: 'empty' takes exactly 1 argument, got 2");
        check_error("unmount # /a", "t.conf:1: 'unmount' takes exactly 1 argument, got 0");
        check_error("protect /a /b /c", "t.conf:1: 'protect' takes exactly 1 argument, got 3");
}

static void test_error_paths(void **state) {
        check_error("remove /a\n"
                    "remove /b\n"
                    "\n"
                    "# comment\n"
                    "remove /c\n"
                    "\n"
                    "remove etc/kubernetes\n",
                    "t.conf:7: 'remove' needs an absolute path, got 'etc/kubernetes'");
        check_error("remove /var/lib/../../etc",
                    "t.conf:1: 'remove' refuses '.' and '..' components, got '/var/lib/../../etc'");
        check_error("empty /var/./lib", "t.conf:1: 'empty' refuses '.' and '..' components, got '/var/./lib'");
        check_error("remove \"\"", "t.conf:1: 'remove' needs an absolute path, got an empty one");
        check_error("remove /", "t.conf:1: 'remove' refuses the root directory '/'");
        check_error("empty //", "t.conf:1: 'empty' refuses the root directory '/'");
}

#define SYSTEM_PATH(d, p)                               \
        "t.conf:1: '" d "' refuses the system path '" p \
        "' (name it in an 'allow-system-path' line before this one to mean it)"

static void test_error_top_level(void **state) {
        check_error("remove /etc", SYSTEM_PATH("remove", "/etc"));
        /* Simplified first, so a spelling trick does not get past the check. */
        check_error("remove /etc/", SYSTEM_PATH("remove", "/etc"));
        check_error("empty //var//", SYSTEM_PATH("empty", "/var"));
        check_error("unmount /home", SYSTEM_PATH("unmount", "/home"));
        check_error("remove \"/usr\"", SYSTEM_PATH("remove", "/usr"));
        check_error("empty /lib64", SYSTEM_PATH("empty", "/lib64"));
}

/* Issue 15, hole 4: each line the issue found accepted is refused with FILE:LINE and a reason,
 * whichever directive carries it and wherever it stands in the file. */
static void test_error_system_paths(void **state) {
        static const char *const literal[] = {
                "/var/lib",       "/usr/bin",     "/usr/lib",    "/lib/modules", "/etc/ssh",    "/lost+found",
                "/usr/local/bin", "/etc/systemd", "/etc/passwd", "/root/.ssh",   "/home/alice",
        };
        static const struct {
                const char *line, *want;
        } glob[] = {
                { "remove /etc/*",
                  "t.conf:3: 'remove' refuses '/etc/*': the glob could match the system path '/etc/alternatives'" },
                { "remove /usr/*",
                  "t.conf:3: 'remove' refuses '/usr/*': the glob could match the system path '/usr/bin'" },
                { "remove /var/*",
                  "t.conf:3: 'remove' refuses '/var/*': the glob could match the system path '/var/backups'" },
                { "empty /root/*",
                  "t.conf:3: 'empty' refuses '/root/*': the glob could match the system path '/root/.bashrc'" },
                { "remove /home/*",
                  "t.conf:3: 'remove' refuses '/home/*': the glob could match the system path '/home/*'" },
                { "unmount /var/lib/*",
                  "t.conf:3: 'unmount' refuses '/var/lib/*': the glob could match the system path '/var/lib/apt'" },
                { "remove /usr/local/bin/*",
                  "t.conf:3: 'remove' refuses '/usr/local/bin/*': a glob right beneath the system directory "
                  "'/usr/local/bin' could match every entry in it (start it with a literal character)" },
                { "empty \"/etc/systemd/system/*.service\"",
                  "t.conf:3: 'empty' refuses '/etc/systemd/system/*.service': a glob right beneath the system "
                  "directory '/etc/systemd/system' could match every entry in it (start it with a literal character)" },
        };

        for (size_t i = 0; i < ELEMENTSOF(literal); i++)
                for (const char *const *d = (const char *const[]) { "remove", "empty", "unmount", NULL }; *d; d++) {
                        cleanup_free char *text = NULL, *want = NULL;

                        assert_true(asprintf(&text, "remove /etc/kubernetes\n# x\n%s %s\n", *d, literal[i]) > 0);
                        assert_true(asprintf(&want,
                                             "t.conf:3: '%s' refuses the system path '%s' (name it in an "
                                             "'allow-system-path' line before this one to mean it)",
                                             *d, literal[i]) > 0);
                        check_error(text, want);
                }
        for (size_t i = 0; i < ELEMENTSOF(glob); i++) {
                cleanup_free char *text = NULL;

                assert_true(asprintf(&text, "remove /etc/kubernetes\n# x\n%s\n", glob[i].line) > 0);
                check_error(text, glob[i].want);
        }
        /* protect and process reach nothing to remove: the guard is not theirs. */
        cleanup_manifest Manifest *m = parse_ok("protect /etc\nprotect /etc/*\nprocess /usr/bin/kubelet\n");
        assert_int_equal(m->n_entries, 3);
}

/* The opt-in: the exact literal path, before the line it lets through, which is then marked. */
static void test_allow_system_path(void **state) {
        cleanup_manifest Manifest *m = NULL;

        m = parse_ok("allow-system-path /etc/ssh\nremove /etc/ssh\nremove /etc/kubernetes\n"
                     "allow-system-path /var/lib\nempty /var/lib\n");
        assert_int_equal(m->n_entries, 5);
        check_entry(m, 0, DIRECTIVE_ALLOW_SYSTEM_PATH, "/etc/ssh", 1);
        check_entry(m, 1, DIRECTIVE_REMOVE, "/etc/ssh", 2);
        assert_true(m->entries[1].system_path);
        assert_false(m->entries[2].system_path);
        assert_true(m->entries[4].system_path);

        /* After the line, it is too late: the reader must meet the opt-in first. */
        check_error("remove /etc/ssh\nallow-system-path /etc/ssh\n", SYSTEM_PATH("remove", "/etc/ssh"));
        /* Exact: neither a glob beneath it, nor a neighbour, nor its parent. */
        check_error("allow-system-path /etc/ssh\nremove /etc/s*\n",
                    "t.conf:2: 'remove' refuses '/etc/s*': the glob could match the system path '/etc/security'");
        check_error("allow-system-path /usr/local/bin\nremove /usr/local/bin/*\n",
                    "t.conf:2: 'remove' refuses '/usr/local/bin/*': a glob right beneath the system directory "
                    "'/usr/local/bin' could match every entry in it (start it with a literal character)");
        check_error("allow-system-path /etc/ssh\nremove /etc\n",
                    "t.conf:2: 'remove' refuses the system path '/etc' (name it in an 'allow-system-path' line "
                    "before this one to mean it)");
        /* The opt-in itself names one system path, literally; "/" is never one. */
        check_error("allow-system-path /etc/*",
                    "t.conf:1: 'allow-system-path' needs the exact path, not a glob, got '/etc/*'");
        check_error("allow-system-path /etc/kubernetes",
                    "t.conf:1: 'allow-system-path' needs a system path (remove, empty and unmount may name "
                    "'/etc/kubernetes' without it)");
        check_error("allow-system-path /", "t.conf:1: 'allow-system-path' refuses the root directory '/'");
        check_error("allow-system-path etc", "t.conf:1: 'allow-system-path' needs an absolute path, got 'etc'");
        check_error("allow-system-path /etc/ssh /etc/ssl",
                    "t.conf:1: 'allow-system-path' takes a directive that writes or deletes a path, got '/etc/ssl'");
        check_error("allow-system-path /etc/ssh kube-vip",
                    "t.conf:1: 'allow-system-path' takes a directive that writes or deletes a path, got 'kube-vip'");
        check_error("allow-system-path /etc/ssh remove x",
                    "t.conf:1: 'allow-system-path' takes 1 to 2 arguments, got 3");
        check_error("allow-system-path /etc/passwd remove-block\nremove /etc/passwd",
                    "t.conf:2: 'remove' refuses the system path '/etc/passwd' (name it in an 'allow-system-path' line "
                    "before this one to mean it)");
        check_error("remove-block /etc/passwd a b",
                    "t.conf:1: 'remove-block' refuses the system path '/etc/passwd' "
                    "(name it in an 'allow-system-path' line before this one to mean it)");
}

static void test_error_glob_first(void **state) {
        check_error("remove /e*", "t.conf:1: 'remove' refuses a glob in the first component, got '/e*'");
        check_error("empty /*", "t.conf:1: 'empty' refuses a glob in the first component, got '/*'");
        check_error("unmount /[ev]*/x", "t.conf:1: 'unmount' refuses a glob in the first component, got '/[ev]*/x'");
        check_error("remove /?ar/lib", "t.conf:1: 'remove' refuses a glob in the first component, got '/?ar/lib'");
}

static void test_error_quoting(void **state) {
        check_error("remove \"/a", "t.conf:1: unterminated quote");
        check_error("remove /a\nremove \"/a\\\"", "t.conf:2: unterminated quote");
        check_error("remove \"/a\\", "t.conf:1: unterminated quote");
        check_error("remove \"/a\\x\"", "t.conf:1: unknown escape '\\x' in a quoted word");
        check_error("remove \"/a\\r\"", "t.conf:1: unknown escape '\\r' in a quoted word");
        check_error("remove \"/a\"b", "t.conf:1: unexpected 'b' after a closing quote");
        check_error("remove \"/a\"\"b\"", "t.conf:1: unexpected '\"' after a closing quote");
        check_error("remove \"/a\"#c", "t.conf:1: unexpected '#' after a closing quote");
        check_error("remove /a\"b c\"", "t.conf:1: unexpected '\"' inside a word (quote the whole word)");
}

static void test_error_bytes(void **state) {
        char line[4200];

        /* A CRLF file: the "\r" would otherwise end up in the path. */
        check_error("remove /a\r\nremove /b\r\n", "t.conf:1: control character 0x0d (write \\n or \\t inside quotes)");
        check_error("remove /a\n\n\"/b\x1b\"", "t.conf:3: control character 0x1b (write \\n or \\t inside quotes)");
        check_error("remove /a\x7f", "t.conf:1: control character 0x7f (write \\n or \\t inside quotes)");

        /* 4096 bytes is the longest line; comments count too. */
        memset(line, 'a', sizeof(line));
        memcpy(line, "remove /", 8);
        line[4096] = 0;
        {
                cleanup_manifest Manifest *m = parse_ok(line);

                assert_int_equal(strlen(m->entries[0].args[0]), 4096 - 7);
        }
        line[4097] = 0;
        line[4096] = 'a';
        check_error(line, "t.conf:1: line too long (4097 bytes, at most 4096)");
        line[0] = '#';
        check_error(line, "t.conf:1: line too long (4097 bytes, at most 4096)");
}

static void test_error_too_long_once_quoted(void **state) {
        char line[4200];

        /* 2100 unquoted backslashes fit in a line but print as 4200 bytes of "\\" escapes. */
        memcpy(line, "remove /", 8);
        memset(line + 8, '\\', 2100);
        line[8 + 2100] = 0;
        check_error(line, "t.conf:1: 'remove' line too long once quoted (4210 bytes, at most 4096)");

        /* Raw tabs inside quotes print as "\t". */
        memcpy(line, "empty \"/", 8);
        memset(line + 8, '\t', 2050);
        memcpy(line + 8 + 2050, "\"", 2);
        check_error(line, "t.conf:1: 'empty' line too long once quoted (4109 bytes, at most 4096)");

        /* Exactly at the limit is fine, and prints back to a line that parses. */
        memcpy(line, "remove /", 8);
        memset(line + 8, '\\', 2043);
        line[8 + 2043] = 0;
        {
                cleanup_manifest Manifest *m = parse_ok(line), *again = manifest_new();
                cleanup_free char *out = print_to_string(m), *err = NULL;

                assert_int_equal(manifest_parse_string(again, "p", out, NULL, &err), 0);
                assert_int_equal(again->n_entries, 1);
                assert_string_equal(again->entries[0].args[0], m->entries[0].args[0]);
        }
}

static void test_error_include_in_text(void **state) {
        check_error("remove /a\ninclude other.conf\n",
                    "t.conf:2: 'include' is not allowed here (no directory to resolve it against)");
        check_error("include", "t.conf:1: 'include' takes exactly 1 argument, got 0");
        check_error("include a b", "t.conf:1: 'include' takes exactly 1 argument, got 2");
        check_error("include \"\"", "t.conf:1: 'include' needs a file name, got an empty one");
}

static void test_failed_parse_is_atomic(void **state) {
        cleanup_manifest Manifest *m = parse_ok("remove /a\n");
        cleanup_free char *err = NULL;

        assert_int_equal(manifest_parse_string(m, "u.conf", "remove /b\nremove /c\nbogus\n", NULL, &err), -EINVAL);
        assert_string_equal(err, "u.conf:3: unknown directive 'bogus'");
        assert_int_equal(m->n_entries, 1);
        check_entry(m, 0, DIRECTIVE_REMOVE, "/a", 1);
        assert_int_equal(m->n_files, 1);
        assert_string_equal(m->files[0], "t.conf");
        assert_null(m->files[1]);

        /* The manifest stays usable: a later good parse appends. */
        err = mfree(err);
        assert_int_equal(manifest_parse_string(m, "v.conf", "remove /d\n", NULL, &err), 0);
        assert_int_equal(m->n_entries, 2);
        assert_string_equal(m->entries[1].file, "v.conf");
        assert_string_equal(m->files[1], "v.conf");
        assert_null(m->files[2]);
}

static void test_reterr_optional(void **state) {
        cleanup_manifest Manifest *m = manifest_new();

        assert_int_equal(manifest_parse_string(m, "t.conf", "remove /etc\n", NULL, NULL), -EINVAL);
        assert_int_equal(manifest_parse_string(m, "t.conf", NULL, NULL, NULL), -EINVAL);
        assert_int_equal(manifest_parse_file(m, NULL, NULL), -EINVAL);
        assert_null(manifest_free(NULL));
}

/* ---- files and includes ---- */

static void test_file_basic(void **state) {
        const char *dir = *state;
        cleanup_manifest Manifest *m = manifest_new();
        cleanup_free char *path = join(dir, "main.conf"), *err = NULL;

        write_text(dir, "main.conf", "remove /a\n\nempty /b\n");
        assert_int_equal(manifest_parse_file(m, path, &err), 0);
        assert_null(err);
        assert_int_equal(m->n_entries, 2);
        check_entry(m, 1, DIRECTIVE_EMPTY, "/b", 3);
        assert_string_equal(m->entries[1].file, path);
        assert_string_equal(m->files[0], path);
        assert_int_equal(m->n_files, 1);
}

static void test_file_errors(void **state) {
        static const char nul[] = "remove /a\nremove /b\0\nremove /c\n";
        const char *dir = *state;
        cleanup_free char *d = join(dir, "d.conf");

        check_file_error(dir, "nope.conf", -ENOENT, "%s/nope.conf: cannot read: No such file or directory", dir);
        assert_int_equal(mkdir(d, 0755), 0);
        check_file_error(dir, "d.conf", -EISDIR, "%s/d.conf: cannot read: Is a directory", dir);
        write_file(dir, "nul.conf", nul, sizeof(nul) - 1);
        check_file_error(dir, "nul.conf", -EINVAL, "%s/nul.conf:2: NUL byte in the file", dir);
        write_text(dir, "bad.conf", "remove /a\n# fine\nremove /etc\n");
        check_file_error(dir, "bad.conf", -EINVAL,
                         "%s/bad.conf:3: 'remove' refuses the system path '/etc' (name it in an "
                         "'allow-system-path' line before this one to mean it)",
                         dir);
}

static void on_alarm(int sig) {
        (void) sig;
        fail_msg("parsing a FIFO blocked");
}

/* Issue 15: "-m FIFO", "include FIFO" and "manifest check FIFO" waited forever for a writer. A
 * FIFO, a device, a socket: refused before any read, with the file's name. A symlink to a regular
 * file is fine (an operator's /etc/node-reset/manifest.conf may be one). */
static void test_file_not_regular(void **state) {
        const char *dir = *state;
        cleanup_free char *fifo = join(dir, "fifo.conf"), *link = join(dir, "link.conf"), *target = NULL;
        cleanup_manifest Manifest *m = manifest_new();
        cleanup_free char *err = NULL;

        assert_int_equal(mkfifo(fifo, 0600), 0);
        signal(SIGALRM, on_alarm);
        alarm(5);
        check_file_error(dir, "fifo.conf", -EINVAL, "%s/fifo.conf: not a regular file", dir);
        write_text(dir, "inc.conf", "remove /a\ninclude fifo.conf\n");
        check_file_error(dir, "inc.conf", -EINVAL,
                         "%s/inc.conf:2: cannot read include '%s/fifo.conf': not a regular file", dir, dir);
        assert_int_equal(symlink("fifo.conf", link), 0);
        check_file_error(dir, "link.conf", -EINVAL, "%s/link.conf: not a regular file", dir);
        alarm(0);
        signal(SIGALRM, SIG_DFL);

        assert_int_equal(manifest_parse_file(m, "/dev/null", &err), -EINVAL);
        assert_string_equal(err, "/dev/null: not a regular file");
        err = mfree(err);

        write_text(dir, "real.conf", "remove /a\n");
        target = join(dir, "to-real.conf");
        assert_int_equal(symlink("real.conf", target), 0);
        assert_int_equal(manifest_parse_file(m, target, &err), 0);
        assert_null(err);
        assert_int_equal(m->n_entries, 1);
}

static void test_include_relative_nested(void **state) {
        const char *dir = *state;
        cleanup_manifest Manifest *m = manifest_new();
        cleanup_free char *path = join(dir, "main.conf"), *err = NULL;
        cleanup_free char *x = join(dir, "sub/x.conf"), *y = join(dir, "sub/y.conf");

        write_text(dir, "main.conf", "remove /a\ninclude sub/x.conf\nremove /c\n");
        /* Relative to the including file's directory (sub/), not to the top-level file. */
        write_text(dir, "sub/x.conf", "# x\nremove /b\ninclude y.conf\n");
        write_text(dir, "sub/y.conf", "\n\n\nprotect /d\n");
        assert_int_equal(manifest_parse_file(m, path, &err), 0);
        assert_null(err);

        assert_int_equal(m->n_entries, 4);
        check_entry(m, 0, DIRECTIVE_REMOVE, "/a", 1);
        check_entry(m, 1, DIRECTIVE_REMOVE, "/b", 2);
        check_entry(m, 2, DIRECTIVE_PROTECT, "/d", 4);
        check_entry(m, 3, DIRECTIVE_REMOVE, "/c", 3);
        assert_string_equal(m->entries[0].file, path);
        assert_string_equal(m->entries[1].file, x);
        assert_string_equal(m->entries[2].file, y);
        assert_string_equal(m->entries[3].file, path);

        assert_int_equal(m->n_files, 3);
        assert_string_equal(m->files[0], path);
        assert_string_equal(m->files[1], x);
        assert_string_equal(m->files[2], y);
        assert_null(m->files[3]);
}

static void test_include_absolute_and_base_dir(void **state) {
        const char *dir = *state;
        cleanup_manifest Manifest *m = manifest_new();
        cleanup_free char *abs = join(dir, "abs.conf"), *text = NULL, *err = NULL;

        write_text(dir, "abs.conf", "remove /from-abs\n");
        write_text(dir, "rel.conf", "remove /from-rel\n");
        assert_true(asprintf(&text, "include %s\ninclude rel.conf\ninclude \"%s\"\n", abs, abs) > 0);
        /* Embedded text with a base directory may include; the second include of a file is no cycle. */
        assert_int_equal(manifest_parse_string(m, "embedded", text, dir, &err), 0);
        assert_null(err);
        assert_int_equal(m->n_entries, 3);
        check_entry(m, 0, DIRECTIVE_REMOVE, "/from-abs", 1);
        check_entry(m, 1, DIRECTIVE_REMOVE, "/from-rel", 1);
        check_entry(m, 2, DIRECTIVE_REMOVE, "/from-abs", 1);
        assert_int_equal(m->n_files, 4);
        assert_string_equal(m->files[0], "embedded");
        assert_string_equal(m->files[1], abs);
}

static void test_include_errors_report_included_file(void **state) {
        const char *dir = *state;

        write_text(dir, "main.conf", "remove /a\ninclude sub/x.conf\n");
        write_text(dir, "sub/x.conf", "remove /b\n\nbogus /c\n");
        check_file_error(dir, "main.conf", -EINVAL, "%s/sub/x.conf:3: unknown directive 'bogus'", dir);

        write_text(dir, "miss.conf", "remove /a\n\ninclude missing.conf\n");
        check_file_error(dir, "miss.conf", -ENOENT,
                         "%s/miss.conf:3: cannot read include '%s/missing.conf': No such file or directory", dir, dir);

        write_text(dir, "deepmiss.conf", "include sub/z.conf\n");
        write_text(dir, "sub/z.conf", "remove /z\ninclude nothere.conf\n");
        check_file_error(dir, "deepmiss.conf", -ENOENT,
                         "%s/sub/z.conf:2: cannot read include '%s/sub/nothere.conf': No such file or directory", dir,
                         dir);
}

static void test_include_cycle(void **state) {
        const char *dir = *state;

        write_text(dir, "self.conf", "remove /a\ninclude self.conf\n");
        check_file_error(dir, "self.conf", -EINVAL,
                         "%s/self.conf:2: include cycle: '%s/self.conf' is already being read", dir, dir);

        write_text(dir, "a.conf", "include b.conf\n");
        write_text(dir, "b.conf", "remove /b\ninclude sub/c.conf\n");
        /* Another spelling of the same file is still the same file. */
        write_text(dir, "sub/c.conf", "include ../sub/../a.conf\n");
        check_file_error(dir, "a.conf", -EINVAL,
                         "%s/sub/c.conf:1: include cycle: '%s/sub/../sub/../a.conf' is already being read", dir, dir);
}

static void test_include_depth(void **state) {
        const char *dir = *state;
        cleanup_manifest Manifest *m = manifest_new();
        cleanup_free char *first = join(dir, "f0.conf"), *err = NULL;

        /* f0 includes f1 ... includes f8: eight levels of nesting are allowed. */
        for (int i = 0; i <= 8; i++) {
                char name[32], text[64];

                snprintf(name, sizeof(name), "f%d.conf", i);
                if (i < 8)
                        snprintf(text, sizeof(text), "remove /f%d\ninclude f%d.conf\n", i, i + 1);
                else
                        snprintf(text, sizeof(text), "remove /f%d\n", i);
                write_text(dir, name, text);
        }
        assert_int_equal(manifest_parse_file(m, first, &err), 0);
        assert_null(err);
        assert_int_equal(m->n_entries, 9);
        assert_int_equal(m->n_files, 9);

        /* A ninth level is refused where it is asked for. */
        write_text(dir, "f8.conf", "remove /f8\ninclude f9.conf\n");
        write_text(dir, "f9.conf", "remove /f9\n");
        check_file_error(dir, "f0.conf", -EINVAL,
                         "%s/f8.conf:2: 'include' nested too deeply (at most 8 levels), at 'f9.conf'", dir);
}

/* ---- printing ---- */

static void assert_same_entries(const Manifest *a, const Manifest *b) {
        assert_int_equal(a->n_entries, b->n_entries);
        for (size_t i = 0; i < a->n_entries; i++) {
                assert_int_equal(a->entries[i].type, b->entries[i].type);
                assert_int_equal(a->entries[i].n_args, b->entries[i].n_args);
                for (size_t j = 0; j < a->entries[i].n_args; j++)
                        assert_string_equal(a->entries[i].args[j], b->entries[i].args[j]);
        }
}

static void test_print(void **state) {
        cleanup_manifest Manifest *m = parse_ok("remove /var/lib/kubelet//\n"
                                                "remove \"/var/lib/a b\"\n"
                                                "empty \"/x/tab\there\"\n"
                                                "unmount \"/x/new\\nline\"\n"
                                                "protect \"/x/q\\\"uote\"\n"
                                                "protect /x/back\\slash\n"
                                                "remove /x/hash#\n"
                                                "remove \"/x/#lead\"\n"
                                                "remove /x/unicode-\xc3\xa9\n");
        cleanup_free char *out = print_to_string(m);

        assert_string_equal(out, "# node-reset manifest, read from:\n"
                                 "#   t.conf\n"
                                 "remove /var/lib/kubelet\n"
                                 "remove \"/var/lib/a b\"\n"
                                 "empty \"/x/tab\\there\"\n"
                                 "unmount \"/x/new\\nline\"\n"
                                 "protect \"/x/q\\\"uote\"\n"
                                 "protect \"/x/back\\\\slash\"\n"
                                 "remove \"/x/hash#\"\n"
                                 "remove \"/x/#lead\"\n"
                                 "remove /x/unicode-\xc3\xa9\n");
}

static void test_print_round_trip(void **state) {
        cleanup_manifest Manifest *m = parse_ok("remove \"/var/lib/a b\"\n"
                                                "remove \"/  \t\\t\\n\\\\\\\"#x/y\"\n"
                                                "empty /x/back\\slash\\\n"
                                                "unmount /var/lib/kubelet/pods\n"
                                                "protect /var/lib/kubelet/pods/*/volumes\n"
                                                "protect \"/x/#\"\n"
                                                "remove /x/cali[a-f0-9]*\n");
        cleanup_manifest Manifest *again = manifest_new();
        cleanup_free char *out = print_to_string(m), *out2 = NULL, *err = NULL;

        assert_int_equal(manifest_parse_string(again, "t.conf", out, NULL, &err), 0);
        assert_null(err);
        assert_same_entries(m, again);
        /* Printing is a fixed point. */
        out2 = print_to_string(again);
        assert_string_equal(out, out2);
}

static void test_print_files_header(void **state) {
        const char *dir = *state;
        cleanup_manifest Manifest *m = manifest_new(), *again = manifest_new();
        cleanup_free char *path = join(dir, "a b.conf"), *out = NULL, *want = NULL, *err = NULL;

        write_text(dir, "a b.conf", "remove /a\ninclude sub/x.conf\n");
        write_text(dir, "sub/x.conf", "remove /b\n");
        assert_int_equal(manifest_parse_file(m, path, &err), 0);
        out = print_to_string(m);
        assert_true(asprintf(&want,
                             "# node-reset manifest, read from:\n"
                             "#   \"%s/a b.conf\"\n"
                             "#   %s/sub/x.conf\n"
                             "remove /a\n"
                             "remove /b\n",
                             dir, dir) > 0);
        assert_string_equal(out, want);
        assert_int_equal(manifest_parse_string(again, "p", out, NULL, &err), 0);
        assert_same_entries(m, again);
}

/* Every shipped manifest must parse (the system-path guard included: none may need an opt-in but for
 * an edit, remove-block, of /etc/resolv.conf) and survive the round trip (tests run from the source root). */
static void test_shipped_manifests(void **state) {
        glob_t g = {};

        if (glob("manifests/*.conf", 0, NULL, &g) != 0)
                skip();
        assert_true(g.gl_pathc >= 5);
        for (size_t i = 0; i < g.gl_pathc; i++) {
                cleanup_manifest Manifest *m = manifest_new(), *again = manifest_new();
                cleanup_free char *out = NULL, *err = NULL;

                if (manifest_parse_file(m, g.gl_pathv[i], &err) < 0)
                        fail_msg("%s", err);
                assert_true(m->n_entries > 0);
                for (size_t j = 0; j < m->n_entries; j++) {
                        const ManifestEntry *e = &m->entries[j];
                        bool edit_opt_in = e->type == DIRECTIVE_ALLOW_SYSTEM_PATH && e->args[1] &&
                                           streq(e->args[1], "remove-block");

                        if ((e->system_path && e->type != DIRECTIVE_REMOVE_BLOCK) ||
                            (e->type == DIRECTIVE_ALLOW_SYSTEM_PATH && !edit_opt_in))
                                fail_msg("%s:%u needs allow-system-path", g.gl_pathv[i], e->line);
                }
                out = print_to_string(m);
                assert_int_equal(manifest_parse_string(again, "printed", out, NULL, &err), 0);
                assert_same_entries(m, again);
        }
        globfree(&g);
}

static void test_print_write_error(void **state) {
        cleanup_manifest Manifest *m = parse_ok("remove /a\n");
        FILE *f = fopen("/dev/full", "we");

        if (!f)
                skip();
        assert_int_equal(manifest_print(m, f), -ENOSPC);
        fclose(f);
}

/* Tests that need a scratch directory get a fresh one, removed afterwards. */
#define TMPDIR_TEST(t) cmocka_unit_test_setup_teardown(t, tmpdir_setup, tmpdir_teardown)

/* Every phase names a planned action's line the same way. */
static void test_entry_reason(void **state) {
        Manifest *m = parse_ok("# c\nremove /var/lib/kubelet\nunit kubelet.service stop,disable early\n"
                               "nft-table ip kube-proxy\n");
        cleanup_free char *a = NULL, *b = NULL, *c = NULL;

        assert_int_equal(m->n_entries, 3);
        a = manifest_entry_reason(&m->entries[0]);
        b = manifest_entry_reason(&m->entries[1]);
        c = manifest_entry_reason(&m->entries[2]);
        assert_string_equal(a, "t.conf:2: remove /var/lib/kubelet");
        assert_string_equal(b, "t.conf:3: unit kubelet.service stop,disable early");
        assert_string_equal(c, "t.conf:4: nft-table ip kube-proxy");
        manifest_free(m);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_directive_names),
                cmocka_unit_test(test_basic),
                cmocka_unit_test(test_last_line_without_newline),
                cmocka_unit_test(test_empty_text),
                cmocka_unit_test(test_comments),
                cmocka_unit_test(test_quoting),
                cmocka_unit_test(test_simplify),
                cmocka_unit_test(test_protect_rules),
                cmocka_unit_test(test_network_directives),
                cmocka_unit_test(test_network_directive_errors),
                cmocka_unit_test(test_error_directives),
                cmocka_unit_test(test_error_paths),
                cmocka_unit_test(test_error_top_level),
                cmocka_unit_test(test_error_system_paths),
                cmocka_unit_test(test_allow_system_path),
                cmocka_unit_test(test_error_glob_first),
                cmocka_unit_test(test_error_quoting),
                cmocka_unit_test(test_error_bytes),
                cmocka_unit_test(test_error_too_long_once_quoted),
                cmocka_unit_test(test_error_include_in_text),
                cmocka_unit_test(test_failed_parse_is_atomic),
                cmocka_unit_test(test_reterr_optional),
                TMPDIR_TEST(test_file_basic),
                TMPDIR_TEST(test_file_errors),
                TMPDIR_TEST(test_file_not_regular),
                TMPDIR_TEST(test_include_relative_nested),
                TMPDIR_TEST(test_include_absolute_and_base_dir),
                TMPDIR_TEST(test_include_errors_report_included_file),
                TMPDIR_TEST(test_include_cycle),
                TMPDIR_TEST(test_include_depth),
                cmocka_unit_test(test_print),
                cmocka_unit_test(test_print_round_trip),
                TMPDIR_TEST(test_print_files_header),
                cmocka_unit_test(test_shipped_manifests),
                cmocka_unit_test(test_print_write_error),
                cmocka_unit_test(test_entry_reason),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
