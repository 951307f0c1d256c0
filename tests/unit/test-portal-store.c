/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "roam-macro.h"
#include "roam-util.h"
#include "roamd-portal-store.h"
#include "test.h"

static char dir[] = "/tmp/roam-portal-store-XXXXXX";

static void path_in(char *buf, size_t n, const char *name)
{
        snprintf(buf, n, "%s/%s", dir, name);
}

TEST(portal_store_round_trip)
{
        _cleanup_(portal_store_freep) PortalStore *s = NULL, *t = NULL;
        char path[256];
        const PortalEntry *e;
        struct stat st;

        ASSERT_TRUE(mkdtemp(dir));
        path_in(path, sizeof(path), "creds");
        /* Missing: empty. */
        ASSERT_OK(portal_store_load(path, &s));
        ASSERT_EQ(s->n_entries, 0);
        ASSERT_OK(portal_store_set(s, "wifi0 gateway-mac 02:00:00:00:00:01", "alice",
                                   "s3cret \"quoted\" \\ pass", false));
        ASSERT_OK(portal_store_set(s, "eth0", NULL, NULL, true));
        ASSERT_TRUE(stat(path, &st) == 0);
        ASSERT_EQ(st.st_mode & 0777, 0600);
        ASSERT_EQ(st.st_uid, 0);

        ASSERT_OK(portal_store_load(path, &t));
        ASSERT_EQ(t->n_entries, 2);
        e = portal_store_get(t, "wifi0 gateway-mac 02:00:00:00:00:01");
        ASSERT_TRUE(e);
        ASSERT_STREQ(e->user, "alice");
        ASSERT_STREQ(e->password, "s3cret \"quoted\" \\ pass");
        ASSERT_TRUE(!e->always);
        e = portal_store_get(t, "eth0");
        ASSERT_TRUE(e && e->always && !e->user && !e->password);

        /* Updating keeps the saved credentials when none are given. */
        ASSERT_OK(portal_store_set(t, "wifi0 gateway-mac 02:00:00:00:00:01", NULL, NULL, true));
        e = portal_store_get(t, "wifi0 gateway-mac 02:00:00:00:00:01");
        ASSERT_TRUE(e->always);
        ASSERT_STREQ(e->password, "s3cret \"quoted\" \\ pass");

        /* The login host it was saved for is kept with it. */
        ASSERT_TRUE(e->login_host == NULL);
        ASSERT_OK(portal_store_set_login_host(t, "wifi0 gateway-mac 02:00:00:00:00:01",
                                              "login.cafe.test", "sha256//AAAA"));
        ASSERT_EQ(portal_store_set_login_host(t, "nowhere", "login.cafe.test", NULL), -ENOENT);
        ASSERT_EQ(portal_store_set_login_host(t, "eth0", "bad\nhost", NULL), -EINVAL);
        {
                _cleanup_(portal_store_freep) PortalStore *u = NULL;
                ASSERT_OK(portal_store_load(path, &u));
                e = portal_store_get(u, "wifi0 gateway-mac 02:00:00:00:00:01");
                ASSERT_TRUE(e);
                ASSERT_STREQ(e->login_host, "login.cafe.test");
                ASSERT_STREQ(e->login_pin, "sha256//AAAA");
                ASSERT_TRUE(portal_store_get(u, "eth0")->login_host == NULL);
        }

        ASSERT_EQ(portal_store_forget(t, "eth0"), 1);
        ASSERT_EQ(portal_store_forget(t, "eth0"), 0);
        ASSERT_TRUE(portal_store_get(t, "eth0") == NULL);
        portal_store_free(s);
        s = NULL;
        ASSERT_OK(portal_store_load(path, &s));
        ASSERT_EQ(s->n_entries, 1);

        /* Bad values are refused before anything is written. */
        ASSERT_EQ(portal_store_set(s, "x", "line\nbreak", "p", false), -EINVAL);
        ASSERT_EQ(portal_store_set(s, "", "u", "p", false), -EINVAL);
}

TEST(portal_store_refuses_unsafe_files)
{
        _cleanup_(portal_store_freep) PortalStore *s = NULL;
        char path[256];
        static const char *const bad[] = {
            "{",
            "[]",
            "{\"networks\": {}}",
            "{\"networks\": [{\"user\": \"a\"}]}",
            "{\"networks\": [{\"identity\": 1}]}",
            "{\"networks\": [{\"identity\": \"a\", \"always\": \"yes\"}]}",
            "{\"networks\": [{\"identity\": \"a\\nb\"}]}",
        };

        path_in(path, sizeof(path), "bad");
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                _cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
                ASSERT_TRUE(fd >= 0);
                ASSERT_TRUE(write(fd, bad[i], strlen(bad[i])) == (ssize_t)strlen(bad[i]));
                ASSERT_EQ(portal_store_load(path, &s), -EBADMSG);
        }

        /* Readable by others: refused, and left alone. */
        ASSERT_TRUE(chmod(path, 0644) == 0);
        ASSERT_EQ(portal_store_load(path, &s), -EPERM);
        ASSERT_TRUE(access(path, F_OK) == 0);

        /* A store without a path is never written. */
        ASSERT_OK(portal_store_load(NULL, &s));
        ASSERT_EQ(portal_store_set(s, "a", "u", "p", false), -EROFS);
}

static const char *fake_bearer(const char *ifname, void *userdata)
{
        (void)userdata;
        return streq(ifname, "eth0") ? "ethernet" : streq(ifname, "wlan0") ? "wifi" : NULL;
}

/* The keys an older roamd filed logins under become the links' NetworkIds once, on load: what
 * was saved still applies on the same network, and a key with no counterpart is kept. */
TEST(portal_store_migrates_old_keys_once)
{
        _cleanup_(portal_store_freep) PortalStore *s = NULL, *t = NULL;
        char d[] = "/tmp/roam-portal-migrate-XXXXXX", path[256];
        static const char *const old[] = {
            "eth0 gateway-mac 02:00:00:00:00:01", /* wired, by the gateway's MAC */
            "wlan0 gateway-mac 02:00:00:00:00:02 ssid Café Wi fi bssid 02:aa:00:00:00:01",
            "eth0",                                /* no gateway */
            "eth0 gateway 192.0.2.1",              /* no NetworkId stands for it */
            "gone0 gateway-mac 02:00:00:00:00:03", /* bearer unknown: kept */
            "ethernet:gw=02:00:00:00:00:09",       /* new already */
        };
        static const char *const want[] = {
            "ethernet:gw=02:00:00:00:00:01",
            "wifi:Caf\\xc3\\xa9 Wi fi:02:aa:00:00:00:01",
            "ethernet:if=eth0",
            "eth0 gateway 192.0.2.1",
            "gone0 gateway-mac 02:00:00:00:00:03",
            "ethernet:gw=02:00:00:00:00:09",
        };

        ASSERT_TRUE(mkdtemp(d));
        snprintf(path, sizeof(path), "%s/creds", d);
        ASSERT_OK(portal_store_load(path, &s));
        for (size_t i = 0; i < ELEMENTSOF(old); i++)
                ASSERT_OK(portal_store_set(s, old[i], "u", i == 0 ? "pw0" : "pw", false));
        s = portal_store_free(s);

        ASSERT_OK(portal_store_load(path, &s));
        ASSERT_EQ(portal_store_migrate(s, fake_bearer, NULL), 3);
        for (size_t i = 0; i < ELEMENTSOF(want); i++)
                ASSERT_TRUE(portal_store_get(s, want[i]));
        ASSERT_STREQ(portal_store_get(s, want[0])->password, "pw0");
        /* saved: a second load finds them migrated, and nothing more to do */
        ASSERT_OK(portal_store_load(path, &t));
        ASSERT_EQ(t->n_entries, ELEMENTSOF(want));
        for (size_t i = 0; i < ELEMENTSOF(want); i++)
                ASSERT_TRUE(portal_store_get(t, want[i]));
        ASSERT_EQ(portal_store_migrate(t, fake_bearer, NULL), 0);
        ASSERT_TRUE(unlink(path) == 0);
        ASSERT_TRUE(rmdir(d) == 0);
}
