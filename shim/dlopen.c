/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The loader of the optional libraries: first soname that loads and has every used symbol wins. */

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "shim/forward.h"
#include "string-util.h"

static const ShimLibrary *const libraries[_SHIM_LIB_MAX] = {
        [SHIM_LIBSYSTEMD] = &shim_library_libsystemd, [SHIM_LIBMNL] = &shim_library_libmnl,
        [SHIM_LIBNFTNL] = &shim_library_libnftnl,     [SHIM_LIBIP4TC] = &shim_library_libip4tc,
        [SHIM_LIBIP6TC] = &shim_library_libip6tc,     [SHIM_LIBIPSET] = &shim_library_libipset,
        [SHIM_LIBCURL] = &shim_library_libcurl,       [SHIM_LIBCRYPTO] = &shim_library_libcrypto,
        [SHIM_LIBYAML] = &shim_library_libyaml,       [SHIM_LIBBPF] = &shim_library_libbpf,
};

typedef struct ShimState {
        bool done; /* read with acquire: the rest is final once it is true */
        int result;
        const char *soname;
        char why[256];
        /* shim_find()'s answer, under the lock, until shim_load() decides for good. */
        bool looked;
        int find_result;
        const char *found;
        char find_why[64];
} ShimState;

static ShimState states[_SHIM_LIB_MAX];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* dlsym() every used symbol; a library lacking one is not that library (a broken or foreign
 * build), so the caller tries the next soname. The reason goes to st when non-NULL; the pointers
 * are published only all together. */
static int resolve_all(const ShimLibrary *l, void *handle, const char *soname, ShimState *st) {
        void *found[l->n_symbols];

        for (size_t i = 0; i < l->n_symbols; i++) {
                found[i] = dlsym(handle, l->symbols[i].name);
                if (!found[i]) {
                        if (st)
                                (void) snprintf(st->why, sizeof st->why, "%s lacks the symbol %s", soname,
                                                l->symbols[i].name);
                        return -EOPNOTSUPP;
                }
        }
        for (size_t i = 0; i < l->n_symbols; i++)
                __atomic_store_n(l->symbols[i].fn, found[i], __ATOMIC_RELEASE);
        return 0;
}

static bool dlerror_is_absent(const char *e) {
        return !e || strstr(e, "No such file or directory");
}

/* Every soname in turn. When none exists at all the reason is short ("libipset.so.13 not found");
 * otherwise it is the first real failure in the loader's own words (wrong ELF class, a missing
 * dependency of the library, a lacking symbol), as that is what an operator can act on. */
static int load_locked(const ShimLibrary *l, ShimState *st) {
        bool have_why = false;

        for (const char *const *s = l->sonames; *s; s++) {
                /* RTLD_NODELETE: the pointers stay valid whatever is unloaded later. */
                void *h = dlopen(*s, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);

                if (!h) {
                        const char *e = dlerror();

                        if (!have_why && !dlerror_is_absent(e)) {
                                (void) snprintf(st->why, sizeof st->why, "%s", e);
                                have_why = true;
                        }
                        continue;
                }
                if (resolve_all(l, h, *s, have_why ? NULL : st) >= 0) {
                        st->soname = *s;
                        return 0;
                }
                have_why = true;
                (void) dlclose(h);
        }
        if (!have_why)
                (void) snprintf(st->why, sizeof st->why, "%s not found", l->sonames[0]);
        return -EOPNOTSUPP;
}

int shim_load(ShimLib lib) {
        ShimState *st;

        if (lib < 0 || lib >= _SHIM_LIB_MAX)
                return -EINVAL;
        st = &states[lib];
        if (__atomic_load_n(&st->done, __ATOMIC_ACQUIRE))
                return st->result;
        (void) pthread_mutex_lock(&lock);
        if (!st->done) {
                st->result = load_locked(libraries[lib], st);
                __atomic_store_n(&st->done, true, __ATOMIC_RELEASE);
        }
        (void) pthread_mutex_unlock(&lock);
        return st->result;
}

/* -EAGAIN when the loader's cache cannot be read: only a real load can tell then. */
static int find_locked(const ShimLibrary *l, ShimState *st) {
        bool undecided = false;

        for (const char *const *s = l->sonames; *s; s++) {
                int k = shim_soname_locate(*s);

                if (k > 0) {
                        st->found = *s;
                        return 0;
                }
                undecided = undecided || k < 0;
        }
        if (undecided)
                return -EAGAIN;
        (void) snprintf(st->find_why, sizeof st->find_why, "%s not found", l->sonames[0]);
        return -EOPNOTSUPP;
}

/* Every library at once: the loader's cache is read once, whichever is asked about first. */
static void find_all_locked(void) {
        shim_soname_begin();
        for (ShimLib l = 0; l < _SHIM_LIB_MAX; l++)
                if (!states[l].looked) {
                        states[l].find_result = find_locked(libraries[l], &states[l]);
                        states[l].looked = true;
                }
        shim_soname_end();
}

int shim_find(ShimLib lib, const char **ret_soname, const char **ret_why) {
        const char *soname = NULL, *why = NULL;
        ShimState *st;
        int r;

        if (lib < 0 || lib >= _SHIM_LIB_MAX)
                return -EINVAL;
        st = &states[lib];
        (void) pthread_mutex_lock(&lock);
        if (st->done) {
                r = st->result;
                soname = st->soname;
                why = st->why;
        } else {
                if (!st->looked)
                        find_all_locked();
                r = st->find_result;
                soname = st->found;
                why = st->find_why;
        }
        (void) pthread_mutex_unlock(&lock);
        if (r == -EAGAIN) {
                r = shim_load(lib);
                soname = shim_soname(lib);
                why = shim_why(lib);
        }
        if (ret_soname)
                *ret_soname = r >= 0 ? soname : NULL;
        if (ret_why)
                *ret_why = r < 0 ? why : NULL;
        return r;
}

const char *shim_soname(ShimLib lib) {
        if (lib < 0 || lib >= _SHIM_LIB_MAX || !__atomic_load_n(&states[lib].done, __ATOMIC_ACQUIRE))
                return NULL;
        return states[lib].soname;
}

const char *shim_why(ShimLib lib) {
        if (lib < 0 || lib >= _SHIM_LIB_MAX || !__atomic_load_n(&states[lib].done, __ATOMIC_ACQUIRE))
                return NULL;
        return states[lib].result < 0 ? states[lib].why : NULL;
}

const char *shim_lib_name(ShimLib lib) {
        return lib >= 0 && lib < _SHIM_LIB_MAX ? libraries[lib]->name : NULL;
}

const char *const *shim_lib_sonames(ShimLib lib) {
        return lib >= 0 && lib < _SHIM_LIB_MAX ? libraries[lib]->sonames : NULL;
}

ShimLib shim_lib_from_name(const char *name) {
        for (ShimLib l = 0; l < _SHIM_LIB_MAX; l++)
                if (streq(libraries[l]->name, name))
                        return l;
        return _SHIM_LIB_INVALID;
}
