/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libsystemd, loaded on first use: sd-bus for the services and reload phases, sd-journal for
 * logging. The variadic sd-bus calls go through their va_list variants; sd_journal_send() has none,
 * so agent/base/log.c builds the iovecs itself and calls sd_journal_sendv(). */

#define SD_JOURNAL_SUPPRESS_LOCATION 1
#include <stdarg.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-journal.h>

#include "dlib/forward.h"

#define DLIB_THIS DLIB_LIBSYSTEMD

/* Missing library: -EOPNOTSUPP (sd-bus's errors are negative errno); unref calls return NULL; an
 * error is never set nor has a name. */
/* clang-format off */
#define SYMBOLS(X, V, R) \
        X(int, sd_bus_call, (sd_bus *bus, sd_bus_message *m, uint64_t usec, sd_bus_error *ret_error, sd_bus_message **reply), (bus, m, usec, ret_error, reply), -EOPNOTSUPP) \
        R(int, sd_bus_call_methodv, (), (), ) \
        V(void, sd_bus_error_free, (sd_bus_error *e), (e), ) \
        X(int, sd_bus_error_get_errno, (const sd_bus_error *e), (e), EOPNOTSUPP) \
        X(int, sd_bus_error_has_name, (const sd_bus_error *e, const char *name), (e, name), 0) \
        X(int, sd_bus_error_is_set, (const sd_bus_error *e), (e), 0) \
        X(sd_bus*, sd_bus_flush_close_unref, (sd_bus *bus), (bus), NULL) \
        X(int, sd_bus_get_property, (sd_bus *bus, const char *destination, const char *path, const char *interface, const char *member, sd_bus_error *ret_error, sd_bus_message **reply, const char *type), (bus, destination, path, interface, member, ret_error, reply, type), -EOPNOTSUPP) \
        X(int, sd_bus_get_property_string, (sd_bus *bus, const char *destination, const char *path, const char *interface, const char *member, sd_bus_error *ret_error, char **ret), (bus, destination, path, interface, member, ret_error, ret), -EOPNOTSUPP) \
        X(int, sd_bus_get_property_trivial, (sd_bus *bus, const char *destination, const char *path, const char *interface, const char *member, sd_bus_error *ret_error, char type, void *ret_ptr), (bus, destination, path, interface, member, ret_error, type, ret_ptr), -EOPNOTSUPP) \
        X(int, sd_bus_match_signal, (sd_bus *bus, sd_bus_slot **ret, const char *sender, const char *path, const char *interface, const char *member, sd_bus_message_handler_t callback, void *userdata), (bus, ret, sender, path, interface, member, callback, userdata), -EOPNOTSUPP) \
        R(int, sd_bus_message_appendv, (), (), ) \
        X(int, sd_bus_message_append_strv, (sd_bus_message *m, char **l), (m, l), -EOPNOTSUPP) \
        X(int, sd_bus_message_enter_container, (sd_bus_message *m, char type, const char *contents), (m, type, contents), -EOPNOTSUPP) \
        X(int, sd_bus_message_exit_container, (sd_bus_message *m), (m), -EOPNOTSUPP) \
        X(int, sd_bus_message_new_method_call, (sd_bus *bus, sd_bus_message **m, const char *destination, const char *path, const char *interface, const char *member), (bus, m, destination, path, interface, member), -EOPNOTSUPP) \
        X(int, sd_bus_message_peek_type, (sd_bus_message *m, char *type, const char **contents), (m, type, contents), -EOPNOTSUPP) \
        R(int, sd_bus_message_readv, (), (), ) \
        X(int, sd_bus_message_read_basic, (sd_bus_message *m, char type, void *p), (m, type, p), -EOPNOTSUPP) \
        X(int, sd_bus_message_skip, (sd_bus_message *m, const char *types), (m, types), -EOPNOTSUPP) \
        X(sd_bus_message*, sd_bus_message_unref, (sd_bus_message *m), (m), NULL) \
        X(int, sd_bus_new, (sd_bus **ret), (ret), -EOPNOTSUPP) \
        X(int, sd_bus_process, (sd_bus *bus, sd_bus_message **r), (bus, r), -EOPNOTSUPP) \
        X(int, sd_bus_set_address, (sd_bus *bus, const char *address), (bus, address), -EOPNOTSUPP) \
        X(int, sd_bus_set_bus_client, (sd_bus *bus, int b), (bus, b), -EOPNOTSUPP) \
        X(sd_bus_slot*, sd_bus_slot_unref, (sd_bus_slot *slot), (slot), NULL) \
        X(int, sd_bus_start, (sd_bus *bus), (bus), -EOPNOTSUPP) \
        X(sd_bus*, sd_bus_unref, (sd_bus *bus), (bus), NULL) \
        X(int, sd_bus_wait, (sd_bus *bus, uint64_t timeout_usec), (bus, timeout_usec), -EOPNOTSUPP) \
        X(int, sd_journal_sendv, (const struct iovec *iov, int n), (iov, n), -EOPNOTSUPP)
/* clang-format on */

DLIB_POINTERS(SYMBOLS)
DLIB_LIBRARY(dlib_library_libsystemd, "libsystemd", SYMBOLS, "libsystemd.so.0");
DLIB_FORWARDERS(SYMBOLS)

int(sd_bus_call_method)(sd_bus *bus, const char *destination, const char *path, const char *interface,
                        const char *member, sd_bus_error *ret_error, sd_bus_message **reply, const char *types, ...) {
        __typeof__(sym_sd_bus_call_methodv) f = DLIB_RESOLVE(DLIB_THIS, sd_bus_call_methodv);
        va_list ap;
        int r;

        if (!f)
                return -EOPNOTSUPP;
        va_start(ap, types);
        r = f(bus, destination, path, interface, member, ret_error, reply, types, ap);
        va_end(ap);
        return r;
}

int(sd_bus_message_append)(sd_bus_message *m, const char *types, ...) {
        __typeof__(sym_sd_bus_message_appendv) f = DLIB_RESOLVE(DLIB_THIS, sd_bus_message_appendv);
        va_list ap;
        int r;

        if (!f)
                return -EOPNOTSUPP;
        va_start(ap, types);
        r = f(m, types, ap);
        va_end(ap);
        return r;
}

int(sd_bus_message_read)(sd_bus_message *m, const char *types, ...) {
        __typeof__(sym_sd_bus_message_readv) f = DLIB_RESOLVE(DLIB_THIS, sd_bus_message_readv);
        va_list ap;
        int r;

        if (!f)
                return -EOPNOTSUPP;
        va_start(ap, types);
        r = f(m, types, ap);
        va_end(ap);
        return r;
}

/* No va_list variant exists; the library's own definition is this loop over the names. */
int(sd_bus_error_has_names_sentinel)(const sd_bus_error *e, ...) {
        __typeof__(sym_sd_bus_error_has_name) f = DLIB_RESOLVE(DLIB_THIS, sd_bus_error_has_name);
        const char *name;
        va_list ap;
        int r = 0;

        if (!f)
                return 0;
        va_start(ap, e);
        while (r == 0 && (name = va_arg(ap, const char *)))
                r = f(e, name);
        va_end(ap);
        return r;
}
