/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What detection found, in the report: one emitter call per field for the text and the JSON. */

#include "agent/config/detect.h"
#include "macro.h"
#include "strv.h"

static void emit_evidence(Emitter *e, char **evidence) {
        emit_open_array(e, "evidence");
        STRV_FOREACH(s, evidence)
                emit_string(e, COLOR_GREY, NULL, "\n    %s", *s);
        emit_close_array(e);
}

/* A name from the node in the text, or null in JSON with "unknown"/"ambiguous" said in the text. */
static void emit_name(Emitter *e, const char *key, const char *value, bool ambiguous) {
        if (value)
                emit_string(e, COLOR_BOLD, key, "%s", value);
        else {
                emit_null(e, key);
                emit_text(e, COLOR_YELLOW, "%s", ambiguous ? "ambiguous" : "unknown");
        }
}

static void emit_finding(Emitter *e, const char *key, const char *label, const Finding *f) {
        emit_open_object(e, key);
        emit_text(e, COLOR_NONE, "  %s: ", label);
        emit_name(e, "name", f->value, f->ambiguous);
        emit_bool(e, "ambiguous", NULL, f->ambiguous);
        emit_evidence(e, f->evidence);
        emit_text(e, COLOR_NONE, "\n");
}

static void emit_installer(Emitter *e, const Detection *d) {
        emit_open_object(e, "installer");
        emit_text(e, COLOR_NONE, "\ndetected:\n  installer: ");
        emit_name(e, "name", d->installer == INSTALLER_NONE ? NULL : installer_to_string(d->installer),
                  d->installer_ambiguous);
        if (d->installer == INSTALLER_NONE && !d->installer_ambiguous)
                emit_text(e, COLOR_NONE, " (no installer's files found)");
        emit_bool(e, "ambiguous", NULL, d->installer_ambiguous);
        emit_open_array(e, "candidates");
        STRV_FOREACH(c, d->installer_candidates)
                emit_string(e, COLOR_YELLOW, NULL, c == d->installer_candidates ? " (evidence of %s" : ", %s", *c);
        if (d->installer_candidates)
                emit_text(e, COLOR_YELLOW, ")");
        emit_close_array(e);
        emit_evidence(e, d->installer_evidence);
        emit_text(e, COLOR_NONE, "\n");
        emit_close_object(e);
}

void detection_emit(Emitter *e, const Detection *d, const char *profile, const char *profile_why) {
        emit_installer(e, d);
        emit_open_object(e, "profile");
        emit_text(e, COLOR_NONE, "  profile: ");
        if (profile)
                emit_string(e, COLOR_BOLD, "name", "%s", profile);
        else {
                emit_null(e, "name");
                emit_text(e, COLOR_NONE, "none (manifest given)");
        }
        emit_string(e, COLOR_GREY, "why", profile_why ? " (%s)" : NULL, profile_why);
        emit_text(e, COLOR_NONE, "\n");
        emit_close_object(e);
        emit_finding(e, "runtime", "runtime", &d->runtime);
        emit_string(e, COLOR_NONE, "endpoint", NULL, d->runtime_endpoint);
        emit_bool(e, "docker_cohosted", NULL, d->docker_cohosted);
        emit_close_object(e);
        emit_finding(e, "cni", "CNI", &d->cni);
        emit_close_object(e);
        emit_finding(e, "kube_proxy_mode", "kube-proxy mode", &d->kube_proxy_mode);
        emit_close_object(e);
        emit_finding(e, "etcd", "etcd", &d->etcd);
        emit_string(e, COLOR_NONE, "data_dir", NULL, d->etcd_data_dir);
        emit_close_object(e);
        emit_string(e, COLOR_NONE, "kubelet_dir",
                    d->kubelet_dir_target ? "  /var/lib/kubelet: a symlink to %s\n" : NULL, d->kubelet_dir_target);
        emit_string(e, COLOR_NONE, "cluster_server", d->cluster_server ? "  cluster: %s\n" : NULL, d->cluster_server);
}
