/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include "roam-macro.h"
#include "roamd-chrony-cmd.h"
#include "roamd-chrony-tracking.h"
#include "test.h"

/* What Debian's chronyd 4.3 (-x, in a network namespace of its own) answered, byte for byte,
 * with two SOCK refclocks fed the same time, GPS (stratum 0) and ROAM (`stratum 1`,
 * `combinelimit 1000`), and an unreachable `server 192.0.2.9`; `chronyc -n sources` printed
 *   #* GPS        0   0   377 ...
 *   #+ ROAM       1   0   377 ...
 *   ^? 192.0.2.9  0   0     0 ...
 * The answers to REQ_N_SOURCES (sequence 0x11), REQ_SOURCE_DATA 0, 1, 2 (sequences 0x20-0x22)
 * and 99 (0x30), and REQ_TRACKING (0x40). */
static const uint8_t real_n[] = {
    0x06, 0x02, 0x00, 0x00, 0x00, 0x0e, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x11, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03,
};
static const uint8_t real_gps[] = {
    0x06, 0x02, 0x00, 0x00, 0x00, 0x0f, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x20, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x47, 0x50, 0x53, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0xff, 0x00, 0x00, 0x00, 0x02,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xdc, 0x86, 0x48, 0xeb,
};
static const uint8_t real_roam[] = {
    0x06, 0x02, 0x00, 0x00, 0x00, 0x0f, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x21, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x52, 0x4f, 0x41, 0x4d,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x04, 0x00, 0x02, 0x00, 0x00, 0x00, 0xff, 0x00, 0x00, 0x00, 0x02,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xdc, 0x86, 0x48, 0xeb,
};
static const uint8_t real_server[] = {
    0x06, 0x02, 0x00, 0x00, 0x00, 0x0f, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x22, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xc0, 0x00, 0x02, 0x09,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};
static const uint8_t real_nosuch[] = {
    0x06, 0x02, 0x00, 0x00, 0x00, 0x0f, 0x00, 0x01, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x30, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};
static const uint8_t real_tracking[] = {
    0x06, 0x02, 0x00, 0x00, 0x00, 0x21, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x47, 0x50,
    0x53, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x6b, 0x15, 0xf0, 0x0b, 0x0f, 0x98, 0xeb, 0x2b, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xda, 0xbd,
    0xd0, 0x02, 0xc8, 0x89, 0x70, 0x5f, 0xde, 0xbf, 0x30, 0x23, 0x04, 0x80, 0x84, 0x96,
};

TEST(chrony_cmd_sources_request_layout)
{
        static const uint8_t want_n[CHRONY_CMD_N_SOURCES_SIZE] = {6, 1, 0, 0, 0, 14,
                                                                  0, 1, 1, 2, 3, 4};
        static const uint8_t want_sd[CHRONY_CMD_SOURCE_DATA_SIZE] = {
            6, 1, 0, 0, 0, 15, 0, 0, 0xa, 0xb, 0xc, 0xd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2,
        };
        uint8_t n[CHRONY_CMD_N_SOURCES_SIZE], sd[CHRONY_CMD_SOURCE_DATA_SIZE];

        memset(n, 0xee, sizeof(n));
        memset(sd, 0xee, sizeof(sd));
        chrony_cmd_n_sources(0x01020304, 1, n);
        chrony_cmd_source_data(0x0a0b0c0d, 0, 258, sd);
        ASSERT_TRUE(memcmp(n, want_n, sizeof(n)) == 0);
        ASSERT_TRUE(memcmp(sd, want_sd, sizeof(sd)) == 0);
        /* the lengths chrony's pktlength.c wants: the replies' */
        ASSERT_EQ(sizeof(real_n), CHRONY_CMD_N_SOURCES_SIZE);
        ASSERT_EQ(sizeof(real_gps), CHRONY_CMD_SOURCE_DATA_SIZE);
}

TEST(chrony_cmd_sources_real_replies)
{
        ChronyCmdStatus st = _CHRONY_CMD_STATUS_INVALID;
        ChronySource s;
        ChronyTracking t;
        uint32_t n = 0;

        ASSERT_OK(chrony_cmd_parse_n_sources(real_n, sizeof(real_n), 0x11, &st, &n));
        ASSERT_EQ(st, CHRONY_CMD_SUCCESS);
        ASSERT_EQ(n, 3);

        ASSERT_OK(chrony_cmd_parse_source_data(real_gps, sizeof(real_gps), 0x20, &st, &s));
        ASSERT_EQ(st, CHRONY_CMD_SUCCESS);
        ASSERT_EQ(s.family, AF_INET);
        ASSERT_EQ(s.ref_id, 0x47505300); /* "GPS" */
        ASSERT_EQ(s.mode, CHRONY_SOURCE_REFCLOCK);
        ASSERT_EQ(s.state, CHRONY_SOURCE_SELECTED);
        ASSERT_EQ(s.stratum, 0);
        ASSERT_EQ(s.poll, 0);
        ASSERT_EQ(s.reachability, 0xff);
        ASSERT_EQ(s.since_sample, 2);
        ASSERT_TRUE(s.latest_meas == 0 && s.orig_latest_meas == 0);
        ASSERT_TRUE(s.latest_meas_err > 0.9e-6 && s.latest_meas_err < 1.1e-6);

        ASSERT_OK(chrony_cmd_parse_source_data(real_roam, sizeof(real_roam), 0x21, &st, &s));
        ASSERT_EQ(s.ref_id, CHRONY_REFID_ROAM);
        ASSERT_EQ(s.mode, CHRONY_SOURCE_REFCLOCK);
        ASSERT_EQ(s.state, CHRONY_SOURCE_COMBINED);
        ASSERT_EQ(s.stratum, 1);

        ASSERT_OK(chrony_cmd_parse_source_data(real_server, sizeof(real_server), 0x22, &st, &s));
        ASSERT_EQ(s.family, AF_INET);
        ASSERT_TRUE(memcmp(s.addr, (uint8_t[]){192, 0, 2, 9}, 4) == 0);
        ASSERT_EQ(s.mode, CHRONY_SOURCE_CLIENT);
        ASSERT_EQ(s.state, CHRONY_SOURCE_NONSELECTABLE);
        ASSERT_EQ(s.reachability, 0);

        /* an index beyond its sources */
        ASSERT_OK(chrony_cmd_parse_source_data(real_nosuch, sizeof(real_nosuch), 0x30, &st, &s));
        ASSERT_EQ(st, CHRONY_CMD_NO_SUCH_SOURCE);
        ASSERT_STREQ(chrony_cmd_status_to_string(st), "no such source");

        /* the tracking: GPS, a refclock, not roamd's */
        ASSERT_OK(chrony_cmd_parse_tracking(real_tracking, sizeof(real_tracking), 0x40, &st, &t));
        ASSERT_EQ(t.ref_id, 0x47505300);
        ASSERT_EQ(t.stratum, 1);
}

TEST(chrony_cmd_sources_strays_and_cuts)
{
        uint8_t b[CHRONY_CMD_SOURCE_DATA_SIZE];
        ChronyCmdStatus st = _CHRONY_CMD_STATUS_INVALID;
        ChronySource s;
        uint32_t n;

        /* another sequence, another command, cut short: not the answer */
        ASSERT_EQ(chrony_cmd_parse_n_sources(real_n, sizeof(real_n), 0x12, &st, &n), -EBADMSG);
        ASSERT_EQ(chrony_cmd_parse_n_sources(real_gps, sizeof(real_gps), 0x20, &st, &n), -EBADMSG);
        ASSERT_EQ(chrony_cmd_parse_n_sources(real_n, sizeof(real_n) - 1, 0x11, &st, &n), -EBADMSG);
        ASSERT_EQ(chrony_cmd_parse_source_data(real_gps, sizeof(real_gps) - 1, 0x20, &st, &s),
                  -EBADMSG);
        ASSERT_EQ(chrony_cmd_parse_source_data(real_n, sizeof(real_n), 0x11, &st, &s), -EBADMSG);
        ASSERT_EQ(chrony_cmd_parse_source_data(real_gps, 27, 0x20, &st, &s), -EBADMSG);

        /* another protocol version */
        memcpy(b, real_gps, sizeof(b));
        b[0] = 5;
        ASSERT_EQ(chrony_cmd_parse_source_data(b, sizeof(b), 0x20, &st, &s), -EPROTO);
        ASSERT_EQ(st, CHRONY_CMD_BAD_VERSION);

        /* success with the empty reply: chronyd had no report for that source */
        memcpy(b, real_gps, sizeof(b));
        b[7] = 1; /* RPY_NULL */
        ASSERT_EQ(chrony_cmd_parse_source_data(b, 28, 0x20, &st, &s), -ENODATA);

        /* a state and a mode roamd does not know (a newer chronyd's), an IPv6 server, a name
         * not resolved yet (IPADDR_ID) */
        memcpy(b, real_gps, sizeof(b));
        b[28 + 25] = 6, b[28 + 27] = 3;
        ASSERT_OK(chrony_cmd_parse_source_data(b, sizeof(b), 0x20, &st, &s));
        ASSERT_EQ(s.state, _CHRONY_SOURCE_STATE_INVALID);
        ASSERT_EQ(s.mode, _CHRONY_SOURCE_MODE_INVALID);
        ASSERT_TRUE(chrony_source_state_to_string(s.state) == NULL);
        b[28 + 17] = 2;
        ASSERT_OK(chrony_cmd_parse_source_data(b, sizeof(b), 0x20, &st, &s));
        ASSERT_EQ(s.family, AF_INET6);
        b[28 + 17] = 3;
        ASSERT_OK(chrony_cmd_parse_source_data(b, sizeof(b), 0x20, &st, &s));
        ASSERT_EQ(s.family, AF_UNSPEC);
        ASSERT_EQ(s.ref_id, 0x47505300);
        b[28 + 17] = 0;
        ASSERT_OK(chrony_cmd_parse_source_data(b, sizeof(b), 0x20, &st, &s));
        ASSERT_EQ(s.ref_id, 0);

        /* chronyd refusing: every status said in words */
        memcpy(b, real_n, sizeof(real_n));
        b[9] = 2; /* STT_UNAUTH */
        ASSERT_OK(chrony_cmd_parse_n_sources(b, 28, 0x11, &st, &n));
        ASSERT_EQ(st, CHRONY_CMD_UNAUTHORISED);
}

static ChronySource src(ChronySourceMode mode, ChronySourceState state, uint32_t refid)
{
        ChronySource s = {.family = AF_INET, .mode = mode, .state = state, .ref_id = refid};

        s.addr[0] = (uint8_t)(refid >> 24), s.addr[1] = (uint8_t)(refid >> 16);
        s.addr[2] = (uint8_t)(refid >> 8), s.addr[3] = (uint8_t)refid;
        return s;
}

#define SERVER(st) src(CHRONY_SOURCE_CLIENT, CHRONY_SOURCE_##st, 0xc0000201)
#define ROAM(st)   src(CHRONY_SOURCE_REFCLOCK, CHRONY_SOURCE_##st, CHRONY_REFID_ROAM)

/* The rule (docs/time.md): chronyd's time is no witness beside roamd while roamd's own
 * refclock is selected or combined in it; any other state leaves it out. */
TEST(chrony_sources_rule)
{
        static const char *const combined = "chronyd combines roamd's own reference clock "
                                            "(refid ROAM) with its NTP sources: its time is "
                                            "partly roamd's, echoed back";
        static const char *const selected = "chronyd selects roamd's own reference clock "
                                            "(refid ROAM): it would echo roamd's time";
        const struct {
                const char *what;
                ChronySource s[3];
                size_t n;
                const char *reason; /* NULL: a witness */
                const char *words;
        } cases[] = {
            {"the server alone", {SERVER(SELECTED)}, 1, NULL, "1 NTP source"},
            {"ROAM combined", {SERVER(SELECTED), ROAM(COMBINED)}, 2, combined, NULL},
            {"ROAM selected", {ROAM(SELECTED), SERVER(COMBINED)}, 2, selected, NULL},
            {"ROAM noselect", {SERVER(SELECTED), ROAM(NONSELECTABLE)}, 2, NULL, "1 NTP source"},
            {"ROAM left out", {SERVER(SELECTED), ROAM(NOT_COMBINED)}, 2, NULL, "1 NTP source"},
            {"ROAM a falseticker",
             {SERVER(SELECTED), ROAM(FALSETICKER), SERVER(COMBINED)},
             3,
             NULL,
             "2 NTP sources"},
            {"ROAM too variable",
             {SERVER(SELECTED), ROAM(JITTERY), SERVER(NONSELECTABLE)},
             3,
             NULL,
             "2 NTP sources, 1 used"},
            /* a second ROAM refclock: the one used counts, whichever comes first */
            {"two ROAMs",
             {ROAM(COMBINED), ROAM(NONSELECTABLE), SERVER(SELECTED)},
             3,
             combined,
             NULL},
            /* an NTP server whose address spells ROAM is a server, not roamd */
            {"a server at 82.79.65.77",
             {src(CHRONY_SOURCE_CLIENT, CHRONY_SOURCE_SELECTED, CHRONY_REFID_ROAM)},
             1,
             NULL,
             "1 NTP source"},
            {"an unknown state",
             {SERVER(SELECTED),
              src(CHRONY_SOURCE_REFCLOCK, _CHRONY_SOURCE_STATE_INVALID, CHRONY_REFID_ROAM)},
             2,
             NULL,
             "1 NTP source"},
            {"no sources", {}, 0, NULL, "0 NTP sources"},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                ChronySources s = CHRONY_SOURCES_NONE;
                char reason[160] = "", words[64];
                int r;

                for (size_t j = 0; j < cases[i].n; j++)
                        chrony_sources_add(&s, &cases[i].s[j]);
                r = chrony_sources_check(&s, reason, sizeof(reason));
                if (cases[i].reason ? r != -EINVAL || strcmp(reason, cases[i].reason) != 0 : r != 0)
                        TEST_FAIL("%s: %d '%s'", cases[i].what, r, reason);
                if (cases[i].words &&
                    strcmp(chrony_sources_to_string(&s, words, sizeof(words)), cases[i].words) != 0)
                        TEST_FAIL("%s: '%s'", cases[i].what, words);
        }
}

/* The real replies above through the rule: GPS selected, ROAM combined: refused. */
TEST(chrony_sources_rule_real)
{
        const uint8_t *replies[] = {real_gps, real_roam, real_server};
        ChronySources sum = CHRONY_SOURCES_NONE;
        ChronyCmdStatus st;
        ChronySource s;
        char reason[160], words[64];

        for (size_t i = 0; i < ELEMENTSOF(replies); i++) {
                ASSERT_OK(chrony_cmd_parse_source_data(replies[i], CHRONY_CMD_SOURCE_DATA_SIZE,
                                                       0x20 + (uint32_t)i, &st, &s));
                chrony_sources_add(&sum, &s);
        }
        ASSERT_EQ(chrony_sources_check(&sum, reason, sizeof(reason)), -EINVAL);
        ASSERT_TRUE(strstr(reason, "combines roamd's own reference clock") != NULL);
        ASSERT_STREQ(chrony_sources_to_string(&sum, words, sizeof(words)), "1 NTP source, 0 used");
}
