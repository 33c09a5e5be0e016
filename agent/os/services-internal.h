/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What services.c, services-jobs.c and services-unit-files.c share about the bus: the manager's
 * connection, systemd's names, the cleanup of a call's error and message, a failed call's errno. */
#pragma once

#include <stdbool.h>
#include <systemd/sd-bus.h>

#include "agent/os/services.h"
#include "macro.h"

#define SD_DESTINATION "org.freedesktop.systemd1"
#define SD_PATH "/org/freedesktop/systemd1"
#define SD_MANAGER "org.freedesktop.systemd1.Manager"
#define SD_UNIT "org.freedesktop.systemd1.Unit"
#define SD_SERVICE "org.freedesktop.systemd1.Service"

struct ServiceManager {
        sd_bus *bus;
        int root_fd; /* the tree whose sockets are reached (a dup of the run's root_fd) */
        char *root;  /* its path, for the messages */
        char *why_absent;
        char *description;
        bool direct; /* the private socket: no bus daemon, signals carry no sender */
        bool subscribed;
};

static inline void sd_bus_error_freep(sd_bus_error *e) {
        sd_bus_error_free(e);
}
#define cleanup_bus_error CLEANUP(sd_bus_error_freep)
#define cleanup_bus_message CLEANUP(sd_bus_message_unrefp)

/* The unit (or its unit file) is not there: "not found" is a state, not a failure. */
bool services_bus_error_is_absent(const sd_bus_error *e);
/* A failed call as -errno, with the bus's own message in *reterr_msg. */
int services_bus_fail(char **reterr_msg, int r, const sd_bus_error *e, const char *what);
