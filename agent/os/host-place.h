/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Where a URL's host is: this machine (loopback, the wildcard addresses, an address of one of its
 * interfaces in this network namespace), elsewhere, or not known without a name lookup. Under
 * --root a URL from the tree's files that leads here reaches the running machine, never the tree's. */
#pragma once

#include <stddef.h>

typedef enum HostPlace {
        HOST_ELSEWHERE, /* an IP address no interface of this machine has */
        HOST_HERE,      /* loopback, 0.0.0.0 or ::, "localhost", or an address of this machine */
        HOST_UNKNOWN,   /* a name: where it leads is not known without a lookup, which is not made */
} HostPlace;

/* The host of "https://10.0.0.3:2380", "https://[fd00::3]:2380" or "10.0.0.3", in buf: buf, or NULL
 * when it does not fit or the URL has none. */
const char *url_host(const char *url, char *buf, size_t size);

/* Where host (an address or a name, without brackets) is. */
HostPlace host_place(const char *host);
/* Where the host of url is; HOST_UNKNOWN when it has none. */
HostPlace url_host_place(const char *url);
const char *host_place_to_string(HostPlace p);
