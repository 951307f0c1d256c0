/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>

#include "roam-util.h"
#include "roamd-bt-class.h"
#include "roamd-ndef.h"
#include "test.h"

/* Builders for the constructed vectors (layouts from NFC Forum NDEF 1.0 and Connection Handover
 * 1.3); the wpa_supplicant vectors are recorded files in tests/unit/ndef. */

enum { MB = 0x80, ME = 0x40, CF = 0x20, SR = 0x10, IL = 0x08 };

static size_t rec(uint8_t *out, uint8_t flags, uint8_t tnf, const char *type, const char *id,
                  const uint8_t *payload, size_t n)
{
        size_t p = 0, tl = type ? strlen(type) : 0, il = id ? strlen(id) : 0;

        if (n < 256)
                flags |= SR;
        if (il)
                flags |= IL;
        out[p++] = flags | tnf;
        out[p++] = (uint8_t)tl;
        if (flags & SR)
                out[p++] = (uint8_t)n;
        else {
                out[p++] = (uint8_t)(n >> 24), out[p++] = (uint8_t)(n >> 16);
                out[p++] = (uint8_t)(n >> 8), out[p++] = (uint8_t)n;
        }
        if (il)
                out[p++] = (uint8_t)il;
        if (tl)
                memcpy(out + p, type, tl), p += tl;
        if (il)
                memcpy(out + p, id, il), p += il;
        if (n)
                memcpy(out + p, payload, n);
        return p + n;
}

static size_t ac(uint8_t *out, uint8_t flags, uint8_t cps, const char *ref)
{
        uint8_t pl[64];
        size_t n = 0, rl = strlen(ref);

        pl[n++] = cps;
        pl[n++] = (uint8_t)rl;
        memcpy(pl + n, ref, rl), n += rl;
        pl[n++] = 0; /* no auxiliary data */
        return rec(out, flags, 1, "ac", NULL, pl, n);
}

static size_t hs(uint8_t *out, uint8_t flags, const char *type, const uint8_t *inner, size_t n)
{
        uint8_t pl[1024];

        pl[0] = 0x13; /* version 1.3 */
        memcpy(pl + 1, inner, n);
        return rec(out, flags, 1, type, NULL, pl, n + 1);
}

/* Bluetooth BR/EDR OOB in the layout of the SIG document's examples. */
static size_t bt_oob(uint8_t *out)
{
        static const uint8_t eir[] = {
            0x0d, 0x09, 'R',  'o',  'a',  'm',  ' ',  'H',  'e',
            'a',  'd',  's',  'e',  't',  /* name */
            0x04, 0x0d, 0x04, 0x04, 0x24, /* CoD 0x240404: audio, headset */
            0x11, 0x0e, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06,
            0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, /* hash C-192 */
            0x11, 0x0f, 0xf0, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6,
            0xf7, 0xf8, 0xf9, 0xfa, 0xfb, 0xfc, 0xfd, 0xfe, 0xff, /* randomizer R-192 */
            0x05, 0x03, 0x08, 0x11, 0x1e, 0x11,                   /* UUID16: headset, hands-free */
        };
        size_t n = 8 + sizeof(eir);

        out[0] = (uint8_t)n, out[1] = 0;
        out[2] = 0x06, out[3] = 0x05, out[4] = 0x04, out[5] = 0x03, out[6] = 0x02, out[7] = 0x01;
        memcpy(out + 8, eir, sizeof(eir));
        return n;
}

static size_t read_hex_fixture(const char *name, uint8_t *out, size_t max)
{
        char path[1024];
        _cleanup_free_ char *text = NULL;
        size_t size, n = 0;

        snprintf(path, sizeof(path), "%s/ndef/%s", test_fixture_dir, name);
        if (read_full_file(path, 65536, &text, &size) < 0)
                TEST_FAIL("cannot read %s", path);
        for (size_t i = 0; i + 1 < size && isxdigit(text[i]); i += 2) {
                unsigned v;
                if (sscanf(text + i, "%2x", &v) != 1 || n >= max)
                        TEST_FAIL("bad hex in %s", path);
                out[n++] = (uint8_t)v;
        }
        return n;
}

TEST(ndef_wpas_config_token_psk)
{
        uint8_t buf[512];
        size_t n = read_hex_fixture("wpas-config-token-psk.hex", buf, sizeof(buf));
        NdefHandover h;
        char err[NDEF_ERROR_MAX] = "";
        const WscCredential *c;

        ASSERT_OK(ndef_handover_parse(buf, n, &h, err, sizeof(err)));
        ASSERT_EQ(h.kind, NDEF_HANDOVER_NONE);
        ASSERT_EQ(h.n_carriers, 1);
        ASSERT_EQ(h.carriers[0].kind, NDEF_CARRIER_WIFI);
        ASSERT_EQ(h.carriers[0].power, CARRIER_POWER_UNKNOWN);
        ASSERT_TRUE(h.carriers[0].wsc.credential_wrapped);
        ASSERT_EQ(h.carriers[0].wsc.n_credentials, 1);
        ASSERT_EQ(h.carriers[0].wsc.version2, 0x20);
        c = &h.carriers[0].wsc.credentials[0];
        ASSERT_EQ(c->ssid_len, 13);
        ASSERT_TRUE(memcmp(c->ssid, "roam-test-net", 13) == 0);
        ASSERT_EQ(c->auth_type, WSC_AUTH_WPA2PSK);
        ASSERT_EQ(c->encr_type, WSC_ENCR_AES);
        ASSERT_EQ(c->key_len, 21);
        ASSERT_TRUE(memcmp(c->key, "correct horse battery", 21) == 0);
        ASSERT_STREQ(c->mac, ""); /* wpa_supplicant writes an all-zero MAC */
        ASSERT_EQ(c->network_index, 1);
}

TEST(ndef_wpas_config_token_open_and_ccmp)
{
        uint8_t buf[512];
        size_t n = read_hex_fixture("wpas-config-token-open.hex", buf, sizeof(buf));
        NdefHandover h;
        char err[NDEF_ERROR_MAX] = "";

        ASSERT_OK(ndef_handover_parse(buf, n, &h, err, sizeof(err)));
        ASSERT_EQ(h.carriers[0].wsc.credentials[0].auth_type, WSC_AUTH_OPEN);
        ASSERT_EQ(h.carriers[0].wsc.credentials[0].encr_type, WSC_ENCR_NONE);
        ASSERT_EQ(h.carriers[0].wsc.credentials[0].key_len, 0);
        ASSERT_TRUE(memcmp(h.carriers[0].wsc.credentials[0].ssid, "cafe open", 9) == 0);

        n = read_hex_fixture("wpas-config-token-ccmp.hex", buf, sizeof(buf));
        ASSERT_OK(ndef_handover_parse(buf, n, &h, err, sizeof(err)));
        ASSERT_EQ(h.carriers[0].wsc.credentials[0].key_len, 16);
        ASSERT_TRUE(memcmp(h.carriers[0].wsc.credentials[0].key, "0123456789abcdef", 16) == 0);
}

TEST(ndef_wpas_password_token_and_handover_carrier)
{
        uint8_t buf[512];
        size_t n = read_hex_fixture("wpas-password-token.hex", buf, sizeof(buf));
        NdefHandover h;
        char err[NDEF_ERROR_MAX] = "";

        ASSERT_OK(ndef_handover_parse(buf, n, &h, err, sizeof(err)));
        ASSERT_EQ(h.carriers[0].wsc.n_credentials, 0);
        ASSERT_TRUE(h.carriers[0].wsc.has_password);
        ASSERT_EQ(h.carriers[0].wsc.public_key_hash[0], 0xab);

        n = read_hex_fixture("wpas-handover-req-carrier.hex", buf, sizeof(buf));
        ASSERT_OK(ndef_handover_parse(buf, n, &h, err, sizeof(err)));
        ASSERT_TRUE(h.carriers[0].wsc.has_password);
        ASSERT_EQ(h.carriers[0].wsc.password_id, 0x0007); /* NFC connection handover */
        ASSERT_STREQ(h.carriers[0].wsc.uuid, "8bd22a63-4991-51b5-93f5-111769c2d311");
}

TEST(ndef_handover_select_bluetooth_and_wifi)
{
        /* A negotiated handover select: Bluetooth active, WiFi (the recorded wpa_supplicant
         * carrier, given ID "1") activating. */
        uint8_t wsc_rec[512], oob[128], inner[128], msg[1024];
        size_t wn = read_hex_fixture("wpas-config-token-ccmp.hex", wsc_rec, sizeof(wsc_rec));
        size_t on = bt_oob(oob), in = 0, n = 0;
        NdefHandover h;
        char err[NDEF_ERROR_MAX] = "";

        /* The recorded WSC record starts D2 17 len: reuse its payload under an ID. */
        in += ac(inner + in, MB, CARRIER_POWER_ACTIVE, "0");
        in += ac(inner + in, ME, CARRIER_POWER_ACTIVATING, "1");
        n += hs(msg + n, MB, "Hs", inner, in);
        n += rec(msg + n, 0, 2, "application/vnd.bluetooth.ep.oob", "0", oob, on);
        n += rec(msg + n, ME, 2, "application/vnd.wfa.wsc", "1", wsc_rec + 3 + 0x17, wn - 3 - 0x17);

        ASSERT_OK(ndef_handover_parse(msg, n, &h, err, sizeof(err)));
        ASSERT_EQ(h.kind, NDEF_HANDOVER_SELECT);
        ASSERT_EQ(h.version, 0x13);
        ASSERT_EQ(h.n_carriers, 2);
        ASSERT_EQ(h.carriers[0].kind, NDEF_CARRIER_BLUETOOTH);
        ASSERT_EQ(h.carriers[0].power, CARRIER_POWER_ACTIVE);
        ASSERT_STREQ(h.carriers[0].bt.address, "01:02:03:04:05:06");
        ASSERT_STREQ(h.carriers[0].bt.name, "Roam Headset");
        ASSERT_TRUE(h.carriers[0].bt.name_complete);
        ASSERT_EQ(h.carriers[0].bt.device_class, 0x240404);
        ASSERT_STREQ(bt_class_to_word(h.carriers[0].bt.device_class), "headset");
        ASSERT_TRUE(h.carriers[0].bt.has_hash192 && h.carriers[0].bt.has_rand192);
        ASSERT_EQ(h.carriers[0].bt.hash192[15], 0x0f);
        ASSERT_EQ(h.carriers[0].bt.rand192[0], 0xf0);
        ASSERT_EQ(h.carriers[1].kind, NDEF_CARRIER_WIFI);
        ASSERT_EQ(h.carriers[1].power, CARRIER_POWER_ACTIVATING);
        ASSERT_STREQ(carrier_power_state_to_string(h.carriers[1].power), "activating");
}

TEST(ndef_static_bluetooth_and_le)
{
        uint8_t oob[128], msg[512];
        static const uint8_t le[] = {
            0x08, 0x1b, 0x66, 0x55, 0x44, 0x33, 0x22, 0xc1, 0x01, /* random address */
            0x02, 0x1c, 0x00,                                     /* peripheral only */
            0x03, 0x19, 0xc1, 0x03,                               /* HID keyboard */
            0x05, 0x09, 'K',  'e',  'y',  's',
        };
        size_t n = rec(msg, MB | ME, 2, "application/vnd.bluetooth.ep.oob", NULL, oob, bt_oob(oob));
        NdefHandover h;
        char err[NDEF_ERROR_MAX] = "";

        ASSERT_OK(ndef_handover_parse(msg, n, &h, err, sizeof(err)));
        ASSERT_EQ(h.kind, NDEF_HANDOVER_NONE);
        ASSERT_STREQ(h.carriers[0].bt.address, "01:02:03:04:05:06");

        n = rec(msg, MB | ME, 2, "application/vnd.bluetooth.le.oob", NULL, le, sizeof(le));
        ASSERT_OK(ndef_handover_parse(msg, n, &h, err, sizeof(err)));
        ASSERT_EQ(h.carriers[0].kind, NDEF_CARRIER_BLUETOOTH_LE);
        ASSERT_STREQ(h.carriers[0].bt.address, "C1:22:33:44:55:66");
        ASSERT_TRUE(h.carriers[0].bt.address_random);
        ASSERT_STREQ(bt_appearance_to_word(h.carriers[0].bt.appearance), "keyboard");
        ASSERT_STREQ(h.carriers[0].bt.name, "Keys");
}

TEST(ndef_chunks_ids_long_records)
{
        /* One WSC record in three chunks, the first with an ID; and a long (non-SR) record. */
        uint8_t wsc_rec[512], msg[1024], big[300];
        size_t wn = read_hex_fixture("wpas-config-token-psk.hex", wsc_rec, sizeof(wsc_rec));
        const uint8_t *pl = wsc_rec + 3 + 0x17;
        size_t pn = wn - 3 - 0x17, n = 0;
        NdefMessage m;
        NdefHandover h;
        char err[NDEF_ERROR_MAX] = "";

        n += rec(msg + n, MB | CF, 2, "application/vnd.wfa.wsc", "w", pl, 10);
        n += rec(msg + n, CF, 6, NULL, NULL, pl + 10, 20);
        n += rec(msg + n, ME, 6, NULL, NULL, pl + 30, pn - 30);
        ASSERT_OK(ndef_message_parse(msg, n, &m, err, sizeof(err)));
        ASSERT_EQ(m.n_records, 1);
        ASSERT_TRUE(m.records[0].chunked);
        ASSERT_EQ(m.records[0].payload_len, pn);
        ASSERT_EQ(m.records[0].id_len, 1);
        ASSERT_EQ(m.records[0].id[0], 'w');
        ndef_message_done(&m);
        ASSERT_OK(ndef_handover_parse(msg, n, &h, err, sizeof(err)));
        ASSERT_EQ(h.carriers[0].wsc.credentials[0].ssid_len, 13);

        memset(big, 'x', sizeof(big));
        n = rec(msg, MB | ME, 1, "T", NULL, big, sizeof(big));
        ASSERT_EQ(msg[0] & SR, 0);
        ASSERT_OK(ndef_message_parse(msg, n, &m, err, sizeof(err)));
        ASSERT_EQ(m.records[0].payload_len, 300);
        ndef_message_done(&m);
        /* Well formed, but nothing roam can use. */
        ASSERT_EQ(ndef_handover_parse(msg, n, &h, err, sizeof(err)), -ENOMSG);
        ASSERT_TRUE(strstr(err, "no Bluetooth or WiFi carrier") != NULL);
}

TEST(ndef_wsc_bare_attributes)
{
        /* A WSC record without the Credential wrapper (the attributes at the top level). */
        static const uint8_t pl[] = {
            0x10, 0x45, 0x00, 0x04, 'h',  'o',  'm',  'e',  0x10, 0x03, 0x00, 0x02, 0x00, 0x20,
            0x10, 0x0f, 0x00, 0x02, 0x00, 0x08, 0x10, 0x27, 0x00, 0x08, 'p',  'a',  's',  's',
            'w',  'o',  'r',  'd',  0x10, 0x20, 0x00, 0x06, 0x02, 0x00, 0x00, 0xaa, 0xbb, 0xcc,
        };
        WscInfo w;
        char err[NDEF_ERROR_MAX] = "";

        ASSERT_OK(ndef_wsc_parse(pl, sizeof(pl), &w, err, sizeof(err)));
        ASSERT_EQ(w.n_credentials, 1);
        ASSERT_TRUE(!w.credential_wrapped);
        ASSERT_EQ(w.credentials[0].ssid_len, 4);
        ASSERT_EQ(w.credentials[0].key_len, 8);
        ASSERT_STREQ(w.credentials[0].mac, "02:00:00:aa:bb:cc");
}

/* Every malformed input fails with -EBADMSG and a sentence naming the problem. */
TEST(ndef_malformed)
{
        uint8_t msg[1024], inner[256], oob[128];
        size_t n, in;
        NdefHandover h;
        NdefMessage m;
        char err[NDEF_ERROR_MAX];
        static const struct {
                uint8_t bytes[24];
                size_t n;
                const char *needle;
        } bad[] = {
            {{0xd1, 0x01, 0x05, 'T', 'a'}, 5, "runs past the end"},                 /* payload */
            {{0xc1, 0x01, 0xff, 0xff, 0xff, 0xf0, 'T'}, 7, "runs past the end"},    /* 4 GiB */
            {{0xd9, 0x01, 0x00, 0x09, 'T'}, 5, "ID runs past"},                     /* ID */
            {{0xd1, 0x09, 0x00, 'T'}, 4, "type runs past"},                         /* type */
            {{0x91, 0x01, 0x00, 'T'}, 4, "message-end flag"},                       /* no ME */
            {{0x51, 0x01, 0x00, 'T'}, 4, "message-begin flag missing"},             /* no MB */
            {{0xd1, 0x01, 0x00, 'T', 0xd1, 0x01, 0x00, 'T'}, 8, "after the last"},  /* trailing */
            {{0xd7, 0x00, 0x00}, 3, "reserved TNF"},                                /* TNF 7 */
            {{0xd6, 0x00, 0x00}, 3, "TNF 6 outside"},                               /* unchanged */
            {{0xd0, 0x01, 0x00, 'T'}, 4, "empty record carries"},                   /* empty+type */
            {{0xd1, 0x00, 0x00}, 3, "without a type"},                              /* no type */
            {{0xd1, 0x01, 0x00, 0x01}, 4, "not printable"},                         /* type bytes */
            {{0xf1, 0x01, 0x00, 'T'}, 4, "ends inside a chunked"},                  /* CF+ME */
            {{0xb1, 0x01, 0x00, 'T', 0x51, 0x01, 0x00, 'T'}, 8, "TNF 6 and no ID"}, /* bad chunk */
            {{0xd1}, 1, "cut short"},
            {{0x00}, 0, "empty"},
        };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                err[0] = 0;
                if (ndef_message_parse(bad[i].bytes, bad[i].n, &m, err, sizeof(err)) != -EBADMSG)
                        TEST_FAIL("malformed case %zu accepted", i);
                if (!strstr(err, bad[i].needle))
                        TEST_FAIL("case %zu: \"%s\" lacks \"%s\"", i, err, bad[i].needle);
        }

        /* A chunked record that never ends. */
        n = rec(msg, MB | CF, 1, "T", NULL, (const uint8_t *)"ab", 2);
        n += rec(msg + n, CF, 6, NULL, NULL, (const uint8_t *)"cd", 2);
        ASSERT_EQ(ndef_message_parse(msg, n, &m, err, sizeof(err)), -EBADMSG);
        ASSERT_TRUE(strstr(err, "inside a chunked record") != NULL);

        /* An ac record pointing at a record ID that is not there. */
        in = ac(inner, MB | ME, CARRIER_POWER_ACTIVE, "9");
        n = hs(msg, MB, "Hs", inner, in);
        n += rec(msg + n, ME, 2, "application/vnd.bluetooth.ep.oob", "0", oob, bt_oob(oob));
        ASSERT_EQ(ndef_handover_parse(msg, n, &h, err, sizeof(err)), -EBADMSG);
        ASSERT_TRUE(strstr(err, "ID the message lacks") != NULL);

        /* Bluetooth OOB length larger than the record; zero address; bad EIR length. */
        bt_oob(oob);
        oob[0] = 0xff;
        n = rec(msg, MB | ME, 2, "application/vnd.bluetooth.ep.oob", NULL, oob, 60);
        ASSERT_EQ(ndef_handover_parse(msg, n, &h, err, sizeof(err)), -EBADMSG);
        ASSERT_TRUE(strstr(err, "does not fit") != NULL);
        bt_oob(oob);
        memset(oob + 2, 0, 6);
        n = rec(msg, MB | ME, 2, "application/vnd.bluetooth.ep.oob", NULL, oob, bt_oob(inner));
        ASSERT_EQ(ndef_handover_parse(msg, n, &h, err, sizeof(err)), -EBADMSG);
        ASSERT_TRUE(strstr(err, "all zero") != NULL);
        bt_oob(oob);
        oob[8] = 0x40; /* name structure claims 64 bytes */
        n = rec(msg, MB | ME, 2, "application/vnd.bluetooth.ep.oob", NULL, oob, bt_oob(inner));
        ASSERT_EQ(ndef_handover_parse(msg, n, &h, err, sizeof(err)), -EBADMSG);
        ASSERT_TRUE(strstr(err, "runs past the end") != NULL);
        bt_oob(oob);
        oob[10] = 0x1b; /* escape character in the name */
        n = rec(msg, MB | ME, 2, "application/vnd.bluetooth.ep.oob", NULL, oob, bt_oob(inner));
        ASSERT_EQ(ndef_handover_parse(msg, n, &h, err, sizeof(err)), -EBADMSG);
        ASSERT_TRUE(strstr(err, "UTF-8") != NULL);
        /* A right-to-left override (U+202E) and broken UTF-8 in the name: the name goes on
         * the bus and to terminals (roam-text.c). */
        bt_oob(oob);
        memcpy(oob + 10, "\xe2\x80\xae", 3);
        n = rec(msg, MB | ME, 2, "application/vnd.bluetooth.ep.oob", NULL, oob, bt_oob(inner));
        ASSERT_EQ(ndef_handover_parse(msg, n, &h, err, sizeof(err)), -EBADMSG);
        ASSERT_TRUE(strstr(err, "UTF-8") != NULL);
        bt_oob(oob);
        memcpy(oob + 10, "\xc3\x28", 2);
        n = rec(msg, MB | ME, 2, "application/vnd.bluetooth.ep.oob", NULL, oob, bt_oob(inner));
        ASSERT_EQ(ndef_handover_parse(msg, n, &h, err, sizeof(err)), -EBADMSG);

        /* WSC: SSID too long, attribute overflow, credential without SSID, key too long. */
        {
                static const struct {
                        uint8_t bytes[80];
                        size_t n;
                        const char *needle;
                } wbad[] = {
                    {{0x10, 0x0e, 0x00, 0x04, 0x10, 0x45, 0x00, 0x21}, 8, "runs past"},
                    {{0x10, 0x0e, 0xff, 0xff}, 4, "runs past"},
                    {{0x10, 0x0e, 0x00, 0x0c, 0x10, 0x03, 0x00, 0x02, 0x00, 0x20, 0x10, 0x0f, 0x00,
                      0x02, 0x00, 0x08},
                     16,
                     "without an SSID"},
                    {{0x10, 0x45, 0x00, 0x00}, 4, "SSID of 0 bytes"},
                    {{0x10, 0x45, 0x00, 0x01, 'a', 0x10, 0x03, 0x00, 0x01, 0x00}, 10, "not 2"},
                    {{0x10, 0x45, 0x00, 0x01, 'a', 0x10, 0x27, 0x00, 0x41}, 9, "runs past"},
                    {{0x10, 0x4a, 0x00, 0x01, 0x10}, 5, "neither a credential"},
                    {{0x10, 0x2c, 0x00, 0x02, 0x00, 0x00}, 6, "OOB device password"},
                    {{0x00, 0x10, 0x10, 0x45}, 4, "WSC length 16 runs past"},
                    {{0x10}, 1, "cut short"},
                };
                WscInfo w;

                for (size_t i = 0; i < ELEMENTSOF(wbad); i++) {
                        err[0] = 0;
                        if (ndef_wsc_parse(wbad[i].bytes, wbad[i].n, &w, err, sizeof(err)) !=
                            -EBADMSG)
                                TEST_FAIL("WSC case %zu accepted", i);
                        if (!strstr(err, wbad[i].needle))
                                TEST_FAIL("WSC case %zu: \"%s\" lacks \"%s\"", i, err,
                                          wbad[i].needle);
                }
        }

        /* Unsupported handover version. */
        in = ac(inner, MB | ME, CARRIER_POWER_ACTIVE, "0");
        n = hs(msg, MB, "Hs", inner, in);
        msg[5] = 0x20;
        n += rec(msg + n, ME, 2, "application/vnd.bluetooth.ep.oob", "0", oob, bt_oob(oob));
        ASSERT_EQ(ndef_handover_parse(msg, n, &h, err, sizeof(err)), -EBADMSG);
        ASSERT_TRUE(strstr(err, "version 2.0") != NULL);
}

TEST(ndef_deep_nesting)
{
        /* Handover records nested 40 deep: refused at the first nested level, so the work is
         * bounded whatever the depth. */
        uint8_t a[2048], b[2048];
        uint8_t *cur = a, *next = b;
        size_t n = ac(a, MB | ME, CARRIER_POWER_ACTIVE, "0");
        NdefHandover h;
        char err[NDEF_ERROR_MAX];

        for (int depth = 0; depth < 40 && n + 16 < 1000; depth++) {
                size_t m = hs(next, MB | ME, "Hs", cur, n);
                uint8_t *t = cur;
                cur = next, next = t, n = m;
        }
        ASSERT_EQ(ndef_handover_parse(cur, n, &h, err, sizeof(err)), -EBADMSG);
        ASSERT_TRUE(strstr(err, "nested") != NULL);

        /* A handover record that is not first. */
        n = rec(a, MB, 1, "T", NULL, (const uint8_t *)"x", 1);
        n += hs(a + n, ME, "Hs", b, 0);
        ASSERT_EQ(ndef_handover_parse(a, n, &h, err, sizeof(err)), -EBADMSG);
        ASSERT_TRUE(strstr(err, "first record") != NULL);
}

TEST(ndef_record_limit)
{
        uint8_t msg[4096];
        size_t n = 0;
        NdefMessage m;
        char err[NDEF_ERROR_MAX];

        for (int i = 0; i < NDEF_MAX_RECORDS + 1; i++)
                n += rec(msg + n, (i == 0 ? MB : 0) | (i == NDEF_MAX_RECORDS ? ME : 0), 1, "T",
                         NULL, NULL, 0);
        ASSERT_EQ(ndef_message_parse(msg, n, &m, err, sizeof(err)), -EBADMSG);
        ASSERT_TRUE(strstr(err, "more than") != NULL);
}

TEST(bt_class_words)
{
        ASSERT_STREQ(bt_class_to_word(0x5a020c), "phone");
        ASSERT_STREQ(bt_class_to_word(0x240418), "headphones");
        ASSERT_STREQ(bt_class_to_word(0x002540), "keyboard");
        ASSERT_STREQ(bt_class_to_word(0x002580), "mouse");
        ASSERT_STREQ(bt_class_to_word(0x10010c), "computer");
        ASSERT_TRUE(bt_class_to_word(0) == NULL);
        ASSERT_STREQ(bt_appearance_to_word(0x0941), "earbuds");
        ASSERT_STREQ(bt_device_word(0, 0x00c2), "watch");
        ASSERT_STREQ(bt_device_word(0, 0), "device");
}

static bool all_zero_bytes(const void *p, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (((const uint8_t *)p)[i])
                        return false;
        return true;
}

/* The WiFi key of a tag is wiped wherever the parsers drop it: ndef_message_done() (every
 * failure path of ndef_message_parse() and ndef_handover_parse() runs it) wipes through
 * ndef_message_erase(), a handover through ndef_handover_erase(). Memory after free() cannot
 * be looked at, so these are what is tested. */
TEST(ndef_secrets_wiped)
{
        uint8_t wsc_rec[512], msg[1024], oob[128];
        size_t wn = read_hex_fixture("wpas-config-token-psk.hex", wsc_rec, sizeof(wsc_rec));
        const uint8_t *pl = wsc_rec + 3 + 0x17;
        size_t pn = wn - 3 - 0x17, n = 0, on;
        NdefMessage m;
        NdefHandover *h, sentinel;
        char err[NDEF_ERROR_MAX] = "";

        /* A chunked record: the reassembly drops its old buffers wiped as well. */
        n += rec(msg + n, MB | CF, 2, "application/vnd.wfa.wsc", NULL, pl, 10);
        n += rec(msg + n, ME, 6, NULL, NULL, pl + 10, pn - 10);
        ASSERT_OK(ndef_message_parse(msg, n, &m, err, sizeof(err)));
        ASSERT_TRUE(memmem(m.records[0].payload, m.records[0].payload_len, "correct horse battery",
                           21) != NULL);
        ndef_message_erase(&m);
        ASSERT_TRUE(all_zero_bytes(m.records[0].payload, m.records[0].payload_len));
        ndef_message_done(&m);
        ndef_message_erase(NULL);

        h = malloc(sizeof(*h));
        ASSERT_TRUE(h);
        ASSERT_OK(ndef_handover_parse(wsc_rec, wn, h, err, sizeof(err)));
        ASSERT_EQ(h->carriers[0].wsc.credentials[0].key_len, 21);
        ndef_handover_erase(h);
        ASSERT_TRUE(all_zero_bytes(h, sizeof(*h)));
        h = ndef_handover_free(h);
        ASSERT_TRUE(h == NULL);
        ndef_handover_free(NULL);

        /* The key's carrier parses, a later one fails: an error, nothing given back. */
        n = rec(msg, MB, 2, "application/vnd.wfa.wsc", NULL, pl, pn);
        on = bt_oob(oob);
        oob[0] = 0xff; /* the OOB length runs past the record */
        n += rec(msg + n, ME, 2, "application/vnd.bluetooth.ep.oob", NULL, oob, on);
        memset(&sentinel, 0xaa, sizeof(sentinel));
        ASSERT_EQ(ndef_handover_parse(msg, n, &sentinel, err, sizeof(err)), -EBADMSG);
        ASSERT_TRUE(strstr(err, "Bluetooth OOB data length") != NULL);
        ASSERT_TRUE(sentinel.carriers[0].wsc.credentials[0].key[0] == 0xaa);
}

/* Real tags that leave the Encryption Type out. WiFiKeyShare (Android), as captured in the
 * NfcWifiConnectOwn readme: a Credential with SSID, Auth Type WPA2PSK and the key, no Encr
 * Type, no MAC. */
TEST(ndef_wsc_android_without_encryption_type)
{
        static const uint8_t pl[] = {
            0x10, 0x0e, 0x00, 0x20, 0x10, 0x45, 0x00, 0x09, 'K',  'i',  'd',  'd',
            'y',  '_',  'N',  'e',  't',  0x10, 0x03, 0x00, 0x02, 0x00, 0x20, 0x10,
            0x27, 0x00, 0x09, 'L',  'e',  'o',  'n',  '_',  '2',  '0',  '1',  '8',
        };
        WscInfo w;
        char err[NDEF_ERROR_MAX] = "";

        ASSERT_OK(ndef_wsc_parse(pl, sizeof(pl), &w, err, sizeof(err)));
        ASSERT_EQ(w.n_credentials, 1);
        ASSERT_TRUE(w.credential_wrapped);
        ASSERT_EQ(w.credentials[0].ssid_len, 9);
        ASSERT_TRUE(memcmp(w.credentials[0].ssid, "Kiddy_Net", 9) == 0);
        ASSERT_EQ(w.credentials[0].auth_type, WSC_AUTH_WPA2PSK);
        ASSERT_EQ(w.credentials[0].encr_type, WSC_ENCR_AES);
        ASSERT_TRUE(w.credentials[0].encr_inferred);
        ASSERT_EQ(w.credentials[0].key_len, 9);
        ASSERT_STREQ(w.credentials[0].mac, "");
}

/* neard's writer (src/ndef.c, build_mime_record for "application/vnd.wfa.wsc"): bare SSID,
 * Auth Type 0x0022 (WIFI_WSC_KEY_PSK) and the Network Key; for an open network Auth Type
 * 0x0001 and no key. */
TEST(ndef_wsc_neard_writer)
{
        static const uint8_t psk[] = {
            0x10, 0x45, 0x00, 0x09, 'n',  'e',  'a',  'r',  'd',  '-',  'n',
            'e',  't',  0x10, 0x03, 0x00, 0x02, 0x00, 0x22, 0x10, 0x27, 0x00,
            0x08, '1',  '2',  '3',  '4',  '5',  '6',  '7',  '8',
        };
        static const uint8_t open[] = {
            0x10, 0x45, 0x00, 0x04, 'c', 'a', 'f', 'e', 0x10, 0x03, 0x00, 0x02, 0x00, 0x01,
        };
        static const uint8_t wep[] = {
            0x10, 0x45, 0x00, 0x01, 'x', 0x10, 0x03, 0x00, 0x02, 0x00, 0x04,
        };
        uint8_t msg[128];
        NdefHandover h;
        WscInfo w;
        char err[NDEF_ERROR_MAX] = "";
        size_t n;

        ASSERT_OK(ndef_wsc_parse(psk, sizeof(psk), &w, err, sizeof(err)));
        ASSERT_EQ(w.credentials[0].auth_type, 0x0022);
        ASSERT_EQ(w.credentials[0].encr_type, WSC_ENCR_AES);
        ASSERT_TRUE(w.credentials[0].encr_inferred);

        ASSERT_OK(ndef_wsc_parse(open, sizeof(open), &w, err, sizeof(err)));
        ASSERT_EQ(w.credentials[0].encr_type, WSC_ENCR_NONE);
        ASSERT_EQ(w.credentials[0].key_len, 0);

        /* Shared-key (WEP) says nothing of the cipher a missing type would mean: refused. */
        ASSERT_EQ(ndef_wsc_parse(wep, sizeof(wep), &w, err, sizeof(err)), -EBADMSG);
        ASSERT_TRUE(strstr(err, "encryption type") != NULL);

        /* the whole tag as neard writes it: one MIME record, MB and ME */
        n = rec(msg, MB | ME, 2, "application/vnd.wfa.wsc", NULL, psk, sizeof(psk));
        ASSERT_OK(ndef_handover_parse(msg, n, &h, err, sizeof(err)));
        ASSERT_EQ(h.n_carriers, 1);
        ASSERT_EQ(h.carriers[0].kind, NDEF_CARRIER_WIFI);
        ASSERT_EQ(h.carriers[0].wsc.credentials[0].encr_type, WSC_ENCR_AES);
        ndef_handover_erase(&h);
}
