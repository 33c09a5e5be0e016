/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gRPC unary calls over HTTP/2 prior knowledge on a unix socket, many at once through one libcurl
 * multi handle: the channel (a socket's or a URL's, its timeout, deadline and bound on a response).
 * A call's transfer is transfer.c's, the run loop run.c's. */

#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/un.h>
#include <time.h>

#include "grpc/curl.h"
#include "grpc/grpc-internal.h"
#include "grpc/grpc.h"
#include "macro.h"

void grpc_call_done(GrpcCall *c) {
        free(c->message);
        free(c->response);
        c->message = NULL;
        c->response = NULL;
        c->response_len = 0;
        c->result = 0;
        c->grpc_status = -1;
}

int grpc_channel_new(const char *socket_path, GrpcChannel **ret) {
        CurlFeatures f;
        GrpcChannel *ch;
        int r;

        if (!socket_path || socket_path[0] != '/')
                return -EINVAL;
        if (strlen(socket_path) >= sizeof(((struct sockaddr_un *) NULL)->sun_path))
                return -ENAMETOOLONG;
        r = curl_global_once();
        if (r < 0)
                return r;
        if (curl_features_get(&f) < 0 || !f.http2 || !f.unix_sockets)
                return -EPROTONOSUPPORT;
        ch = calloc(1, sizeof *ch);
        if (!ch)
                return -ENOMEM;
        ch->socket_path = strdup(socket_path);
        ch->multi = curl_multi_init();
        if (!ch->socket_path || !ch->multi) {
                grpc_channel_free(ch);
                return -ENOMEM;
        }
        ch->timeout_usec = GRPC_TIMEOUT_DEFAULT_USEC;
        ch->max_response = GRPC_RESPONSE_MAX_DEFAULT;
        *ret = ch;
        return 0;
}

GrpcChannel *grpc_channel_free(GrpcChannel *ch) {
        if (!ch)
                return NULL;
        if (ch->multi)
                curl_multi_cleanup(ch->multi);
        free(ch->socket_path);
        free(ch->url);
        free(ch->host);
        free(ch->port);
        free(ch->ca_file);
        free(ch->cert_file);
        free(ch->key_file);
        return mfree(ch);
}

/* "https://host:port" or "http://host:port", with nothing after the authority: the call's path is
 * appended to it. */
static bool url_is_base(const char *url) {
        const char *a;

        if (strncmp(url, "https://", 8) == 0)
                a = url + 8;
        else if (strncmp(url, "http://", 7) == 0)
                a = url + 7;
        else
                return false;
        return *a != '\0' && !strpbrk(a, "/?#@ \t\r\n");
}

/* "host:port", "[v6]:port" or "host" (the scheme's port) of a base URL. */
static int url_split(GrpcChannel *ch) {
        const char *a = strstr(ch->url, "://") + 3, *colon;
        bool tls = ch->url[4] == 's';

        if (*a == '[') {
                const char *end = strchr(a, ']');

                if (!end || (end[1] != '\0' && end[1] != ':'))
                        return -EINVAL;
                ch->host = strndup(a + 1, (size_t) (end - a - 1));
                colon = end[1] == ':' ? end + 1 : NULL;
        } else {
                colon = strchr(a, ':');
                ch->host = colon ? strndup(a, (size_t) (colon - a)) : strdup(a);
        }
        ch->port = strdup(colon ? colon + 1 : tls ? "443" : "80");
        if (!ch->host || !ch->port)
                return -ENOMEM;
        return *ch->host && *ch->port ? 0 : -EINVAL;
}

static int strdup_or_null(const char *s, char **ret) {
        if (!s)
                return 0;
        *ret = strdup(s);
        return *ret ? 0 : -ENOMEM;
}

int grpc_channel_new_url(const char *url, const GrpcTls *tls, GrpcChannel **ret) {
        CurlFeatures f;
        GrpcChannel *ch;
        int r;

        if (!url || !url_is_base(url))
                return -EINVAL;
        r = curl_global_once();
        if (r < 0)
                return r;
        if (curl_features_get(&f) < 0 || !f.http2 || (url[4] == 's' && !f.ssl))
                return -EPROTONOSUPPORT;
        ch = calloc(1, sizeof *ch);
        if (!ch)
                return -ENOMEM;
        ch->url = strdup(url);
        ch->multi = curl_multi_init();
        r = ch->url && ch->multi ? 0 : -ENOMEM;
        if (r >= 0)
                r = url_split(ch);
        if (r >= 0 && tls)
                r = strdup_or_null(tls->ca_file, &ch->ca_file) < 0 ||
                                    strdup_or_null(tls->cert_file, &ch->cert_file) < 0 ||
                                    strdup_or_null(tls->key_file, &ch->key_file) < 0
                            ? -ENOMEM
                            : 0;
        if (r < 0) {
                grpc_channel_free(ch);
                return r;
        }
        ch->timeout_usec = GRPC_TIMEOUT_DEFAULT_USEC;
        ch->max_response = GRPC_RESPONSE_MAX_DEFAULT;
        *ret = ch;
        return 0;
}

const char *grpc_channel_socket_path(const GrpcChannel *ch) {
        return ch->socket_path;
}

const char *grpc_channel_url(const GrpcChannel *ch) {
        return ch->url;
}

void grpc_channel_set_deadline(GrpcChannel *ch, uint64_t monotonic_usec) {
        ch->deadline_usec = monotonic_usec;
}

void grpc_channel_set_timeout(GrpcChannel *ch, uint64_t usec) {
        /* A deadline is not optional: 0 means the default, never "wait forever". */
        ch->timeout_usec = usec ? usec : GRPC_TIMEOUT_DEFAULT_USEC;
}

uint64_t grpc_channel_get_timeout(const GrpcChannel *ch) {
        return ch->timeout_usec;
}

void grpc_channel_set_max_response(GrpcChannel *ch, size_t max) {
        ch->max_response = max;
}
