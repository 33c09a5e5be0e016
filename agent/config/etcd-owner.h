/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Who owns this node's etcd, decided once from what each installer writes, the detected installer
 * first: kubeadm owns one only through its static pod, kubespray and kubekey through /etc/etcd.env and
 * its unit, k3s and rke2 through server/db/etcd under their data directory. An etcd none of them made
 * (on a kubeadm node, a ClusterConfiguration that says etcd.external, whatever sits beside it; a unit
 * no installer writes) is out of scope: every phase leaves its unit, static pod, data, certificates
 * and member alone. */
#pragma once

#include <stdbool.h>

#include "agent/config/detect.h"

/* The installers' files it reads (installers.h). */
#define ETCD_MANIFEST KUBEADM_ETCD_MANIFEST
#define ETCD_ENV SYSTEMD_ETCD_ENV
#define KUBE_APISERVER_MANIFEST KUBEADM_APISERVER_MANIFEST
#define KUBEADM_ETCD_PKI KUBEADM_PKI "/etcd"

typedef enum EtcdOwner {
        ETCD_OWNER_NONE,    /* no etcd in this node's files */
        ETCD_OWNER_KUBEADM, /* stacked: /etc/kubernetes/manifests/etcd.yaml */
        ETCD_OWNER_ENV,     /* /etc/etcd.env and its unit: kubespray, kubekey */
        ETCD_OWNER_K3S,     /* embedded: server/db/etcd under k3s's data directory */
        ETCD_OWNER_RKE2,    /* the same under rke2's */
        ETCD_OWNER_FOREIGN, /* no installer of this node made it: out of scope */
} EtcdOwner;

typedef struct EtcdScope {
        EtcdOwner owner;
        char *source;     /* the node file the decision rests on */
        char *why;        /* one line: whose it is, or why it is out of scope */
        char **argv;      /* owned: the member's command line as its files give it ("etcd --name=..."),
                           * NULL when they do not parse (why says so) */
        char *server_dir; /* k3s/rke2: the data directory's server/ (node path) */
        char *unit;       /* foreign: the unit that runs it, when a unit file names it */
        char **keep;      /* foreign: node paths never touched (data, unit and env files, a static pod
                           * kubeadm wrote for it, certificates), which the files phase keeps
                           * (files-protect.h) */
} EtcdScope;

/* k3s's (or rke2's) data directory, node path, malloc'd (NULL: out of memory): rancher_data_dir()'s
 * answer, a data-dir set in an env file, the unit's command line or config.yaml, else the default. */
char *k3s_data_dir(int root_fd, Installer installer);

/* Decide from the tree beneath root_fd and the installer detection found there (detect.h:
 * INSTALLER_NONE when none, or more than one, was; each installer's files are then read in turn). 0
 * (also for a file that does not parse: then argv is NULL and why names the file), -ENOMEM. */
int etcd_scope_decide(int root_fd, Installer installer, EtcdScope *ret);
void etcd_scope_done(EtcdScope *s);

/* Is unit the out-of-scope etcd's unit? */
bool etcd_scope_keeps_unit(const EtcdScope *s, const char *unit);
