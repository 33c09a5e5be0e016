/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* orphan-check's acting half: read the kubeconfig, probe the API server as the node, keep the state file, report. */

#include <fcntl.h>
#include <time.h>

#include "agent/os/fileio.h"
#include "agent/config/kubeconfig.h"
#include "agent/config/node-name.h"
#include "agent/base/log.h"
#include "agent/orphan/orphan.h"
#include "chase.h"
#include "errno-util.h"
#include "escape.h"
#include "macro.h"
#include "dlib/dlopen.h"
#include "time-util.h"
#include "string-util.h"

#define STATE_PATH ORPHAN_STATE_DIR "/" ORPHAN_STATE_NAME

DEFINE_TRIVIAL_CLEANUP_FUNC(Kubeconfig *, kubeconfig_free);

static int pick_node(const OrphanOptions *o, const Kubeconfig *k, OrphanCheck *c) {
        int r = node_name_pick(o->node_name, &k->cert, o->root_fd, streq(o->root, "/"), &c->node, &c->node_source);

        if (r == -ENXIO)
                return set_errmsg(&c->error, r, "node name unknown: %s %s", k->path,
                                  "holds no node's client certificate, the tree no /etc/hostname, and --node-name was "
                                  "not given");
        if (r == -EINVAL)
                return set_errmsg(&c->error, -EINVAL, "'%s' (from the %s) is not a valid node name; use --node-name",
                                  c->node, c->node_source);
        return r;
}

static int probe(const OrphanOptions *o, const Kubeconfig *k, OrphanCheck *c) {
        cleanup_free char *url = NULL, *auth = NULL;
        char *headers[2] = {};
        size_t n = strlen(k->server);
        HttpRequest req;
        int r;

        while (n > 0 && k->server[n - 1] == '/')
                n--;
        if (asprintf(&url, "%.*s/api/v1/nodes/%s", (int) n, k->server, c->node) < 0)
                return -ENOMEM;
        if (k->token && asprintf(&auth, "Authorization: Bearer %s", k->token) < 0)
                return -ENOMEM;
        headers[0] = auth;
        req = (HttpRequest) {
                .url = url,
                .headers = headers,
                .ca = { k->ca.data, k->ca.size },
                .cert = { k->cert.data, k->cert.size },
                .key = { k->key.data, k->key.size },
                .insecure = k->insecure,
                .proxy = o->proxy ?: k->proxy_url,
                .connect_timeout_ms =
                        o->timeout_ms < ORPHAN_CONNECT_TIMEOUT_MAX_MS ? o->timeout_ms : ORPHAN_CONNECT_TIMEOUT_MAX_MS,
                .timeout_ms = o->timeout_ms,
        };
        r = http_perform(&req, &c->http);
        if (auth)
                explicit_bzero(auth, strlen(auth));
        if (r < 0)
                return set_errmsg(&c->error, r, "Cannot set up the request to %s: %s", c->server, strerror(-r));
        c->probed = true;
        c->class = orphan_classify(c->http.code, c->http.status);
        if (c->class < 0)
                return set_errmsg(&c->error, -EINVAL, "Cannot probe %s with the credentials of %s: curl error %d: %s",
                                  c->server, k->path, (int) c->http.code, c->http.error);
        return 0;
}

static int state_load(const OrphanOptions *o, OrphanState *ret, char **reterr) {
        cleanup_free char *text = NULL;
        int r;

        *ret = (OrphanState) {};
        r = fileio_read_beneath(o->root_fd, STATE_PATH, 64 * 1024, &text, NULL);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return set_errmsg(reterr, r, "Cannot read %s: %s", STATE_PATH, strerror(-r));
        /* Starting over is the safe direction: it only delays a reset. */
        if (orphan_state_parse(text, ret) < 0) {
                log_warning("%s is malformed, starting over with this sighting.", STATE_PATH);
                *ret = (OrphanState) {};
        }
        return 0;
}

static int state_save(const OrphanOptions *o, const OrphanState *s, char **reterr) {
        cleanup_close int dfd = -EBADF;
        cleanup_free char *text = NULL;
        int r;

        if (s->first_seen == 0) {
                dfd = chaseat(o->root_fd, ORPHAN_STATE_DIR, 0, O_RDONLY | O_DIRECTORY, NULL, NULL);
                if (dfd == -ENOENT)
                        return 0;
                r = dfd < 0 ? dfd : RET_NERRNO(unlinkat(dfd, ORPHAN_STATE_NAME, 0));
                if (r < 0 && r != -ENOENT)
                        return set_errmsg(reterr, r, "Cannot remove %s: %s", STATE_PATH, strerror(-r));
                return 0;
        }
        dfd = fileio_mkdir_beneath(o->root_fd, ORPHAN_STATE_DIR, 0755);
        r = dfd < 0 ? dfd : orphan_state_format(s, &text);
        if (r >= 0)
                r = fileio_write_atomic(dfd, ORPHAN_STATE_NAME, text, strlen(text), 0644);
        if (r < 0)
                return set_errmsg(reterr, r, "Cannot write %s: %s", STATE_PATH, strerror(-r));
        return 0;
}

static int observe(const OrphanOptions *o, OrphanCheck *c) {
        CLEANUP(kubeconfig_freep) Kubeconfig *k = NULL;
        int r;

        r = kubeconfig_load(o->root_fd, o->kubeconfig, &k, &c->error);
        if (r == -ENOENT) {
                c->error = mfree(c->error);
                c->class = ORPHAN_NOT_A_NODE;
                return 0;
        }
        if (r >= 0)
                r = kubeconfig_read_files(k, o->root_fd, &c->error);
        if (r < 0)
                return r;
        c->server = http_url_redact(k->server);
        if (!c->server)
                return -ENOMEM;
        r = pick_node(o, k, c);
        if (r < 0)
                return r;
        return probe(o, k, c);
}

int orphan_check(const OrphanOptions *o, OrphanCheck *c) {
        static const DlibLib needs[] = { DLIB_LIBCURL, DLIB_LIBCRYPTO, DLIB_LIBYAML };
        int r;

        *c = (OrphanCheck) { .class = _ORPHAN_CLASS_INVALID };
        /* Without these nothing can be asked, and no class may be guessed: an error naming the library. */
        for (size_t i = 0; i < ELEMENTSOF(needs); i++)
                if (dlib_load(needs[i]) < 0)
                        return set_errmsg(&c->error, -EOPNOTSUPP, "%s: cannot ask the API server", dlib_why(needs[i]));
        r = observe(o, c);
        if (r >= 0)
                r = state_load(o, &c->state, &c->error);
        if (r >= 0) {
                c->orphaned = orphan_state_update(&c->state, c->class, o->now, o->for_sec);
                r = state_save(o, &c->state, &c->error);
        }
        if (r < 0) {
                c->orphaned = false;
                if (!c->error)
                        (void) set_errmsg(&c->error, r, "%s", strerror(-r));
        }
        return r;
}

void orphan_check_done(OrphanCheck *c) {
        free(c->server);
        free(c->node);
        free(c->error);
}

static void format_time(uint64_t sec, char *buf, size_t size) {
        time_t t = (time_t) sec;
        struct tm tm;

        if (!gmtime_r(&t, &tm) || strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
                snprintf(buf, size, "%llu", (unsigned long long) sec);
}

static const char *verdict(const OrphanCheck *c) {
        if (c->error)
                return "error";
        if (c->orphaned)
                return "orphaned";
        return c->state.first_seen > 0 ? "not orphaned yet" : "not orphaned";
}

static void emit_evidence(Emitter *e, const OrphanOptions *o, const OrphanCheck *c) {
        bool failed = c->probed && c->http.code != CURLE_OK;

        emit_string(e, COLOR_NONE, "server", c->server ? "  server      %s\n" : NULL, c->server);
        emit_string(e, COLOR_NONE, "node", c->node ? "  node        %s" : NULL, c->node);
        emit_string(e, COLOR_GREY, "node_source", c->node ? " (%s)\n" : NULL, c->node_source);
        if (c->class == ORPHAN_NOT_A_NODE) {
                cleanup_free char *k = text_escape(o->kubeconfig);

                emit_text(e, COLOR_NONE, "  evidence    no kubeconfig at %s\n", strna(k));
        }
        if (c->probed && c->http.status > 0)
                emit_uint(e, COLOR_NONE, "http_status", "  evidence    HTTP %llu\n",
                          (unsigned long long) c->http.status);
        else
                emit_null(e, "http_status");
        emit_uint(e, COLOR_NONE, "curl_code", failed ? "  evidence    curl error %llu: " : NULL,
                  (unsigned long long) c->http.code);
        emit_string(e, COLOR_NONE, "curl_error", failed ? "%s\n" : NULL, failed ? c->http.error : NULL);
}

static void emit_sighting(Emitter *e, const OrphanOptions *o, const OrphanCheck *c) {
        char first[64], last[64], persisted[32], threshold[32];
        uint64_t since = c->state.first_seen > 0 ? o->now - c->state.first_seen : 0;

        duration_format(since, persisted, sizeof persisted);
        duration_format(o->for_sec, threshold, sizeof threshold);
        format_time(c->state.first_seen, first, sizeof first);
        format_time(c->state.last_seen, last, sizeof last);
        if (c->state.first_seen > 0) {
                emit_string(e, COLOR_NONE, "first_seen", "  since       %s", first);
                emit_string(e, COLOR_NONE, "last_seen", NULL, last);
        } else {
                emit_null(e, "first_seen");
                emit_null(e, "last_seen");
        }
        emit_uint(e, COLOR_NONE, "persisted_sec", c->state.first_seen > 0 ? ", for %llu s" : NULL,
                  (unsigned long long) since);
        emit_uint(e, COLOR_NONE, "for_sec", NULL, (unsigned long long) o->for_sec);
        if (c->state.first_seen > 0)
                emit_text(e, COLOR_NONE, " (%s; orphaned after %s)\n", persisted, threshold);
}

void orphan_check_emit(Emitter *e, const OrphanOptions *o, const OrphanCheck *c, int exit_status) {
        cleanup_free char *host = NULL;
        Color color = c->error || c->orphaned ? COLOR_RED : c->class == ORPHAN_HEALTHY ? COLOR_GREEN : COLOR_YELLOW;

        /* The node's, the tree's under --root: null when unknown. */
        (void) node_host_name(o->root_fd, streq(o->root, "/"), &host);
        emit_open_object(e, NULL);
        emit_string(e, COLOR_NONE, "tool", NULL, "node-reset");
        emit_uint(e, COLOR_NONE, "schema_version", NULL, REPORT_SCHEMA_VERSION);
        emit_string(e, COLOR_NONE, "version", NULL, NODE_RESET_VERSION);
        emit_string(e, COLOR_NONE, "command", NULL, "orphan-check");
        emit_string(e, COLOR_NONE, "hostname", NULL, host);
        emit_string(e, COLOR_NONE, "root", NULL, o->root);
        emit_string(e, COLOR_BOLD, "class", c->error ? NULL : "orphan-check: %s",
                    c->error ? NULL : orphan_class_to_string(c->class));
        emit_string(e, color, "verdict", c->error ? "orphan-check: %s\n" : ", %s\n", verdict(c));
        emit_string(e, COLOR_NONE, "kubeconfig", "  kubeconfig  %s\n", o->kubeconfig);
        emit_evidence(e, o, c);
        emit_sighting(e, o, c);
        emit_string(e, COLOR_RED, "error", c->error ? "  error       %s\n" : NULL, c->error);
        emit_bool(e, "orphaned", NULL, c->orphaned);
        emit_uint(e, COLOR_NONE, "exit_status", NULL, (unsigned long long) exit_status);
        emit_close_object(e);
        fflush(e->f);
}
