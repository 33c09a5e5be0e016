/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A gRPC response's header lines (status, content type, grpc-status, grpc-message), grpc-timeout, and
 * the status codes' names and errnos. */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "grpc/grpc.h"
#include "macro.h"

void grpc_response_head_done(GrpcResponseHead *h) {
        free(h->grpc_message);
        free(h->content_type);
        *h = (GrpcResponseHead) { .grpc_status = -1 };
}

static int hexval(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

int grpc_percent_decode(const char *s, size_t n, char **ret) {
        char *out, *o;

        out = o = malloc(n + 1);
        if (!out)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                int hi = i + 2 < n ? hexval(s[i + 1]) : -1, lo = i + 2 < n ? hexval(s[i + 2]) : -1;

                /* "%00" would cut the C string short: such an escape is kept as written. */
                if (s[i] == '%' && hi >= 0 && lo >= 0 && (hi | lo) != 0) {
                        /* cppcheck-suppress uninitdata ; o is written, not read */
                        *o++ = (char) (hi << 4 | lo);
                        i += 2;
                } else
                        *o++ = s[i];
        }
        *o = '\0';
        *ret = out;
        return 0;
}

static bool header_name_is(const char *line, size_t name_len, const char *name) {
        return strlen(name) == name_len && strncasecmp(line, name, name_len) == 0;
}

static int parse_status_line(GrpcResponseHead *h, const char *line, size_t n) {
        const char *sp = memchr(line, ' ', n);
        int status = 0;

        if (!sp)
                return 0;
        for (const char *p = sp + 1; p < line + n && *p >= '0' && *p <= '9' && status < 1000; p++)
                status = status * 10 + (*p - '0');
        h->http_status = status;
        return 0;
}

static void parse_grpc_status(GrpcResponseHead *h, const char *v, size_t n) {
        int s = 0;

        if (n == 0 || n > 2) {
                h->bad_status = true;
                return;
        }
        for (size_t i = 0; i < n; i++) {
                if (v[i] < '0' || v[i] > '9') {
                        h->bad_status = true;
                        return;
                }
                s = s * 10 + (v[i] - '0');
        }
        h->grpc_status = s;
}

static int set_string(char **field, const char *v, size_t n, bool percent_decoded) {
        char *s;

        n = size_min(n, GRPC_MESSAGE_TEXT_MAX);
        if (percent_decoded) {
                if (grpc_percent_decode(v, n, &s) < 0)
                        return -ENOMEM;
        } else if (!(s = strndup(v, n)))
                return -ENOMEM;
        free(*field);
        *field = s;
        return 0;
}

int grpc_response_head_parse(GrpcResponseHead *h, const char *line, size_t n) {
        const char *colon, *v;
        size_t name_len, vn;

        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
                n--;
        if (n >= 5 && strncmp(line, "HTTP/", 5) == 0)
                return parse_status_line(h, line, n);
        colon = memchr(line, ':', n);
        if (!colon || colon == line)
                return 0;
        name_len = (size_t) (colon - line);
        v = colon + 1;
        vn = n - name_len - 1;
        while (vn > 0 && (*v == ' ' || *v == '\t'))
                v++, vn--;
        while (vn > 0 && (v[vn - 1] == ' ' || v[vn - 1] == '\t'))
                vn--;
        if (header_name_is(line, name_len, "grpc-status"))
                parse_grpc_status(h, v, vn);
        else if (header_name_is(line, name_len, "grpc-message"))
                return set_string(&h->grpc_message, v, vn, true);
        else if (header_name_is(line, name_len, "content-type"))
                return set_string(&h->content_type, v, vn, false);
        return 0;
}

bool grpc_content_type_ok(const char *ct) {
        const char *rest;

        if (strncasecmp(ct, "application/grpc", 16) != 0)
                return false;
        rest = ct + 16;
        return *rest == '\0' || *rest == '+' || *rest == ';';
}

void grpc_timeout_format(uint64_t usec, char buf[static 16]) {
        /* At most 8 digits: microseconds up to 100 s, then milliseconds, then seconds. */
        if (usec == 0)
                usec = 1;
        if (usec < 100000000ULL)
                snprintf(buf, 16, "%lluu", (unsigned long long) usec);
        else if (usec / 1000 < 100000000ULL)
                snprintf(buf, 16, "%llum", (unsigned long long) (usec / 1000));
        else
                snprintf(buf, 16, "%lluS", (unsigned long long) u64_min(usec / 1000000, 99999999ULL));
}

static const char *const status_names[_GRPC_STATUS_MAX] = {
        [GRPC_OK] = "OK",
        [GRPC_CANCELLED] = "CANCELLED",
        [GRPC_UNKNOWN] = "UNKNOWN",
        [GRPC_INVALID_ARGUMENT] = "INVALID_ARGUMENT",
        [GRPC_DEADLINE_EXCEEDED] = "DEADLINE_EXCEEDED",
        [GRPC_NOT_FOUND] = "NOT_FOUND",
        [GRPC_ALREADY_EXISTS] = "ALREADY_EXISTS",
        [GRPC_PERMISSION_DENIED] = "PERMISSION_DENIED",
        [GRPC_RESOURCE_EXHAUSTED] = "RESOURCE_EXHAUSTED",
        [GRPC_FAILED_PRECONDITION] = "FAILED_PRECONDITION",
        [GRPC_ABORTED] = "ABORTED",
        [GRPC_OUT_OF_RANGE] = "OUT_OF_RANGE",
        [GRPC_UNIMPLEMENTED] = "UNIMPLEMENTED",
        [GRPC_INTERNAL] = "INTERNAL",
        [GRPC_UNAVAILABLE] = "UNAVAILABLE",
        [GRPC_DATA_LOSS] = "DATA_LOSS",
        [GRPC_UNAUTHENTICATED] = "UNAUTHENTICATED",
};

const char *grpc_status_to_string(int status) {
        if (status < 0 || status >= _GRPC_STATUS_MAX)
                return "UNKNOWN";
        return status_names[status];
}

int grpc_status_to_errno(int status) {
        static const int map[_GRPC_STATUS_MAX] = {
                [GRPC_OK] = 0,
                [GRPC_CANCELLED] = -ECANCELED,
                [GRPC_UNKNOWN] = -EIO,
                [GRPC_INVALID_ARGUMENT] = -EINVAL,
                [GRPC_DEADLINE_EXCEEDED] = -ETIMEDOUT,
                [GRPC_NOT_FOUND] = -ENOENT,
                [GRPC_ALREADY_EXISTS] = -EEXIST,
                [GRPC_PERMISSION_DENIED] = -EACCES,
                [GRPC_RESOURCE_EXHAUSTED] = -ENOBUFS,
                [GRPC_FAILED_PRECONDITION] = -EBUSY,
                [GRPC_ABORTED] = -ECONNABORTED,
                [GRPC_OUT_OF_RANGE] = -ERANGE,
                [GRPC_UNIMPLEMENTED] = -EOPNOTSUPP,
                [GRPC_INTERNAL] = -EREMOTEIO,
                [GRPC_UNAVAILABLE] = -EAGAIN,
                [GRPC_DATA_LOSS] = -EIO,
                [GRPC_UNAUTHENTICATED] = -EPERM,
        };

        if (status < 0 || status >= _GRPC_STATUS_MAX)
                return -EIO;
        return map[status];
}
