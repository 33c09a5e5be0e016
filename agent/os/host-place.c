/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Where a URL's host is, from the address alone and this network namespace's interfaces
 * (getifaddrs(3)); a name is never looked up: in a rescue shell a lookup may hang, and what it
 * answers there says nothing of where the name led on the tree's own machine. */

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "agent/os/host-place.h"
#include "macro.h"
#include "string-util.h"

const char *url_host(const char *url, char *buf, size_t size) {
        const char *h = strstr(url, "://"), *end, *at;
        size_t authority;

        h = h ? h + 3 : url;
        authority = strcspn(h, "/?#");
        at = memrchr(h, '@', authority); /* user:password@host */
        if (at)
                h = at + 1;
        if (*h == '[') {
                h++;
                end = strchr(h, ']');
        } else
                end = h + strcspn(h, ":/?#");
        if (!end || end == h || (size_t) (end - h) >= size)
                return NULL;
        memcpy(buf, h, (size_t) (end - h));
        buf[end - h] = '\0';
        return buf;
}

/* An address as IPv4 when it is one, also written as ::ffff:a.b.c.d: family, 4 or 16 bytes. */
typedef struct Addr {
        int family;
        uint8_t b[16];
} Addr;

static bool addr_parse(const char *s, Addr *ret) {
        static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };

        if (inet_pton(AF_INET, s, ret->b) == 1) {
                ret->family = AF_INET;
                return true;
        }
        if (inet_pton(AF_INET6, s, ret->b) != 1)
                return false;
        ret->family = AF_INET6;
        if (memcmp(ret->b, mapped, sizeof mapped) == 0) {
                memmove(ret->b, ret->b + 12, 4);
                ret->family = AF_INET;
        }
        return true;
}

static bool addr_is_loopback_or_any(const Addr *a) {
        static const uint8_t zero[16], one[16] = { [15] = 1 };

        if (a->family == AF_INET)
                return a->b[0] == 127 || memcmp(a->b, zero, 4) == 0;
        return memcmp(a->b, zero, 16) == 0 || memcmp(a->b, one, 16) == 0;
}

static bool addr_on_interface(const Addr *a) {
        struct ifaddrs *list = NULL;
        bool found = false;

        /* Without the list, an address cannot be known to be elsewhere: here, to be safe. */
        if (getifaddrs(&list) < 0)
                return true;
        for (struct ifaddrs *i = list; i && !found; i = i->ifa_next) {
                const struct sockaddr *sa = i->ifa_addr;

                if (!sa || sa->sa_family != a->family)
                        continue;
                if (a->family == AF_INET)
                        found = memcmp(&((const struct sockaddr_in *) sa)->sin_addr, a->b, 4) == 0;
                else
                        found = memcmp(&((const struct sockaddr_in6 *) sa)->sin6_addr, a->b, 16) == 0;
        }
        freeifaddrs(list);
        return found;
}

HostPlace host_place(const char *host) {
        Addr a;
        size_t n;

        if (addr_parse(host, &a))
                return addr_is_loopback_or_any(&a) || addr_on_interface(&a) ? HOST_HERE : HOST_ELSEWHERE;
        /* RFC 6761: "localhost" and every name beneath it are this machine. */
        n = strlen(host);
        if (n > 0 && host[n - 1] == '.')
                n--;
        if ((n == 9 && strncasecmp(host, "localhost", 9) == 0) ||
            (n > 10 && strncasecmp(host + n - 10, ".localhost", 10) == 0))
                return HOST_HERE;
        return HOST_UNKNOWN;
}

HostPlace url_host_place(const char *url) {
        char buf[256];
        const char *h = url_host(url, buf, sizeof buf);

        return h ? host_place(h) : HOST_UNKNOWN;
}

const char *host_place_to_string(HostPlace p) {
        switch (p) {
        case HOST_ELSEWHERE:
                return "elsewhere";
        case HOST_HERE:
                return "this machine";
        case HOST_UNKNOWN:
                return "a name not looked up";
        }
        return NULL;
}
