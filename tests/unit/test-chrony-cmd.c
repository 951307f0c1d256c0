/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "roamd-chrony-cmd.h"
#include "roamd-chrony-tracking.h"
#include "roamd-ntp-sources.h"
#include "test.h"

/* "reload sources" as candm.h lays it out (tests/world/test_time.py has a real chronyd answer
 * it): version 6, request, command 70, attempt, sequence, then zeros up to the 28 bytes of the
 * reply. */
TEST(chrony_cmd_request_layout)
{
        static const uint8_t want[CHRONY_CMD_REQUEST_SIZE] = {
            6, 1, 0, 0, 0, 70, 0, 2, 1, 2, 3, 4,
        };
        uint8_t buf[CHRONY_CMD_REQUEST_SIZE];

        memset(buf, 0xee, sizeof(buf));
        chrony_cmd_reload_sources(0x01020304, 2, buf);
        ASSERT_TRUE(memcmp(buf, want, sizeof(want)) == 0);
}

static size_t reply(uint8_t *b, uint8_t version, uint16_t command, uint16_t code, uint16_t status,
                    uint32_t seq)
{
        memset(b, 0, 28);
        b[0] = version, b[1] = 2;
        b[4] = (uint8_t)(command >> 8), b[5] = (uint8_t)command;
        b[6] = (uint8_t)(code >> 8), b[7] = (uint8_t)code;
        b[8] = (uint8_t)(status >> 8), b[9] = (uint8_t)status;
        b[16] = (uint8_t)(seq >> 24), b[17] = (uint8_t)(seq >> 16), b[18] = (uint8_t)(seq >> 8),
        b[19] = (uint8_t)seq;
        return 28;
}

TEST(chrony_cmd_replies)
{
        static const struct {
                uint8_t version;
                uint16_t command, code, status;
                uint32_t seq;
                size_t cut;
                int r;
                ChronyCmdStatus st;
        } cases[] = {
            {6, 70, 1, 0, 7, 0, 0, CHRONY_CMD_SUCCESS},
            {6, 70, 1, 1, 7, 0, 0, CHRONY_CMD_FAILED},
            {6, 70, 1, 2, 7, 0, 0, CHRONY_CMD_UNAUTHORISED},
            {6, 70, 1, 3, 7, 0, 0, CHRONY_CMD_INVALID}, /* chrony 3.x: no such command */
            {6, 70, 1, 18, 7, 0, 0, CHRONY_CMD_BAD_VERSION},
            {6, 70, 1, 19, 7, 0, 0, CHRONY_CMD_BAD_LENGTH},
            {6, 70, 1, 77, 7, 0, 0, CHRONY_CMD_OTHER},
            {5, 70, 1, 18, 7, 0, -EPROTO, CHRONY_CMD_BAD_VERSION},
            {6, 70, 1, 0, 8, 0, -EBADMSG, 0},  /* another request's answer */
            {6, 33, 1, 0, 7, 0, -EBADMSG, 0},  /* another command's */
            {6, 70, 5, 0, 7, 0, -EBADMSG, 0},  /* a success must be the empty reply */
            {6, 70, 1, 0, 7, 1, -EBADMSG, 0},  /* cut short */
            {6, 70, 1, 0, 7, 27, -EBADMSG, 0}, /* only a byte */
        };
        uint8_t buf[64];

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                ChronyCmdStatus st = _CHRONY_CMD_STATUS_INVALID;
                size_t n = reply(buf, cases[i].version, cases[i].command, cases[i].code,
                                 cases[i].status, cases[i].seq);
                int r = chrony_cmd_parse_reply(buf, n - cases[i].cut, 7, &st);
                if (r != cases[i].r || (r >= 0 && st != cases[i].st) ||
                    (r == -EPROTO && st != cases[i].st))
                        TEST_FAIL("case %zu: %d %d", i, r, st);
        }
        buf[1] = 1; /* a request is no reply */
        ASSERT_EQ(chrony_cmd_parse_reply(buf, 28, 7, &(ChronyCmdStatus){0}), -EBADMSG);
        for (int s = 0; s < _CHRONY_CMD_STATUS_MAX; s++)
                ASSERT_TRUE(chrony_cmd_status_to_string(s) != NULL);
}

/* "tracking": command 33, zero-padded to the 104 bytes of RPY_Tracking's reply. */
TEST(chrony_cmd_tracking_request_layout)
{
        uint8_t want[CHRONY_CMD_TRACKING_SIZE] = {6, 1, 0, 0, 0, 33, 0, 0, 0xde, 0xad, 0xbe, 0xef};
        uint8_t buf[CHRONY_CMD_TRACKING_SIZE];

        ASSERT_EQ(CHRONY_CMD_TRACKING_SIZE, 104);
        memset(buf, 0xee, sizeof(buf));
        chrony_cmd_tracking(0xdeadbeef, 0, buf);
        ASSERT_TRUE(memcmp(buf, want, sizeof(want)) == 0);
}

/* chrony's Float, the words chrony's UTI_FloatHostToNetwork() writes for these values (and
 * the edges of the format). */
TEST(chrony_cmd_float)
{
        static const struct {
                uint32_t word;
                double value;
        } cases[] = {
            {0x00000000, 0.0},
            {0x04800000, 1.0},
            {0x03000000, -1.0},
            {0x02800000, 0.5},
            {0x06c00000, 3.0},
            {0x1d1f0000, -7200.0},
            {0xec83126f, 0.0002500000118743628},
            {0xf6cccccd, 0.012500000186264515},
            {0xf735bacd, -0.012345599941909313},
            {0xfecccccd, 0.20000000298023224},
            /* the largest, smallest and least magnitudes */
            {0x7effffff, 16777215.0 * 274877906944.0},         /* (2^24 - 1) * 2^38 */
            {0x7f000000, -16777216.0 * 274877906944.0},        /* -2^24 * 2^38 */
            {0x80000001, 1.0 / 618970019642690137449562112.0}, /* 2^-89 */
            {0x81ffffff, -1.0 / 618970019642690137449562112.0},
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                if (chrony_cmd_float(cases[i].word) != cases[i].value)
                        TEST_FAIL("case %zu: %.17g", i, chrony_cmd_float(cases[i].word));
}

static void put32(uint8_t *p, uint32_t v)
{
        p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8),
        p[3] = (uint8_t)v;
}

/* A tracking reply as chronyd's handle_tracking() writes it: synchronised to 192.0.2.1,
 * stratum 3, the clock 12.5 ms slow, root delay 0.5 s, root dispersion 0.2 s. */
static size_t tracking_reply(uint8_t *b, uint32_t seq)
{
        uint8_t *d = b + 28;

        memset(b, 0, CHRONY_CMD_TRACKING_SIZE);
        reply(b, 6, 33, 5, 0, seq);
        put32(d, 0xc0000201);                     /* ref_id */
        d[4] = 192, d[5] = 0, d[6] = 2, d[7] = 1; /* ip_addr.addr.in4 */
        d[21] = 1;                                /* ip_addr.family: IPADDR_INET4 */
        d[25] = 3;                                /* stratum */
        d[27] = 0;                                /* leap_status: normal */
        put32(d + 28, 0);                         /* ref_time: high, low, nsec */
        put32(d + 32, 1765000000);
        put32(d + 36, 250000000);
        put32(d + 40, 0xf6cccccd); /* current_correction 0.0125 */
        put32(d + 44, 0xf735bacd); /* last_offset */
        put32(d + 48, 0xec83126f); /* rms_offset */
        put32(d + 52, 0x1d1f0000); /* freq_ppm */
        put32(d + 56, 0x00000000); /* resid_freq_ppm */
        put32(d + 60, 0x04800000); /* skew_ppm */
        put32(d + 64, 0x02800000); /* root_delay 0.5 */
        put32(d + 68, 0xfecccccd); /* root_dispersion 0.2 */
        put32(d + 72, 0x06c00000); /* last_update_interval */
        return CHRONY_CMD_TRACKING_SIZE;
}

TEST(chrony_cmd_tracking_reply)
{
        uint8_t buf[160];
        ChronyTracking t;
        ChronyCmdStatus st = _CHRONY_CMD_STATUS_INVALID;
        size_t n = tracking_reply(buf, 9);

        ASSERT_OK(chrony_cmd_parse_tracking(buf, n, 9, &st, &t));
        ASSERT_EQ(st, CHRONY_CMD_SUCCESS);
        ASSERT_EQ(t.ref_id, 0xc0000201u);
        ASSERT_EQ(t.family, AF_INET);
        ASSERT_TRUE(memcmp(t.addr, (uint8_t[]){192, 0, 2, 1}, 4) == 0);
        ASSERT_EQ(t.stratum, 3);
        ASSERT_EQ(t.leap_status, 0);
        ASSERT_EQ(t.ref_time_sec, 1765000000u);
        ASSERT_EQ(t.ref_time_nsec, 250000000u);
        ASSERT_TRUE(t.current_correction == 0.012500000186264515);
        ASSERT_TRUE(t.last_offset == -0.012345599941909313);
        ASSERT_TRUE(t.rms_offset == 0.0002500000118743628);
        ASSERT_TRUE(t.freq_ppm == -7200.0 && t.resid_freq_ppm == 0.0 && t.skew_ppm == 1.0);
        ASSERT_TRUE(t.root_delay == 0.5 && t.root_dispersion == 0.20000000298023224);
        ASSERT_TRUE(t.last_update_interval == 3.0);

        /* IPv6, a refclock (no address), an unresolved source's id */
        buf[28 + 21] = 2;
        memcpy(buf + 28 + 4, (uint8_t[]){0x20, 0x01, 0x0d, 0xb8, [15] = 1}, 16);
        ASSERT_OK(chrony_cmd_parse_tracking(buf, n, 9, &st, &t));
        ASSERT_EQ(t.family, AF_INET6);
        ASSERT_EQ(t.addr[1], 0x01);
        ASSERT_EQ(t.addr[15], 1);
        buf[28 + 21] = 0;
        ASSERT_OK(chrony_cmd_parse_tracking(buf, n, 9, &st, &t));
        ASSERT_EQ(t.family, AF_UNSPEC);
        buf[28 + 21] = 3;
        ASSERT_OK(chrony_cmd_parse_tracking(buf, n, 9, &st, &t));
        ASSERT_EQ(t.family, AF_UNSPEC);
        /* a 32-bit time's high word, nanoseconds beyond a second */
        put32(buf + 28 + 28, 0x7fffffff);
        put32(buf + 28 + 36, 2000000000);
        ASSERT_OK(chrony_cmd_parse_tracking(buf, n, 9, &st, &t));
        ASSERT_EQ(t.ref_time_sec, 1765000000u);
        ASSERT_EQ(t.ref_time_nsec, 999999999u);
        put32(buf + 28 + 28, 1);
        ASSERT_OK(chrony_cmd_parse_tracking(buf, n, 9, &st, &t));
        ASSERT_EQ(t.ref_time_sec, (1ull << 32) + 1765000000u);
}

TEST(chrony_cmd_tracking_refusals_and_strays)
{
        static const struct {
                uint8_t version;
                uint16_t command, code, status;
                uint32_t seq;
                size_t len;
                int r;
                ChronyCmdStatus st;
        } cases[] = {
            {6, 33, 5, 0, 9, 104, 0, CHRONY_CMD_SUCCESS},
            {6, 33, 5, 0, 9, 160, 0, CHRONY_CMD_SUCCESS}, /* longer: a newer chrony's */
            {6, 33, 1, 1, 9, 28, 0, CHRONY_CMD_FAILED},   /* a refusal is the empty reply */
            {6, 33, 1, 2, 9, 28, 0, CHRONY_CMD_UNAUTHORISED},
            {6, 33, 1, 3, 9, 28, 0, CHRONY_CMD_INVALID},
            {6, 33, 1, 18, 9, 28, 0, CHRONY_CMD_BAD_VERSION},
            {6, 33, 1, 19, 9, 28, 0, CHRONY_CMD_BAD_LENGTH},
            {6, 33, 1, 99, 9, 28, 0, CHRONY_CMD_OTHER},
            {5, 33, 1, 18, 9, 28, -EPROTO, CHRONY_CMD_BAD_VERSION},
            {6, 33, 5, 0, 9, 103, -EBADMSG, 0}, /* cut short */
            {6, 33, 5, 0, 9, 28, -EBADMSG, 0},  /* the header only */
            {6, 33, 5, 0, 9, 27, -EBADMSG, 0},
            {6, 33, 1, 0, 9, 104, -EBADMSG, 0}, /* a success must be RPY_TRACKING */
            {6, 70, 5, 0, 9, 104, -EBADMSG, 0}, /* another command's */
            {6, 33, 5, 0, 8, 104, -EBADMSG, 0}, /* another request's */
        };
        uint8_t buf[160];

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                ChronyCmdStatus st = _CHRONY_CMD_STATUS_INVALID;
                ChronyTracking t;
                int r;

                memset(buf, 0, sizeof(buf));
                tracking_reply(buf, cases[i].seq);
                reply(buf, cases[i].version, cases[i].command, cases[i].code, cases[i].status,
                      cases[i].seq);
                r = chrony_cmd_parse_tracking(buf, cases[i].len, 9, &st, &t);
                if (r != cases[i].r || (r != -EBADMSG && st != cases[i].st))
                        TEST_FAIL("case %zu: %d %d", i, r, st);
        }
        /* the reload's parser takes no tracking answer, and the other way round */
        tracking_reply(buf, 9);
        ASSERT_EQ(chrony_cmd_parse_reply(buf, 104, 9, &(ChronyCmdStatus){0}), -EBADMSG);
        reply(buf, 6, 70, 1, 0, 9);
        ASSERT_EQ(
            chrony_cmd_parse_tracking(buf, 28, 9, &(ChronyCmdStatus){0}, &(ChronyTracking){0}),
            -EBADMSG);
}

/* What Debian's chronyd 4.3 (-x, `local stratum 8`, no source) answered this request,
 * byte for byte: it serves its own clock, which is no witness. */
TEST(chrony_cmd_tracking_real_reply)
{
        static const uint8_t
            real[CHRONY_CMD_TRACKING_SIZE] =
                {
                    0x06, 0x02, 0x00, 0x00, 0x00, 0x21, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00,
                    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x09, 0x00, 0x00, 0x00, 0x00,
                    0x00, 0x00, 0x00, 0x00, 0x7f, 0x7f, 0x01, 0x01, 0x00, 0x00, 0x00, 0x00,
                    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                    0x00, 0x00, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                    0x6b, 0x15, 0xe9, 0xbf, 0x02, 0xf2, 0xae, 0x82, /* then nine Floats of 0 */
                };
        ChronyTracking t;
        ChronyCmdStatus st;
        TimeSample s;
        char reason[160];

        ASSERT_OK(chrony_cmd_parse_tracking(real, sizeof(real), 9, &st, &t));
        ASSERT_EQ(st, CHRONY_CMD_SUCCESS);
        ASSERT_EQ(t.ref_id, CHRONY_REFID_LOCAL);
        ASSERT_EQ(t.family, AF_UNSPEC);
        ASSERT_EQ(t.stratum, 8);
        ASSERT_EQ(t.leap_status, 0);
        ASSERT_EQ(t.ref_time_sec, 0x6b15e9bfu);
        ASSERT_EQ(t.ref_time_nsec, 0x02f2ae82u);
        ASSERT_TRUE(t.current_correction == 0 && t.root_delay == 0 && t.root_dispersion == 0);
        ASSERT_EQ(chrony_tracking_to_sample(&t, 1, 1, 1, &s, reason, sizeof(reason)), -EINVAL);
        ASSERT_STREQ(reason, "chronyd serves its own clock (local stratum 8): no reference");
}

static ChronyTracking synced(void)
{
        return (ChronyTracking){
            .ref_id = 0xc0000201,
            .family = AF_INET,
            .addr = {192, 0, 2, 1},
            .stratum = 3,
            .current_correction = 0.0125,
            .root_delay = 0.5,
            .root_dispersion = 0.2,
        };
}

#define NOW_RT 1765000000000000ULL
#define NOW_BT 5000000ULL

TEST(chrony_tracking_sample)
{
        ChronyTracking t = synced();
        TimeSample s;
        char reason[160] = "", ref[96];

        /* the clock 12.5 ms slow of chronyd's time: true = clock + correction; error = root
         * delay / 2 + root dispersion + the exchange's 2 ms */
        ASSERT_OK(chrony_tracking_to_sample(&t, NOW_RT - 2000, NOW_RT, NOW_BT, &s, reason,
                                            sizeof(reason)));
        ASSERT_EQ(s.kind, TIME_SOURCE_CHRONY);
        ASSERT_STREQ(s.witness, "ntp");
        ASSERT_EQ(s.realtime, NOW_RT + 12500);
        ASSERT_EQ(s.error, 450000 + 2000);
        ASSERT_EQ(s.taken, NOW_BT);
        ASSERT_TRUE(!s.lower_bound);
        ASSERT_STREQ(chrony_tracking_reference(&t, ref, sizeof(ref)), "192.0.2.1, stratum 3");

        /* fast: the correction is negative */
        t.current_correction = -1.5;
        ASSERT_OK(
            chrony_tracking_to_sample(&t, NOW_RT, NOW_RT, NOW_BT, &s, reason, sizeof(reason)));
        ASSERT_EQ(s.realtime, NOW_RT - 1500000);
        ASSERT_EQ(s.error, 450000);

        t = synced();
        t.family = AF_INET6;
        memcpy(t.addr, (uint8_t[]){0x20, 0x01, 0x0d, 0xb8, [15] = 1}, 16);
        ASSERT_STREQ(chrony_tracking_reference(&t, ref, sizeof(ref)), "2001:db8::1, stratum 3");
        t = (ChronyTracking){.ref_id = 0x47505300, .family = AF_UNSPEC, .stratum = 1};
        ASSERT_STREQ(chrony_tracking_reference(&t, ref, sizeof(ref)), "GPS, stratum 1");
        t.ref_id = 0x0a1b2c3d; /* not text */
        ASSERT_STREQ(chrony_tracking_reference(&t, ref, sizeof(ref)), "??,=, stratum 1");
        t.ref_id = 0;
        ASSERT_STREQ(chrony_tracking_reference(&t, ref, sizeof(ref)), "00000000, stratum 1");
}

/* Every refusal, with its reason; roamd's own refclock above all (the feedback loop). */
TEST(chrony_tracking_refusals)
{
        static const struct {
                const char *what;
                uint32_t ref_id;
                uint16_t stratum, leap;
                double corr, delay, disp;
                usec_t sent;
                const char *reason;
        } cases[] = {
            {"unsynchronised", 0, 0, 3, 0, 0, 0, NOW_RT,
             "chronyd is not synchronised (leap status 3)"},
            {"roam's refclock", 0x524F414D, 1, 0, 0, 0, 0, NOW_RT,
             "chronyd follows roamd's own reference clock (refid ROAM): it would echo roamd's "
             "time"},
            {"local", 0x7F7F0101, 8, 0, 0, 0, 0, NOW_RT,
             "chronyd serves its own clock (local stratum 8): no reference"},
            {"stratum 0", 0xc0000201, 0, 0, 0, 0, 0, NOW_RT, "chronyd's stratum 0 is not 1 to 15"},
            {"stratum 16", 0xc0000201, 16, 0, 0, 0, 0, NOW_RT,
             "chronyd's stratum 16 is not 1 to 15"},
            {"nan", 0xc0000201, 2, 0, NAN, 0, 0, NOW_RT, "its values are out of range"},
            {"huge", 0xc0000201, 2, 0, 1e12, 0, 0, NOW_RT, "its values are out of range"},
            {"negative delay", 0xc0000201, 2, 0, 0, -1, 0, NOW_RT, "its values are out of range"},
            {"infinite disp", 0xc0000201, 2, 0, 0, 0, INFINITY, NOW_RT,
             "its values are out of range"},
            {"far", 0xc0000201, 2, 0, 0, 2, 15.5, NOW_RT, "its root distance is beyond 16 s"},
            {"clock back", 0xc0000201, 2, 0, 0, 0, 0, NOW_RT + 1,
             "the clock jumped during the exchange"},
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                ChronyTracking t = synced();
                TimeSample s;
                char reason[160] = "";
                int r;

                t.ref_id = cases[i].ref_id;
                t.stratum = cases[i].stratum;
                t.leap_status = cases[i].leap;
                t.current_correction = cases[i].corr;
                t.root_delay = cases[i].delay;
                t.root_dispersion = cases[i].disp;
                r = chrony_tracking_to_sample(&t, cases[i].sent, NOW_RT, NOW_BT, &s, reason,
                                              sizeof(reason));
                if (r != -EINVAL || strcmp(reason, cases[i].reason) != 0)
                        TEST_FAIL("%s: %d '%s'", cases[i].what, r, reason);
        }
}

/* The edges that pass: stratum 15, a root distance of exactly 16 s. */
TEST(chrony_tracking_edges)
{
        ChronyTracking t = synced();
        TimeSample s;
        char reason[160];

        t.stratum = 15;
        t.root_delay = 2, t.root_dispersion = 15;
        ASSERT_OK(
            chrony_tracking_to_sample(&t, NOW_RT, NOW_RT, NOW_BT, &s, reason, sizeof(reason)));
        ASSERT_EQ(s.error, 16000000);
}

TEST(ntp_sources_text)
{
        char *servers[] = {"192.0.2.1", "2001:db8:1::1", "ntp.home.test", "a b", "-x", "$(id)",
                           NULL};
        char *none[] = {"bad name", NULL};
        char *text = NULL;

        ASSERT_OK(ntp_sources_text("wifi0", servers, &text));
        ASSERT_STREQ(text, NTP_SOURCES_MARK " NTP servers of wifi0's DHCP lease (see roamd's "
                                            "docs/time.md)\n"
                                            "server 192.0.2.1 iburst\n"
                                            "server 2001:db8:1::1 iburst\n"
                                            "server ntp.home.test iburst\n");
        free(text);
        ASSERT_OK(ntp_sources_text("wifi0", none, &text));
        ASSERT_TRUE(text == NULL);
        ASSERT_OK(ntp_sources_text("wifi0", NULL, &text));
        ASSERT_TRUE(text == NULL);

        ASSERT_TRUE(ntp_sources_ifname_ok("wifi0"));
        ASSERT_TRUE(ntp_sources_ifname_ok("eth0.100"));
        ASSERT_TRUE(!ntp_sources_ifname_ok(".."));
        ASSERT_TRUE(!ntp_sources_ifname_ok("a/b"));
        ASSERT_TRUE(!ntp_sources_ifname_ok(""));
        ASSERT_TRUE(!ntp_sources_ifname_ok(NULL));
        ASSERT_TRUE(!ntp_sources_ifname_ok("abcdefghijklmnop"));
}

TEST(ntp_sources_verdicts)
{
        ASSERT_TRUE(ntp_sources_verdict_allows(VERDICT_ONLINE, false));
        ASSERT_TRUE(ntp_sources_verdict_allows(VERDICT_LOCAL, false));
        ASSERT_TRUE(ntp_sources_verdict_allows(VERDICT_PARTIAL, false));
        ASSERT_TRUE(!ntp_sources_verdict_allows(VERDICT_PORTAL, true));
        ASSERT_TRUE(!ntp_sources_verdict_allows(VERDICT_OFFLINE, true));
        /* a re-check keeps what was decided */
        ASSERT_TRUE(ntp_sources_verdict_allows(VERDICT_CHECKING, true));
        ASSERT_TRUE(!ntp_sources_verdict_allows(VERDICT_CHECKING, false));
}
