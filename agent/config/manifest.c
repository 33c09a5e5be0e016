/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The reset manifest parser: words, quoting, a directive table, includes, and a printer that round-trips. */

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/os/fileio.h"
#include "agent/config/manifest.h"
#include "agent/base/path.h"
#include "agent/config/profile.h"
#include "netreset/conntrack.h"
#include "netreset/route.h"
#include "netreset/fib-rule.h"
#include "alloc-util.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"

#define MANIFEST_LINE_MAX 4096U
#define MANIFEST_INCLUDE_DEPTH_MAX 8U
/* Far beyond any real manifest; it stops "include /dev/zero" from eating the memory. */
#define MANIFEST_FILE_SIZE_MAX (4U * 1024U * 1024U)
/* file_load()'s answer for a FIFO, socket or device; read_error() words it, no errno does. */
#define ERRNO_NOT_REGULAR EBADFD /* what fileio_read_regular() says of one */
/* What separates words, and what a quoted word may hold that a name never may. */
#define WHITESPACE " \t\n"

/* Checks (and may normalise in place) the arguments of a directive. On failure returns -EINVAL
 * and a verb phrase in *ret_reason that reads after the quoted directive name. */
typedef int (*directive_validate_t)(char **args, char **ret_reason);

typedef struct DirectiveRow {
        const char *name;
        size_t min_args;
        size_t max_args;
        directive_validate_t validate;
        bool writes; /* writes to or deletes its path argument: under the system-path guard */
} DirectiveRow;

/* Where a line came from, for every message. */
typedef struct Where {
        const char *file;
        unsigned line;
} Where;

/* One text being parsed; the parent chain is the include stack, used to detect cycles. */
typedef struct Source {
        const char *name;
        bool is_file;         /* relative includes resolve against the directory of name */
        const char *base_dir; /* for text: where relative includes resolve; NULL refuses include */
        dev_t dev;
        ino_t ino;
        unsigned depth;
        const struct Source *parent;
} Source;

static int validate_target(char **args, char **ret_reason) {
        /* "//" and a trailing "/" are harmless spelling; "." and ".." are not, and stay errors. */
        path_simplify(args[0]);
        return path_validate_target(args[0], ret_reason);
}

static int validate_absolute(char **args, char **ret_reason) {
        path_simplify(args[0]);
        return path_validate_absolute(args[0], ret_reason);
}

static bool str_in_list(const char *s, const char *const *list) {
        for (; *list; list++)
                if (streq(s, *list))
                        return true;
        return false;
}

/* The kernel's dev_valid_name(): no '/', ':' or whitespace, not "." or "..", under IFNAMSIZ. A
 * glob may be longer than the names it matches. */
static int validate_ifname(char **args, char **ret_reason) {
        const char *n = args[0];

        if (isempty(n) || streq(n, ".") || streq(n, "..") || strpbrk(n, "/:" WHITESPACE))
                return set_errmsg(ret_reason, -EINVAL,
                                  "needs an interface name or glob without '/', ':' or whitespace, got '%s'", n);
        if (!path_component_is_glob(n) && strlen(n) >= IFNAMSIZ)
                return set_errmsg(ret_reason, -EINVAL, "needs an interface name of at most %d bytes, got '%s'",
                                  IFNAMSIZ - 1, n);
        return 0;
}

/* Named network namespaces are files in /run/netns: one path component. */
static int validate_netns(char **args, char **ret_reason) {
        const char *n = args[0];

        if (isempty(n) || streq(n, ".") || streq(n, "..") || strchr(n, '/') || strlen(n) > NAME_MAX)
                return set_errmsg(ret_reason, -EINVAL, "needs a network namespace name or glob without '/', got '%s'",
                                  n);
        return 0;
}

/* A number 0-255 or one of the protocol names the network phase knows (iproute2's rt_protos). */
static int validate_route_proto(char **args, char **ret_reason) {
        if (route_proto_from_string(args[0]) < 0)
                return set_errmsg(ret_reason, -EINVAL,
                                  "needs a routing protocol name (bird, bgp, zebra, ...) or a number 0-255, got '%s'",
                                  args[0]);
        return 0;
}

/* The kernel's own tables (main, local, default) are never a CNI's. */
static int validate_rule_table(char **args, char **ret_reason) {
        size_t n = strv_length(args);
        RuleMatch m;

        if (rule_match_from_args(args, n, &m) < 0)
                return set_errmsg(ret_reason, -EINVAL,
                                  "needs TABLE (1-4294967295, not 253, 254 or 255), then optionally [!]MARK/MASK "
                                  "(the mark within a non-zero mask, '!' for 'not fwmark') and PREF, got '%s%s%s'",
                                  args[0], n > 1 ? " " : "", n > 1 ? args[1] : "");
        return 0;
}

/* Program names: at most 15 bytes of letters, digits, '_' and '.' (bpf_obj_name_cpy()). */
static int validate_bpf_prog(char **args, char **ret_reason) {
        const char *n = args[0];

        if (isempty(n) || strlen(n) > 15 ||
            strspn(n, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.") != strlen(n))
                return set_errmsg(ret_reason, -EINVAL,
                                  "needs a program name prefix of 1 to 15 letters, digits, '_' or '.', got '%s'", n);
        return 0;
}

static int validate_firewall(char **args, char **ret_reason) {
        static const char *const modes[] = { "owned", "flush", "keep", NULL };

        if (!str_in_list(args[0], modes))
                return set_errmsg(ret_reason, -EINVAL, "needs one of owned, flush, keep; got '%s'", args[0]);
        return 0;
}

/* xtables chain names have at most 28 bytes (XT_EXTENSION_MAXNAMELEN - 1). */
static int validate_chain_prefix(char **args, char **ret_reason) {
        const char *n = args[0];

        if (isempty(n) || strlen(n) > 28 || strpbrk(n, WHITESPACE))
                return set_errmsg(ret_reason, -EINVAL,
                                  "needs a chain name prefix of 1 to 28 bytes without whitespace, got '%s'", n);
        return 0;
}

static int validate_nft_table(char **args, char **ret_reason) {
        static const char *const families[] = { "ip", "ip6", "inet", "arp", "bridge", "netdev", NULL };

        if (!str_in_list(args[0], families))
                return set_errmsg(ret_reason, -EINVAL, "needs a family (ip, ip6, inet, arp, bridge, netdev), got '%s'",
                                  args[0]);
        /* NFT_NAME_MAXLEN is 256 with the NUL. */
        if (isempty(args[1]) || strlen(args[1]) > 255 || strpbrk(args[1], WHITESPACE))
                return set_errmsg(ret_reason, -EINVAL,
                                  "needs a table name of 1 to 255 bytes without whitespace, got '%s'", args[1]);
        return 0;
}

/* IPSET_MAXNAMELEN is 32 with the NUL; a glob may be longer than the names it matches. */
static int validate_ipset(char **args, char **ret_reason) {
        const char *n = args[0];

        if (isempty(n) || strpbrk(n, WHITESPACE))
                return set_errmsg(ret_reason, -EINVAL, "needs a set name or glob without whitespace, got '%s'", n);
        if (!path_component_is_glob(n) && strlen(n) > 31)
                return set_errmsg(ret_reason, -EINVAL, "needs a set name of at most 31 bytes, got '%s'", n);
        return 0;
}

static int validate_ipvs(char **args, char **ret_reason) {
        if (!streq(args[0], "clear") && !streq(args[0], "flush-all"))
                return set_errmsg(ret_reason, -EINVAL, "needs 'clear' (kube-proxy's services) or 'flush-all', got '%s'",
                                  args[0]);
        return 0;
}

/* A glob must name something before it matches: a unit glob of a bare star would reach every unit,
 * and a process path ending in one every program in its directory. */
static bool starts_literal(const char *s) {
        return !isempty(s) && !strchr("*?[", s[0]);
}

static const char *const unit_suffixes[] = {
        ".service", ".socket", ".target", ".device", ".mount", ".automount",
        ".swap",    ".timer",  ".path",   ".slice",  ".scope", NULL,
};

static bool unit_has_suffix(const char *n) {
        const char *dot = strrchr(n, '.');

        return dot && dot != n && str_in_list(dot, unit_suffixes);
}

/* systemd's unit name characters, plus the glob characters of ListUnitsByPatterns(). */
#define UNIT_NAME_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789:-_.\\@"
#define UNIT_GLOB_CHARS "*?[]!"

/* Like systemctl, a name without a unit type means a service: "kubelet" is "kubelet.service", and
 * a glob "k3s*" is "k3s*.service". The name is rewritten in place. */
static int unit_name_normalise(char **name, char **ret_reason) {
        char *n = *name, *t;

        if (!starts_literal(n) || n[0] == '.' || strspn(n, UNIT_NAME_CHARS UNIT_GLOB_CHARS) != strlen(n))
                return set_errmsg(ret_reason, -EINVAL,
                                  "needs a unit name or a glob that starts with a letter or digit, got '%s'", n);
        if (!unit_has_suffix(n)) {
                if (asprintf(&t, "%s.service", n) < 0)
                        return -ENOMEM;
                free(n);
                *name = n = t;
        }
        /* UNIT_NAME_MAX is 256 with the NUL. */
        if (strlen(n) > 255)
                return set_errmsg(ret_reason, -EINVAL, "needs a unit name of at most 255 bytes, got '%s'", n);
        return 0;
}

/* ACTIONS: a comma list of stop, disable and mask, each at most once. */
static int unit_actions_validate(const char *list, char **ret_reason) {
        static const char *const verbs[] = { "stop", "disable", "mask", NULL };
        unsigned seen = 0;

        for (const char *p = list;;) {
                size_t n = strcspn(p, ",");
                unsigned bit = 0;

                for (unsigned i = 0; verbs[i]; i++)
                        if (strlen(verbs[i]) == n && strncmp(p, verbs[i], n) == 0)
                                bit = 1U << i;
                if (bit == 0 || (seen & bit))
                        return set_errmsg(ret_reason, -EINVAL,
                                          "needs ACTIONS as a comma list of stop, disable, mask (each once), got '%s'",
                                          list);
                seen |= bit;
                if (p[n] == 0)
                        return 0;
                p += n + 1;
        }
}

static int validate_unit(char **args, char **ret_reason) {
        static const char *const whens[] = { "early", "late", NULL };
        int r;

        r = unit_name_normalise(&args[0], ret_reason);
        if (r < 0)
                return r;
        r = unit_actions_validate(args[1], ret_reason);
        if (r < 0)
                return r;
        if (!str_in_list(args[2], whens))
                return set_errmsg(ret_reason, -EINVAL, "needs WHEN 'early' (before pods) or 'late', got '%s'", args[2]);
        return 0;
}

/* The opt-in for a system path names it exactly, as the line it lets through will: a literal path
 * that path_guard_check() refuses, and never "/". Anything else would be an opt-in that allows
 * nothing, or more than it says. */
static const DirectiveRow directive_table[_DIRECTIVE_MAX];

static int validate_allow_system_path(char **args, char **ret_reason) {
        DirectiveType t;
        int r;

        r = validate_target(args, ret_reason);
        if (r < 0)
                return r;
        if (path_is_glob(args[0]))
                return set_errmsg(ret_reason, -EINVAL, "needs the exact path, not a glob, got '%s'", args[0]);
        if (!path_is_guarded(args[0]))
                return set_errmsg(ret_reason, -EINVAL,
                                  "needs a system path (remove, empty and unmount may name '%s' without it)", args[0]);
        /* An optional directive narrows the opt-in to its lines: "remove-block" lets an edit of
         * /etc/resolv.conf through, never a "remove" of it. */
        t = args[1] ? directive_type_from_string(args[1]) : _DIRECTIVE_INVALID;
        if (args[1] && (t < 0 || !directive_table[t].writes))
                return set_errmsg(ret_reason, -EINVAL, "takes a directive that writes or deletes a path, got '%s'",
                                  args[1]);
        return 0;
}

/* An executable's full path, globs allowed per component; its file name must start literally. */
static int validate_process(char **args, char **ret_reason) {
        const char *base;
        int r;

        path_simplify(args[0]);
        r = path_validate_target(args[0], ret_reason);
        if (r < 0)
                return r;
        base = strrchr(args[0], '/') + 1;
        if (!starts_literal(base))
                return set_errmsg(ret_reason, -EINVAL,
                                  "needs an executable name that starts with a literal character, got '%s'", args[0]);
        return 0;
}

/* A cgroup at the top of a hierarchy, named exactly: kubelet's is "kubepods". */
static int validate_cgroup(char **args, char **ret_reason) {
        const char *n = args[0];

        if (isempty(n) || streq(n, ".") || streq(n, "..") || strlen(n) > NAME_MAX || strpbrk(n, "/*?[\\"))
                return set_errmsg(ret_reason, -EINVAL, "needs a cgroup name without '/' or a glob, got '%s'", n);
        return 0;
}

/* A CRI (or Docker) socket: "unix:///PATH" or a plain absolute PATH; sockaddr_un holds at most 107
 * bytes. */
static int validate_cri_endpoint(char **args, char **ret_reason) {
        const char *p = startswith(args[0], "unix://") ?: args[0];
        cleanup_free char *err = NULL;

        if (path_validate_absolute(p, &err) < 0 || strlen(p) > 107)
                return set_errmsg(ret_reason, -EINVAL,
                                  "needs unix:///PATH or an absolute PATH of at most 107 bytes, got '%s'", args[0]);
        return 0;
}

/* A file's exact path (the edit reaches one file, never a glob's worth), and two marker lines that can
 * be told apart. */
static int validate_remove_block(char **args, char **ret_reason) {
        int r;

        r = validate_target(args, ret_reason);
        if (r < 0)
                return r;
        if (path_is_glob(args[0]))
                return set_errmsg(ret_reason, -EINVAL, "needs the exact path of a file, not a glob, got '%s'", args[0]);
        for (unsigned i = 1; i <= 2; i++)
                if (isempty(args[i]) || strpbrk(args[i], "\n\r"))
                        return set_errmsg(ret_reason, -EINVAL, "needs a non-empty %s marker line, got '%s'",
                                          i == 1 ? "begin" : "end", args[i]);
        if (streq(args[1], args[2]))
                return set_errmsg(ret_reason, -EINVAL, "needs different begin and end markers, got '%s' twice",
                                  args[1]);
        return 0;
}

/* The static pod manifest is read, never removed, by this line: a literal file path. */
static int validate_kube_vip(char **args, char **ret_reason) {
        int r;

        r = validate_target(args, ret_reason);
        if (r < 0)
                return r;
        if (path_is_glob(args[0]))
                return set_errmsg(ret_reason, -EINVAL, "needs the exact path of a manifest, not a glob, got '%s'",
                                  args[0]);
        return 0;
}

/* A symlink to remove and the one file it must lead to: two literal paths. The link is checked like
 * any removal target (system paths refused); the target is only compared, never touched. */
static int validate_remove_symlink_to(char **args, char **ret_reason) {
        int r;

        r = validate_target(args, ret_reason);
        if (r < 0)
                return r;
        if (path_is_glob(args[0]))
                return set_errmsg(ret_reason, -EINVAL, "needs the exact path of a symlink, not a glob, got '%s'",
                                  args[0]);
        r = validate_absolute(args + 1, ret_reason);
        if (r < 0)
                return r;
        if (path_is_glob(args[1]) || streq(args[1], "/"))
                return set_errmsg(ret_reason, -EINVAL, "needs the exact path of the file it leads to, got '%s'",
                                  args[1]);
        if (streq(args[0], args[1]))
                return set_errmsg(ret_reason, -EINVAL, "needs a target other than the symlink itself, got '%s' twice",
                                  args[0]);
        return 0;
}

static int validate_conntrack(char **args, char **ret_reason) {
        CtPrefix p;

        if (!streq(args[0], "cluster") && ct_prefix_parse(args[0], &p) < 0)
                return set_errmsg(ret_reason, -EINVAL, "needs 'cluster' or an address or prefix, got '%s'", args[0]);
        return 0;
}

/* A new directive is one enum value in manifest.h plus one row here; the unit test checks that
 * every enum value has its row. */
static const DirectiveRow directive_table[_DIRECTIVE_MAX] = {
        [DIRECTIVE_REMOVE] = { "remove", 1, 1, validate_target, .writes = true },
        [DIRECTIVE_EMPTY] = { "empty", 1, 1, validate_target, .writes = true },
        [DIRECTIVE_UNMOUNT] = { "unmount", 1, 1, validate_target, .writes = true },
        [DIRECTIVE_PROTECT] = { "protect", 1, 1, validate_absolute },
        [DIRECTIVE_LINK] = { "link", 1, 1, validate_ifname },
        [DIRECTIVE_LINK_MASTER] = { "link-master", 1, 1, validate_ifname },
        [DIRECTIVE_NETNS] = { "netns", 1, 1, validate_netns },
        [DIRECTIVE_ROUTE_PROTO] = { "route-proto", 1, 1, validate_route_proto },
        [DIRECTIVE_RULE_TABLE] = { "rule-table", 1, 3, validate_rule_table },
        [DIRECTIVE_BPF_PROG] = { "bpf-prog", 1, 1, validate_bpf_prog },
        [DIRECTIVE_BPF_CGROUP] = { "bpf-cgroup", 1, 1, validate_absolute },
        [DIRECTIVE_BPF_PIN] = { "bpf-pin", 1, 1, validate_target, .writes = true },
        [DIRECTIVE_BPF_MOUNT] = { "bpf-mount", 1, 1, validate_absolute, .writes = true },
        [DIRECTIVE_FIREWALL] = { "firewall", 1, 1, validate_firewall },
        [DIRECTIVE_CHAIN_PREFIX] = { "chain-prefix", 1, 1, validate_chain_prefix },
        [DIRECTIVE_NFT_TABLE] = { "nft-table", 2, 2, validate_nft_table },
        [DIRECTIVE_IPSET] = { "ipset", 1, 1, validate_ipset },
        [DIRECTIVE_IPVS] = { "ipvs", 1, 1, validate_ipvs },
        [DIRECTIVE_UNIT] = { "unit", 3, 3, validate_unit },
        [DIRECTIVE_PROCESS] = { "process", 1, 1, validate_process },
        [DIRECTIVE_CGROUP] = { "cgroup", 1, 1, validate_cgroup },
        [DIRECTIVE_CRI_ENDPOINT] = { "cri-endpoint", 1, 1, validate_cri_endpoint },
        [DIRECTIVE_ALLOW_SYSTEM_PATH] = { "allow-system-path", 1, 2, validate_allow_system_path },
        [DIRECTIVE_REMOVE_BLOCK] = { "remove-block", 3, 3, validate_remove_block, .writes = true },
        [DIRECTIVE_KUBE_VIP] = { "kube-vip", 1, 1, validate_kube_vip },
        [DIRECTIVE_REMOVE_SYMLINK_TO] = { "remove-symlink-to", 2, 2, validate_remove_symlink_to, .writes = true },
        [DIRECTIVE_CONNTRACK] = { "conntrack", 1, 1, validate_conntrack },
        [DIRECTIVE_DOCKER_ENDPOINT] = { "docker-endpoint", 1, 1, validate_cri_endpoint },
};

const char *directive_type_to_string(DirectiveType t) {
        if (t < 0 || t >= _DIRECTIVE_MAX)
                return NULL;
        return directive_table[t].name;
}

DirectiveType directive_type_from_string(const char *s) {
        if (!s)
                return _DIRECTIVE_INVALID;
        for (DirectiveType t = 0; t < _DIRECTIVE_MAX; t++)
                if (streq_ptr(directive_table[t].name, s))
                        return t;
        return _DIRECTIVE_INVALID;
}

Manifest *manifest_new(void) {
        return calloc(1, sizeof(Manifest));
}

static void manifest_entry_done(ManifestEntry *e) {
        strv_free(e->args);
        free(e->file);
}

/* Drop what was added after the first n_entries entries and n_files files, so that a failed
 * parse leaves the manifest as it found it. */
static void manifest_truncate(Manifest *m, size_t n_entries, size_t n_files) {
        for (size_t i = n_entries; i < m->n_entries; i++)
                manifest_entry_done(m->entries + i);
        m->n_entries = n_entries;
        for (size_t i = n_files; i < m->n_files; i++)
                m->files[i] = mfree(m->files[i]);
        m->n_files = n_files;
}

Manifest *manifest_free(Manifest *m) {
        if (!m)
                return NULL;
        manifest_truncate(m, 0, 0);
        free(m->entries);
        strv_free(m->files);
        return mfree(m);
}

/* Record a source in m->files; the vector stays NULL-terminated at every step. */
static int manifest_add_file(Manifest *m, const char *name) {
        int r;

        /* manifest_truncate() leaves files[n_files] NULL: strv_extend() appends right there. */
        r = strv_extend(&m->files, name);
        if (r < 0)
                return r;
        m->n_files++;
        return 0;
}

static int where_error(const Where *w, char **reterr, int r, const char *fmt, ...) _printf_(4, 5);
static int where_error(const Where *w, char **reterr, int r, const char *fmt, ...) {
        cleanup_free char *msg = NULL;
        va_list ap;

        va_start(ap, fmt);
        msg = vstrprintf(fmt, ap);
        va_end(ap);
        if (!msg)
                return r;
        if (w->line > 0)
                return set_errmsg(reterr, r, "%s:%u: %s", w->file, w->line, msg);
        return set_errmsg(reterr, r, "%s: %s", w->file, msg);
}

/* Tabs are the only control character a line may hold raw: a stray "\r" from a CRLF file would
 * otherwise become part of a protected path and silently protect nothing. */
static int line_check_bytes(const char *s, size_t len, const Where *w, char **reterr) {
        if (len > MANIFEST_LINE_MAX)
                return where_error(w, reterr, -EINVAL, "line too long (%zu bytes, at most %u)", len, MANIFEST_LINE_MAX);
        for (size_t i = 0; i < len; i++) {
                unsigned char c = s[i];

                if (c == 0)
                        return where_error(w, reterr, -EINVAL, "NUL byte in the file");
                if ((c < 0x20 && c != '\t') || c == 0x7f)
                        return where_error(w, reterr, -EINVAL,
                                           "control character 0x%02x (write \\n or \\t inside quotes)", c);
        }
        return 0;
}

static bool is_blank(char c) {
        return c == ' ' || c == '\t';
}

static int unescape(char c, char *ret) {
        switch (c) {
        case '"':
        case '\\':
                *ret = c;
                return 0;
        case 'n':
                *ret = '\n';
                return 0;
        case 't':
                *ret = '\t';
                return 0;
        default:
                return -EINVAL;
        }
}

/* *p is just past the opening quote; on success it is just past the closing one. */
static int word_quoted(const char **p, const char *end, char **ret, const Where *w, char **reterr) {
        cleanup_free char *word = malloc(end - *p + 1);
        const char *q = *p;
        size_t n = 0;

        if (!word)
                return where_error(w, reterr, -ENOMEM, "out of memory");
        for (; q < end && *q != '"'; q++) {
                if (*q != '\\') {
                        word[n++] = *q;
                        continue;
                }
                if (++q == end)
                        break;
                if (unescape(*q, word + n++) < 0)
                        return where_error(w, reterr, -EINVAL, "unknown escape '\\%c' in a quoted word", *q);
        }
        if (q == end)
                return where_error(w, reterr, -EINVAL, "unterminated quote");
        if (++q < end && !is_blank(*q))
                return where_error(w, reterr, -EINVAL, "unexpected '%c' after a closing quote", *q);
        word[n] = 0;
        *p = q;
        *ret = TAKE_PTR(word);
        return 0;
}

static int word_bare(const char **p, const char *end, char **ret, const Where *w, char **reterr) {
        const char *q = *p;

        for (; q < end && !is_blank(*q); q++)
                if (*q == '"')
                        return where_error(w, reterr, -EINVAL, "unexpected '\"' inside a word (quote the whole word)");
        *ret = strndup(*p, q - *p);
        if (!*ret)
                return where_error(w, reterr, -ENOMEM, "out of memory");
        *p = q;
        return 0;
}

/* Split a line into unquoted words; a '#' that starts a word starts a comment. */
static int line_split(const char *s, size_t len, const Where *w, char ***ret, char **reterr) {
        cleanup_strv char **words = NULL;
        const char *p = s, *end = s + len;
        int r;

        for (;;) {
                char *word = NULL;

                while (p < end && is_blank(*p))
                        p++;
                if (p == end || *p == '#')
                        break;
                if (*p == '"') {
                        p++;
                        r = word_quoted(&p, end, &word, w, reterr);
                } else
                        r = word_bare(&p, end, &word, w, reterr);
                if (r < 0)
                        return r;
                if (strv_consume(&words, word) < 0)
                        return where_error(w, reterr, -ENOMEM, "out of memory");
        }
        *ret = TAKE_PTR(words);
        return 0;
}

static int manifest_add_entry(Manifest *m, DirectiveType t, char **args, const Where *w, char **reterr) {
        char *file;

        file = strdup(w->file);
        if (!file || GREEDY_REALLOC(m->entries, m->allocated_entries, m->n_entries + 1) < 0) {
                free(file);
                return where_error(w, reterr, -ENOMEM, "out of memory");
        }
        m->entries[m->n_entries++] = (ManifestEntry) {
                .type = t,
                .args = args,
                .n_args = strv_length(args),
                .file = file,
                .line = w->line,
        };
        return 0;
}

static int args_check_count(const char *name, size_t min, size_t max, size_t n, const Where *w, char **reterr) {
        if (n >= min && n <= max)
                return 0;
        if (min == max)
                return where_error(w, reterr, -EINVAL, "'%s' takes exactly %zu argument%s, got %zu", name, min,
                                   min == 1 ? "" : "s", n);
        if (max == SIZE_MAX)
                return where_error(w, reterr, -EINVAL, "'%s' takes at least %zu argument%s, got %zu", name, min,
                                   min == 1 ? "" : "s", n);
        return where_error(w, reterr, -EINVAL, "'%s' takes %zu to %zu arguments, got %zu", name, min, max, n);
}

static bool word_needs_quotes(const char *s) {
        return isempty(s) || strpbrk(s, " \t#\"\\\n");
}

/* The escapes a quoted word is printed with, the inverse of unescape(). */
static const char *char_escape(char c) {
        switch (c) {
        case '"':
                return "\\\"";
        case '\\':
                return "\\\\";
        case '\n':
                return "\\n";
        case '\t':
                return "\\t";
        default:
                return NULL;
        }
}

static size_t word_print_length(const char *s) {
        size_t n = 2;

        if (!word_needs_quotes(s))
                return strlen(s);
        for (; *s; s++)
                n += char_escape(*s) ? 2 : 1;
        return n;
}

/* Quoting can make a line longer than it was written (unquoted /a\b prints as "/a\\b"), and
 * "manifest print" output must parse back: refuse an entry whose printed line would not fit. */
static int entry_check_length(const char *name, char **args, const Where *w, char **reterr) {
        size_t n = strlen(name);

        for (char **a = args; *a; a++)
                n += 1 + word_print_length(*a);
        if (n > MANIFEST_LINE_MAX)
                return where_error(w, reterr, -EINVAL, "'%s' line too long once quoted (%zu bytes, at most %u)", name,
                                   n, MANIFEST_LINE_MAX);
        return 0;
}

/* The system-path guard of every directive that writes or deletes (the rows marked .writes: remove,
 * empty, unmount, bpf-pin, bpf-mount, remove-block, remove-symlink-to; the rule is path_guard_check()'s). It is checked
 * here rather than in the rows' validators because its opt-in is another line: an "allow-system-path" naming exactly
 * this path, read before it (in this file, an include, or an earlier --manifest), so that the opt-in is in front of
 * whoever reads the manifest. */
static int guard_apply(const Manifest *m, DirectiveType t, const char *path, bool *ret_system_path, const Where *w,
                       char **reterr) {
        cleanup_free char *reason = NULL;
        int r;

        *ret_system_path = false;
        if (!directive_table[t].writes)
                return 0;
        r = path_guard_check(path, &reason);
        if (r == -EPERM)
                MANIFEST_FOREACH(e, m, DIRECTIVE_ALLOW_SYSTEM_PATH)
                        if (streq(e->args[0], path) && (!e->args[1] || directive_type_from_string(e->args[1]) == t)) {
                                *ret_system_path = true;
                                return 0;
                        }
        if (r < 0)
                return where_error(w, reterr, -EINVAL, "'%s' %s", directive_type_to_string(t), strna(reason));
        return 0;
}

/* words[0] names a directive of the table; the entry takes the rest of the words. */
static int directive_apply(Manifest *m, char **words, const Where *w, char **reterr) {
        cleanup_free char *reason = NULL;
        cleanup_strv char **args = NULL;
        const DirectiveRow *d;
        DirectiveType t;
        size_t n = strv_length(words) - 1;
        bool system_path;
        int r;

        t = directive_type_from_string(words[0]);
        if (t < 0)
                return where_error(w, reterr, -EINVAL, "unknown directive '%s'", words[0]);
        d = directive_table + t;
        r = args_check_count(d->name, d->min_args, d->max_args, n, w, reterr);
        if (r < 0)
                return r;

        args = calloc(n + 1, sizeof(char *));
        if (!args)
                return where_error(w, reterr, -ENOMEM, "out of memory");
        memcpy(args, words + 1, n * sizeof(char *));
        memset(words + 1, 0, n * sizeof(char *));

        r = d->validate ? d->validate(args, &reason) : 0;
        if (r < 0)
                return where_error(w, reterr, r, "'%s' %s", d->name, strna(reason));
        r = entry_check_length(d->name, args, w, reterr);
        if (r < 0)
                return r;
        r = guard_apply(m, t, args[0], &system_path, w, reterr);
        if (r < 0)
                return r;
        r = manifest_add_entry(m, t, args, w, reterr);
        if (r < 0)
                return r;
        TAKE_PTR(args);
        m->entries[m->n_entries - 1].system_path = system_path;
        return 0;
}

static int parse_file(Manifest *m, const char *path, const Source *parent, const Where *from, char **reterr);

/* The included name, resolved against the including file's directory (or the text's base_dir). */
static char *include_resolve(const Source *src, const char *name) {
        const char *slash;
        char *j;

        if (name[0] == '/')
                j = strdup(name);
        else if (!src->is_file)
                j = asprintf(&j, "%s/%s", src->base_dir, name) < 0 ? NULL : j;
        else if ((slash = strrchr(src->name, '/')))
                j = asprintf(&j, "%.*s/%s", (int) (slash - src->name), src->name, name) < 0 ? NULL : j;
        else
                j = strdup(name);
        return j ? path_simplify(j) : NULL;
}

static int text_parse(Manifest *m, const Source *src, const char *text, size_t size, char **reterr);

static bool source_name_is_open(const Source *chain, const char *name) {
        for (; chain; chain = chain->parent)
                if (!chain->is_file && streq(chain->name, name))
                        return true;
        return false;
}

/* "include profile:NAME": a built-in profile or fragment, from the binary, whatever the including
 * text is (a file, the embedded default or another profile). */
static int include_profile(Manifest *m, const Source *src, const char *name, const Where *w, char **reterr) {
        cleanup_free char *text = NULL, *why = NULL, *full = NULL;
        const char *resolved;
        Source p;
        int r;

        r = profile_text(name, &resolved, &text, &why);
        if (r == -ENOMEM)
                return where_error(w, reterr, r, "out of memory");
        if (r < 0)
                return where_error(w, reterr, -EINVAL, "'include %s%s': %s", PROFILE_PREFIX, name, strna(why));
        full = strprintf("%s%s", PROFILE_PREFIX, resolved);
        if (!full)
                return where_error(w, reterr, -ENOMEM, "out of memory");
        if (source_name_is_open(src, full))
                return where_error(w, reterr, -EINVAL, "include cycle: '%s' is already being read", full);
        if (manifest_add_file(m, full) < 0)
                return where_error(w, reterr, -ENOMEM, "out of memory");
        p = (Source) { .name = full, .depth = src->depth + 1, .parent = src };
        return text_parse(m, &p, text, strlen(text), reterr);
}

static int include_apply(Manifest *m, const Source *src, char **words, const Where *w, char **reterr) {
        cleanup_free char *path = NULL;
        int r;

        r = args_check_count("include", 1, 1, strv_length(words) - 1, w, reterr);
        if (r < 0)
                return r;
        if (isempty(words[1]))
                return where_error(w, reterr, -EINVAL, "'include' needs a file name, got an empty one");
        if (src->depth >= MANIFEST_INCLUDE_DEPTH_MAX)
                return where_error(w, reterr, -EINVAL, "'include' nested too deeply (at most %u levels), at '%s'",
                                   MANIFEST_INCLUDE_DEPTH_MAX, words[1]);
        if (startswith(words[1], PROFILE_PREFIX))
                return include_profile(m, src, words[1] + strlen(PROFILE_PREFIX), w, reterr);
        if (!src->is_file && !src->base_dir)
                return where_error(w, reterr, -EINVAL,
                                   "'include' is not allowed here (no directory to resolve it against)");
        path = include_resolve(src, words[1]);
        if (!path)
                return where_error(w, reterr, -ENOMEM, "out of memory");
        return parse_file(m, path, src, w, reterr);
}

/* A built-in profile's paths move with k3s's or rke2's data dir; its protect lines keep protecting
 * the default dir too (a line elsewhere may still name it). */
static int profile_line_rebase(Manifest *m, const Source *src, char **words, const Where *w, char **reterr) {
        cleanup_strv char **orig = NULL;
        int r;

        if (src->is_file || !startswith(src->name, PROFILE_PREFIX) || streq(words[0], "include"))
                return 0;
        if (streq(words[0], "protect"))
                for (char **i = words; *i; i++)
                        if (strv_extend(&orig, *i) < 0)
                                return where_error(w, reterr, -ENOMEM, "out of memory");
        r = profile_rebase_words(words);
        if (r < 0)
                return where_error(w, reterr, r, "out of memory");
        return r > 0 && orig ? directive_apply(m, orig, w, reterr) : 0;
}

static int line_parse(Manifest *m, const Source *src, const char *s, size_t len, const Where *w, char **reterr) {
        cleanup_strv char **words = NULL;
        int r;

        r = line_check_bytes(s, len, w, reterr);
        if (r < 0)
                return r;
        r = line_split(s, len, w, &words, reterr);
        if (r < 0)
                return r;
        if (!words)
                return 0;
        r = profile_line_rebase(m, src, words, w, reterr);
        if (r < 0)
                return r;
        if (streq(words[0], "include"))
                return include_apply(m, src, words, w, reterr);
        return directive_apply(m, words, w, reterr);
}

static int text_parse(Manifest *m, const Source *src, const char *text, size_t size, char **reterr) {
        const char *p = text, *end = text + size;
        unsigned line = 0;
        int r;

        while (p < end) {
                const char *nl = memchr(p, '\n', end - p);
                size_t len = (nl ?: end) - p;
                Where w = { .file = src->name };

                w.line = ++line;
                r = line_parse(m, src, p, len, &w, reterr);
                if (r < 0)
                        return r;
                p = nl ? nl + 1 : end;
        }
        return 0;
}

static int read_error(const char *path, const Where *from, char **reterr, int r) {
        const char *why = r == -ERRNO_NOT_REGULAR ? "not a regular file" : strerror(-r);
        Where w = { .file = path };

        if (r == -ERRNO_NOT_REGULAR)
                r = -EINVAL;
        if (from)
                return where_error(from, reterr, r, "cannot read include '%s': %s", path, why);
        if (r == -EINVAL)
                return where_error(&w, reterr, r, "%s", why);
        return where_error(&w, reterr, r, "cannot read: %s", why);
}

/* Open path and read it whole; the identity (dev, inode) is what include cycles are detected by.
 * O_NONBLOCK: opening a FIFO for reading otherwise waits for a writer, forever; a FIFO, a socket
 * or a device is refused on what fstat() says of the opened file, before any read. Symlinks are
 * followed (an operator's /etc/node-reset/manifest.conf may well be one): what matters is what
 * they lead to. */
static int file_load(const char *path, Source *src, char **ret, size_t *ret_size) {
        cleanup_close int fd = -EBADF;
        struct stat st;
        int r;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return negative_errno();
        r = fileio_read_regular(fd, MANIFEST_FILE_SIZE_MAX, ret, ret_size, &st);
        if (r < 0)
                return r;
        src->dev = st.st_dev;
        src->ino = st.st_ino;
        return 0;
}

static bool source_is_open(const Source *chain, const Source *s) {
        for (; chain; chain = chain->parent)
                if (chain->is_file && chain->dev == s->dev && chain->ino == s->ino)
                        return true;
        return false;
}

static int parse_file(Manifest *m, const char *path, const Source *parent, const Where *from, char **reterr) {
        Source src = {
                .name = path,
                .is_file = true,
                .depth = parent ? parent->depth + 1 : 0,
                .parent = parent,
        };
        cleanup_free char *text = NULL;
        size_t size;
        int r;

        r = file_load(path, &src, &text, &size);
        if (r < 0)
                return read_error(path, from, reterr, r);
        if (source_is_open(parent, &src))
                return where_error(from, reterr, -EINVAL, "include cycle: '%s' is already being read", path);
        if (manifest_add_file(m, path) < 0)
                return read_error(path, from, reterr, -ENOMEM);
        return text_parse(m, &src, text, size, reterr);
}

int manifest_parse_file(Manifest *m, const char *path, char **reterr) {
        size_t n_entries, n_files;
        int r;

        if (!m || isempty(path))
                return -EINVAL;
        n_entries = m->n_entries;
        n_files = m->n_files;
        r = parse_file(m, path, NULL, NULL, reterr);
        if (r < 0)
                manifest_truncate(m, n_entries, n_files);
        return r;
}

int manifest_parse_string(Manifest *m, const char *name, const char *text, const char *base_dir, char **reterr) {
        Source src = { .name = name, .base_dir = base_dir };
        size_t n_entries, n_files;
        int r;

        if (!m || isempty(name) || !text)
                return -EINVAL;
        n_entries = m->n_entries;
        n_files = m->n_files;
        /* The embedded text is a source too: "manifest print" should say where entries came from. */
        r = manifest_add_file(m, name);
        if (r < 0)
                return set_errmsg(reterr, r, "%s: out of memory", name);
        r = text_parse(m, &src, text, strlen(text), reterr);
        if (r < 0)
                manifest_truncate(m, n_entries, n_files);
        return r;
}

static void word_print(const char *s, FILE *f) {
        if (!word_needs_quotes(s)) {
                fputs(s, f);
                return;
        }
        fputc('"', f);
        for (; *s; s++) {
                const char *e = char_escape(*s);

                if (e)
                        fputs(e, f);
                else
                        fputc(*s, f);
        }
        fputc('"', f);
}

int manifest_print(const Manifest *m, FILE *f) {
        fputs("# node-reset manifest, read from:\n", f);
        for (char **i = m->files; i && *i; i++) {
                fputs("#   ", f);
                word_print(*i, f);
                fputc('\n', f);
        }
        for (size_t i = 0; i < m->n_entries; i++) {
                const ManifestEntry *e = m->entries + i;

                fputs(strna(directive_type_to_string(e->type)), f);
                for (size_t j = 0; j < e->n_args; j++) {
                        fputc(' ', f);
                        word_print(e->args[j], f);
                }
                fputc('\n', f);
        }
        if (fflush(f) != 0)
                return negative_errno();
        return ferror(f) ? -EIO : 0;
}

char *manifest_entry_reason(const ManifestEntry *e) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f;

        f = open_memstream(&buf, &size);
        if (!f)
                return NULL;
        fprintf(f, "%s:%u: %s", e->file, e->line, directive_type_to_string(e->type));
        STRV_FOREACH(a, e->args)
                fprintf(f, " %s", *a);
        if (e->system_path)
                fputs(" (SYSTEM PATH, allowed by allow-system-path)", f);
        if (fclose(f) != 0)
                return mfree(buf);
        return buf;
}

const ManifestEntry *manifest_find_covering(const Manifest *m, DirectiveType t, const char *path) {
        MANIFEST_FOREACH(e, m, t)
                if (path_pattern_covers(e->args[0], path))
                        return e;
        return NULL;
}
