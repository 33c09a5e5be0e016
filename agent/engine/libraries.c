/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The optional libraries as the operator sees them: which phase loses what without each. */

#include "agent/engine/libraries.h"
#include "macro.h"
#include "string-util.h"

/* What is lost without each library, in the words of the report ("<why>: <effect>"). */
static const char *const effects[_DLIB_LIB_MAX] = {
        [DLIB_LIBSYSTEMD] = "services-early, services-late and reload phases skipped, logging to stderr",
        [DLIB_LIBMNL] = "network and firewall phases skipped",
        [DLIB_LIBNFTNL] = "firewall nf_tables lines skipped",
        [DLIB_LIBIP4TC] = "firewall legacy iptables lines skipped",
        [DLIB_LIBIP6TC] = "firewall legacy ip6tables lines skipped",
        [DLIB_LIBIPSET] = "firewall ipset lines skipped",
        [DLIB_LIBCURL] = "pods phase skipped, no --report-url POSTs, orphan-check cannot ask the API server",
        [DLIB_LIBCRYPTO] = "orphan-check cannot read kubeconfig certificates",
        [DLIB_LIBYAML] = "orphan-check cannot read kubeconfigs",
        [DLIB_LIBBPF] = "network BPF program lines skipped",
        [DLIB_LIBSQLITE3] = "backup cannot copy k3s's SQLite datastore, which is then kept",
};

int libraries_check(DlibLib lib, const char **ret_why) {
        int r = dlib_load(lib);

        if (ret_why)
                *ret_why = r < 0 ? strna(dlib_why(lib)) : NULL;
        return r;
}

int libraries_find(DlibLib lib, const char **ret_why) {
        const char *why;
        int r = dlib_find(lib, NULL, &why);

        if (ret_why)
                *ret_why = r < 0 ? strna(why) : NULL;
        return r;
}

static int skip_row_apply(Action *a, Context *ctx, char **reterr_msg) {
        return 0;
}

static const ActionOps library_ops = {
        .kind = "library",
        .apply = skip_row_apply,
};

static int plan_skip_row(Plan *plan, const char *phase, DlibLib lib, const char *why, const char *what) {
        Action *a;
        int r;

        a = plan_add(plan, &library_ops, phase, dlib_lib_sonames(lib)[0], NULL, NULL);
        if (!a)
                return -ENOMEM;
        a->present = false;
        a->unobserved = true;
        r = action_set_detail(a, "needed for %s", what);
        if (r >= 0)
                r = action_set_skip(a, "%s: %s skipped", why, what);
        return r < 0 ? r : 1;
}

int libraries_plan_missing(Plan *plan, const char *phase, DlibLib lib, const char *what) {
        const char *why;

        if (libraries_check(lib, &why) >= 0)
                return 0;
        return plan_skip_row(plan, phase, lib, why, what);
}

int libraries_plan_phase(Plan *plan, const char *phase, unsigned needs) {
        cleanup_free char *what = NULL;

        if (needs == 0)
                return 0;
        what = strprintf("the %s phase", phase);
        if (!what)
                return -ENOMEM;
        for (DlibLib l = 0; l < _DLIB_LIB_MAX; l++)
                if (needs & DLIB_MASK(l)) {
                        const char *why;

                        /* Looked up, not loaded: the phase may never call it. */
                        if (libraries_find(l, &why) < 0)
                                return plan_skip_row(plan, phase, l, why, what);
                }
        return 0;
}

int libraries_plan_failed(Plan *plan, const char *phase, unsigned needs) {
        cleanup_free char *what = strprintf("the %s phase", phase);

        if (!what)
                return -ENOMEM;
        for (DlibLib l = 0; l < _DLIB_LIB_MAX; l++) {
                const char *why;

                if ((needs & DLIB_MASK(l)) && libraries_check(l, &why) < 0)
                        return plan_skip_row(plan, phase, l, why, what);
        }
        return 0;
}

void libraries_emit_unavailable(Emitter *e) {
        bool any = false;

        emit_open_array(e, "unavailable");
        for (DlibLib l = 0; l < _DLIB_LIB_MAX; l++) {
                const char *why;

                if (libraries_find(l, &why) >= 0)
                        continue;
                if (!any)
                        emit_text(e, COLOR_YELLOW, "\nunavailable on this node:\n");
                any = true;
                emit_open_object(e, NULL);
                emit_string(e, COLOR_NONE, "library", NULL, dlib_lib_name(l));
                emit_string(e, COLOR_YELLOW, "why", "  %s", why);
                emit_string(e, COLOR_NONE, "effect", ": %s\n", effects[l]);
                emit_close_object(e);
        }
        emit_close_array(e);
}

void libraries_print(FILE *f) {
        for (DlibLib l = 0; l < _DLIB_LIB_MAX; l++) {
                const char *soname, *why;

                if (dlib_find(l, &soname, &why) >= 0)
                        fprintf(f, "  %-11s %s\n", dlib_lib_name(l), soname);
                else
                        fprintf(f, "  %-11s not loaded: %s (%s)\n", dlib_lib_name(l), strna(why), effects[l]);
        }
}
