/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The loader of the optional libraries: first soname that loads and has every used symbol wins. */

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "dlib/forward.h"
#include "string-util.h"

static const DlibLibrary *const libraries[_DLIB_LIB_MAX] = {
        [DLIB_LIBSYSTEMD] = &dlib_library_libsystemd, [DLIB_LIBMNL] = &dlib_library_libmnl,
        [DLIB_LIBNFTNL] = &dlib_library_libnftnl,     [DLIB_LIBIP4TC] = &dlib_library_libip4tc,
        [DLIB_LIBIP6TC] = &dlib_library_libip6tc,     [DLIB_LIBIPSET] = &dlib_library_libipset,
        [DLIB_LIBCURL] = &dlib_library_libcurl,       [DLIB_LIBCRYPTO] = &dlib_library_libcrypto,
        [DLIB_LIBYAML] = &dlib_library_libyaml,       [DLIB_LIBBPF] = &dlib_library_libbpf,
        [DLIB_LIBSQLITE3] = &dlib_library_libsqlite3,
};

typedef struct DlibState {
        bool done; /* read with acquire: the rest is final once it is true */
        int result;
        const char *soname;
        char why[256];
        /* dlib_find()'s answer, under the lock, until dlib_load() decides for good. */
        bool looked;
        int find_result;
        const char *found;
        char find_why[64];
} DlibState;

static DlibState states[_DLIB_LIB_MAX];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* dlsym() every used symbol; a library lacking one is not that library (a broken or foreign
 * build), so the caller tries the next soname. The reason goes to st when non-NULL; the pointers
 * are published only all together. */
static int resolve_all(const DlibLibrary *l, void *handle, const char *soname, DlibState *st) {
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
static int load_locked(const DlibLibrary *l, DlibState *st) {
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

int dlib_load(DlibLib lib) {
        DlibState *st;

        if (lib < 0 || lib >= _DLIB_LIB_MAX)
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
static int find_locked(const DlibLibrary *l, DlibState *st) {
        bool undecided = false;

        for (const char *const *s = l->sonames; *s; s++) {
                int k = dlib_soname_locate(*s);

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
        dlib_soname_begin();
        for (DlibLib l = 0; l < _DLIB_LIB_MAX; l++)
                if (!states[l].looked) {
                        states[l].find_result = find_locked(libraries[l], &states[l]);
                        states[l].looked = true;
                }
        dlib_soname_end();
}

int dlib_find(DlibLib lib, const char **ret_soname, const char **ret_why) {
        const char *soname = NULL, *why = NULL;
        DlibState *st;
        int r;

        if (lib < 0 || lib >= _DLIB_LIB_MAX)
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
                r = dlib_load(lib);
                soname = dlib_soname(lib);
                why = dlib_why(lib);
        }
        if (ret_soname)
                *ret_soname = r >= 0 ? soname : NULL;
        if (ret_why)
                *ret_why = r < 0 ? why : NULL;
        return r;
}

const char *dlib_soname(DlibLib lib) {
        if (lib < 0 || lib >= _DLIB_LIB_MAX || !__atomic_load_n(&states[lib].done, __ATOMIC_ACQUIRE))
                return NULL;
        return states[lib].soname;
}

const char *dlib_why(DlibLib lib) {
        if (lib < 0 || lib >= _DLIB_LIB_MAX || !__atomic_load_n(&states[lib].done, __ATOMIC_ACQUIRE))
                return NULL;
        return states[lib].result < 0 ? states[lib].why : NULL;
}

const char *dlib_lib_name(DlibLib lib) {
        return lib >= 0 && lib < _DLIB_LIB_MAX ? libraries[lib]->name : NULL;
}

const char *const *dlib_lib_sonames(DlibLib lib) {
        return lib >= 0 && lib < _DLIB_LIB_MAX ? libraries[lib]->sonames : NULL;
}

DlibLib dlib_lib_from_name(const char *name) {
        for (DlibLib l = 0; l < _DLIB_LIB_MAX; l++)
                if (streq(libraries[l]->name, name))
                        return l;
        return _DLIB_LIB_INVALID;
}
