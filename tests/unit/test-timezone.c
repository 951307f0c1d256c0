/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>

#include "roam-util.h"
#include "roamd-timezone.h"
#include "test.h"
#include "tz-fixture.h"

/* Hints as the sources make them. */
#define NITZ(w, mcc_, off, dst_)                                                                   \
        {                                                                                          \
                .kind = TIME_SOURCE_NITZ, .witness = w, .mcc = mcc_, .utc_offset_min = off,        \
                .dst = dst_                                                                        \
        }
#define DHCP_ZONE(w, z)                                                                            \
        {                                                                                          \
                .kind = TIME_SOURCE_DHCP, .witness = w, .zone = z, .dst = -1                       \
        }
#define DHCP_OFFSET(w, off, dst_)                                                                  \
        {                                                                                          \
                .kind = TIME_SOURCE_DHCP, .witness = w, .utc_offset_min = off, .dst = dst_         \
        }
#define MANUAL(z, t)                                                                               \
        {                                                                                          \
                .kind = TIME_SOURCE_MANUAL, .witness = "manual", .zone = z, .dst = -1, .taken = t  \
        }

#define M0 "modem:/org/freedesktop/ModemManager1/Modem/0"
#define M1 "modem:/org/freedesktop/ModemManager1/Modem/1"

TEST(decision_table)
{
        static const struct {
                const char *name;
                TimeZoneHint hints[3];
                size_t n;
                const char *current;
                ZoneState state;
                const char *reason, *zone, *candidates;
                bool change;
        } cases[] = {
            {"nothing", {}, 0, "UTC", ZONE_STATE_UNKNOWN, "no-witness", "", "", false},
            {"one NITZ for another country is not enough",
             {NITZ(M0, "262", 120, 1)},
             1,
             "America/New_York",
             ZONE_STATE_CHOOSE,
             "single-witness",
             "",
             "Europe/Berlin",
             false},
            {"the same modem twice is one witness",
             {NITZ(M0, "262", 120, 1), NITZ(M0, "262", 120, 1)},
             2,
             "America/New_York",
             ZONE_STATE_CHOOSE,
             "single-witness",
             "",
             "Europe/Berlin",
             false},
            {"NITZ and the lease's zone agree",
             {NITZ(M0, "262", 120, 1), DHCP_ZONE("link:wlan0", "Europe/Berlin")},
             2,
             "America/New_York",
             ZONE_STATE_SETTLED,
             "agreed",
             "Europe/Berlin",
             "Europe/Berlin",
             true},
            {"two modems agree",
             {NITZ(M0, "262", 120, 1), NITZ(M1, "262", 120, -1)},
             2,
             "America/New_York",
             ZONE_STATE_SETTLED,
             "agreed",
             "Europe/Berlin",
             "Europe/Berlin",
             true},
            {"NITZ and the lease's POSIX TZ offset agree",
             {NITZ(M0, "262", 120, 1), DHCP_OFFSET("link:eth0", 120, 1)},
             2,
             "",
             ZONE_STATE_SETTLED,
             "agreed",
             "Europe/Berlin",
             "Europe/Berlin",
             true},
            {"already there: nothing to do",
             {NITZ(M0, "262", 120, 1)},
             1,
             "Europe/Berlin",
             ZONE_STATE_SETTLED,
             "current-zone-fits",
             "Europe/Berlin",
             "Europe/Berlin",
             false},
            {"several zones: the user chooses",
             {NITZ(M0, "310", -300, 1)},
             1,
             "Europe/Berlin",
             ZONE_STATE_CHOOSE,
             "several-candidates",
             "",
             "America/Chicago America/Indiana/Knox America/Indiana/Tell_City "
             "America/Menominee America/North_Dakota/Beulah America/North_Dakota/Center "
             "America/North_Dakota/New_Salem",
             false},
            {"several zones, two witnesses each too wide still agree on none",
             {NITZ(M0, "310", -300, 1), NITZ(M1, "311", -300, 1)},
             2,
             "Europe/Berlin",
             ZONE_STATE_CHOOSE,
             "several-candidates",
             "",
             "America/Chicago America/Indiana/Knox America/Indiana/Tell_City "
             "America/Menominee America/North_Dakota/Beulah America/North_Dakota/Center "
             "America/North_Dakota/New_Salem",
             false},
            {"the lease picks one of the modem's zones",
             {NITZ(M0, "310", -300, 1), DHCP_ZONE("link:wlan0", "America/Chicago")},
             2,
             "Europe/Berlin",
             ZONE_STATE_SETTLED,
             "agreed",
             "America/Chicago",
             "America/Chicago",
             true},
            {"the witnesses disagree",
             {NITZ(M0, "262", 120, 1), DHCP_ZONE("link:wlan0", "America/Chicago")},
             2,
             "UTC",
             ZONE_STATE_DISPUTED,
             "witnesses-disagree",
             "",
             "Europe/Berlin America/Chicago",
             false},
            {"the lease's offset contradicts the modem",
             {NITZ(M0, "262", 120, 1), DHCP_OFFSET("link:eth0", -240, 1)},
             2,
             "UTC",
             ZONE_STATE_DISPUTED,
             "witnesses-disagree",
             "",
             "Europe/Berlin",
             false},
            {"an offset the country does not have",
             {NITZ(M0, "262", 60, 0)},
             1,
             "UTC",
             ZONE_STATE_DISPUTED,
             "offset-fits-no-zone",
             "",
             "",
             false},
            {"the user's choice wins",
             {NITZ(M0, "262", 120, 1), MANUAL("Asia/Tokyo", 5),
              DHCP_ZONE("link:wlan0", "Europe/Berlin")},
             3,
             "Europe/Berlin",
             ZONE_STATE_SETTLED,
             "manual",
             "Asia/Tokyo",
             "",
             true},
            {"the user's latest choice wins",
             {MANUAL("Asia/Tokyo", 5), MANUAL("Europe/Paris", 9)},
             2,
             "Europe/Paris",
             ZONE_STATE_SETTLED,
             "manual",
             "Europe/Paris",
             "",
             false},
            {"no country: the current zone fits the offset",
             {NITZ(M0, "", 120, 1)},
             1,
             "Europe/Berlin",
             ZONE_STATE_SETTLED,
             "current-zone-fits",
             "Europe/Berlin",
             "",
             false},
            {"no country and the current zone does not fit",
             {NITZ(M0, "", 120, 1)},
             1,
             "America/New_York",
             ZONE_STATE_CHOOSE,
             "no-country",
             "",
             "",
             false},
            {"an unknown MCC says only the offset",
             {NITZ(M0, "777", 120, 1)},
             1,
             "America/New_York",
             ZONE_STATE_CHOOSE,
             "no-country",
             "",
             "",
             false},
            {"a lease naming no zone is left out",
             {NITZ(M0, "262", 120, 1), DHCP_ZONE("link:wlan0", "Nowhere/Atlantis")},
             2,
             "America/New_York",
             ZONE_STATE_CHOOSE,
             "single-witness",
             "",
             "Europe/Berlin",
             false},
        };
        TzDb *db = fixture();

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(zone_decision_done) ZoneDecision d = {};
                ASSERT_OK(timezone_decide(db, cases[i].hints, cases[i].n, cases[i].current,
                                          JULY_2024, &d));
                if (d.state != cases[i].state || !streq(d.reason, cases[i].reason) ||
                    !streq(d.zone, cases[i].zone) || d.change != cases[i].change ||
                    !streq(joined(d.candidates), cases[i].candidates))
                        TEST_FAIL("%s: %s/%s zone \"%s\" change %d candidates \"%s\"",
                                  cases[i].name, zone_state_to_string(d.state), d.reason, d.zone,
                                  d.change, joined(d.candidates));
        }
        tzdb_free(db);
}

TEST(decision_without_data)
{
        TzDb *db = NULL;
        TimeZoneHint h[] = {NITZ(M0, "262", 120, 1), DHCP_ZONE("link:wlan0", "Europe/Berlin")};
        _cleanup_(zone_decision_done) ZoneDecision d = {};

        ASSERT_OK(tzdb_new("/nonexistent/serviceproviders.xml", "/nonexistent/zoneinfo", &db));
        ASSERT_OK(timezone_decide(db, h, 2, "UTC", JULY_2024, &d));
        ASSERT_EQ(d.state, ZONE_STATE_UNKNOWN);
        ASSERT_STREQ(d.reason, "no-zone-data");
        ASSERT_TRUE(!d.change);
        tzdb_free(db);
}

TEST(hint_from_lease)
{
        TimeZoneHint h;

        ASSERT_OK(timezone_hint_from_lease("wlan0", "Europe/Berlin", "", JULY_2024, 7, &h));
        ASSERT_EQ(h.kind, TIME_SOURCE_DHCP);
        ASSERT_STREQ(h.witness, "link:wlan0");
        ASSERT_STREQ(h.zone, "Europe/Berlin");
        ASSERT_OK(
            timezone_hint_from_lease("eth0", "", "CET-1CEST,M3.5.0,M10.5.0/3", JULY_2024, 7, &h));
        ASSERT_STREQ(h.zone, "");
        ASSERT_EQ(h.utc_offset_min, 120);
        ASSERT_EQ(h.dst, 1);
        ASSERT_OK(timezone_hint_from_lease("eth0", "", "<+0545>-5:45", JULY_2024, 7, &h));
        ASSERT_EQ(h.utc_offset_min, 345);
        ASSERT_EQ(h.dst, 0);
        /* what glibc would silently take for UTC is refused */
        ASSERT_EQ(timezone_hint_from_lease("eth0", "", "garbage", JULY_2024, 7, &h), -ENODATA);
        ASSERT_EQ(timezone_hint_from_lease("eth0", "", "AB1", JULY_2024, 7, &h), -ENODATA);
        ASSERT_EQ(timezone_hint_from_lease("eth0", "", ":/etc/shadow", JULY_2024, 7, &h), -ENODATA);
        ASSERT_EQ(timezone_hint_from_lease("eth0", "", "XYZ-34", JULY_2024, 7, &h), -ENODATA);
        ASSERT_EQ(timezone_hint_from_lease("eth0", "../x", "", JULY_2024, 7, &h), -ENODATA);
}

/* The object without a bus: the state follows the hints; nothing to call. */
TEST(timezone_object)
{
        Timezone *tz = NULL;
        TimeZoneHint a = NITZ(M0, "262", 120, 1);

        ASSERT_OK(timezone_new(NULL, fixture(), &tz));
        ASSERT_EQ(timezone_state(tz), ZONE_STATE_UNKNOWN);
        ASSERT_OK(timezone_add_hint(tz, &a));
        /* the real clock decides the offsets here: only the shape is checked */
        ASSERT_TRUE(timezone_state(tz) != ZONE_STATE_UNKNOWN);
        ASSERT_EQ(timezone_drop_witness(tz, M0), 1);
        ASSERT_EQ(timezone_state(tz), ZONE_STATE_UNKNOWN);
        ASSERT_STREQ(timezone_reason(tz), "no-witness");
        ASSERT_EQ(timezone_set_manual(tz, "Nowhere/Atlantis"), -EINVAL);
        ASSERT_EQ(timezone_set_manual(tz, "../../etc/shadow"), -EINVAL);
        ASSERT_OK(timezone_set_manual(tz, "Asia/Tokyo"));
        ASSERT_EQ(timezone_state(tz), ZONE_STATE_SETTLED);
        ASSERT_STREQ(timezone_reason(tz), "manual");
        timezone_free(tz);
}
