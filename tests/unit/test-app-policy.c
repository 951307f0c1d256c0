/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ftw.h>
#include <sys/stat.h>
#include <syslog.h>

#include "roam-log.h"
#include "roam-util.h"
#include "roam-app-id.h"
#include "roamd-app-policy.h"
#include "test.h"

#define BEARER_LIST "ethernet, wifi, cellular, bluetooth, wifi-direct, vpn, lowpan"
#define ID_RULES                                                                                   \
        "(1-255 characters of A-Z, a-z, 0-9, '.', '_', '-', starting with a letter or digit, no "  \
        "'..'; or user:UID)."
#define B(x) (1u << BEARER_##x)

static char captured[16384];

static void capture(int level, const char *msg, void *userdata)
{
        size_t n = strlen(captured);

        if (level <= LOG_ERR)
                snprintf(captured + n, sizeof(captured) - n, "%s\n", msg);
}

static void capture_start(void)
{
        captured[0] = 0;
        log_set_sink(capture, NULL);
}

static void capture_stop(void)
{
        log_set_sink(NULL, NULL);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        return remove(path);
}

static void rm_rf(const char *dir)
{
        nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void write_text(const char *dir, const char *name, const char *text)
{
        char path[4096];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        f = fopen(path, "we");
        if (!f)
                TEST_FAIL("cannot create %s", path);
        fputs(text, f);
        fclose(f);
}

static AppPolicy policy(unsigned set, AppAccess access, uint32_t bearers, AppVpn vpn,
                        AppHandover handover)
{
        return (AppPolicy){
            .set = set, .access = access, .bearers = bearers, .vpn = vpn, .handover = handover};
}

static void assert_policy_string(const AppPolicy *p, const char *expected)
{
        _cleanup_free_ char *s = NULL;

        ASSERT_OK(app_policy_to_string(p, &s));
        ASSERT_STREQ(s, expected);
}

/* Every name of an enum maps to its index and back; one past the end and bad names do not. */
#define CHECK_TABLE(prefix, max, ...)                                                              \
        do {                                                                                       \
                static const char *const names[] = {__VA_ARGS__};                                  \
                ASSERT_EQ(max, ELEMENTSOF(names));                                                 \
                for (size_t i = 0; i < ELEMENTSOF(names); i++) {                                   \
                        ASSERT_STREQ(prefix##_to_string(i), names[i]);                             \
                        ASSERT_EQ(prefix##_from_string(names[i]), i);                              \
                }                                                                                  \
                ASSERT_TRUE(prefix##_to_string(max) == NULL);                                      \
                ASSERT_TRUE(prefix##_to_string(-EINVAL) == NULL);                                  \
                ASSERT_EQ(prefix##_from_string("nope"), -EINVAL);                                  \
                ASSERT_EQ(prefix##_from_string(""), -EINVAL);                                      \
                ASSERT_EQ(prefix##_from_string(NULL), -EINVAL);                                    \
                ASSERT_EQ(prefix##_from_string("ALLOW"), -EINVAL);                                 \
        } while (0)

TEST(app_policy_string_tables)
{
        CHECK_TABLE(app_access, _APP_ACCESS_MAX, "allow", "lan", "deny");
        CHECK_TABLE(app_vpn, _APP_VPN_MAX, "any", "required", "forbidden");
        CHECK_TABLE(app_handover, _APP_HANDOVER_MAX, "sticky", "move");
        CHECK_TABLE(app_policy_source, _APP_POLICY_SOURCE_MAX, "builtin", "config", "runtime");
        ASSERT_EQ(_APP_ACCESS_INVALID, -EINVAL);
        ASSERT_EQ(_APP_VPN_INVALID, -EINVAL);
        ASSERT_EQ(_APP_HANDOVER_INVALID, -EINVAL);
        ASSERT_EQ(_APP_POLICY_SOURCE_INVALID, -EINVAL);
}

TEST(app_policy_builtin)
{
        AppPolicy p;

        memset(&p, 0xff, sizeof(p));
        app_policy_init_builtin(&p);
        ASSERT_EQ(p.set, APP_KEY_ALL);
        ASSERT_EQ(p.access, APP_ACCESS_ALLOW);
        ASSERT_EQ(p.bearers, 0);
        ASSERT_EQ(p.vpn, APP_VPN_ANY);
        ASSERT_EQ(p.handover, APP_HANDOVER_STICKY);
        assert_policy_string(&p, "access=allow bearers=all vpn=any handover=sticky");
        for (Bearer b = 0; b < _BEARER_MAX; b++)
                ASSERT_TRUE(app_policy_allows_bearer(&p, b));
}

TEST(app_policy_layering)
{
        static const struct {
                AppPolicy base, over, result;
        } cases[] = {
            /* Nothing over anything changes nothing. */
            {{.set = APP_KEY_ALL, .access = APP_ACCESS_LAN, .bearers = B(WIFI)},
             {.set = 0, .access = APP_ACCESS_DENY, .bearers = B(VPN), .vpn = APP_VPN_REQUIRED},
             {.set = APP_KEY_ALL, .access = APP_ACCESS_LAN, .bearers = B(WIFI)}},
            /* Only the keys set in over are copied; the rest of base stays. */
            {{.set = APP_KEY_ALL, .access = APP_ACCESS_ALLOW, .bearers = 0, .vpn = APP_VPN_ANY},
             {.set = APP_KEY_ACCESS | APP_KEY_VPN,
              .access = APP_ACCESS_DENY,
              .bearers = B(CELLULAR),
              .vpn = APP_VPN_REQUIRED,
              .handover = APP_HANDOVER_MOVE},
             {.set = APP_KEY_ALL,
              .access = APP_ACCESS_DENY,
              .bearers = 0,
              .vpn = APP_VPN_REQUIRED,
              .handover = APP_HANDOVER_STICKY}},
            /* Partial over partial: the set masks are ORed. */
            {{.set = APP_KEY_BEARERS, .bearers = B(WIFI) | B(ETHERNET)},
             {.set = APP_KEY_HANDOVER, .handover = APP_HANDOVER_MOVE},
             {.set = APP_KEY_BEARERS | APP_KEY_HANDOVER,
              .bearers = B(WIFI) | B(ETHERNET),
              .handover = APP_HANDOVER_MOVE}},
            /* bearers=all (0) is a value like any other. */
            {{.set = APP_KEY_BEARERS, .bearers = B(WIFI)},
             {.set = APP_KEY_BEARERS, .bearers = 0},
             {.set = APP_KEY_BEARERS, .bearers = 0}},
            /* Stray bits beyond APP_KEY_ALL are not copied. */
            {{.set = 0}, {.set = 0x180}, {.set = 0}},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                AppPolicy p = cases[i].base;

                app_policy_layer(&p, &cases[i].over);
                if (!app_policy_equal(&p, &cases[i].result))
                        TEST_FAIL("layering case %zu", i);
        }

        /* Layering the three sources in order: builtin < config < runtime. */
        {
                AppPolicy p,
                    config =
                        policy(APP_KEY_ACCESS | APP_KEY_BEARERS, APP_ACCESS_LAN, B(WIFI), 0, 0),
                    runtime = policy(APP_KEY_ACCESS, APP_ACCESS_DENY, 0, 0, 0);

                app_policy_init_builtin(&p);
                app_policy_layer(&p, &config);
                app_policy_layer(&p, &runtime);
                assert_policy_string(&p, "access=deny bearers=wifi vpn=any handover=sticky");
        }
}

TEST(app_policy_equality)
{
        AppPolicy a = policy(APP_KEY_ACCESS, APP_ACCESS_LAN, B(WIFI), APP_VPN_ANY, 0);
        AppPolicy b = policy(APP_KEY_ACCESS, APP_ACCESS_LAN, B(VPN), APP_VPN_FORBIDDEN, 1);

        /* Values of unset keys do not matter. */
        ASSERT_TRUE(app_policy_equal(&a, &b));
        b.access = APP_ACCESS_DENY;
        ASSERT_TRUE(!app_policy_equal(&a, &b));
        b.access = APP_ACCESS_LAN;
        b.set |= APP_KEY_VPN;
        ASSERT_TRUE(!app_policy_equal(&a, &b));
        a.set |= APP_KEY_VPN;
        ASSERT_TRUE(!app_policy_equal(&a, &b)); /* any != forbidden */
        a.vpn = APP_VPN_FORBIDDEN;
        ASSERT_TRUE(app_policy_equal(&a, &b));
        a.set = b.set = APP_KEY_BEARERS;
        ASSERT_TRUE(!app_policy_equal(&a, &b));
        b.bearers = B(WIFI);
        ASSERT_TRUE(app_policy_equal(&a, &b));
        a.set = b.set = APP_KEY_HANDOVER;
        ASSERT_TRUE(!app_policy_equal(&a, &b));
        a.set = b.set = 0;
        ASSERT_TRUE(app_policy_equal(&a, &b));
}

TEST(app_policy_bearers)
{
        static const struct {
                unsigned set;
                uint32_t bearers;
                Bearer bearer;
                bool allowed;
        } cases[] = {
            {APP_KEY_BEARERS, 0, BEARER_WIFI, true},
            {APP_KEY_BEARERS, 0, BEARER_VIRTUAL, true},
            {APP_KEY_BEARERS, B(WIFI), BEARER_WIFI, true},
            {APP_KEY_BEARERS, B(WIFI), BEARER_ETHERNET, false},
            {APP_KEY_BEARERS, B(WIFI) | B(ETHERNET), BEARER_ETHERNET, true},
            {APP_KEY_BEARERS, B(WIFI) | B(ETHERNET), BEARER_CELLULAR, false},
            {APP_KEY_BEARERS, B(VPN), BEARER_VPN, true},
            {APP_KEY_BEARERS, B(WIFI), BEARER_VIRTUAL, false},
            {APP_KEY_BEARERS, 0, _BEARER_INVALID, false},
            {APP_KEY_BEARERS, 0, _BEARER_MAX, false},
            /* The key unset: every bearer. */
            {0, B(WIFI), BEARER_CELLULAR, true},
            /* The vpn key is not this function's business. */
            {APP_KEY_BEARERS | APP_KEY_VPN, B(VPN), BEARER_VPN, true},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                AppPolicy p = policy(cases[i].set, APP_ACCESS_ALLOW, cases[i].bearers,
                                     APP_VPN_FORBIDDEN, APP_HANDOVER_STICKY);
                if (app_policy_allows_bearer(&p, cases[i].bearer) != cases[i].allowed)
                        TEST_FAIL("bearer case %zu", i);
        }
}

TEST(app_policy_bearers_to_string)
{
        static const struct {
                uint32_t bearers;
                const char *sep, *text;
                int r;
        } cases[] = {
            {0, ",", "all", 0},
            {B(WIFI), ",", "wifi", 0},
            {B(WIFI) | B(ETHERNET), ",", "ethernet,wifi", 0},
            {B(LOWPAN) | B(VPN) | B(WIFI_DIRECT), " ", "wifi-direct vpn lowpan", 0},
            {APP_BEARERS_VALID, ", ",
             "ethernet, wifi, cellular, bluetooth, wifi-direct, vpn, lowpan", 0},
            {B(VIRTUAL), ",", NULL, -EINVAL},
            {B(WIFI) | (1u << 20), ",", NULL, -EINVAL},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *s = NULL;

                ASSERT_EQ(app_policy_bearers_to_string(cases[i].bearers, cases[i].sep, &s),
                          cases[i].r);
                if (cases[i].text)
                        ASSERT_STREQ(s, cases[i].text);
                else
                        ASSERT_TRUE(s == NULL);
        }
}

TEST(app_policy_to_string)
{
        AppPolicy p = {};

        assert_policy_string(&p, "");
        p = policy(APP_KEY_VPN, 0, 0, APP_VPN_REQUIRED, 0);
        assert_policy_string(&p, "vpn=required");
        p = policy(APP_KEY_BEARERS | APP_KEY_HANDOVER, 0, B(CELLULAR) | B(WIFI), 0,
                   APP_HANDOVER_MOVE);
        assert_policy_string(&p, "bearers=wifi,cellular handover=move");

        /* Values that cannot be written are refused. */
        {
                char *s = NULL;

                p = policy(APP_KEY_ACCESS, (AppAccess)7, 0, 0, 0);
                ASSERT_EQ(app_policy_to_string(&p, &s), -EINVAL);
                p = policy(APP_KEY_BEARERS, 0, B(VIRTUAL), 0, 0);
                ASSERT_EQ(app_policy_to_string(&p, &s), -EINVAL);
                p = policy(APP_KEY_VALID | 0x80, 0, 0, 0, 0);
                ASSERT_EQ(app_policy_to_string(&p, &s), -EINVAL);
                ASSERT_TRUE(s == NULL);
        }
}

/* Good assignments: the key=value, and the policy's text afterwards. */
static const struct {
        const char *key, *value, *result;
} assign_good[] = {
    {"access", "allow", "access=allow"},
    {"access", "lan", "access=lan"},
    {"access", "deny", "access=deny"},
    {"bearers", "all", "bearers=all"},
    {"bearers", "wifi", "bearers=wifi"},
    {"bearers", "wifi,ethernet", "bearers=ethernet,wifi"},
    {"bearers", "cellular ethernet", "bearers=ethernet,cellular"},
    {"bearers", " lowpan, vpn ,wifi-direct\tbluetooth ",
     "bearers=bluetooth,wifi-direct,vpn,lowpan"},
    {"bearers", " all ", "bearers=all"},
    {"vpn", "any", "vpn=any"},
    {"vpn", "required", "vpn=required"},
    {"vpn", "forbidden", "vpn=forbidden"},
    {"handover", "sticky", "handover=sticky"},
    {"handover", "move", "handover=move"},
    {"wake", "0", "wake=0"},
    {"wake", "100", "wake=100"},
    {"wake", "no", "wake=no"},
    {"wake-slice", "10s", "wake-slice=10s"},
    {"wake-slice", "30", "wake-slice=30s"},
    {"wake-slice", "500ms", "wake-slice=500ms"},
    {"wake-slice", "2min", "wake-slice=120s"},
    {"wake-slice", "1h", "wake-slice=3600s"},
    {"wake-bytes", "0", "wake-bytes=0"},
    {"wake-bytes", "2M", "wake-bytes=2097152"},
    {"wake-bytes", "500K", "wake-bytes=512000"},
};

/* Bad assignments and their exact messages. */
static const struct {
        const char *key, *value, *message;
} assign_bad[] = {
    {"foo", "x",
     "unknown key 'foo' (known: access, bearers, vpn, handover, wake, wake-slice, wake-bytes)"},
    {"Access", "lan",
     "unknown key 'Access' (known: access, bearers, vpn, handover, wake, wake-slice, wake-bytes)"},
    {"", "lan",
     "unknown key '' (known: access, bearers, vpn, handover, wake, wake-slice, wake-bytes)"},
    {"access ", "lan",
     "unknown key 'access ' (known: access, bearers, vpn, handover, wake, wake-slice, wake-bytes)"},
    {"access", "", "invalid value '' for access (allow, lan, deny)"},
    {"access", "Allow", "invalid value 'Allow' for access (allow, lan, deny)"},
    {"access", " lan", "invalid value ' lan' for access (allow, lan, deny)"},
    {"access", "yes", "invalid value 'yes' for access (allow, lan, deny)"},
    {"access", "l\x01\xc3\xa9", "invalid value 'l\\x01\\xc3\\xa9' for access (allow, lan, deny)"},
    {"access",
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
     "aaa"
     "aaaaaaaaaaaa",
     "invalid value 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...' for "
     "access "
     "(allow, lan, deny)"},
    {"vpn", "", "invalid value '' for vpn (any, required, forbidden)"},
    {"vpn", "on", "invalid value 'on' for vpn (any, required, forbidden)"},
    {"vpn", "REQUIRED", "invalid value 'REQUIRED' for vpn (any, required, forbidden)"},
    {"handover", "", "invalid value '' for handover (sticky, move)"},
    {"handover", "stay", "invalid value 'stay' for handover (sticky, move)"},
    {"bearers", "", "empty value for bearers (all, or a list of: " BEARER_LIST ")"},
    {"bearers", " , ,", "empty value for bearers (all, or a list of: " BEARER_LIST ")"},
    {"bearers", "foo", "unknown bearer 'foo' in bearers (" BEARER_LIST ")"},
    {"bearers", "wifi,foo", "unknown bearer 'foo' in bearers (" BEARER_LIST ")"},
    {"bearers", "WiFi", "unknown bearer 'WiFi' in bearers (" BEARER_LIST ")"},
    {"bearers", "virtual", "unknown bearer 'virtual' in bearers (" BEARER_LIST ")"},
    {"bearers", "wifi;ethernet", "unknown bearer 'wifi;ethernet' in bearers (" BEARER_LIST ")"},
    {"bearers", "wifi,wifi", "bearer 'wifi' listed twice in bearers"},
    {"bearers", "wifi ethernet wifi", "bearer 'wifi' listed twice in bearers"},
    {"bearers", "all,wifi", "'all' cannot be combined with other bearers in bearers"},
    {"bearers", "wifi all", "'all' cannot be combined with other bearers in bearers"},
    {"bearers", "all all", "'all' cannot be combined with other bearers in bearers"},
    {"wake", "101", "priority '101' out of range for wake (0-100)"},
    {"wake", "99999999999999999999999",
     "invalid value '99999999999999999999999' for wake (no, or "
     "a priority 0-100)"},
    {"wake", "-1", "invalid value '-1' for wake (no, or a priority 0-100)"},
    {"wake", "", "invalid value '' for wake (no, or a priority 0-100)"},
    {"wake", "5 ", "invalid value '5 ' for wake (no, or a priority 0-100)"},
    {"wake", "high", "invalid value 'high' for wake (no, or a priority 0-100)"},
    {"wake-slice", "0", "wake-slice '0' out of range (100ms to 1h)"},
    {"wake-slice", "99ms", "wake-slice '99ms' out of range (100ms to 1h)"},
    {"wake-slice", "2h", "wake-slice '2h' out of range (100ms to 1h)"},
    {"wake-slice", "10 s", "invalid value '10 s' for wake-slice (a duration: 10s, 500ms, 2min)"},
    {"wake-slice", "soon", "invalid value 'soon' for wake-slice (a duration: 10s, 500ms, 2min)"},
    {"wake-bytes", "2T", "invalid value '2T' for wake-bytes (a size: 500K, 2M, 1G)"},
    {"wake-bytes", "1025G", "wake-bytes '1025G' out of range (at most 1024G)"},
    {"wake-bytes", "-5", "invalid value '-5' for wake-bytes (a size: 500K, 2M, 1G)"},
};

TEST(app_policy_assign_good)
{
        for (size_t i = 0; i < ELEMENTSOF(assign_good); i++) {
                AppPolicy p = {};
                char *error = NULL;

                ASSERT_OK(app_policy_assign(&p, assign_good[i].key, assign_good[i].value, &error));
                ASSERT_TRUE(error == NULL);
                assert_policy_string(&p, assign_good[i].result);
        }

        /* Assignments accumulate, a later one of the same key wins. */
        {
                AppPolicy p;

                app_policy_init_builtin(&p);
                ASSERT_OK(app_policy_assign(&p, "access", "lan", NULL));
                ASSERT_OK(app_policy_assign(&p, "bearers", "wifi", NULL));
                ASSERT_OK(app_policy_assign(&p, "bearers", "ethernet", NULL));
                ASSERT_OK(app_policy_assign(&p, "vpn", "forbidden", NULL));
                assert_policy_string(&p,
                                     "access=lan bearers=ethernet vpn=forbidden handover=sticky");
        }
}

TEST(app_policy_assign_bad)
{
        for (size_t i = 0; i < ELEMENTSOF(assign_bad); i++) {
                AppPolicy p = policy(APP_KEY_ACCESS | APP_KEY_BEARERS, APP_ACCESS_LAN, B(WIFI),
                                     APP_VPN_REQUIRED, APP_HANDOVER_MOVE),
                          before = p;
                _cleanup_free_ char *error = NULL;
                int r = app_policy_assign(&p, assign_bad[i].key, assign_bad[i].value, &error);

                if (r != -EINVAL)
                        TEST_FAIL("case %zu (%s=%s): expected -EINVAL, got %d", i,
                                  assign_bad[i].key, assign_bad[i].value, r);
                ASSERT_TRUE(memcmp(&p, &before, sizeof(p)) == 0);
                if (!error || !streq(error, assign_bad[i].message))
                        TEST_FAIL("case %zu: expected \"%s\", got \"%s\"", i, assign_bad[i].message,
                                  strempty(error));
                /* Without a place for the message: the same answer. */
                ASSERT_EQ(app_policy_assign(&p, assign_bad[i].key, assign_bad[i].value, NULL),
                          -EINVAL);
                ASSERT_TRUE(memcmp(&p, &before, sizeof(p)) == 0);
        }
}

TEST(app_policy_set_operations)
{
        AppPolicySet s = {};
        AppPolicy p = policy(APP_KEY_ACCESS, APP_ACCESS_DENY, 0, 0, 0), q;

        app_policy_set_done(NULL);
        app_policy_set_done(&s);
        ASSERT_EQ(app_policy_set_find(&s, "a"), -ENOENT);
        ASSERT_EQ(app_policy_set_remove(&s, "a"), -ENOENT);

        ASSERT_OK(app_policy_set_put(&s, "org.example.A", &p));
        ASSERT_OK(app_policy_set_put(&s, "default", &p));
        ASSERT_OK(app_policy_set_put(&s, "system", &p));
        ASSERT_EQ(s.n, 3);
        ASSERT_EQ(app_policy_set_find(&s, "org.example.A"), 0);
        ASSERT_EQ(app_policy_set_find(&s, "default"), 1);
        ASSERT_EQ(app_policy_set_find(&s, "system"), 2);
        ASSERT_EQ(app_policy_set_find(&s, "org.example.a"), -ENOENT);
        ASSERT_EQ(app_policy_set_find(&s, NULL), -ENOENT);
        ASSERT_TRUE(s.entries[0].file == NULL);
        ASSERT_EQ(s.entries[0].line, 0);

        /* put layers over an existing entry. */
        q = policy(APP_KEY_VPN, APP_ACCESS_ALLOW, 0, APP_VPN_REQUIRED, 0);
        ASSERT_OK(app_policy_set_put(&s, "org.example.A", &q));
        ASSERT_EQ(s.n, 3);
        assert_policy_string(&s.entries[0].policy, "access=deny vpn=required");

        /* Invalid IDs and policies are refused, nothing changes. */
        ASSERT_EQ(app_policy_set_put(&s, "../x", &p), -EINVAL);
        ASSERT_EQ(app_policy_set_put(&s, "a/b", &p), -EINVAL);
        ASSERT_EQ(app_policy_set_put(&s, "", &p), -EINVAL);
        ASSERT_EQ(app_policy_set_put(&s, NULL, &p), -EINVAL);
        q = policy(APP_KEY_VPN, 0, 0, (AppVpn)9, 0);
        ASSERT_EQ(app_policy_set_put(&s, "org.example.A", &q), -EINVAL);
        q = policy(APP_KEY_BEARERS, 0, B(VIRTUAL), 0, 0);
        ASSERT_EQ(app_policy_set_put(&s, "org.example.B", &q), -EINVAL);
        ASSERT_EQ(s.n, 3);
        assert_policy_string(&s.entries[0].policy, "access=deny vpn=required");

        /* remove keeps the others in order. */
        ASSERT_OK(app_policy_set_remove(&s, "default"));
        ASSERT_EQ(app_policy_set_remove(&s, "default"), -ENOENT);
        ASSERT_EQ(s.n, 2);
        ASSERT_STREQ(s.entries[0].id, "org.example.A");
        ASSERT_STREQ(s.entries[1].id, "system");
        ASSERT_OK(app_policy_set_remove(&s, "system"));
        ASSERT_OK(app_policy_set_remove(&s, "org.example.A"));
        ASSERT_EQ(s.n, 0);
        ASSERT_OK(app_policy_set_put(&s, "again", &p));
        ASSERT_EQ(s.n, 1);

        app_policy_set_done(&s);
        ASSERT_EQ(s.n, 0);
        ASSERT_TRUE(s.entries == NULL);
}

static int parse(const char *text, AppPolicySet *into, unsigned *errors)
{
        capture_start();
        return app_policy_parse_dropin("apps.conf", text, strlen(text), into, errors);
}

TEST(app_policy_dropin_good)
{
        AppPolicySet s = {};
        unsigned errors = 99;
        const char *text = "# Mail may use the LAN only, over wifi or ethernet.\n"
                           "[App]\n"
                           "ID=org.example.Mail\n"
                           "Access=lan\n"
                           "Bearers=wifi ethernet\n"
                           "VPN=required\n"
                           "Handover=move\n"
                           "\n"
                           "; ID may come last, a key given twice: the later wins\n"
                           "[App]\n"
                           "Access = deny\n"
                           "Access = allow\n"
                           "Bearers=cellular,wifi\r\n"
                           "ID = org.example.Maps\n"
                           "[App]\n"
                           "ID=default\n"
                           "Access=deny\n"
                           "[App]\n"
                           "ID=system\n"
                           "[App]\n"
                           "ID=first\n"
                           "ID=Some_App-2.desktop\n"
                           "Bearers=all\n";

        ASSERT_OK(parse(text, &s, &errors));
        ASSERT_EQ(errors, 0);
        ASSERT_STREQ(captured, "");
        ASSERT_EQ(s.n, 5);

        ASSERT_STREQ(s.entries[0].id, "org.example.Mail");
        assert_policy_string(&s.entries[0].policy,
                             "access=lan bearers=ethernet,wifi vpn=required handover=move");
        ASSERT_STREQ(s.entries[0].file, "apps.conf");
        ASSERT_EQ(s.entries[0].line, 2);

        ASSERT_STREQ(s.entries[1].id, "org.example.Maps");
        assert_policy_string(&s.entries[1].policy, "access=allow bearers=wifi,cellular");
        ASSERT_EQ(s.entries[1].line, 10);

        ASSERT_STREQ(s.entries[2].id, "default");
        assert_policy_string(&s.entries[2].policy, "access=deny");
        ASSERT_STREQ(s.entries[3].id, "system");
        ASSERT_EQ(s.entries[3].policy.set, 0);
        ASSERT_STREQ(s.entries[4].id, "Some_App-2.desktop");
        assert_policy_string(&s.entries[4].policy, "bearers=all");
        ASSERT_EQ(app_policy_set_find(&s, "first"), -ENOENT);
        app_policy_set_done(&s);

        /* Empty and comment-only texts add nothing and are fine. */
        ASSERT_OK(parse("", &s, &errors));
        ASSERT_OK(parse("# nothing\n\n; here\n", &s, &errors));
        ASSERT_EQ(errors, 0);
        ASSERT_EQ(s.n, 0);

        /* An ID given twice in a section: the later wins, so no duplicate. */
        ASSERT_OK(parse("[App]\nID=a\nID=b\n[App]\nID=a\n", &s, NULL));
        ASSERT_EQ(s.n, 2);
        ASSERT_STREQ(s.entries[0].id, "b");
        ASSERT_STREQ(s.entries[1].id, "a");
        app_policy_set_done(&s);
        capture_stop();
}

TEST(app_policy_dropin_layers_into_set)
{
        AppPolicySet s = {};
        AppPolicy p =
            policy(APP_KEY_ACCESS | APP_KEY_HANDOVER, APP_ACCESS_DENY, 0, 0, APP_HANDOVER_MOVE);

        ASSERT_OK(app_policy_set_put(&s, "org.example.Mail", &p));
        ASSERT_OK(parse("[App]\nID=org.example.Web\nAccess=lan\n\n"
                        "[App]\nID=org.example.Mail\nVPN=required\nAccess=lan\n",
                        &s, NULL));
        ASSERT_EQ(s.n, 2);
        ASSERT_STREQ(s.entries[0].id, "org.example.Mail");
        assert_policy_string(&s.entries[0].policy, "access=lan vpn=required handover=move");
        ASSERT_STREQ(s.entries[0].file, "apps.conf");
        ASSERT_EQ(s.entries[0].line, 5);
        ASSERT_STREQ(s.entries[1].id, "org.example.Web");
        app_policy_set_done(&s);
        capture_stop();
}

/* Every kind of error: the text, how many errors, and everything logged at error level. */
static const struct {
        const char *text;
        unsigned errors;
        const char *log;
} dropin_bad[] = {
    {"[App]\nAccess=lan\n", 1, "apps.conf:1: [App] section without ID=.\n"},
    {"[App]\n", 1, "apps.conf:1: [App] section without ID=.\n"},
    {"[App]\nID=a\n[App]\nAccess=lan\n[App]\nID=b\n", 1,
     "apps.conf:3: [App] section without ID=.\n"},
    {"[App]\nID=../x\n", 1, "apps.conf:2: Invalid app ID '../x' " ID_RULES "\n"},
    {"[App]\nID=a/b\n", 1, "apps.conf:2: Invalid app ID 'a/b' " ID_RULES "\n"},
    {"[App]\nID=/etc/passwd\n", 1, "apps.conf:2: Invalid app ID '/etc/passwd' " ID_RULES "\n"},
    {"[App]\nID=a..b\n", 1, "apps.conf:2: Invalid app ID 'a..b' " ID_RULES "\n"},
    {"[App]\nID=.hidden\n", 1, "apps.conf:2: Invalid app ID '.hidden' " ID_RULES "\n"},
    {"[App]\nID=\n", 1, "apps.conf:2: Invalid app ID '' " ID_RULES "\n"},
    {"[App]\nID=a b\n", 1, "apps.conf:2: Invalid app ID 'a b' " ID_RULES "\n"},
    {"[App]\nID=caf\xc3\xa9\n", 1, "apps.conf:2: Invalid app ID 'caf\\xc3\\xa9' " ID_RULES "\n"},
    /* A valid ID, then an invalid one: the later wins, and it is invalid. */
    {"[App]\nID=good\nID=../bad\n", 1, "apps.conf:3: Invalid app ID '../bad' " ID_RULES "\n"},
    {"[App]\nID=a\nAccess=lan\n\n[App]\nID=a\n", 1,
     "apps.conf:6: ID=a is already configured in this file, at line 1.\n"},
    {"[App]\nID=default\n[App]\nID=x\n[App]\nID=default\n", 1,
     "apps.conf:6: ID=default is already configured in this file, at line 1.\n"},
    {"[Apps]\nID=a\n", 1, "apps.conf:1: Unknown section [Apps] (expected [App]).\n"},
    {"[app]\nID=a\n", 1, "apps.conf:1: Unknown section [app] (expected [App]).\n"},
    {"[App]\nID=a\n[Network]\nAccess=x\n", 1,
     "apps.conf:3: Unknown section [Network] (expected [App]).\n"},
    {"[App]\nID=a\nColour=red\n", 1,
     "apps.conf:3: Unknown key Colour= in section [App] (known: ID, Access, Bearers, VPN, "
     "Handover, Wake, WakeSlice, WakeBytes).\n"},
    {"[App]\nID=a\naccess=lan\n", 1,
     "apps.conf:3: Unknown key access= in section [App] (known: ID, Access, Bearers, VPN, "
     "Handover, Wake, WakeSlice, WakeBytes).\n"},
    {"[App]\nId=a\n", 2,
     "apps.conf:2: Unknown key Id= in section [App] (known: ID, Access, Bearers, VPN, Handover, "
     "Wake, WakeSlice, WakeBytes).\n"
     "apps.conf:1: [App] section without ID=.\n"},
    {"[App]\nID=a\nAccess=open\n", 1,
     "apps.conf:3: Invalid value 'open' for Access= (allow, lan, deny).\n"},
    {"[App]\nID=a\nAccess=\n", 1,
     "apps.conf:3: Invalid value '' for Access= (allow, lan, deny).\n"},
    {"[App]\nID=a\nVPN=maybe\n", 1,
     "apps.conf:3: Invalid value 'maybe' for VPN= (any, required, forbidden).\n"},
    {"[App]\nID=a\nHandover=jump\n", 1,
     "apps.conf:3: Invalid value 'jump' for Handover= (sticky, move).\n"},
    {"[App]\nID=a\nBearers=radio\n", 1,
     "apps.conf:3: Unknown bearer 'radio' in Bearers= (" BEARER_LIST ").\n"},
    {"[App]\nID=a\nBearers=virtual\n", 1,
     "apps.conf:3: Unknown bearer 'virtual' in Bearers= (" BEARER_LIST ").\n"},
    {"[App]\nID=a\nBearers=\n", 1,
     "apps.conf:3: Empty value for Bearers= (all, or a list of: " BEARER_LIST ").\n"},
    {"[App]\nID=a\nBearers=wifi, wifi\n", 1,
     "apps.conf:3: Bearer 'wifi' listed twice in Bearers=.\n"},
    {"[App]\nID=a\nBearers=all wifi\n", 1,
     "apps.conf:3: 'all' cannot be combined with other bearers in Bearers=.\n"},
    {"ID=a\n[App]\nID=b\n", 1, "apps.conf:1: Assignment ID= outside of any section.\n"},
    {"[App\nID=a\n", 2,
     "apps.conf:1: Malformed section header: [App\n"
     "apps.conf:2: Assignment ID= outside of any section.\n"},
    {"[App]\nID=a\nAccess\n", 1, "apps.conf:3: Expected Key=Value, got: Access\n"},
    {"[App]\nID=a\x01\n", 2,
     "apps.conf:2: Control character or NUL byte in line.\n"
     "apps.conf:1: [App] section without ID=.\n"},
    /* Every error is reported, not only the first. */
    {"[App]\nID=a\nAccess=x\nVPN=y\n[Foo]\nBar=1\n[App]\nHandover=z\n[App]\nID=a\n", 6,
     "apps.conf:3: Invalid value 'x' for Access= (allow, lan, deny).\n"
     "apps.conf:4: Invalid value 'y' for VPN= (any, required, forbidden).\n"
     "apps.conf:5: Unknown section [Foo] (expected [App]).\n"
     "apps.conf:8: Invalid value 'z' for Handover= (sticky, move).\n"
     "apps.conf:7: [App] section without ID=.\n"
     "apps.conf:10: ID=a is already configured in this file, at line 1.\n"},
    {"[App]\nID=a\nWake=101\nWakeSlice=1d\n", 2,
     "apps.conf:3: Priority '101' out of range for Wake= (0-100).\n"
     "apps.conf:4: Invalid value '1d' for WakeSlice= (a duration: 10s, 500ms, 2min).\n"},
};

TEST(app_policy_wake_keys)
{
        AppPolicySet s = {};
        AppPolicy p;

        /* Not wake-listed unless a layer says so; the slice defaults to 10 s. */
        app_policy_init_builtin(&p);
        ASSERT_EQ(app_policy_wake_priority(&p), APP_WAKE_NONE);
        ASSERT_EQ(app_policy_wake_slice(&p), 10 * 1000000ULL);
        ASSERT_EQ(app_policy_wake_bytes(&p), 0);
        assert_policy_string(&p, "access=allow bearers=all vpn=any handover=sticky");

        ASSERT_OK(parse("[App]\nID=a\nWake=80\nWakeSlice=3s\nWakeBytes=1M\n", &s, NULL));
        ASSERT_EQ(s.n, 1);
        app_policy_layer(&p, &s.entries[0].policy);
        ASSERT_EQ(app_policy_wake_priority(&p), 80);
        ASSERT_EQ(app_policy_wake_slice(&p), 3 * 1000000ULL);
        ASSERT_EQ(app_policy_wake_bytes(&p), 1ULL << 20);
        assert_policy_string(
            &p, "access=allow bearers=all vpn=any handover=sticky wake=80 wake-slice=3s "
                "wake-bytes=1048576");
        /* A runtime "wake=no" takes the app off the list again. */
        ASSERT_OK(app_policy_assign(&p, "wake", "no", NULL));
        ASSERT_EQ(app_policy_wake_priority(&p), APP_WAKE_NONE);
        app_policy_set_done(&s);
}

TEST(app_policy_dropin_errors)
{
        for (size_t i = 0; i < ELEMENTSOF(dropin_bad); i++) {
                AppPolicySet s = {};
                unsigned errors = 0;
                int r = parse(dropin_bad[i].text, &s, &errors);

                if (r != -EINVAL)
                        TEST_FAIL("case %zu: expected -EINVAL, got %d", i, r);
                if (errors != dropin_bad[i].errors)
                        TEST_FAIL("case %zu: expected %u errors, got %u", i, dropin_bad[i].errors,
                                  errors);
                if (!streq(captured, dropin_bad[i].log))
                        TEST_FAIL("case %zu: expected log\n%s\ngot\n%s", i, dropin_bad[i].log,
                                  captured);
                ASSERT_EQ(s.n, 0);
                ASSERT_TRUE(s.entries == NULL);
        }
        capture_stop();
}

TEST(app_policy_dropin_all_or_nothing)
{
        AppPolicySet s = {};
        AppPolicy p = policy(APP_KEY_ACCESS, APP_ACCESS_DENY, 0, 0, 0);
        unsigned errors = 0;

        ASSERT_OK(app_policy_set_put(&s, "org.example.Mail", &p));
        /* Good sections before and after a bad one: none of them is taken. */
        ASSERT_EQ(parse("[App]\nID=org.example.Mail\nAccess=allow\n"
                        "[App]\nID=org.example.New\n"
                        "[App]\nID=org.example.Bad\nVPN=sometimes\n"
                        "[App]\nID=org.example.After\n",
                        &s, &errors),
                  -EINVAL);
        ASSERT_EQ(errors, 1);
        ASSERT_STREQ(captured, "apps.conf:8: Invalid value 'sometimes' for VPN= (any, required, "
                               "forbidden).\n");
        ASSERT_EQ(s.n, 1);
        ASSERT_STREQ(s.entries[0].id, "org.example.Mail");
        assert_policy_string(&s.entries[0].policy, "access=deny");
        ASSERT_TRUE(s.entries[0].file == NULL);
        app_policy_set_done(&s);
        capture_stop();
}

TEST(app_policy_dropin_nul_and_long_line)
{
        static const char text[] = "[App]\nID=a\nAccess=l\0an\n";
        AppPolicySet s = {};
        unsigned errors = 0;
        char *big;

        capture_start();
        ASSERT_EQ(app_policy_parse_dropin("apps.conf", text, sizeof(text) - 1, &s, &errors),
                  -EINVAL);
        ASSERT_EQ(errors, 1);
        ASSERT_STREQ(captured, "apps.conf:3: Control character or NUL byte in line.\n");

        big = malloc(10000);
        ASSERT_TRUE(big);
        memset(big, 'a', 9999);
        big[9999] = 0;
        memcpy(big, "[App]\nID=a\nAccess=", 18);
        ASSERT_EQ(parse(big, &s, &errors), -EINVAL);
        free(big);
        ASSERT_EQ(errors, 1);
        ASSERT_STREQ(captured, "apps.conf:3: Line too long (more than 4096 bytes).\n");
        ASSERT_EQ(s.n, 0);
        capture_stop();
}

TEST(app_policy_load_dir)
{
        char dir[] = "/tmp/test-app-policy-XXXXXX", path[4096], *big;
        AppPolicySet s = {};
        unsigned errors = 0;
        int k;

        ASSERT_TRUE(mkdtemp(dir));
        write_text(dir, "30-more.conf",
                   "[App]\nID=org.example.Mail\nHandover=move\n[App]\nID=system\nAccess=allow\n");
        write_text(dir, "10-base.conf",
                   "[App]\nID=org.example.Mail\nAccess=lan\nBearers=wifi ethernet\n"
                   "[App]\nID=default\nAccess=deny\n");
        write_text(dir, "20-broken.conf",
                   "[App]\nID=org.example.Web\nAccess=allow\n"
                   "[App]\nID=org.example.Mail\nVPN=nope\n");
        /* Other names are ignored, however broken. */
        write_text(dir, "README", "not a drop-in\n");
        write_text(dir, "40-old.conf.bak", "[Broken\n");
        write_text(dir, ".50-hidden.conf", "[Broken\n");
        write_text(dir, ".conf", "[Broken\n");
        /* A directory with a drop-in's name, and a file over 1 MiB: skipped. */
        snprintf(path, sizeof(path), "%s/60-dir.conf", dir);
        ASSERT_OK(mkdir(path, 0755));
        big = malloc(APP_POLICY_FILE_MAX + 2);
        ASSERT_TRUE(big);
        memset(big, '#', APP_POLICY_FILE_MAX + 1);
        big[APP_POLICY_FILE_MAX + 1] = 0;
        write_text(dir, "70-big.conf", big);
        free(big);

        capture_start();
        ASSERT_EQ(app_policy_load_dir(dir, &s, &errors), -EINVAL);
        ASSERT_EQ(errors, 3);
        ASSERT_EQ(s.n, 3);
        ASSERT_STREQ(s.entries[0].id, "org.example.Mail");
        /* 10-base, then 30-more layered over it; nothing of 20-broken. */
        assert_policy_string(&s.entries[0].policy,
                             "access=lan bearers=ethernet,wifi handover=move");
        snprintf(path, sizeof(path), "%s/30-more.conf", dir);
        ASSERT_STREQ(s.entries[0].file, path);
        ASSERT_EQ(s.entries[0].line, 1);
        ASSERT_STREQ(s.entries[1].id, "default");
        assert_policy_string(&s.entries[1].policy, "access=deny");
        ASSERT_STREQ(s.entries[2].id, "system");
        ASSERT_EQ(app_policy_set_find(&s, "org.example.Web"), -ENOENT);
        {
                char expected[4096];

                snprintf(expected, sizeof(expected),
                         "%1$s/20-broken.conf:6: Invalid value 'nope' for VPN= (any, required, "
                         "forbidden).\n"
                         "%1$s/20-broken.conf: 1 error; the whole file is skipped.\n"
                         "%1$s/60-dir.conf: not a regular file; skipped.\n"
                         "%1$s/70-big.conf: larger than 1 MiB; skipped.\n",
                         dir);
                ASSERT_STREQ(captured, expected);
        }
        app_policy_set_done(&s);

        /* Without the bad ones: 0, and a trailing slash makes no double one. */
        snprintf(path, sizeof(path), "%s/20-broken.conf", dir);
        ASSERT_OK(unlink(path));
        snprintf(path, sizeof(path), "%s/60-dir.conf", dir);
        ASSERT_OK(rmdir(path));
        snprintf(path, sizeof(path), "%s/70-big.conf", dir);
        ASSERT_OK(unlink(path));
        snprintf(path, sizeof(path), "%s/", dir);
        capture_start();
        ASSERT_EQ(app_policy_load_dir(path, &s, &errors), 0);
        ASSERT_EQ(errors, 0);
        ASSERT_STREQ(captured, "");
        ASSERT_EQ(s.n, 3);
        snprintf(path, sizeof(path), "%s/10-base.conf", dir);
        k = app_policy_set_find(&s, "default");
        ASSERT_TRUE(k >= 0);
        ASSERT_STREQ(s.entries[k].file, path);
        app_policy_set_done(&s);

        /* Name order decides, not the order files were made in. */
        write_text(dir, "99-z.conf", "[App]\nID=default\nAccess=lan\n");
        write_text(dir, "00-a.conf", "[App]\nID=default\nAccess=allow\n");
        ASSERT_OK(app_policy_load_dir(dir, &s, NULL));
        k = app_policy_set_find(&s, "default");
        ASSERT_TRUE(k >= 0);
        assert_policy_string(&s.entries[k].policy, "access=lan");
        app_policy_set_done(&s);

        rm_rf(dir);

        /* A missing directory is an empty set. */
        s.n = 42; /* *ret need not be initialized */
        ASSERT_OK(app_policy_load_dir(dir, &s, &errors));
        ASSERT_EQ(s.n, 0);
        ASSERT_EQ(errors, 0);
        capture_stop();
}

static bool set_equal(const AppPolicySet *a, const AppPolicySet *b)
{
        if (a->n != b->n)
                return false;
        for (size_t i = 0; i < a->n; i++)
                if (!streq(a->entries[i].id, b->entries[i].id) ||
                    !app_policy_equal(&a->entries[i].policy, &b->entries[i].policy))
                        return false;
        return true;
}

static bool dir_has_only(const char *dir, const char *name)
{
        _cleanup_closedir_ DIR *d = opendir(dir);
        struct dirent *de;
        bool found = false;

        while (d && (de = readdir(d))) {
                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                if (!streq(de->d_name, name))
                        return false;
                found = true;
        }
        return found;
}

TEST(app_policy_state_round_trip)
{
        _cleanup_(app_policy_state_damage_done) AppPolicyStateDamage damage = {};
        char dir[] = "/tmp/test-app-policy-XXXXXX", path[4096];
        _cleanup_free_ char *text = NULL;
        AppPolicySet s = {}, loaded = {};
        AppPolicy p;

        ASSERT_TRUE(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/apps.state", dir);

        /* Missing: an empty set. */
        loaded.n = 7;
        ASSERT_OK(app_policy_state_load(path, &loaded, &damage));
        ASSERT_EQ(loaded.n, 0);

        p = policy(APP_KEY_ALL, APP_ACCESS_LAN, B(WIFI) | B(ETHERNET), APP_VPN_REQUIRED,
                   APP_HANDOVER_MOVE);
        ASSERT_OK(app_policy_set_put(&s, "org.example.Mail", &p));
        p = policy(APP_KEY_ACCESS, APP_ACCESS_DENY, 0, 0, 0);
        ASSERT_OK(app_policy_set_put(&s, "default", &p));
        p = policy(0, 0, 0, 0, 0);
        ASSERT_OK(app_policy_set_put(&s, "system", &p));
        p = policy(APP_KEY_BEARERS | APP_KEY_VPN, 0, 0, APP_VPN_FORBIDDEN, 0);
        ASSERT_OK(app_policy_set_put(&s, "org.example.Web", &p));

        ASSERT_OK(app_policy_state_save(path, &s));
        ASSERT_TRUE(dir_has_only(dir, "apps.state"));
        ASSERT_OK(read_full_file(path, APP_POLICY_FILE_MAX, &text, NULL));
        ASSERT_TRUE(strncmp(text, "# Written by roamd", 18) == 0);
        ASSERT_TRUE(strstr(text, "\n[App]\n"
                                 "ID=org.example.Mail\n"
                                 "Access=lan\n"
                                 "Bearers=ethernet wifi\n"
                                 "VPN=required\n"
                                 "Handover=move\n"
                                 "\n[App]\n"
                                 "ID=default\n"
                                 "Access=deny\n"
                                 "\n[App]\n"
                                 "ID=system\n"
                                 "\n[App]\n"
                                 "ID=org.example.Web\n"
                                 "Bearers=all\n"
                                 "VPN=forbidden\n") != NULL);
        {
                _cleanup_free_ char *formatted = NULL;

                ASSERT_OK(app_policy_state_format(&s, &formatted));
                ASSERT_STREQ(formatted, text);
        }

        capture_start();
        ASSERT_OK(app_policy_state_load(path, &loaded, &damage));
        ASSERT_STREQ(captured, "");
        ASSERT_TRUE(set_equal(&s, &loaded));
        ASSERT_STREQ(loaded.entries[0].file, path);
        app_policy_set_done(&loaded);

        /* Saving again replaces the file. */
        ASSERT_OK(app_policy_set_remove(&s, "org.example.Mail"));
        ASSERT_OK(app_policy_state_save(path, &s));
        ASSERT_TRUE(dir_has_only(dir, "apps.state"));
        ASSERT_OK(app_policy_state_load(path, &loaded, &damage));
        ASSERT_EQ(loaded.n, 3);
        ASSERT_TRUE(set_equal(&s, &loaded));
        app_policy_set_done(&loaded);

        /* An empty set: a file with the header alone, which loads as an empty set. */
        {
                AppPolicySet empty = {};

                ASSERT_OK(app_policy_state_save(path, &empty));
                loaded.n = 3;
                ASSERT_OK(app_policy_state_load(path, &loaded, &damage));
                ASSERT_EQ(loaded.n, 0);
        }

        /* A set that could not be read back is not written; the old file stays. */
        ASSERT_OK(app_policy_state_save(path, &s));
        free(s.entries[0].id);
        s.entries[0].id = strdup("../escape");
        ASSERT_EQ(app_policy_state_save(path, &s), -EINVAL);
        free(s.entries[0].id);
        s.entries[0].id = strdup("default");
        s.entries[0].policy.vpn = (AppVpn)5;
        s.entries[0].policy.set |= APP_KEY_VPN;
        ASSERT_EQ(app_policy_state_save(path, &s), -EINVAL);
        s.entries[0].policy.vpn = APP_VPN_ANY;
        ASSERT_TRUE(dir_has_only(dir, "apps.state"));
        ASSERT_OK(app_policy_state_load(path, &loaded, &damage));
        ASSERT_EQ(loaded.n, 3);
        app_policy_set_done(&loaded);

        /* No directory to write into. */
        {
                char missing[4096];

                snprintf(missing, sizeof(missing), "%s/nodir/apps.state", dir);
                ASSERT_EQ(app_policy_state_save(missing, &s), -ENOENT);
        }

        app_policy_set_done(&s);
        rm_rf(dir);
        capture_stop();
}

static const AppPolicy *find_policy(const AppPolicySet *s, const char *id)
{
        int k = app_policy_set_find(s, id);

        return k >= 0 ? &s->entries[k].policy : NULL;
}

TEST(app_policy_state_damaged_sections_fail_closed)
{
        _cleanup_(app_policy_state_damage_done) AppPolicyStateDamage damage = {};
        char dir[] = "/tmp/test-app-policy-XXXXXX", path[4096], damaged[4200], expected[4200];
        _cleanup_free_ char *copy = NULL;
        AppPolicySet loaded = {};
        const AppPolicy *p;
        static const char text[] = "# Written by roamd\n"
                                   "\n[App]\nID=org.example.Mail\nAccess=deny\n"     /* 3-5 */
                                   "\n[App]\nID=org.example.Web\nAccess=sometimes\n" /* 7-9 */
                                   "\n[App]\nID=org.example.Chat\nAccess=lan\nVPN=required\n";

        ASSERT_TRUE(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/apps.state", dir);
        snprintf(damaged, sizeof(damaged), "%s.damaged", path);
        write_text(dir, "apps.state", text);
        capture_start();
        loaded.n = 5;
        ASSERT_EQ(app_policy_state_load(path, &loaded, &damage), 1);
        /* the good sections are kept: the deny stays a deny */
        ASSERT_TRUE((p = find_policy(&loaded, "org.example.Mail")));
        ASSERT_EQ(p->access, APP_ACCESS_DENY);
        ASSERT_TRUE((p = find_policy(&loaded, "org.example.Chat")));
        ASSERT_EQ(p->access, APP_ACCESS_LAN);
        ASSERT_EQ(p->vpn, APP_VPN_REQUIRED);
        /* the damaged one fails closed */
        ASSERT_TRUE((p = find_policy(&loaded, "org.example.Web")));
        ASSERT_EQ(p->set, APP_KEY_ACCESS);
        ASSERT_EQ(p->access, APP_ACCESS_DENY);
        ASSERT_EQ(loaded.n, 3);
        ASSERT_TRUE(find_policy(&loaded, "default") == NULL);
        ASSERT_EQ(damage.n_damaged, 1);
        ASSERT_TRUE(!damage.default_denied);
        snprintf(expected, sizeof(expected),
                 "%s:9: Invalid value 'sometimes' for Access= (allow, lan, deny).\n"
                 "%s:7: the runtime policy of org.example.Web is damaged; org.example.Web is "
                 "denied until \"roam app org.example.Web set\" or \"roam app org.example.Web "
                 "reset\".\n"
                 "%s: 1 damaged part(s); the rest is in force, the file as it was is kept as "
                 "%s.\n",
                 path, path, path, damaged);
        ASSERT_STREQ(captured, expected);
        /* the file as it was */
        ASSERT_OK(read_full_file(damaged, APP_POLICY_FILE_MAX, &copy, NULL));
        ASSERT_STREQ(copy, text);
        app_policy_set_done(&loaded);
        app_policy_state_damage_done(&damage);

        /* A damaged header: both sections it ran together are denied; text whose app cannot
         * be told denies the default; the system policy is never denied. */
        write_text(dir, "apps.state",
                   "# Written by roamd\nstray\n"
                   "\n[App]\nID=org.example.Mail\nAccess=allow\n"
                   "\n\x01App]\nID=org.example.Web\nAccess=allow\n"
                   "\n[App]\nID=system\nAccess=dney\n"
                   "\n[App]\nID=org.example.Ok\nAccess=allow\n");
        capture_start();
        ASSERT_EQ(app_policy_state_load(path, &loaded, &damage), 3);
        ASSERT_EQ(find_policy(&loaded, "org.example.Mail")->access, APP_ACCESS_DENY);
        ASSERT_EQ(find_policy(&loaded, "org.example.Web")->access, APP_ACCESS_DENY);
        ASSERT_EQ(find_policy(&loaded, "org.example.Ok")->access, APP_ACCESS_ALLOW);
        ASSERT_EQ(find_policy(&loaded, "default")->access, APP_ACCESS_DENY);
        ASSERT_TRUE(find_policy(&loaded, "system") == NULL);
        ASSERT_TRUE(damage.default_denied);
        ASSERT_TRUE(damage.system_lost);
        ASSERT_TRUE(strstr(captured, "a damaged part whose app cannot be told; apps without a "
                                     "policy of their own are denied"));
        ASSERT_TRUE(strstr(captured, "the system policy stays as configured"));
        app_policy_set_done(&loaded);
        app_policy_state_damage_done(&damage);

        /* The same ID twice: the second is damage, and the app is denied. */
        write_text(dir, "apps.state",
                   "[App]\nID=org.example.Mail\nAccess=allow\n"
                   "[App]\nID=org.example.Mail\nAccess=allow\n");
        capture_start();
        ASSERT_EQ(app_policy_state_load(path, &loaded, &damage), 1);
        ASSERT_EQ(loaded.n, 1);
        ASSERT_EQ(find_policy(&loaded, "org.example.Mail")->access, APP_ACCESS_DENY);
        app_policy_set_done(&loaded);
        app_policy_state_damage_done(&damage);

        rm_rf(dir);
        capture_stop();
}

TEST(app_policy_state_unreadable_denies_the_default)
{
        _cleanup_(app_policy_state_damage_done) AppPolicyStateDamage damage = {};
        char dir[] = "/tmp/test-app-policy-XXXXXX", path[4096], damaged[4200], *big;
        AppPolicySet loaded = {};
        struct stat st;

        ASSERT_TRUE(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/apps.state", dir);
        snprintf(damaged, sizeof(damaged), "%s.damaged", path);

        /* Too large: moved aside, the default denied. */
        big = malloc(APP_POLICY_FILE_MAX + 2);
        ASSERT_TRUE(big);
        memset(big, '#', APP_POLICY_FILE_MAX + 1);
        big[APP_POLICY_FILE_MAX + 1] = 0;
        write_text(dir, "apps.state", big);
        free(big);
        capture_start();
        ASSERT_EQ(app_policy_state_load(path, &loaded, &damage), -EFBIG);
        ASSERT_EQ(loaded.n, 1);
        ASSERT_EQ(find_policy(&loaded, "default")->access, APP_ACCESS_DENY);
        ASSERT_TRUE(strstr(captured, "larger than 1 MiB; kept as "));
        ASSERT_TRUE(stat(path, &st) < 0 && errno == ENOENT);
        ASSERT_OK(stat(damaged, &st));
        ASSERT_EQ(st.st_size, APP_POLICY_FILE_MAX + 1);
        app_policy_set_done(&loaded);
        app_policy_state_damage_done(&damage);

        /* Not a file. */
        snprintf(path, sizeof(path), "%s", dir);
        ASSERT_EQ(app_policy_state_load(path, &loaded, &damage), -EISDIR);
        ASSERT_EQ(find_policy(&loaded, "default")->access, APP_ACCESS_DENY);
        app_policy_set_done(&loaded);

        rm_rf(dir);
        capture_stop();
}

TEST(app_policy_user_ids)
{
        uid_t uid = 0;

        ASSERT_TRUE(app_id_user_uid("user:1000", &uid) && uid == 1000);
        ASSERT_TRUE(app_id_user_uid("user:0", &uid) && uid == 0);
        ASSERT_TRUE(app_policy_id_is_valid("user:4294967294"));
        ASSERT_TRUE(app_id_is_special("user:7") && app_id_is_special("user"));
        /* user:UID is a policy, never an app (a cgroup or RunApp can not take it) */
        ASSERT_TRUE(!app_id_is_valid("user:1000"));
        static const char *const bad[] = {"user:",      "user:-1",         "user:01", "user:1a",
                                          "user:65535", "user:4294967295", "user:x",  "users:1",
                                          "user:1:2",   "user: 1",         "User:1"};
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                if (app_policy_id_is_valid(bad[i]) || app_id_user_uid(bad[i], NULL))
                        TEST_FAIL("%s accepted", bad[i]);
}
