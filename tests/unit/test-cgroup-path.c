/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "roam-macro.h"
#include "roamd-cgroup-path.h"
#include "test.h"

#define ROAM  "/system.slice/roamd.service/roam.slice"
#define UAPP  "/user.slice/user-1000.slice/user@1000.service/app.slice/"
#define NOUID UID_INVALID

#define APP(id, uid) CGROUP_KIND_APP, id, uid
#define SYSTEM(uid)  CGROUP_KIND_SYSTEM, NULL, uid
#define USER(uid)    CGROUP_KIND_USER, NULL, uid
#define OTHER(uid)   CGROUP_KIND_OTHER, NULL, uid

static char *const extra_system[] = {"/system.slice/roamd.service", "/custom/vpn", NULL};

static const struct {
        const char *path;
        CgroupKind kind;
        const char *app_id;
        uid_t uid;
} rows[] = {
    /* roamd's own apps: the ID verbatim, below exactly the roam slice. */
    {ROAM "/app-org.example.Mail.scope", APP("org.example.Mail", NOUID)},
    {ROAM "/app-firefox.scope", APP("firefox", NOUID)},
    {ROAM "/app-a_b-c.scope", APP("a_b-c", NOUID)},
    {ROAM "//app-firefox.scope/", APP("firefox", NOUID)},
    {ROAM "/app-.scope", OTHER(NOUID)},
    {ROAM "/app-..x.scope", OTHER(NOUID)},
    {ROAM "/app-x\\x2dy.scope", OTHER(NOUID)}, /* no unescaping here */
    {ROAM "/app-firefox.service", OTHER(NOUID)},
    {ROAM "/firefox.scope", OTHER(NOUID)},
    {ROAM "/app-firefox.scope/sub", OTHER(NOUID)},
    {ROAM, OTHER(NOUID)},
    {"/roam.slice/app-firefox.scope", OTHER(NOUID)},
    {"/other/roam.slice/app-firefox.scope", OTHER(NOUID)},
    /* Desktop apps below app.slice (the XDG/systemd convention). */
    {UAPP "app-gnome-org.gnome.Terminal@1234.service", APP("org.gnome.Terminal", 1000)},
    {UAPP "app-gnome-org.gnome.Terminal@1234.scope", APP("org.gnome.Terminal", 1000)},
    {UAPP "app-org.gnome.Terminal@1234.service", APP("org.gnome.Terminal", 1000)},
    {UAPP "app-flatpak-org.gnome.Maps-12345.scope", APP("org.gnome.Maps", 1000)},
    {UAPP "app-org.kde.konsole-12345.scope", APP("org.kde.konsole", 1000)},
    {UAPP "app-gnome-google\\x2dchrome-4711.scope", APP("google-chrome", 1000)},
    {UAPP "app-gnome-google\\x2Dchrome@a1b2.service", APP("google-chrome", 1000)},
    {UAPP "app-gnome-google-chrome@a1b2.service", APP("google-chrome", 1000)},
    {UAPP "app-gnome-org.example.App.service", APP("org.example.App", 1000)},
    {UAPP "app-org.example.App.service", APP("org.example.App", 1000)},
    {UAPP "app-gnome-org.example.App@x-y-z.service", APP("org.example.App", 1000)},
    {"/user.slice/user-42.slice/user@42.service/app.slice/app-kde-okular-9.scope",
     APP("okular", 42)},
    {"/app.slice/app-gnome-foo-1.scope", APP("foo", NOUID)},
    /* Paths that are not clean text name nothing, whoever made them (issue 40: a byte that
     * is not UTF-8 failed every bus reply carrying the path; ESC and bidi reached clients). */
    {UAPP "app-gnome-org.example.Other@1\xff.scope", OTHER(NOUID)},
    {UAPP "app-gnome-org.example.Other@1\x1b]0;x\x07.scope", OTHER(NOUID)},
    {UAPP "app-gnome-org.example.Other@1\xe2\x80\xae.scope", OTHER(NOUID)}, /* U+202E */
    {"/user.slice/user-1000.slice/user@1000.service/\xc3(/user-1000.slice", OTHER(NOUID)},
    {"/system.slice/x\xff.service", OTHER(NOUID)},
    {UAPP "app-gnome-org.example.Caf\xc3\xa9@1.scope", OTHER(1000)}, /* clean, no valid ID */
    /* what roamd asks systemd for (`roam run`): app-roam-<escaped ID>-<random>.scope */
    {"/app.slice/app-roam-org.test.Sd\\x2dapp-0123456789abcdef.scope",
     APP("org.test.Sd-app", NOUID)},
    {"/app.slice/app-roam-a\\x2db\\x2d-0123456789abcdef.scope", APP("a-b-", NOUID)},
    {"/app.slice/app-roam-x.y_z-0123456789abcdef.scope", APP("x.y_z", NOUID)},
    /* ... and names that do not fit it. */
    {UAPP "app-foo.scope", OTHER(1000)},              /* a scope needs a random part */
    {UAPP "app-gnome-foo.scope", APP("gnome", 1000)}, /* so here "foo" is the random part */
    {UAPP "app-gnome-foo-.scope", OTHER(1000)},       /* an empty one */
    {UAPP "app-gnome-foo@.service", OTHER(1000)},     /* an empty one */
    {UAPP "app--foo@1.service", OTHER(1000)},         /* an empty launcher */
    {UAPP "app-gnome-@1.service", OTHER(1000)},       /* an empty AppID */
    {UAPP "app-.service", OTHER(1000)},
    {UAPP "app-@1.service", OTHER(1000)},
    {UAPP "app-gnome-x\\x2fy@1.service", OTHER(1000)},      /* '/' in the AppID */
    {UAPP "app-gnome-x\\x2e\\x2ey@1.service", OTHER(1000)}, /* ".." */
    {UAPP "app-gnome-x\\x00y@1.service", OTHER(1000)},
    {UAPP "app-gnome-x\\x2@1.service", OTHER(1000)},
    {UAPP "app-gnome-x\\y2d@1.service", OTHER(1000)},
    {UAPP "app-gnome-x\\@1.service", OTHER(1000)},
    {UAPP "app-gnome-x\\x2", OTHER(1000)},
    {UAPP "app-gnome-.foo@1.service", OTHER(1000)}, /* must start with a letter or digit */
    {UAPP "app-gnome-foo@1.slice", OTHER(1000)},
    {UAPP "gnome-foo@1.service", OTHER(1000)},
    {UAPP "app-gnome-foo@1.service/sub", OTHER(1000)},
    {"/user.slice/user-1000.slice/user@1000.service/background.slice/app-gnome-foo-1.scope",
     OTHER(1000)},
    {UAPP, OTHER(1000)},
    /* System services: below system.slice or a slice in it; not below a user. */
    {"/system.slice/sshd.service", SYSTEM(NOUID)},
    {"/system.slice/system-getty.slice/getty@tty1.service", SYSTEM(NOUID)},
    {"/roam-cgtest-1/system.slice/foo.service", SYSTEM(NOUID)},
    {"/system.slice/roamd.service", SYSTEM(NOUID)},
    {"/custom/vpn", SYSTEM(NOUID)},
    {"/custom/vpn/", SYSTEM(NOUID)},
    {"/custom", OTHER(NOUID)},
    {"/init.scope", SYSTEM(NOUID)},
    {"/a/init.scope", OTHER(NOUID)},
    {"/system.slice/.service", OTHER(NOUID)},
    {"/system.slice/sshd.scope", OTHER(NOUID)},
    {"/system.slice/sshd.service/sub", OTHER(NOUID)},
    {"/system.slice/sshd.service/x.service", OTHER(NOUID)},
    {"/system.slice", OTHER(NOUID)},
    {"/sshd.service", OTHER(NOUID)},
    {"/system.slice/roamd.service/roam.slice/x.service", OTHER(NOUID)},
    {"/user.slice/system.slice/x.service", OTHER(NOUID)},
    {"/user.slice/user-1000.slice/user@1000.service/system.slice/x.service", OTHER(1000)},
    {"/user.slice/user-1000.slice/user@1000.service", USER(1000)},
    {"/user.slice/user-1000.slice/session-2.scope", OTHER(1000)},
    /* Users. */
    {"/user.slice/user-1000.slice", USER(1000)},
    {"/user.slice/user-0.slice", USER(0)},
    {"/user-7.slice", USER(7)},
    {"/user.slice/user-4294967294.slice", USER(4294967294u)},
    {"/user.slice/user-4294967295.slice", OTHER(NOUID)},
    {"/user.slice/user-65535.slice", OTHER(NOUID)},
    {"/user.slice/user-01000.slice", OTHER(NOUID)},
    {"/user.slice/user-1e3.slice", OTHER(NOUID)},
    {"/user.slice/user-.slice", OTHER(NOUID)},
    {"/user.slice/user--1.slice", OTHER(NOUID)},
    {"/user.slice/user-99999999999.slice", OTHER(NOUID)},
    {"/user.slice", OTHER(NOUID)},
    {"/user.slice/user-1000.slice/user@1001.service/app.slice", OTHER(1001)},
    /* Anything else. */
    {"/", OTHER(NOUID)},
    {"//", OTHER(NOUID)},
    {"/machine.slice/libpod-1234.scope", OTHER(NOUID)},
    {"/system.slice/roamd.service/", SYSTEM(NOUID)},
};

TEST(classify_table)
{
        for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
                CgroupClass c = {};

                ASSERT_OK(cgroup_classify(rows[i].path, ROAM, extra_system, &c));
                if (c.kind != rows[i].kind || c.uid != rows[i].uid ||
                    !streq_ptr(c.app_id, rows[i].app_id))
                        TEST_FAIL("row %zu %s: %s/%s/%d, expected %s/%s/%d", i, rows[i].path,
                                  cgroup_kind_to_string(c.kind), strempty(c.app_id), (int)c.uid,
                                  cgroup_kind_to_string(rows[i].kind), strempty(rows[i].app_id),
                                  (int)rows[i].uid);
                cgroup_class_done(&c);
        }
}

TEST(classify_without_extras)
{
        CgroupClass c = {};

        /* No roam slice and no extra system cgroups: only the naming rules apply. */
        ASSERT_OK(cgroup_classify(ROAM "/app-firefox.scope", NULL, NULL, &c));
        ASSERT_EQ(c.kind, CGROUP_KIND_OTHER);
        cgroup_class_done(&c);
        ASSERT_OK(cgroup_classify("/custom/vpn", NULL, NULL, &c));
        ASSERT_EQ(c.kind, CGROUP_KIND_OTHER);
        cgroup_class_done(&c);
        ASSERT_OK(cgroup_classify("/system.slice/roamd.service", NULL, NULL, &c));
        ASSERT_EQ(c.kind, CGROUP_KIND_SYSTEM);
        cgroup_class_done(&c);

        /* roamd in the root cgroup: its slice is /roam.slice and "/" counts as system. */
        ASSERT_OK(cgroup_classify("/roam.slice/app-x.scope", "/roam.slice", NULL, &c));
        ASSERT_EQ(c.kind, CGROUP_KIND_APP);
        ASSERT_STREQ(c.app_id, "x");
        cgroup_class_done(&c);
        ASSERT_OK(cgroup_classify("/", "/roam.slice", (char *const[]){"/", NULL}, &c));
        ASSERT_EQ(c.kind, CGROUP_KIND_SYSTEM);
        cgroup_class_done(&c);
}

TEST(classify_errors)
{
        CgroupClass c = {.kind = CGROUP_KIND_USER, .uid = 5};

        ASSERT_EQ(cgroup_classify("", ROAM, NULL, &c), -EINVAL);
        ASSERT_EQ(cgroup_classify("system.slice/x.service", ROAM, NULL, &c), -EINVAL);
        ASSERT_EQ(cgroup_classify(NULL, ROAM, NULL, &c), -EINVAL);
        /* Left alone on failure. */
        ASSERT_EQ(c.kind, CGROUP_KIND_USER);
        ASSERT_EQ(c.uid, 5);
        ASSERT_EQ(cgroup_classify("/x", ROAM, NULL, NULL), -EINVAL);
}

TEST(class_done)
{
        CgroupClass c = {};

        cgroup_class_done(NULL);
        cgroup_class_done(&c);
        ASSERT_EQ(c.kind, _CGROUP_KIND_INVALID);
        ASSERT_EQ(c.uid, UID_INVALID);
        ASSERT_TRUE(c.app_id == NULL);
        cgroup_class_done(&c);
}

TEST(kind_strings)
{
        static const char *const names[] = {"app", "system", "user", "other"};

        for (int k = 0; k < _CGROUP_KIND_MAX; k++) {
                ASSERT_STREQ(cgroup_kind_to_string(k), names[k]);
                ASSERT_EQ(cgroup_kind_from_string(names[k]), k);
        }
        ASSERT_TRUE(cgroup_kind_to_string(_CGROUP_KIND_MAX) == NULL);
        ASSERT_TRUE(cgroup_kind_to_string(_CGROUP_KIND_INVALID) == NULL);
        ASSERT_EQ(cgroup_kind_from_string("App"), _CGROUP_KIND_INVALID);
        ASSERT_EQ(cgroup_kind_from_string(NULL), _CGROUP_KIND_INVALID);
}

TEST(path_level)
{
        static const struct {
                const char *path;
                unsigned level;
        } levels[] = {
            {"/", 0},
            {"", 0},
            {"//", 0},
            {"/a", 1},
            {"/a/", 1},
            {"/a/b.slice/c", 3},
            {"//a//b.slice///c//", 3},
            {ROAM "/app-x.scope", 4},
        };

        for (size_t i = 0; i < ELEMENTSOF(levels); i++)
                ASSERT_EQ(cgroup_path_level(levels[i].path), levels[i].level);
        ASSERT_EQ(cgroup_path_level(NULL), 0);
}
