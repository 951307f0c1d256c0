/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The Wi-Fi QR texts (docs/wifi.md, "QR codes"):
 *
 * `WIFI:` (ZXing's format, which phone cameras read and write; Android's WifiUriParser adds
 * T:SAE and R:): fields `T:` (WPA, WEP, SAE, nopass; absent = open), `S:` (required), `P:`,
 * `H:` (true/false), `R:` (transition disable, hex), the enterprise fields `E:` (PEAP, TTLS),
 * `PH2:`, `A:` (anonymous identity), `I:` (identity), in any order, each ending `;`, the whole
 * ending `;;` (a missing last `;` is accepted, as ZXing does). Escapes are ZXing's backslash
 * before `\ ; , " :`; a value in double quotes is the text inside (ZXing and NetworkManager
 * quote an all-hex passphrase so it is not taken for a raw key). The WPA3 specification's
 * percent-encoding is NOT decoded: `%` is a literal character (no phone camera writes it, and
 * decoding it would change the key of every passphrase with a `%` in it). Unknown fields are
 * skipped; a field twice, an empty SSID, a bad escape, a key of the wrong form for its type
 * are errors with a sentence.
 *
 * `DPP:` (Wi-Fi Easy Connect 2.0 §5.2.1; hostap's dpp_parse_uri()): tokens `C:` (class/channel
 * list), `M:` (MAC, 12 hex), `I:` (information), `K:` (base64 DER public key, required),
 * `V:` (version), `H:` (host), `B:`; each ending `;`, the whole ending `;;`.
 *
 * Pure: table-tested in tests/unit/test-wifi-uri.c and fuzzed (tests/fuzz/fuzz-wifi-uri.c). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "roamd-wifi-backend.h"

#define WIFI_URI_ERROR_MAX 160
#define WIFI_URI_MAX       4096
#define WIFI_URI_KEY_MAX   128 /* SAE passwords may be longer than WPA's 63 */

typedef struct WifiUri {
        uint8_t ssid[WIFI_SSID_MAX];
        size_t ssid_len;
        /* T: in words: open (nopass or absent), WPA (let the owner pick WPA2 or WPA3), SAE
         * (WPA3), WEP, or enterprise (E: present) */
        WifiSecurity security; /* WIFI_SECURITY_PSK for T:WPA: the owner decides */
        bool hidden;
        bool wpa3_only; /* R: bit 0 (WPA3-Personal transition disable) or T:SAE */
        char passphrase[WIFI_URI_KEY_MAX + 1];
        size_t passphrase_len;
        bool raw_psk; /* 64 hex digits: a raw PSK, not a passphrase */
        WifiEap eap;  /* _WIFI_EAP_INVALID unless E: */
        char phase2[32];
        char identity[128], anonymous_identity[128];
} WifiUri;

/* -EINVAL with a sentence in error. The result holds a key: wifi_uri_erase() it. */
int wifi_uri_parse(const char *text, size_t len, WifiUri *ret, char *error, size_t error_size);
void wifi_uri_erase(WifiUri *u);

/* The `WIFI:` text for sharing (ZXing's form: escapes, an all-hex passphrase in quotes, T:WPA
 * for every PSK/SAE network, T:nopass for open and OWE, no T: for enterprise). -ENOBUFS when
 * out is too small; -EINVAL for a security that cannot be shared (enterprise, WEP). */
int wifi_uri_format(const uint8_t *ssid, size_t ssid_len, WifiSecurity security,
                    const char *passphrase, bool hidden, char *out, size_t size);

typedef struct DppUri {
        char channels[128]; /* C: as given ("81/1,115/36"), "" absent */
        char mac[18];       /* M: as aa:bb:cc:dd:ee:ff, "" absent */
        char info[64];      /* I:, printable ASCII, "" absent */
        char host[64];      /* H: */
        uint8_t version;    /* V:, 0 absent */
        size_t key_len;     /* the decoded K: length (the key itself goes to the owner as text) */
} DppUri;

int dpp_uri_parse(const char *text, size_t len, DppUri *ret, char *error, size_t error_size);
