/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Find a library by soname where the dynamic loader would, without loading it: no dependency
 * closure mapped, no constructor run. */

#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "macro.h"
#include "dlib/forward.h"

/* The loader's own header: a library of another class or machine is not one it would load. */
extern const ElfW(Ehdr) __ehdr_start;

/* The directories ld.so searches after its cache (glibc's system search path on Debian). */
static const char *const default_dirs[] = {
#if defined(__x86_64__)
        "/lib/x86_64-linux-gnu",
        "/usr/lib/x86_64-linux-gnu",
#elif defined(__aarch64__)
        "/lib/aarch64-linux-gnu",
        "/usr/lib/aarch64-linux-gnu",
#endif
        "/lib64",
        "/usr/lib64",
        "/lib",
        "/usr/lib",
        NULL,
};

/* glibc's dl-cache.h, the format ldconfig writes since glibc 2.32 (alone or after the old one). */
#define CACHE_OLD_MAGIC "ld.so-1.7.0"
#define CACHE_NEW_MAGIC "glibc-ld.so.cache1.1"

typedef struct CacheEntry {
        int32_t flags;
        uint32_t key, value; /* string offsets from the start of the new header */
        uint32_t osversion;
        uint64_t hwcap;
} CacheEntry;

typedef struct CacheHeader {
        char magic[sizeof CACHE_NEW_MAGIC - 1];
        uint32_t nlibs, len_strings;
        uint8_t flags, padding[3];
        uint32_t extension_offset, unused[3];
        CacheEntry libs[];
} CacheHeader;

static bool is_loadable_elf(const char *path) {
        ElfW(Ehdr) h;
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n;

        if (fd < 0)
                return false;
        n = read(fd, &h, sizeof h);
        (void) close(fd);
        return n == (ssize_t) sizeof h && memcmp(h.e_ident, ELFMAG, SELFMAG) == 0 &&
               h.e_ident[EI_CLASS] == __ehdr_start.e_ident[EI_CLASS] &&
               h.e_ident[EI_DATA] == __ehdr_start.e_ident[EI_DATA] && h.e_machine == __ehdr_start.e_machine &&
               h.e_type == ET_DYN;
}

static bool in_dir(const char *dir, size_t len, const char *soname) {
        char path[PATH_MAX];
        int n = snprintf(path, sizeof path, "%.*s/%s", (int) len, dir, soname);

        return n > 0 && (size_t) n < sizeof path && is_loadable_elf(path);
}

/* LD_LIBRARY_PATH, as ld.so reads it (not for a set-user-ID program); empty entries are skipped. */
static bool in_library_path(const char *soname) {
        const char *p = getauxval(AT_SECURE) ? NULL : getenv("LD_LIBRARY_PATH");

        while (p && *p) {
                size_t len = strcspn(p, ":;");

                if (len > 0 && in_dir(p, len, soname))
                        return true;
                p += len + (p[len] != '\0');
        }
        return false;
}

/* The start of the new-format header in the cache's bytes, or NULL for a format this does not know. */
static const CacheHeader *cache_header(const uint8_t *data, size_t size) {
        size_t off = 0;

        if (size >= sizeof CACHE_OLD_MAGIC - 1 + 4 && memcmp(data, CACHE_OLD_MAGIC, sizeof CACHE_OLD_MAGIC - 1) == 0) {
                uint32_t nlibs;

                memcpy(&nlibs, data + sizeof CACHE_OLD_MAGIC - 1, sizeof nlibs);
                off = sizeof CACHE_OLD_MAGIC - 1 + 4 + (size_t) nlibs * 12;
                off = (off + __alignof__(CacheHeader) - 1) & ~(__alignof__(CacheHeader) - 1);
        }
        if (off > size || size - off < sizeof(CacheHeader) ||
            memcmp(data + off, CACHE_NEW_MAGIC, sizeof CACHE_NEW_MAGIC - 1) != 0)
                return NULL;
        return (const CacheHeader *) (data + off);
}

/* 1 found, 0 not in the cache, -EBADMSG a cache this cannot read. */
static int in_cache_data(const uint8_t *data, size_t size, const char *soname) {
        const CacheHeader *h = cache_header(data, size);
        size_t avail, slen = strlen(soname);

        if (!h)
                return -EBADMSG;
        avail = size - (size_t) ((const uint8_t *) h - data);
        if (h->nlibs > (avail - sizeof *h) / sizeof(CacheEntry))
                return -EBADMSG;
        for (uint32_t i = 0; i < h->nlibs; i++) {
                const CacheEntry *e = &h->libs[i];

                if (e->key >= avail || e->value >= avail || avail - e->key <= slen ||
                    memcmp((const char *) h + e->key, soname, slen + 1) != 0)
                        continue;
                if (memchr((const char *) h + e->value, '\0', avail - e->value) &&
                    is_loadable_elf((const char *) h + e->value))
                        return 1;
        }
        return 0;
}

/* The loader's cache, mapped between dlib_soname_begin() and _end(): one read for all lookups.
 * NULL with cache_error 0 when there is none (a chroot: the directories decide). */
static const uint8_t *cache_data;
static size_t cache_size;
static int cache_error;

void dlib_soname_begin(void) {
        struct stat st;
        void *p;
        int fd;

        fd = open("/etc/ld.so.cache", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return;
        if (fstat(fd, &st) >= 0 && st.st_size > 0) {
                p = mmap(NULL, (size_t) st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
                if (p == MAP_FAILED)
                        cache_error = -errno;
                else {
                        cache_data = p;
                        cache_size = (size_t) st.st_size;
                }
        }
        (void) close(fd);
}

void dlib_soname_end(void) {
        if (cache_data)
                (void) munmap((void *) cache_data, cache_size);
        cache_data = NULL;
        cache_size = 0;
        cache_error = 0;
}

static int in_cache(const char *soname) {
        if (cache_error < 0)
                return cache_error;
        return cache_data ? in_cache_data(cache_data, cache_size, soname) : 0;
}

/* Not dlopen(RTLD_NOLOAD): the loader reads its cache and opens the file for that too. */
int dlib_soname_locate(const char *soname) {
        int r;

        if (in_library_path(soname))
                return 1;
        r = in_cache(soname);
        if (r != 0)
                return r;
        for (const char *const *d = default_dirs; *d; d++)
                if (in_dir(*d, strlen(*d), soname))
                        return 1;
        return 0;
}
