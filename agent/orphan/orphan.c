/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* orphan-check's pure half: the classes of a probe, the state file and the persistence rule. */

#include <ctype.h>
#include <inttypes.h>

#include "agent/orphan/orphan.h"
#include "macro.h"
#include "string-util.h"

static const char *const class_names[_ORPHAN_CLASS_MAX] = {
        [ORPHAN_HEALTHY] = "healthy",           [ORPHAN_NODE_MISSING] = "node-missing",
        [ORPHAN_UNAUTHORIZED] = "unauthorized", [ORPHAN_CA_MISMATCH] = "ca-mismatch",
        [ORPHAN_UNREACHABLE] = "unreachable",   [ORPHAN_API_ERROR] = "api-error",
        [ORPHAN_NOT_A_NODE] = "not-a-node",
};

const char *orphan_class_to_string(OrphanClass c) {
        return c >= 0 && c < _ORPHAN_CLASS_MAX ? class_names[c] : NULL;
}

OrphanClass orphan_class_from_string(const char *s) {
        for (int c = 0; c < _ORPHAN_CLASS_MAX; c++)
                if (streq(class_names[c], s))
                        return (OrphanClass) c;
        return _ORPHAN_CLASS_INVALID;
}

bool orphan_class_is_evidence(OrphanClass c) {
        /* api-error: a server that passed TLS verification against our CA answered as an API
         * server does. That is our control plane, unwell, which a reset would not cure. */
        return c == ORPHAN_NODE_MISSING || c == ORPHAN_UNAUTHORIZED || c == ORPHAN_CA_MISMATCH ||
               c == ORPHAN_UNREACHABLE;
}

OrphanClass orphan_classify(CURLcode code, long status) {
        if (status >= 200 && status < 300)
                return ORPHAN_HEALTHY;
        if (status == 404)
                return ORPHAN_NODE_MISSING;
        if (status == 401 || status == 403)
                return ORPHAN_UNAUTHORIZED;
        if (status >= 100)
                return ORPHAN_API_ERROR;

        switch (code) {
        case CURLE_PEER_FAILED_VERIFICATION: /* also CURLE_SSL_CACERT: unknown issuer, wrong name */
        case CURLE_SSL_ISSUER_ERROR:
        case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
        case CURLE_SSL_INVALIDCERTSTATUS:
                return ORPHAN_CA_MISMATCH;
        case CURLE_COULDNT_RESOLVE_HOST:
        case CURLE_COULDNT_RESOLVE_PROXY:
        case CURLE_COULDNT_CONNECT:
        case CURLE_OPERATION_TIMEDOUT:
        case CURLE_SSL_CONNECT_ERROR:
        case CURLE_GOT_NOTHING:
        case CURLE_SEND_ERROR:
        case CURLE_RECV_ERROR:
        case CURLE_WEIRD_SERVER_REPLY:
        case CURLE_HTTP2:
        case CURLE_HTTP2_STREAM:
        case CURLE_PROXY:
                return ORPHAN_UNREACHABLE;
        default:
                /* CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CERTPROBLEM, CURLE_URL_MALFORMAT, ...: this
                 * node's own configuration is broken; that is no evidence about the control plane. */
                return _ORPHAN_CLASS_INVALID;
        }
}

static int parse_u64(const char *s, uint64_t *ret) {
        char *end;

        if (!isdigit((unsigned char) *s))
                return -EBADMSG;
        errno = 0;
        *ret = strtoull(s, &end, 10);
        return errno || *end ? -EBADMSG : 0;
}

static int state_line(char *line, OrphanState *s) {
        char *eq = strchr(line, '=');

        if (!eq)
                return -EBADMSG;
        *eq++ = '\0';
        if (streq(line, "first_seen"))
                return parse_u64(eq, &s->first_seen);
        if (streq(line, "last_seen"))
                return parse_u64(eq, &s->last_seen);
        if (streq(line, "class")) {
                s->class = orphan_class_from_string(eq);
                return s->class < 0 || !orphan_class_is_evidence(s->class) ? -EBADMSG : 0;
        }
        return 0; /* a key of a later version */
}

int orphan_state_parse(const char *text, OrphanState *ret) {
        cleanup_free char *copy = strdup(text);
        OrphanState s = { .class = ORPHAN_UNREACHABLE };
        char *save = NULL;
        int r;

        if (!copy)
                return -ENOMEM;
        for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
                l[strcspn(l, "\r")] = '\0';
                if (l[0] == '#' || l[0] == '\0')
                        continue;
                r = state_line(l, &s);
                if (r < 0)
                        return r;
        }
        if (s.first_seen == 0)
                return -EBADMSG;
        /* Without a latest sighting the first one is all we know: the gap rule sees it as old. */
        if (s.last_seen == 0)
                s.last_seen = s.first_seen;
        *ret = s;
        return 0;
}

int orphan_state_format(const OrphanState *s, char **ret) {
        if (asprintf(ret,
                     "# node-reset orphan-check: the first and the latest sighting of a control plane\n"
                     "# that looked gone (CLOCK_REALTIME seconds). Removed when it is seen healthy.\n"
                     "first_seen=%" PRIu64 "\nlast_seen=%" PRIu64 "\nclass=%s\n",
                     s->first_seen, s->last_seen, strempty(orphan_class_to_string(s->class))) < 0)
                return -ENOMEM;
        return 0;
}

bool orphan_state_update(OrphanState *s, OrphanClass c, uint64_t now, uint64_t for_sec) {
        if (!orphan_class_is_evidence(c)) {
                *s = (OrphanState) { .class = c };
                return false;
        }
        if (s->first_seen == 0 || s->first_seen > now || s->last_seen > now || s->last_seen < s->first_seen ||
            now - s->last_seen > for_sec)
                s->first_seen = now;
        s->last_seen = now;
        s->class = c;
        return now - s->first_seen >= for_sec;
}
