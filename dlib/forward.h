/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Internal to dlib/: the table a library module hands the loader, and the macros that turn one
 * list of used symbols into typed pointers, the loader's table and forwarders of the same names. */
#pragma once

#include <errno.h>
#include <stddef.h>

#include "macro.h"
#include "dlib/dlopen.h"

typedef struct DlibSymbol {
        const char *name;
        void **fn; /* where the loader stores dlsym()'s answer */
} DlibSymbol;

typedef struct DlibLibrary {
        const char *name;
        const char *const *sonames; /* NULL-terminated, tried in order */
        const DlibSymbol *symbols;
        size_t n_symbols;
} DlibLibrary;

extern const DlibLibrary dlib_library_libsystemd, dlib_library_libmnl, dlib_library_libnftnl, dlib_library_libip4tc,
        dlib_library_libip6tc, dlib_library_libipset, dlib_library_libcurl, dlib_library_libcrypto,
        dlib_library_libyaml, dlib_library_libbpf, dlib_library_libsqlite3;

/* 1 when the loader would find soname (in LD_LIBRARY_PATH, its cache or a system directory, as an
 * ELF object of this program's class and machine), 0 when not, <0 when its cache cannot be read.
 * Loads nothing. Called between dlib_soname_begin() and _end(), which map the loader's cache once
 * for a whole round of lookups, under dlib/dlopen.c's lock. */
void dlib_soname_begin(void);
int dlib_soname_locate(const char *soname);
void dlib_soname_end(void);

/* A symbol list is SYMS(X, V, R): X(ret, name, (params), (args), value returned when the library
 * is missing) for functions with a result, V(...) for void ones, R(...) for variadic ones, which
 * are resolved here but forwarded by hand (through the library's va_list variant, or by the
 * documented argument type). The pointer's type is the real
 * header's declaration, and so is the forwarder's: a prototype that drifts does not compile. */
#define DLIB_POINTER(ret, name, params, args, err) static __typeof__(name) *sym_##name;
#define DLIB_ENTRY(ret, name, params, args, err) { #name, (void **) &sym_##name },
#define DLIB_NONE(ret, name, params, args, err)
#define DLIB_POINTERS(syms) syms(DLIB_POINTER, DLIB_POINTER, DLIB_POINTER)
#define DLIB_FORWARDERS(syms) syms(DLIB_FORWARD, DLIB_FORWARD_VOID, DLIB_NONE)

/* The pointer, or NULL (errno EOPNOTSUPP) when the library does not load. A loaded library's
 * pointers are set before dlib_load() returns, so the fast path is one load. */
#define DLIB_RESOLVE(lib, name)                                                              \
        ({                                                                                   \
                __typeof__(sym_##name) _r_ = __atomic_load_n(&sym_##name, __ATOMIC_ACQUIRE); \
                if (_unlikely_(!_r_)) {                                                      \
                        if (dlib_load(lib) >= 0)                                             \
                                _r_ = __atomic_load_n(&sym_##name, __ATOMIC_ACQUIRE);        \
                        else                                                                 \
                                errno = EOPNOTSUPP;                                          \
                }                                                                            \
                _r_;                                                                         \
        })

/* The name in parentheses: curl and systemd define some API names as macros too. */
#define DLIB_FORWARD(ret, name, params, args, err)                          \
        ret(name) params {                                                  \
                __typeof__(sym_##name) _f_ = DLIB_RESOLVE(DLIB_THIS, name); \
                return _f_ ? _f_ args : (err);                              \
        }
#define DLIB_FORWARD_VOID(ret, name, params, args, err)                     \
        void(name) params {                                                 \
                __typeof__(sym_##name) _f_ = DLIB_RESOLVE(DLIB_THIS, name); \
                if (_f_)                                                    \
                        _f_ args;                                           \
        }

#define DLIB_LIBRARY(var, lname, syms, ...)                                                     \
        static const char *const var##_sonames[] = { __VA_ARGS__, NULL };                       \
        static const DlibSymbol var##_symbols[] = { syms(DLIB_ENTRY, DLIB_ENTRY, DLIB_ENTRY) }; \
        const DlibLibrary var = {                                                               \
                .name = lname,                                                                  \
                .sonames = var##_sonames,                                                       \
                .symbols = var##_symbols,                                                       \
                .n_symbols = ELEMENTSOF(var##_symbols),                                         \
        }
