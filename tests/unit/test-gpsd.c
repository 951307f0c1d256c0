/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gpsd's JSON protocol (service/data/roamd-gpsd.c): TPV reports as gnss samples, what is not a
 * time, what is refused and why, and the address. */
#include <arpa/inet.h>
#include <string.h>

#include "roamd-gpsd.h"
#include "test.h"

#define SEC  ((usec_t)1000000)
#define BOOT (1000 * SEC)
/* 2026-12-06T04:30:00Z */
#define T0 (1796531400ULL * SEC)

static int tpv(const char *line, TimeSample *s, char *reason, size_t size)
{
        return gpsd_tpv_to_sample(line, strlen(line), BOOT, s, reason, size);
}

TEST(gpsd_tpv)
{
        char reason[160];
        TimeSample s;

        /* a 3D fix with ept: its error plus the latency */
        ASSERT_OK(tpv("{\"class\":\"TPV\",\"device\":\"/dev/ttyACM0\",\"mode\":3,"
                      "\"time\":\"2026-12-06T04:30:00.250Z\",\"ept\":0.005,\"lat\":51.5}",
                      &s, reason, sizeof(reason)));
        ASSERT_EQ(s.kind, TIME_SOURCE_GNSS);
        ASSERT_STREQ(s.witness, "gnss");
        ASSERT_EQ(s.realtime, T0 + 250000);
        ASSERT_EQ(s.error, 5000 + GPSD_LATENCY_USEC);
        ASSERT_EQ(s.taken, BOOT);
        ASSERT_TRUE(!s.lower_bound);
        /* a 2D fix without ept or fraction: 1 s plus the latency */
        ASSERT_OK(tpv("{\"class\":\"TPV\",\"mode\":2,\"time\":\"2026-12-06T04:30:00Z\"}", &s,
                      reason, sizeof(reason)));
        ASSERT_EQ(s.realtime, T0);
        ASSERT_EQ(s.error, GPSD_EPT_DEFAULT + GPSD_LATENCY_USEC);

        /* nothing to take: other classes, no fix, no time */
        ASSERT_EQ(tpv("{\"class\":\"VERSION\",\"release\":\"3.22\",\"proto_major\":3}", &s, reason,
                      sizeof(reason)),
                  -ENODATA);
        ASSERT_EQ(tpv("{\"class\":\"TPV\",\"mode\":1,\"time\":\"2026-12-06T04:30:00Z\"}", &s,
                      reason, sizeof(reason)),
                  -ENODATA);
        ASSERT_EQ(tpv("{\"class\":\"TPV\",\"mode\":0}", &s, reason, sizeof(reason)), -ENODATA);
        ASSERT_EQ(tpv("{\"class\":\"TPV\",\"mode\":3}", &s, reason, sizeof(reason)), -ENODATA);
        ASSERT_EQ(tpv("{\"class\":\"TPV\"}", &s, reason, sizeof(reason)), -ENODATA);

        /* refused, each with its reason */
        ASSERT_EQ(tpv("garbage", &s, reason, sizeof(reason)), -EINVAL);
        ASSERT_STREQ(reason, "not JSON");
        ASSERT_EQ(tpv("{\"class\":\"TPV\",\"mode\":3} trailing", &s, reason, sizeof(reason)),
                  -EINVAL);
        ASSERT_STREQ(reason, "not JSON");
        ASSERT_EQ(tpv("[1,2]", &s, reason, sizeof(reason)), -EINVAL);
        ASSERT_STREQ(reason, "not a JSON object");
        ASSERT_EQ(tpv("{\"mode\":3}", &s, reason, sizeof(reason)), -EINVAL);
        ASSERT_STREQ(reason, "a report without its class");
        ASSERT_EQ(tpv("{\"class\":\"TPV\",\"mode\":\"3\"}", &s, reason, sizeof(reason)), -EINVAL);
        ASSERT_STREQ(reason, "a TPV whose mode is not a number");
        ASSERT_EQ(tpv("{\"class\":\"TPV\",\"mode\":7}", &s, reason, sizeof(reason)), -EINVAL);
        ASSERT_STREQ(reason, "a TPV of mode 7");
        ASSERT_EQ(
            tpv("{\"class\":\"TPV\",\"mode\":3,\"time\":1796531400}", &s, reason, sizeof(reason)),
            -EINVAL);
        ASSERT_STREQ(reason, "a TPV whose time is not a string");
        static const char *const bad_times[] = {
            "2026-12-06 04:30:00Z",  "2026-12-06T04:30:00",
            "2026-12-06T04:30:00.Z", "2026-12-06T04:30:00+01:00",
            "1970-01-01T00:00:00Z",  "9999-01-01T00:00:00Z",
            "2026-13-06T04:30:00Z",  "",
        };
        for (size_t i = 0; i < sizeof(bad_times) / sizeof(bad_times[0]); i++) {
                char line[200];
                snprintf(line, sizeof(line), "{\"class\":\"TPV\",\"mode\":3,\"time\":\"%s\"}",
                         bad_times[i]);
                ASSERT_EQ(tpv(line, &s, reason, sizeof(reason)), -EINVAL);
                ASSERT_STREQ(reason, "a TPV whose time is not ISO 8601 UTC");
        }
        ASSERT_EQ(tpv("{\"class\":\"TPV\",\"mode\":3,\"time\":\"2026-12-06T04:30:00Z\","
                      "\"ept\":-1}",
                      &s, reason, sizeof(reason)),
                  -EINVAL);
        ASSERT_STREQ(reason, "a TPV whose ept is out of range");
        ASSERT_EQ(tpv("{\"class\":\"TPV\",\"mode\":3,\"time\":\"2026-12-06T04:30:00Z\","
                      "\"ept\":\"x\"}",
                      &s, reason, sizeof(reason)),
                  -EINVAL);
        ASSERT_STREQ(reason, "a TPV whose ept is not a number");
        /* invalid UTF-8 inside a string */
        ASSERT_EQ(tpv("{\"class\":\"TPV\xff\"}", &s, reason, sizeof(reason)), -EINVAL);
        ASSERT_STREQ(reason, "not JSON");
        ASSERT_EQ(gpsd_tpv_to_sample("{\"class\0\":1}", 13, BOOT, &s, reason, sizeof(reason)),
                  -EINVAL);
        ASSERT_STREQ(reason, "not a line of JSON");
}

TEST(gpsd_address)
{
        struct sockaddr_storage sa;
        socklen_t len;

        ASSERT_OK(gpsd_address_parse("127.0.0.1:2947", &sa, &len));
        ASSERT_EQ(sa.ss_family, AF_INET);
        ASSERT_EQ(ntohs(((struct sockaddr_in *)&sa)->sin_port), 2947);
        ASSERT_OK(gpsd_address_parse("[::1]:2947", &sa, &len));
        ASSERT_EQ(sa.ss_family, AF_INET6);
        ASSERT_EQ(len, sizeof(struct sockaddr_in6));
        static const char *const bad[] = {
            "",         "127.0.0.1", "localhost:2947", "127.0.0.1:0", "127.0.0.1:65536",
            "::1:2947", "[::1]2947", "127.0.0.1:29x7", "127.0.0.1:",  ":2947",
            "[::1]:-1",
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                ASSERT_EQ(gpsd_address_parse(bad[i], &sa, &len), -EINVAL);
}
