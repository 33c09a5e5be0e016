/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libcrypto, loaded on first use: the orphan check reads kubeconfig certificates, a report encodes
 * the exact bytes of a name that is not UTF-8.
 * Not linked in from libcrypto.a: libcurl loads the shared libcrypto anyway, and two OpenSSL
 * copies in one process would not share their state. */

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "dlib/forward.h"

#define DLIB_THIS DLIB_LIBCRYPTO

/* Missing library: NULL, 0 or -1 (OpenSSL's failures). */
/* clang-format off */
#define SYMBOLS(X, V, R) \
        X(int, BIO_free, (BIO *a), (a), 0) \
        X(BIO *, BIO_new_mem_buf, (const void *buf, int len), (buf, len), NULL) \
        V(void, ERR_clear_error, (void), (), ) \
        X(int, EVP_DecodeBlock, (unsigned char *t, const unsigned char *f, int n), (t, f, n), -1) \
        X(int, EVP_EncodeBlock, (unsigned char *t, const unsigned char *f, int n), (t, f, n), -1) \
        X(X509 *, PEM_read_bio_X509, (BIO *out, X509 **x, pem_password_cb *cb, void *u), (out, x, cb, u), NULL) \
        X(int, X509_NAME_get_text_by_NID, (const X509_NAME *name, int nid, char *buf, int len), (name, nid, buf, len), -1) \
        V(void, X509_free, (X509 *a), (a), ) \
        X(X509_NAME *, X509_get_subject_name, (const X509 *a), (a), NULL)
/* clang-format on */

DLIB_POINTERS(SYMBOLS)
DLIB_LIBRARY(dlib_library_libcrypto, "libcrypto", SYMBOLS, "libcrypto.so.3");
DLIB_FORWARDERS(SYMBOLS)
