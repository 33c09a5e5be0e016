/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Test helper for test-portable.sh: calls one forwarder of every library in dlib/ and checks the
 * documented answer. "missing" (run where no optional library exists): each returns its API's
 * error value and nothing crashes. "loaded": each library loads and answers for real. */

#define SD_JOURNAL_SUPPRESS_LOCATION 1
#include <curl/curl.h>
#include <dlfcn.h>
#include <libiptc/libiptc.h>
#include <libmnl/libmnl.h>
#include <libnftnl/table.h>
#include <linux/netlink.h>
#include <openssl/bio.h>
#include <sqlite3.h>
#include <sys/uio.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-journal.h>

#include "macro.h"
#include "dlib/dlopen.h"
#include "string-util.h"

static int failures;

static bool says_not_found(const char *why) {
        size_t n = why ? strlen(why) : 0;

        return n > 10 && streq(why + n - 10, " not found");
}

static void check(const char *what, bool ok) {
        printf("%s: %s\n", ok ? "ok" : "FAIL", what);
        failures += !ok;
}

static void probe_missing(void) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        struct iovec iov = { (char *) "MESSAGE=x", 9 };
        sd_bus *bus = NULL;
        sqlite3 *db = NULL;

        for (DlibLib l = 0; l < _DLIB_LIB_MAX; l++) {
                const char *so = "x", *why = NULL;

                check("dlib_find: not found", dlib_find(l, &so, &why) == -EOPNOTSUPP && !so && says_not_found(why));
        }
        errno = 0;
        check("mnl_socket_open2: NULL, errno EOPNOTSUPP", !mnl_socket_open2(NETLINK_ROUTE, 0) && errno == EOPNOTSUPP);
        check("nftnl_table_alloc: NULL", !nftnl_table_alloc());
        check("iptc_init: NULL", !iptc_init("filter"));
        check("iptc_strerror: names the library", streq(iptc_strerror(0), "libip4tc is not loaded"));
        check("curl_version_info: NULL", !curl_version_info(CURLVERSION_NOW));
        check("curl_easy_init: NULL", !curl_easy_init());
        check("curl_easy_setopt (variadic): CURLE_FAILED_INIT",
              curl_easy_setopt(NULL, CURLOPT_URL, "x") == CURLE_FAILED_INIT);
        check("BIO_new_mem_buf: NULL", !BIO_new_mem_buf("x", 1));
        check("sd_bus_new: -EOPNOTSUPP", sd_bus_new(&bus) == -EOPNOTSUPP && !bus);
        check("sd_bus_message_append (variadic): -EOPNOTSUPP", sd_bus_message_append(NULL, "s", "x") == -EOPNOTSUPP);
        check("sd_bus_error_has_names (variadic): 0", sd_bus_error_has_names(&e, "a.b", "c.d") == 0);
        check("sd_journal_sendv: -EOPNOTSUPP", sd_journal_sendv(&iov, 1) == -EOPNOTSUPP);
        check("sqlite3_open_v2: SQLITE_ERROR",
              sqlite3_open_v2("x", &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_ERROR && !db);
        for (DlibLib l = 0; l < _DLIB_LIB_MAX; l++)
                check(dlib_lib_name(l), dlib_load(l) == -EOPNOTSUPP && !dlib_soname(l) && says_not_found(dlib_why(l)));
}

static void probe_loaded(void) {
        /* A constant error: no libsystemd call of the test's own, so this helper needs only libc too. */
        const sd_bus_error e = SD_BUS_ERROR_MAKE_CONST("org.example.B", "x");
        const curl_version_info_data *v;
        CURL *h;

        /* Found by soname without being mapped; then loaded, and found as what was loaded. */
        for (DlibLib l = 0; l < _DLIB_LIB_MAX; l++) {
                const char *so = NULL, *why = "x";

                check("dlib_find: found, not loaded",
                      dlib_find(l, &so, &why) == 0 && so && !why && !dlopen(so, RTLD_LAZY | RTLD_NOLOAD));
        }
        for (DlibLib l = 0; l < _DLIB_LIB_MAX; l++) {
                const char *so = NULL;

                check(dlib_lib_name(l), dlib_load(l) == 0 && dlib_soname(l) && !dlib_why(l));
                check("dlib_find after the load: the loaded soname",
                      dlib_find(l, &so, NULL) == 0 && so && streq(so, dlib_soname(l)));
        }
        v = curl_version_info(CURLVERSION_NOW);
        check("curl_version_info answers", v && v->version_num > 0);
        h = curl_easy_init();
        /* Each argument class of the variadic forwarder: long, pointer, curl_off_t. */
        check("curl_easy_setopt long", h && curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L) == CURLE_OK);
        check("curl_easy_setopt pointer", h && curl_easy_setopt(h, CURLOPT_URL, "http://x/") == CURLE_OK);
        check("curl_easy_setopt curl_off_t",
              h && curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) 3) == CURLE_OK);
        check("curl_easy_setopt unknown option: not OK", h && curl_easy_setopt(h, (CURLoption) 9999, 0L) != CURLE_OK);
        curl_easy_cleanup(h);
        check("sd_bus_error_has_names: the second name matches",
              sd_bus_error_has_names(&e, "org.example.A", "org.example.B") > 0);
        check("sd_bus_error_has_names: no name matches", sd_bus_error_has_names(&e, "org.example.C") == 0);
        check("dlib_lib_from_name",
              dlib_lib_from_name("libipset") == DLIB_LIBIPSET && dlib_lib_from_name("libfoo") == _DLIB_LIB_INVALID);
}

int main(int argc, char *argv[]) {
        if (argc != 2 || !(streq(argv[1], "missing") || streq(argv[1], "loaded"))) {
                fprintf(stderr, "usage: dlib-probe missing|loaded\n");
                return 2;
        }
        if (streq(argv[1], "missing"))
                probe_missing();
        else
                probe_loaded();
        return failures ? 1 : 0;
}
