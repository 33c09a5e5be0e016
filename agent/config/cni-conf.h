/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A CNI configuration file read as libcni loads it: a strict JSON reader and libcni's rules for which
 * files load (the name's extension) and which parse (a conflist's name and plugins, each plugin's type). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Whether libcni lists a file of this name in a conf dir: its extension (from the last '.') is
 * exactly .conf, .conflist or .json. */
bool cni_conf_name_loaded(const char *name);

/* Every rescue conflist of the pods phase ends so, whatever prefix made it sort first; an
 * interrupted run's is found by it, and it is no CNI's. */
#define CNI_RESCUE_SUFFIX "node-reset-rescue.conflist"
/* The network name inside it, as the runtime reports what it loaded. */
#define CNI_RESCUE_NETWORK "node-reset-rescue"
bool cni_conf_name_is_rescue(const char *name);

/* The plugin types of the configuration file name holding text (size bytes, any bytes): each
 * plugin's type and its IPAM's type, in order, once each, comma separated ("calico,calico-ipam,portmap").
 * A name ending in .conflist is read as a list, any other as one plugin, as libcni does. Returns 0,
 * -EINVAL when libcni would refuse the file (invalid JSON, no name, no plugins, a plugin without a
 * type, a field of the wrong JSON type: *ret_why says which, a static string), or -ENOMEM. */
int cni_conf_types(const char *name, const char *text, size_t size, char **ret_types, const char **ret_why);
