/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <limits.h>

#include "roamd-nitz.h"
#include "test.h"

#define S USEC_PER_SEC

/* 2024-07-01T12:00:00Z */
#define T_2024_07_01_12 ((usec_t)1719835200 * S)

TEST(offset_and_dst)
{
        static const struct {
                int offset;
                const char *reason; /* NULL: accepted */
        } offsets[] = {
            {0, NULL},
            {60, NULL},
            {-720, NULL},                     /* UTC-12, Baker Island */
            {840, NULL},                      /* UTC+14, Kiribati */
            {345, NULL},                      /* UTC+5:45, Nepal */
            {-210, NULL},                     /* UTC-3:30, Newfoundland */
            {34 * 60, "offset-out-of-range"}, /* "GMT+34" as seen on real networks */
            {-735, "offset-out-of-range"},
            {855, "offset-out-of-range"},
            {10, "offset-not-quarter-hour"},
            {61, "offset-not-quarter-hour"},
        };
        for (size_t i = 0; i < ELEMENTSOF(offsets); i++) {
                const char *reason = NULL;
                int r = nitz_check_offset(offsets[i].offset, &reason);
                if (!offsets[i].reason)
                        ASSERT_EQ(r, 0);
                else {
                        ASSERT_EQ(r, -EINVAL);
                        ASSERT_STREQ(reason, offsets[i].reason);
                }
        }
        for (int d = -3; d <= 5; d++)
                ASSERT_EQ(nitz_check_dst(d, NULL), d >= 0 && d <= 2 ? 0 : -EINVAL);
}

TEST(mm_time_table)
{
        static const struct {
                const char *s;
                int zone; /* NetworkTimezone offset, INT_MIN unknown */
                int r;
                const char *reason;
                int64_t utc_s;
                int offset;
        } cases[] = {
            {"2024-07-01T14:00:00+02:00", INT_MIN, 0, NULL, 1719835200, 120},
            {"2024-07-01T14:00:00+0200", INT_MIN, 0, NULL, 1719835200, 120},
            {"2024-07-01T14:00:00+02", INT_MIN, 0, NULL, 1719835200, 120},
            {"2024-07-01T12:00:00Z", INT_MIN, 0, NULL, 1719835200, 0},
            {"2024-07-01T12:00:00.250Z", INT_MIN, 0, NULL, 1719835200, 0},
            {"2024-07-01 06:15:00-05:45", INT_MIN, 0, NULL, 1719835200, -345},
            {"2024-07-01T17:45:00+05:45", INT_MIN, 0, NULL, 1719835200, 345},
            /* no offset in the string: NetworkTimezone gives it */
            {"2024-07-01T14:00:00", 120, 0, NULL, 1719835200, 120},
            {"2024-07-01T14:00:00", INT_MIN, -ENOMSG, "no-offset", 0, 0},
            {"2024-07-01T14:00:00+02:00", 60, -EINVAL, "offset-contradicts-zone", 0, 0},
            {"", INT_MIN, -ENODATA, "unknown", 0, 0},
            {"2024-07-01T14:00:00+34:00", INT_MIN, -EINVAL, "offset-out-of-range", 0, 0},
            {"2024-07-01T14:00:00+01:10", INT_MIN, -EINVAL, "offset-not-quarter-hour", 0, 0},
            {"2024-07-01T14:00:00", 34 * 60, -EINVAL, "offset-out-of-range", 0, 0},
            {"1980-01-06T00:00:00Z", INT_MIN, -EINVAL, "year-out-of-range", 0, 0},
            {"2124-01-06T00:00:00Z", INT_MIN, -EINVAL, "year-out-of-range", 0, 0},
            {"2023-02-29T00:00:00Z", INT_MIN, -EINVAL, "bad-date", 0, 0},
            {"2024-02-29T00:00:00Z", INT_MIN, 0, NULL, 1709164800, 0},
            {"2024-13-01T00:00:00Z", INT_MIN, -EINVAL, "bad-date", 0, 0},
            {"2024-07-01T24:00:00Z", INT_MIN, -EINVAL, "bad-time-of-day", 0, 0},
            {"2024-07-01T12:00:60Z", INT_MIN, -EINVAL, "bad-time-of-day", 0, 0},
            {"2024-07-01T12:00:00+02:00junk", INT_MIN, -EINVAL, "garbage", 0, 0},
            {"2024-7-01T12:00:00Z", INT_MIN, -EINVAL, "garbage", 0, 0},
            {"24/07/01,12:00:00+08", INT_MIN, -EINVAL, "garbage", 0, 0},
            {"2024-07-01T12:00:00.Z", INT_MIN, -EINVAL, "garbage", 0, 0},
            {"2024-07-01T12:00:00+02:75", INT_MIN, -EINVAL, "garbage", 0, 0},
            {"GMT+34", INT_MIN, -EINVAL, "garbage", 0, 0},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                NitzTime n = {0};
                const char *reason = NULL;
                int r = nitz_parse_mm_time(cases[i].s, cases[i].zone, &n, &reason);
                if (r != cases[i].r)
                        TEST_FAIL("\"%s\": %d != %d (%s)", cases[i].s, r, cases[i].r,
                                  reason ? reason : "-");
                if (r < 0) {
                        ASSERT_STREQ(reason, cases[i].reason);
                        continue;
                }
                ASSERT_EQ(n.utc, (usec_t)cases[i].utc_s * S);
                ASSERT_TRUE(n.has_offset);
                ASSERT_EQ(n.utc_offset_min, cases[i].offset);
                ASSERT_EQ(n.dst, -1);
        }
}

TEST(mm_zone_table)
{
        NitzTime n;
        const char *reason = NULL;

        ASSERT_EQ(nitz_parse_mm_zone(true, 120, true, 60, &n, &reason), 0);
        ASSERT_EQ(n.utc_offset_min, 120);
        ASSERT_EQ(n.dst, 1);
        ASSERT_EQ(n.utc, 0);
        ASSERT_EQ(nitz_parse_mm_zone(true, -300, false, 0, &n, &reason), 0);
        ASSERT_EQ(n.dst, -1);
        ASSERT_EQ(nitz_parse_mm_zone(true, 630, true, 120, &n, &reason), 0); /* Lord Howe */
        ASSERT_EQ(nitz_parse_mm_zone(false, 0, true, 60, &n, &reason), -ENODATA);
        ASSERT_EQ(nitz_parse_mm_zone(true, INT32_MAX, false, 0, &n, &reason), -ENODATA);
        ASSERT_EQ(nitz_parse_mm_zone(true, 34 * 60, false, 0, &n, &reason), -EINVAL);
        ASSERT_STREQ(reason, "offset-out-of-range");
        ASSERT_EQ(nitz_parse_mm_zone(true, 60, true, 180, &n, &reason), -EINVAL);
        ASSERT_STREQ(reason, "dst-out-of-range");
        ASSERT_EQ(nitz_parse_mm_zone(true, 60, true, -60, &n, &reason), -EINVAL);
        ASSERT_EQ(nitz_parse_mm_zone(true, 60, true, 30, &n, &reason), -EINVAL);
        ASSERT_STREQ(reason, "dst-not-whole-hours");
}

TEST(ofono_table)
{
        NitzTime n;
        const char *reason = NULL;
        OfonoNetworkTime t = {
            .has_utc = true,
            .utc = 1719835200,
            .has_timezone = true,
            .timezone = 7200,
            .has_dst = true,
            .dst = 1,
            .mcc = "262",
            .mnc = "01",
        };

        ASSERT_EQ(nitz_parse_ofono(&t, &n, &reason), 0);
        ASSERT_EQ(n.utc, T_2024_07_01_12);
        ASSERT_EQ(n.utc_offset_min, 120);
        ASSERT_EQ(n.dst, 1);
        ASSERT_STREQ(n.mcc, "262");
        ASSERT_STREQ(n.mnc, "01");

        OfonoNetworkTime bad = t;
        bad.timezone = 34 * 3600;
        ASSERT_EQ(nitz_parse_ofono(&bad, &n, &reason), -EINVAL);
        ASSERT_STREQ(reason, "offset-out-of-range");
        bad = t;
        bad.timezone = 7230;
        ASSERT_EQ(nitz_parse_ofono(&bad, &n, &reason), -EINVAL);
        ASSERT_STREQ(reason, "offset-not-quarter-hour");
        bad = t;
        bad.dst = 3;
        ASSERT_EQ(nitz_parse_ofono(&bad, &n, &reason), -EINVAL);
        ASSERT_STREQ(reason, "dst-out-of-range");
        bad = t;
        bad.utc = 315964800; /* 1980: a modem that lost its clock */
        ASSERT_EQ(nitz_parse_ofono(&bad, &n, &reason), -EINVAL);
        ASSERT_STREQ(reason, "year-out-of-range");
        bad = t;
        bad.mcc = "26a";
        ASSERT_EQ(nitz_parse_ofono(&bad, &n, &reason), -EINVAL);
        ASSERT_STREQ(reason, "bad-mcc");
        bad = t;
        bad.mcc = "000";
        ASSERT_EQ(nitz_parse_ofono(&bad, &n, &reason), -EINVAL);
        bad = t;
        bad.mnc = "1";
        ASSERT_EQ(nitz_parse_ofono(&bad, &n, &reason), -EINVAL);
        ASSERT_STREQ(reason, "bad-mnc");
        bad = (OfonoNetworkTime){.mcc = "262"};
        ASSERT_EQ(nitz_parse_ofono(&bad, &n, &reason), -ENODATA);
        /* the zone alone is a hint, not a time */
        bad = (OfonoNetworkTime){.has_timezone = true, .timezone = -18000};
        ASSERT_EQ(nitz_parse_ofono(&bad, &n, &reason), 0);
        ASSERT_EQ(n.utc, 0);
        ASSERT_EQ(n.utc_offset_min, -300);
}

TEST(tracker_table)
{
        /* (utc s, boottime s, verdict): each row fed in order to one tracker */
        static const struct {
                int64_t utc, boot;
                NitzTrackVerdict v;
        } rows[] = {
            {1000, 10, NITZ_TRACK_OK},
            {1060, 70, NITZ_TRACK_OK},        /* moved with the clock */
            {1122, 130, NITZ_TRACK_OK},       /* 2 s off: within the slack */
            {4722, 190, NITZ_TRACK_JUMP},     /* an hour ahead: one jump, passed on */
            {4782, 250, NITZ_TRACK_OK},       /* steady again at the new time */
            {1300, 310, NITZ_TRACK_FLAPPING}, /* back again within 10 min: flapping */
            {1360, 370, NITZ_TRACK_FLAPPING}, /* steady 1 */
            {1420, 430, NITZ_TRACK_FLAPPING}, /* steady 2 */
            {1480, 490, NITZ_TRACK_OK},       /* steady 3: trusted again */
            {1540, 550, NITZ_TRACK_OK},
            {9000, 2000, NITZ_TRACK_JUMP}, /* a later single jump is a jump */
            {9000 + 1000, 3000, NITZ_TRACK_OK},
            {9000 + 1000 - 5, 3000 + 10, NITZ_TRACK_JUMP}, /* backwards is a jump too */
            {20000, 3020, NITZ_TRACK_FLAPPING},
            {20000, 5, NITZ_TRACK_OK}, /* boottime backwards: a new tracker */
        };
        NitzTracker t = {0};

        for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
                NitzTrackVerdict v =
                    nitz_track_feed(&t, (usec_t)rows[i].utc * S, (usec_t)rows[i].boot * S);
                if (v != rows[i].v)
                        TEST_FAIL("row %zu: %s != %s", i, nitz_track_verdict_to_string(v),
                                  nitz_track_verdict_to_string(rows[i].v));
        }
}

TEST(sample_and_hint)
{
        NitzTime n;
        TimeSample s;
        TimeZoneHint h;

        ASSERT_EQ(nitz_parse_mm_time("2024-07-01T14:00:00+02:00", INT_MIN, &n, NULL), 0);
        ASSERT_EQ(nitz_to_sample(&n, "modem:/org/freedesktop/ModemManager1/Modem/0",
                                 "NITZ via modem 0", 42 * S, &s),
                  0);
        ASSERT_EQ(s.kind, TIME_SOURCE_NITZ);
        ASSERT_EQ(s.realtime, T_2024_07_01_12 + S / 2);
        ASSERT_EQ(s.error, NITZ_ERROR_USEC);
        ASSERT_EQ(s.taken, 42 * S);
        ASSERT_TRUE(!s.lower_bound);
        ASSERT_STREQ(s.witness, "modem:/org/freedesktop/ModemManager1/Modem/0");
        ASSERT_EQ(nitz_to_hint(&n, "modem:0", "NITZ", 42 * S, &h), 0);
        ASSERT_EQ(h.utc_offset_min, 120);
        ASSERT_EQ(h.dst, -1);
        ASSERT_STREQ(h.mcc, "");

        ASSERT_EQ(nitz_parse_mm_zone(true, 60, true, 0, &n, NULL), 0);
        ASSERT_EQ(nitz_to_sample(&n, "w", "o", 0, &s), -ENODATA);
        ASSERT_EQ(nitz_days_from_civil(1970, 1, 1), 0);
        ASSERT_EQ(nitz_days_from_civil(2000, 3, 1), 11017);
}
