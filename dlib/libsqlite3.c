/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libsqlite3, loaded on first use: the backup copies k3s's SQLite datastore (server/db/state.db, the
 * whole cluster of a single server) with SQLite's own online backup API, a consistent copy while k3s
 * may still write it (in WAL mode, through kine). Without it the datastore is kept, not copied. */

#include <sqlite3.h>

#include "dlib/forward.h"

#define DLIB_THIS DLIB_LIBSQLITE3

/* Missing library: SQLITE_ERROR, NULL or 0; the closing calls do nothing. */
/* clang-format off */
#define SYMBOLS(X, V, R) \
        X(int, sqlite3_open_v2, (const char *filename, sqlite3 **ppDb, int flags, const char *zVfs), (filename, ppDb, flags, zVfs), SQLITE_ERROR) \
        X(int, sqlite3_close_v2, (sqlite3 *db), (db), SQLITE_ERROR) \
        X(const char *, sqlite3_errmsg, (sqlite3 *db), (db), NULL) \
        X(int, sqlite3_busy_timeout, (sqlite3 *db, int ms), (db, ms), SQLITE_ERROR) \
        X(sqlite3_backup *, sqlite3_backup_init, (sqlite3 *pDest, const char *zDestName, sqlite3 *pSource, const char *zSourceName), (pDest, zDestName, pSource, zSourceName), NULL) \
        X(int, sqlite3_backup_step, (sqlite3_backup *p, int nPage), (p, nPage), SQLITE_ERROR) \
        X(int, sqlite3_backup_finish, (sqlite3_backup *p), (p), SQLITE_ERROR) \
        X(int, sqlite3_backup_pagecount, (sqlite3_backup *p), (p), 0)
/* clang-format on */

DLIB_POINTERS(SYMBOLS)
DLIB_LIBRARY(dlib_library_libsqlite3, "libsqlite3", SYMBOLS, "libsqlite3.so.0");
DLIB_FORWARDERS(SYMBOLS)
