/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "roam-log.h"
#include "roam-macro.h"
#include "roam-util.h"
#include "roamd-lease-cache.h"

typedef struct LeaseEntry {
        char *path;
        dev_t dev;
        ino_t ino;
        off_t size;
        struct timespec mtime, ctime;
        int result; /* 0, or the negative errno reading or parsing gave */
        DhcpLease lease;
} LeaseEntry;

struct LeaseCache {
        LeaseEntry *entries; /* the most recently read last */
        size_t n_entries;
        unsigned reads;
};

int lease_cache_new(LeaseCache **ret)
{
        LeaseCache *c = calloc(1, sizeof(*c));

        if (!c)
                return -ENOMEM;
        *ret = c;
        return 0;
}

static void entry_drop(LeaseCache *c, size_t i)
{
        free(c->entries[i].path);
        memmove(c->entries + i, c->entries + i + 1, (c->n_entries - i - 1) * sizeof(LeaseEntry));
        c->n_entries--;
}

LeaseCache *lease_cache_free(LeaseCache *c)
{
        if (!c)
                return NULL;
        while (c->n_entries > 0)
                entry_drop(c, c->n_entries - 1);
        free(c->entries);
        free(c);
        return NULL;
}

static bool timespec_eq(const struct timespec *a, const struct timespec *b)
{
        return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

static bool entry_matches(const LeaseEntry *e, const struct stat *st)
{
        return e->dev == st->st_dev && e->ino == st->st_ino && e->size == st->st_size &&
               timespec_eq(&e->mtime, &st->st_mtim) && timespec_eq(&e->ctime, &st->st_ctim);
}

static int parse_file(LeaseCache *c, const char *path, int family, DhcpLease *ret)
{
        _cleanup_free_ char *buf = NULL;
        size_t size;
        int r;

        log_debug("%s: lease file read and parsed (%u so far)", path, ++c->reads);
        r = read_full_file(path, LEASE_CACHE_FILE_MAX, &buf, &size);
        if (r < 0)
                return r;
        r = family == AF_INET6 ? dhcp_lease_parse_v6((const uint8_t *)buf, size, ret)
                               : dhcp_lease_parse_v4((const uint8_t *)buf, size, ret);
        if (r < 0) {
                log_warning("%s: malformed DHCP lease file, ignoring it.", path);
                return -EBADMSG;
        }
        return 0;
}

int lease_cache_get(LeaseCache *c, const char *dir, const char *ifname, int family, DhcpLease *ret)
{
        _cleanup_free_ char *path = NULL;
        LeaseEntry *e = NULL;
        struct stat st;
        size_t i;
        int r;

        if (asprintf(&path, "%s/%s.lease%s", dir, ifname, family == AF_INET6 ? "6" : "") < 0)
                return -ENOMEM;
        for (i = 0; i < c->n_entries; i++)
                if (streq(c->entries[i].path, path)) {
                        e = &c->entries[i];
                        break;
                }

        r = stat(path, &st) < 0 ? -errno : !S_ISREG(st.st_mode) ? -EINVAL : 0;
        if (r < 0) {
                if (e) /* the file went away: forget it */
                        entry_drop(c, i);
                return r;
        }
        if (e && entry_matches(e, &st)) {
                if (e->result >= 0)
                        *ret = e->lease;
                return e->result;
        }
        if (e)
                entry_drop(c, i);
        else if (c->n_entries >= LEASE_CACHE_MAX)
                entry_drop(c, 0);

        LeaseEntry n = {
            .dev = st.st_dev,
            .ino = st.st_ino,
            .size = st.st_size,
            .mtime = st.st_mtim,
            .ctime = st.st_ctim,
        };
        n.result = parse_file(c, path, family, &n.lease);
        /* only a file read whole is remembered: it may have changed while it was read, then
         * the next stat() differs and it is read again */
        if (n.result == 0 || n.result == -EBADMSG) {
                LeaseEntry *a = reallocarray(c->entries, c->n_entries + 1, sizeof(LeaseEntry));

                if (a) {
                        c->entries = a;
                        n.path = TAKE_PTR(path);
                        c->entries[c->n_entries++] = n;
                }
        }
        if (n.result >= 0)
                *ret = n.lease;
        return n.result;
}

unsigned lease_cache_reads(const LeaseCache *c)
{
        return c->reads;
}
