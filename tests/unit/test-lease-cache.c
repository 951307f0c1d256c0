/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include "roamd-lease-cache.h"
#include "test.h"

/* A BOOTP reply for 192.0.2.23 with one DNS server, 192.0.2.<last>, and n_pad pad options
 * (a different size for the same lease). */
static void write_lease(const char *path, uint8_t last, size_t n_pad)
{
        uint8_t b[512] = {};
        size_t n = 240;
        FILE *f;

        b[0] = 2;
        b[16] = 192, b[17] = 0, b[18] = 2, b[19] = 23;
        b[236] = 99, b[237] = 130, b[238] = 83, b[239] = 99;
        for (size_t i = 0; i < n_pad; i++)
                b[n++] = 0;
        b[n++] = 6, b[n++] = 4, b[n++] = 192, b[n++] = 0, b[n++] = 2, b[n++] = last;
        b[n++] = 255;
        f = fopen(path, "we");
        if (!f || fwrite(b, 1, n, f) != n || fclose(f) != 0)
                TEST_FAIL("cannot write %s", path);
}

TEST(lease_cache_reads_once_per_version)
{
        char dir[] = "/tmp/roam-lease-cache-XXXXXX", path[64], tmp[80];
        LeaseCache *c;
        DhcpLease l;

        ASSERT_TRUE(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/wlan0.lease", dir);
        snprintf(tmp, sizeof(tmp), "%s/wlan0.lease.new", dir);
        ASSERT_OK(lease_cache_new(&c));

        ASSERT_EQ(lease_cache_get(c, dir, "wlan0", AF_INET, &l), -ENOENT);
        write_lease(path, 1, 0);
        ASSERT_OK(lease_cache_get(c, dir, "wlan0", AF_INET, &l));
        ASSERT_STREQ(l.dns[0].text, "192.0.2.1");
        ASSERT_EQ(lease_cache_reads(c), 1);

        /* unchanged: the same answer without reading the file again */
        for (int i = 0; i < 5; i++) {
                memset(&l, 0, sizeof(l));
                ASSERT_OK(lease_cache_get(c, dir, "wlan0", AF_INET, &l));
                ASSERT_STREQ(l.addrs[0].text, "192.0.2.23");
                ASSERT_STREQ(l.dns[0].text, "192.0.2.1");
        }
        ASSERT_EQ(lease_cache_reads(c), 1);

        /* rewritten in place (a new size): read again */
        write_lease(path, 2, 3);
        ASSERT_OK(lease_cache_get(c, dir, "wlan0", AF_INET, &l));
        ASSERT_STREQ(l.dns[0].text, "192.0.2.2");
        ASSERT_EQ(lease_cache_reads(c), 2);

        /* replaced by rename (same size, a new inode): read again */
        write_lease(tmp, 3, 3);
        ASSERT_EQ(rename(tmp, path), 0);
        ASSERT_OK(lease_cache_get(c, dir, "wlan0", AF_INET, &l));
        ASSERT_STREQ(l.dns[0].text, "192.0.2.3");
        ASSERT_EQ(lease_cache_reads(c), 3);

        /* the v6 file of the same link is a file of its own */
        ASSERT_EQ(lease_cache_get(c, dir, "wlan0", AF_INET6, &l), -ENOENT);

        /* gone: no lease, and a new file is read */
        ASSERT_EQ(unlink(path), 0);
        ASSERT_EQ(lease_cache_get(c, dir, "wlan0", AF_INET, &l), -ENOENT);
        write_lease(path, 4, 0);
        ASSERT_OK(lease_cache_get(c, dir, "wlan0", AF_INET, &l));
        ASSERT_STREQ(l.dns[0].text, "192.0.2.4");
        ASSERT_EQ(lease_cache_reads(c), 4);

        ASSERT_EQ(unlink(path), 0);
        ASSERT_EQ(rmdir(dir), 0);
        lease_cache_free(c);
}

TEST(lease_cache_malformed_read_once)
{
        char dir[] = "/tmp/roam-lease-cache-XXXXXX", path[64];
        LeaseCache *c;
        DhcpLease l;
        FILE *f;

        ASSERT_TRUE(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/eth0.lease", dir);
        f = fopen(path, "we");
        ASSERT_TRUE(f);
        fputs("not a lease", f);
        fclose(f);
        ASSERT_OK(lease_cache_new(&c));
        ASSERT_EQ(lease_cache_get(c, dir, "eth0", AF_INET, &l), -EBADMSG);
        ASSERT_EQ(lease_cache_get(c, dir, "eth0", AF_INET, &l), -EBADMSG);
        ASSERT_EQ(lease_cache_reads(c), 1);
        ASSERT_EQ(unlink(path), 0);
        ASSERT_EQ(rmdir(dir), 0);
        lease_cache_free(c);
}

TEST(lease_cache_bounded)
{
        char dir[] = "/tmp/roam-lease-cache-XXXXXX", path[64], name[16];
        LeaseCache *c;
        DhcpLease l;

        ASSERT_TRUE(mkdtemp(dir));
        ASSERT_OK(lease_cache_new(&c));
        for (int i = 0; i < LEASE_CACHE_MAX + 10; i++) {
                snprintf(name, sizeof(name), "if%d", i);
                snprintf(path, sizeof(path), "%s/%s.lease", dir, name);
                write_lease(path, 1, 0);
                ASSERT_OK(lease_cache_get(c, dir, name, AF_INET, &l));
        }
        /* the oldest were forgotten: if0 is read again, the newest is not */
        ASSERT_OK(lease_cache_get(c, dir, "if0", AF_INET, &l));
        ASSERT_EQ(lease_cache_reads(c), LEASE_CACHE_MAX + 11);
        snprintf(name, sizeof(name), "if%d", LEASE_CACHE_MAX + 9);
        ASSERT_OK(lease_cache_get(c, dir, name, AF_INET, &l));
        ASSERT_EQ(lease_cache_reads(c), LEASE_CACHE_MAX + 11);
        for (int i = 0; i < LEASE_CACHE_MAX + 10; i++) {
                snprintf(path, sizeof(path), "%s/if%d.lease", dir, i);
                unlink(path);
        }
        ASSERT_EQ(rmdir(dir), 0);
        lease_cache_free(c);
}
