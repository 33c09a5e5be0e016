/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libcurl, loaded on first use: the CRI's gRPC transport (pods phase), the report POSTs and the
 * orphan check. libcurl-gnutls.so.4 has the same ABI and is what many Debian and Ubuntu systems
 * have installed (git needs it) when libcurl4 is absent. */

#include <stdarg.h>
#include <curl/curl.h>

#include "dlib/forward.h"

#define DLIB_THIS DLIB_LIBCURL

/* Missing library: CURLE_FAILED_INIT, CURLM_INTERNAL_ERROR, CURLUE_OUT_OF_MEMORY or NULL; the
 * strerror calls name the missing library. */
/* clang-format off */
#define SYMBOLS(X, V, R) \
        V(void, curl_easy_cleanup, (CURL *curl), (curl), ) \
        R(CURLcode, curl_easy_getinfo, (CURL *curl, CURLINFO info, ...), (curl, info), CURLE_FAILED_INIT) \
        X(CURL *, curl_easy_init, (void), (), NULL) \
        X(CURLcode, curl_easy_perform, (CURL *curl), (curl), CURLE_FAILED_INIT) \
        R(CURLcode, curl_easy_setopt, (CURL *curl, CURLoption option, ...), (curl, option), CURLE_FAILED_INIT) \
        X(const char *, curl_easy_strerror, (CURLcode code), (code), "libcurl is not loaded") \
        V(void, curl_free, (void *p), (p), ) \
        X(CURLcode, curl_global_init, (long flags), (flags), CURLE_FAILED_INIT) \
        X(CURLMcode, curl_multi_add_handle, (CURLM *multi_handle, CURL *curl_handle), (multi_handle, curl_handle), CURLM_INTERNAL_ERROR) \
        X(CURLMcode, curl_multi_cleanup, (CURLM *multi_handle), (multi_handle), CURLM_INTERNAL_ERROR) \
        X(CURLMsg *, curl_multi_info_read, (CURLM *multi_handle, int *msgs_in_queue), (multi_handle, msgs_in_queue), NULL) \
        X(CURLM *, curl_multi_init, (void), (), NULL) \
        X(CURLMcode, curl_multi_perform, (CURLM *multi_handle, int *running_handles), (multi_handle, running_handles), CURLM_INTERNAL_ERROR) \
        X(CURLMcode, curl_multi_poll, (CURLM *multi_handle, struct curl_waitfd extra_fds[], unsigned int extra_nfds, int timeout_ms, int *ret), (multi_handle, extra_fds, extra_nfds, timeout_ms, ret), CURLM_INTERNAL_ERROR) \
        X(CURLMcode, curl_multi_remove_handle, (CURLM *multi_handle, CURL *curl_handle), (multi_handle, curl_handle), CURLM_INTERNAL_ERROR) \
        R(CURLMcode, curl_multi_setopt, (CURLM *multi_handle, CURLMoption option, ...), (multi_handle, option), CURLM_INTERNAL_ERROR) \
        X(const char *, curl_multi_strerror, (CURLMcode code), (code), "libcurl is not loaded") \
        X(struct curl_slist *, curl_slist_append, (struct curl_slist *list, const char *data), (list, data), NULL) \
        V(void, curl_slist_free_all, (struct curl_slist *list), (list), ) \
        X(CURLU *, curl_url, (void), (), NULL) \
        V(void, curl_url_cleanup, (CURLU *handle), (handle), ) \
        X(CURLUcode, curl_url_get, (CURLU *handle, CURLUPart what, char **part, unsigned int flags), (handle, what, part, flags), CURLUE_OUT_OF_MEMORY) \
        X(CURLUcode, curl_url_set, (CURLU *handle, CURLUPart what, const char *part, unsigned int flags), (handle, what, part, flags), CURLUE_OUT_OF_MEMORY) \
        X(curl_version_info_data *, curl_version_info, (CURLversion stamp), (stamp), NULL)
/* clang-format on */

DLIB_POINTERS(SYMBOLS)
DLIB_LIBRARY(dlib_library_libcurl, "libcurl", SYMBOLS, "libcurl.so.4", "libcurl-gnutls.so.4");
DLIB_FORWARDERS(SYMBOLS)

/* The option number says the argument's type (curl.h's CURLOPTTYPE_* ranges, shared by easy and
 * multi options): long below 10000, a data or function pointer up to 29999, curl_off_t up to
 * 39999, a struct curl_blob pointer above. */
#define SETOPT_FORWARD(f, handle, option, ap)                                           \
        ((option) < CURLOPTTYPE_OBJECTPOINT ? f(handle, option, va_arg(ap, long))       \
         : (option) < CURLOPTTYPE_OFF_T     ? f(handle, option, va_arg(ap, void *))     \
         : (option) < CURLOPTTYPE_BLOB      ? f(handle, option, va_arg(ap, curl_off_t)) \
                                            : f(handle, option, va_arg(ap, void *)))

CURLcode(curl_easy_setopt)(CURL *curl, CURLoption option, ...) {
        __typeof__(sym_curl_easy_setopt) f = DLIB_RESOLVE(DLIB_THIS, curl_easy_setopt);
        CURLcode r;
        va_list ap;

        if (!f)
                return CURLE_FAILED_INIT;
        va_start(ap, option);
        r = SETOPT_FORWARD(f, curl, option, ap);
        va_end(ap);
        return r;
}

CURLMcode(curl_multi_setopt)(CURLM *multi_handle, CURLMoption option, ...) {
        __typeof__(sym_curl_multi_setopt) f = DLIB_RESOLVE(DLIB_THIS, curl_multi_setopt);
        CURLMcode r;
        va_list ap;

        if (!f)
                return CURLM_INTERNAL_ERROR;
        va_start(ap, option);
        r = SETOPT_FORWARD(f, multi_handle, option, ap);
        va_end(ap);
        return r;
}

/* Every CURLINFO_* argument is a pointer to where the answer goes. */
CURLcode(curl_easy_getinfo)(CURL *curl, CURLINFO info, ...) {
        __typeof__(sym_curl_easy_getinfo) f = DLIB_RESOLVE(DLIB_THIS, curl_easy_getinfo);
        CURLcode r;
        va_list ap;

        if (!f)
                return CURLE_FAILED_INIT;
        va_start(ap, info);
        r = f(curl, info, va_arg(ap, void *));
        va_end(ap);
        return r;
}
