/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Which netfilter chains and rules Kubernetes and the CNIs own: pure classification, no kernel.
 *
 * Chains are owned by name prefix. Rules outside owned chains are owned when they jump or go to
 * an owned chain, or when their comment is one that kube-proxy, kube-router or a CNI writes. The
 * comment list is deliberately narrow: a host rule an admin commented "kubernetes api" must
 * survive, so kube-proxy's comments are matched as its exact fixed phrases, not as "kubernetes*". */

#include <strings.h>

#include "macro.h"
#include "netreset/fwclass.h"
#include "string-util.h"
#include "strv.h"

struct FwClass {
        char **prefixes; /* NULL-terminated, malloc'd */
        size_t n_prefixes;
};

/* The CNIs' prefixes are also the rows of agent/config/cnis.c (tests/unit/test-tables.c keeps the two
 * equal); KUBE- is kube-proxy's. */
static const char *const builtin_prefixes[] = {
        "KUBE-",        /* kube-proxy, kube-router (KUBE-ROUTER-, KUBE-POD-FW-, ...) */
        "KUBE-ROUTER-", /* covered by KUBE- but listed: it is the documented set */
        "CNI-",         /* CNI portmap, bridge and firewall plugins */
        "cali-",        /* Calico */
        "CILIUM_",      /* Cilium */
        "FLANNEL-",     /* flannel (FLANNEL-POSTRTG, FLANNEL-FWD) */
};

typedef enum MarkerMatch {
        MARKER_PREFIX,        /* the comment starts with the marker */
        MARKER_PREFIX_NOCASE, /* ... ignoring case */
} MarkerMatch;

static const struct {
        const char *text;
        MarkerMatch match;
} comment_markers[] = {
        /* Calico tags every rule it writes with "cali:<hash>". */
        { "cali:", MARKER_PREFIX },
        /* flannel: "flanneld masq", "flanneld forward"; k3s greps -iv flannel for the same. */
        { "flannel", MARKER_PREFIX_NOCASE },
        /* Cilium: "cilium-feeder: CILIUM_INPUT", "cilium: any->cluster on cilium_host ..." */
        { "cilium-feeder:", MARKER_PREFIX },
        { "cilium:", MARKER_PREFIX },
        /* kube-router: "kube-router netpol - ..." */
        { "kube-router ", MARKER_PREFIX },
        /* kube-proxy (iptables and ipvs modes): the comments on the rules it adds to the
         * built-in chains, which also jump to KUBE- chains; matched on their own for rules a
         * partial cleanup left pointing nowhere. */
        { "kubernetes service portals", MARKER_PREFIX },
        { "kubernetes externally-visible service portals", MARKER_PREFIX },
        { "kubernetes externally visible service portals", MARKER_PREFIX },
        { "kubernetes service nodeports", MARKER_PREFIX },
        { "kubernetes forwarding rules", MARKER_PREFIX },
        { "kubernetes forwarding conntrack rule", MARKER_PREFIX },
        { "kubernetes postrouting rules", MARKER_PREFIX },
        { "kubernetes health check service ports", MARKER_PREFIX },
        { "kubernetes health check rules", MARKER_PREFIX },
        { "kubernetes load balancer firewall", MARKER_PREFIX },
        { "kubernetes ipvs access filter", MARKER_PREFIX },
        { "kubernetes ipvs OUTPUT", MARKER_PREFIX },
        { "kube-proxy firewall rules", MARKER_PREFIX },
        /* NodeLocal DNS (node-cache): NOTRACK in raw and ACCEPTs in filter for its link-local IP
         * (169.254.25.10 on kubespray), "NodeLocal DNS Cache: skip conntrack" / "...: allow DNS
         * traffic". Left behind, they keep that address's DNS out of conntrack after the reset. */
        { "NodeLocal DNS Cache:", MARKER_PREFIX },
};

static const char *const mode_names[_FW_MODE_MAX] = {
        [FW_MODE_OWNED] = "owned",
        [FW_MODE_FLUSH] = "flush",
};

const char *fw_mode_to_string(FwMode m) {
        if (m < 0 || m >= _FW_MODE_MAX)
                return NULL;
        return mode_names[m];
}

FwMode fw_mode_from_string(const char *s) {
        for (size_t i = 0; s && i < ELEMENTSOF(mode_names); i++)
                if (streq(s, mode_names[i]))
                        return (FwMode) i;
        return _FW_MODE_INVALID;
}

FwClass *fwclass_free(FwClass *c) {
        if (!c)
                return NULL;
        strv_free(c->prefixes);
        return mfree(c);
}

static int prefixes_append(FwClass *c, const char *prefix) {
        int r;

        r = strv_extend(&c->prefixes, prefix);
        if (r < 0)
                return r;
        c->n_prefixes++;
        return 0;
}

static FwClass *fwclass_alloc(const char *const *prefixes, size_t n) {
        FwClass *c;

        c = calloc(1, sizeof(FwClass));
        if (!c)
                return NULL;
        for (size_t i = 0; i < n; i++)
                if (prefixes_append(c, prefixes[i]) < 0)
                        return fwclass_free(c);
        return c;
}

const char *const *fwclass_builtin_prefixes(size_t *ret_n) {
        *ret_n = ELEMENTSOF(builtin_prefixes);
        return builtin_prefixes;
}

FwClass *fwclass_new(void) {
        return fwclass_alloc(builtin_prefixes, ELEMENTSOF(builtin_prefixes));
}

FwClass *fwclass_dup(const FwClass *c) {
        return fwclass_alloc((const char *const *) c->prefixes, c->n_prefixes);
}

int fwclass_add_prefix(FwClass *c, const char *prefix) {
        if (isempty(prefix))
                return -EINVAL;
        for (size_t i = 0; i < c->n_prefixes; i++)
                if (streq(c->prefixes[i], prefix))
                        return 0;
        return prefixes_append(c, prefix);
}

bool fwclass_chain_owned(const FwClass *c, const char *chain) {
        if (isempty(chain))
                return false;
        for (size_t i = 0; i < c->n_prefixes; i++)
                if (startswith(chain, c->prefixes[i]))
                        return true;
        return false;
}

bool fwclass_comment_owned(const FwClass *c, const char *comment) {
        if (isempty(comment))
                return false;
        for (size_t i = 0; i < ELEMENTSOF(comment_markers); i++) {
                const char *m = comment_markers[i].text;

                switch (comment_markers[i].match) {
                case MARKER_PREFIX:
                        if (startswith(comment, m))
                                return true;
                        break;
                case MARKER_PREFIX_NOCASE:
                        if (strncasecmp(comment, m, strlen(m)) == 0)
                                return true;
                        break;
                }
        }
        return false;
}

bool fwclass_rule_owned(const FwClass *c, const char *jump_target, const char *const *comments, size_t n_comments) {
        if (jump_target && fwclass_chain_owned(c, jump_target))
                return true;
        for (size_t i = 0; i < n_comments; i++)
                if (comments[i] && fwclass_comment_owned(c, comments[i]))
                        return true;
        return false;
}
