/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Internal to shim/: the table a library module hands the loader, and the macros that turn one
 * list of used symbols into typed pointers, the loader's table and forwarders of the same names. */
#pragma once

#include <errno.h>
#include <stddef.h>

#include "macro.h"
#include "shim/dlopen.h"

typedef struct ShimSymbol {
        const char *name;
        void **fn; /* where the loader stores dlsym()'s answer */
} ShimSymbol;

typedef struct ShimLibrary {
        const char *name;
        const char *const *sonames; /* NULL-terminated, tried in order */
        const ShimSymbol *symbols;
        size_t n_symbols;
} ShimLibrary;

extern const ShimLibrary shim_library_libsystemd, shim_library_libmnl, shim_library_libnftnl, shim_library_libip4tc,
        shim_library_libip6tc, shim_library_libipset, shim_library_libcurl, shim_library_libcrypto,
        shim_library_libyaml, shim_library_libbpf;

/* 1 when the loader would find soname (in LD_LIBRARY_PATH, its cache or a system directory, as an
 * ELF object of this program's class and machine), 0 when not, <0 when its cache cannot be read.
 * Loads nothing. Called between shim_soname_begin() and _end(), which map the loader's cache once
 * for a whole round of lookups, under shim/dlopen.c's lock. */
void shim_soname_begin(void);
int shim_soname_locate(const char *soname);
void shim_soname_end(void);

/* A symbol list is SYMS(X, V, R): X(ret, name, (params), (args), value returned when the library
 * is missing) for functions with a result, V(...) for void ones, R(...) for variadic ones, which
 * are resolved here but forwarded by hand (through the library's va_list variant, or by the
 * documented argument type). The pointer's type is the real
 * header's declaration, and so is the forwarder's: a prototype that drifts does not compile. */
#define SHIM_POINTER(ret, name, params, args, err) static __typeof__(name) *sym_##name;
#define SHIM_ENTRY(ret, name, params, args, err) { #name, (void **) &sym_##name },
#define SHIM_NONE(ret, name, params, args, err)
#define SHIM_POINTERS(syms) syms(SHIM_POINTER, SHIM_POINTER, SHIM_POINTER)
#define SHIM_FORWARDERS(syms) syms(SHIM_FORWARD, SHIM_FORWARD_VOID, SHIM_NONE)

/* The pointer, or NULL (errno EOPNOTSUPP) when the library does not load. A loaded library's
 * pointers are set before shim_load() returns, so the fast path is one load. */
#define SHIM_RESOLVE(lib, name)                                                              \
        ({                                                                                   \
                __typeof__(sym_##name) _r_ = __atomic_load_n(&sym_##name, __ATOMIC_ACQUIRE); \
                if (_unlikely_(!_r_)) {                                                      \
                        if (shim_load(lib) >= 0)                                             \
                                _r_ = __atomic_load_n(&sym_##name, __ATOMIC_ACQUIRE);        \
                        else                                                                 \
                                errno = EOPNOTSUPP;                                          \
                }                                                                            \
                _r_;                                                                         \
        })

/* The name in parentheses: curl and systemd define some API names as macros too. */
#define SHIM_FORWARD(ret, name, params, args, err)                          \
        ret(name) params {                                                  \
                __typeof__(sym_##name) _f_ = SHIM_RESOLVE(SHIM_THIS, name); \
                return _f_ ? _f_ args : (err);                              \
        }
#define SHIM_FORWARD_VOID(ret, name, params, args, err)                     \
        void(name) params {                                                 \
                __typeof__(sym_##name) _f_ = SHIM_RESOLVE(SHIM_THIS, name); \
                if (_f_)                                                    \
                        _f_ args;                                           \
        }

#define SHIM_LIBRARY(var, lname, syms, ...)                                                     \
        static const char *const var##_sonames[] = { __VA_ARGS__, NULL };                       \
        static const ShimSymbol var##_symbols[] = { syms(SHIM_ENTRY, SHIM_ENTRY, SHIM_ENTRY) }; \
        const ShimLibrary var = {                                                               \
                .name = lname,                                                                  \
                .sonames = var##_sonames,                                                       \
                .symbols = var##_symbols,                                                       \
                .n_symbols = ELEMENTSOF(var##_symbols),                                         \
        }
