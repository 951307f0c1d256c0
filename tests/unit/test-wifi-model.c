/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "roam-macro.h"
#include "roam-wifi.h"
#include "test.h"

/* tui/model/roam-wifi.c: SSIDs from the radio made safe for a terminal, signal bars that
 * agree with the words, security in words, join results and their exit codes, and GetNetworks
 * read from a message sd-bus builds (hostile and oversized SSIDs included). */

static char *shown(const char *bytes, size_t n)
{
        char *out = NULL;

        if (wifi_ssid_display((const uint8_t *)bytes, n, &out) < 0)
                return NULL;
        return out;
}

#define ASSERT_SHOWN(bytes, n, expected)                                                           \
        do {                                                                                       \
                char *_s = shown(bytes, n);                                                        \
                ASSERT_STREQ(_s, expected);                                                        \
                free(_s);                                                                          \
        } while (0)

TEST(ssid_display)
{
        ASSERT_SHOWN("Home", 4, "Home");
        ASSERT_SHOWN("", 0, "(hidden network)");
        /* UTF-8 stays */
        ASSERT_SHOWN("Caf\xc3\xa9 \xe2\x98\x95", 9, "Caf\xc3\xa9 \xe2\x98\x95");
        /* ESC, BEL and NUL as '?': nothing reaches the terminal as a control */
        ASSERT_SHOWN("\x1b[31mA\x07", 7, "?[31mA?");
        ASSERT_SHOWN("a\0b", 3, "a?b");
        /* a right-to-left override and a zero-width space: visible, as '?' */
        ASSERT_SHOWN("evil\xe2\x80\xaegpj.exe", 14, "evil?gpj.exe");
        ASSERT_SHOWN("a\xe2\x80\x8b"
                     "b",
                     5, "a?b");
        /* broken UTF-8 as \xNN, byte by byte (an overlong '/', a lone continuation byte) */
        ASSERT_SHOWN("\xff\xfe", 2, "\\xff\\xfe");
        ASSERT_SHOWN("\xc0\xaf", 2, "\\xc0\\xaf");
        ASSERT_SHOWN("x\x80y", 3, "x\\x80y");
        /* a C1 control (CSI) */
        ASSERT_SHOWN("\xc2\x9b"
                     "2J",
                     4, "?2J");
        /* 32 broken bytes: the longest shown */
        ASSERT_SHOWN(
            "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"
            "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff",
            32,
            "\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff"
            "\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff");
}

TEST(signal_bars_agree_with_words)
{
        char bars[32], words[48];

        wifi_signal_bars(-48, true, bars, sizeof(bars));
        ASSERT_STREQ(bars, "\u2582\u2584\u2586\u2588");
        wifi_signal_words(-48, true, words, sizeof(words));
        ASSERT_STREQ(words, "excellent -48");
        wifi_signal_bars(-57, true, bars, sizeof(bars));
        ASSERT_STREQ(bars, "\u2582\u2584\u2586_");
        wifi_signal_bars(-66, false, bars, sizeof(bars));
        ASSERT_STREQ(bars, "||__");
        wifi_signal_bars(-75, false, bars, sizeof(bars));
        ASSERT_STREQ(bars, "|___");
        wifi_signal_words(-75, true, words, sizeof(words));
        ASSERT_STREQ(words, "weak -75");
        wifi_signal_bars(-90, false, bars, sizeof(bars));
        ASSERT_STREQ(bars, "|___");
        wifi_signal_words(-90, true, words, sizeof(words));
        ASSERT_STREQ(words, "very weak -90");
        wifi_signal_bars(0, true, bars, sizeof(bars));
        ASSERT_STREQ(bars, "    ");
        wifi_signal_words(0, false, words, sizeof(words));
        ASSERT_STREQ(words, "out of range");
}

TEST(security_words)
{
        ASSERT_STREQ(wifi_security_words("wpa2/wpa3"), "WPA2/WPA3");
        ASSERT_STREQ(wifi_security_words("owe"), "open, encrypted (OWE)");
        ASSERT_STREQ(wifi_security_words("wep"), "WEP (insecure)");
        ASSERT_STREQ(wifi_security_words("psk"), "password");
        ASSERT_STREQ(wifi_security_words("enterprise"), "enterprise (802.1X)");
        ASSERT_STREQ(wifi_security_words("quantum"), "unknown security");
        ASSERT_STREQ(wifi_security_words(NULL), "");
        ASSERT_STREQ(wifi_security_words(""), "");
        ASSERT_TRUE(!wifi_security_needs_secret("open"));
        ASSERT_TRUE(!wifi_security_needs_secret("owe"));
        ASSERT_TRUE(wifi_security_needs_secret("wpa3"));
}

TEST(join_results)
{
        ASSERT_EQ(wifi_join_result_exit_status(wifi_join_result_from_string("connected")), 0);
        ASSERT_EQ(wifi_join_result_exit_status(wifi_join_result_from_string("wrong-key")), 4);
        ASSERT_EQ(
            wifi_join_result_exit_status(wifi_join_result_from_string("wrong-key-or-out-of-range")),
            4);
        ASSERT_EQ(wifi_join_result_exit_status(wifi_join_result_from_string("auth-failed")), 4);
        ASSERT_EQ(wifi_join_result_exit_status(wifi_join_result_from_string("not-found")), 5);
        ASSERT_EQ(wifi_join_result_exit_status(wifi_join_result_from_string("refused")), 6);
        ASSERT_EQ(wifi_join_result_exit_status(wifi_join_result_from_string("timeout")), 1);
        ASSERT_EQ(wifi_join_result_exit_status(wifi_join_result_from_string("new-thing")), 1);
        ASSERT_STREQ(wifi_join_result_to_string(WIFI_JOIN_NOT_FOUND), "not-found");
}

static int append_network(sd_bus_message *m, const void *ssid, size_t len, int signal,
                          const char *security, bool known, bool connected, bool in_range)
{
        int r = sd_bus_message_open_container(m, 'r', "aysa{sv}");

        if (r >= 0)
                r = sd_bus_message_append_array(m, 'y', ssid, len);
        if (r >= 0)
                r = sd_bus_message_append(m, "s", "a name roam does not show");
        if (r >= 0)
                r = sd_bus_message_append(m, "a{sv}", 5, "signal", "i", signal, "security", "s",
                                          security, "known", "b", known, "connected", "b",
                                          connected, "in-range", "b", in_range);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        return r;
}

static int networks_message(sd_bus *bus, bool oversized, sd_bus_message **ret)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        static const char big[40] = "0123456789012345678901234567890123456789";
        int r;

        r = sd_bus_message_new_signal(bus, &m, "/org/roam1/link/3", ROAM_WIFI_INTERFACE, "X");
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "(aysa{sv})");
        if (r >= 0)
                r = append_network(m, "Office", 6, 0, "wpa3", true, false, false);
        if (r >= 0)
                r = append_network(m, "Neighbour", 9, -66, "wpa2", false, false, true);
        if (r >= 0)
                r = append_network(m, "\x1b]0;pwned\x07", 10, -45, "open", false, false, true);
        if (r >= 0)
                r = append_network(m, "Home", 4, -70, "wpa2/wpa3", true, true, true);
        if (r >= 0)
                r = append_network(m, "Known", 5, -80, "wpa2", true, false, true);
        if (r >= 0 && oversized)
                r = append_network(m, big, sizeof(big), -40, "open", false, false, true);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd_bus_message_seal(m, 1, 0);
        if (r >= 0)
                r = sd_bus_message_rewind(m, true);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(m);
        return 0;
}

TEST(networks_read_and_ordered)
{
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *bad = NULL;
        WifiLink l = {};
        int fds[2];

        /* a bus on one end of a socket pair: enough for sd-bus to build and seal messages */
        ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
        ASSERT_OK(sd_bus_new(&bus));
        ASSERT_OK(sd_bus_set_fd(bus, fds[0], fds[0]));
        ASSERT_OK(sd_bus_start(bus));
        ASSERT_OK(networks_message(bus, false, &m));
        ASSERT_OK(wifi_link_read_networks(m, &l));
        ASSERT_EQ(l.n_networks, 5u);
        /* joined, known in range, the others by bars, known out of range */
        ASSERT_STREQ(l.networks[0].name, "Home");
        ASSERT_STREQ(l.networks[1].name, "Known");
        ASSERT_STREQ(l.networks[2].name, "?]0;pwned?");
        ASSERT_STREQ(l.networks[3].name, "Neighbour");
        ASSERT_STREQ(l.networks[4].name, "Office");
        ASSERT_TRUE(!l.networks[4].in_range);
        ASSERT_TRUE(wifi_link_find(&l, (const uint8_t *)"Neighbour", 9) == &l.networks[3]);
        ASSERT_TRUE(wifi_link_find(&l, (const uint8_t *)"Neigh", 5) == NULL);
        /* an SSID longer than 32 bytes is no SSID: the whole answer is refused, l kept */
        ASSERT_OK(networks_message(bus, true, &bad));
        ASSERT_EQ(wifi_link_read_networks(bad, &l), -EBADMSG);
        ASSERT_EQ(l.n_networks, 5u);
        wifi_link_done(&l);
        close(fds[1]);
}
