/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One HTTP(S) request over libcurl with in-memory TLS material: the orphan probe, the report POSTs, the
 * Node object, and Docker's Engine API on its unix socket. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>

typedef struct HttpBlob {
        const void *data;
        size_t size; /* 0: not given */
} HttpBlob;

typedef struct HttpRequest {
        const char *url;
        const char *method; /* NULL: POST when there is a body, else GET; or "DELETE", "PATCH" */
        const char *body;   /* send this (POST unless method says otherwise) when non-NULL */
        size_t body_size;
        const char *content_type; /* of the body; NULL: application/json */
        size_t response_max;      /* keep at most this much of the response body; 0: discard it */
        char *const *headers;     /* "Name: value", NULL-terminated or NULL; never logged */
        HttpBlob ca;              /* PEM trust anchors, trusted alone; not given: the system's store */
        HttpBlob cert, key;       /* PEM client certificate and key */
        bool insecure;            /* no server verification (kubeconfig insecure-skip-tls-verify) */
        const char *proxy;        /* NULL: no proxy at all, whatever the environment says */
        const char *unix_socket;  /* connect to this unix socket instead of the URL's host (Docker's
                                   * Engine API); NULL: TCP */
        uint64_t connect_timeout_ms, timeout_ms;
} HttpRequest;

typedef struct HttpResult {
        CURLcode code;               /* CURLE_OK: a response arrived */
        long status;                 /* the HTTP status, 0 when none arrived */
        char error[CURL_ERROR_SIZE]; /* curl's own words, "" when none */
        char content_type[128];      /* the answer's Content-Type as sent (cut at 127 bytes), "" when none */
        char *body;                  /* NUL-terminated response body when response_max was set */
        size_t body_size;
        bool truncated; /* the body was longer than response_max */
} HttpResult;

/* Free what a result holds (the response body); the result stays valid and empty. */
void http_result_done(HttpResult *r);

/* Perform the request; the outcome, failed transfers included, is in *ret (http_result_done() it). Returns < 0 only
 * when the request could not be set up (-ENOMEM, -EINVAL; -EOPNOTSUPP without libcurl, ret->error saying so). The
 * response body is kept only up to req->response_max. */
int http_perform(const HttpRequest *req, HttpResult *ret);

/* The URL without user info, query and fragment (they may carry secrets), for reports and logs.
 * Returns NULL on allocation failure; an unparsable URL is returned as "(invalid URL)". */
char *http_url_redact(const char *url);

/* Is this "Name: value" header well formed (a token name, no CR/LF anywhere)? */
bool http_header_is_valid(const char *h);
