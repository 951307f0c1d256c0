/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "roamd-chrony-cmd.h"
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
