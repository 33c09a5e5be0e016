/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The manifest's directives: one row each (name, argument counts, the validator of its arguments,
 * whether it writes to its path), and the validators. */

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/config/manifest-directives.h"
#include "agent/base/path.h"
#include "netreset/conntrack.h"
#include "netreset/route.h"
#include "netreset/fib-rule.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"

static int validate_target(char **args, char **ret_reason) {
        /* "//" and a trailing "/" are harmless spelling; "." and ".." are not, and stay errors. */
        path_simplify(args[0]);
        return path_validate_target(args[0], ret_reason);
}

static int validate_absolute(char **args, char **ret_reason) {
        path_simplify(args[0]);
        return path_validate_absolute(args[0], ret_reason);
}

/* One path, named exactly: a line that reaches one file (what: "a file", "a manifest"), never a
 * glob's worth. */
static int validate_exact(char **args, const char *what, char **ret_reason) {
        int r;

        r = validate_target(args, ret_reason);
        if (r < 0)
                return r;
        if (path_is_glob(args[0]))
                return set_errmsg(ret_reason, -EINVAL, "needs the exact path of %s, not a glob, got '%s'", what,
                                  args[0]);
        return 0;
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

        if (isempty(n) || streq(n, ".") || streq(n, "..") || strpbrk(n, "/:" MANIFEST_WHITESPACE))
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

        if (isempty(n) || strlen(n) > 28 || strpbrk(n, MANIFEST_WHITESPACE))
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
        if (isempty(args[1]) || strlen(args[1]) > 255 || strpbrk(args[1], MANIFEST_WHITESPACE))
                return set_errmsg(ret_reason, -EINVAL,
                                  "needs a table name of 1 to 255 bytes without whitespace, got '%s'", args[1]);
        return 0;
}

/* IPSET_MAXNAMELEN is 32 with the NUL; a glob may be longer than the names it matches. */
static int validate_ipset(char **args, char **ret_reason) {
        const char *n = args[0];

        if (isempty(n) || strpbrk(n, MANIFEST_WHITESPACE))
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

        r = validate_exact(args, "a file", ret_reason);
        if (r < 0)
                return r;
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
        return validate_exact(args, "a manifest", ret_reason);
}

/* A symlink to remove and the one file it must lead to: two literal paths. The link is checked like
 * any removal target (system paths refused); the target is only compared, never touched. */
static int validate_remove_symlink_to(char **args, char **ret_reason) {
        int r;

        r = validate_exact(args, "a symlink", ret_reason);
        if (r < 0)
                return r;
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

static int validate_prune_kubeconfig(char **args, char **ret_reason) {
        return validate_exact(args, "a kubeconfig", ret_reason);
}

static int validate_conntrack(char **args, char **ret_reason) {
        CtPrefix p;

        if (!streq(args[0], "cluster") && ct_prefix_parse(args[0], &p) < 0)
                return set_errmsg(ret_reason, -EINVAL, "needs 'cluster' or an address or prefix, got '%s'", args[0]);
        return 0;
}

/* A new directive is one enum value in manifest.h plus one row here; the unit test checks that
 * every enum value has its row. */
const DirectiveRow directive_table[_DIRECTIVE_MAX] = {
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
        [DIRECTIVE_PRUNE_KUBECONFIG] = { "prune-kubeconfig", 1, 1, validate_prune_kubeconfig, .writes = true },
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
