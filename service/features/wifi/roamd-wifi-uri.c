/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "roam-macro.h"
#include "roam-text.h"
#include "roamd-wifi-uri.h"

static int fail(char *error, size_t size, const char *fmt, ...) _printf_(3, 4);
static int fail(char *error, size_t size, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(error, size, fmt, ap);
        va_end(ap);
        return -EINVAL;
}

static bool all_hex(const char *s, size_t n)
{
        if (n == 0)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!isxdigit((unsigned char)s[i]))
                        return false;
        return true;
}

static bool printable_ascii(const char *s, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e)
                        return false;
        return true;
}

/* Valid UTF-8 without control or invisible characters (a password typed on a phone). */
static bool clean_text(const char *s, size_t n)
{
        for (size_t i = 0; i < n;) {
                uint32_t c;
                int k = roam_utf8_decode(s + i, n - i, &c);

                if (k <= 0 || roam_char_is_control(c) || roam_char_is_format(c))
                        return false;
                i += (size_t)k;
        }
        return true;
}

typedef enum UriField {
        F_T,
        F_S,
        F_P,
        F_H,
        F_R,
        F_E,
        F_PH2,
        F_A,
        F_I,
        F_K,
        _F_MAX,
} UriField;

static const char *const field_names[_F_MAX] = {
    [F_T] = "T", [F_S] = "S",     [F_P] = "P", [F_H] = "H", [F_R] = "R",
    [F_E] = "E", [F_PH2] = "PH2", [F_A] = "A", [F_I] = "I", [F_K] = "K",
};

typedef struct UriValue {
        bool set;
        char v[WIFI_URI_KEY_MAX + 1];
        size_t n;
} UriValue;

/* Reads one value from text[*i] to the next unescaped ';' (or the end), unescaping ZXing's
 * backslashes; a value that starts and ends with an unescaped '"' is the text inside. */
static int read_value(const char *text, size_t len, size_t *i, const char *key, UriValue *out,
                      char *error, size_t esize)
{
        bool first_quote = false, last_quote = false;
        size_t n = 0;

        for (; *i < len && text[*i] != ';'; (*i)++) {
                char c = text[*i];
                bool escaped = false;

                if (c == '\\') {
                        if (*i + 1 >= len)
                                return fail(error, esize,
                                            "WIFI: field %s: ends with a lone "
                                            "backslash",
                                            key);
                        c = text[++*i];
                        escaped = true;
                }
                if (c == 0)
                        return fail(error, esize, "WIFI: field %s: holds a NUL byte", key);
                if (n >= WIFI_URI_KEY_MAX)
                        return fail(error, esize, "WIFI: field %s: longer than %d bytes", key,
                                    WIFI_URI_KEY_MAX);
                if (n == 0)
                        first_quote = c == '"' && !escaped;
                last_quote = c == '"' && !escaped;
                out->v[n++] = c;
        }
        if (*i < len)
                (*i)++; /* the ';' */
        if (n >= 2 && first_quote && last_quote) {
                memmove(out->v, out->v + 1, n - 2);
                n -= 2;
        }
        out->v[n] = 0;
        out->n = n;
        out->set = true;
        return 0;
}

static int copy_field(const UriValue *v, char *dst, size_t size, const char *what, char *error,
                      size_t esize)
{
        if (!v->set)
                return 0;
        if (v->n >= size || !clean_text(v->v, v->n))
                return fail(error, esize, "WIFI: %s must be at most %zu bytes of text", what,
                            size - 1);
        memcpy(dst, v->v, v->n + 1);
        return 0;
}

void wifi_uri_erase(WifiUri *u)
{
        explicit_bzero(u, sizeof(*u));
}

int wifi_uri_parse(const char *text, size_t len, WifiUri *ret, char *error, size_t esize)
{
        UriValue f[_F_MAX] = {};
        WifiUri u = {.security = WIFI_SECURITY_OPEN, .eap = _WIFI_EAP_INVALID};
        size_t i = 5;
        int r = -EINVAL;

        error[0] = 0;
        if (len > WIFI_URI_MAX)
                return fail(error, esize, "WIFI: text longer than %d bytes", WIFI_URI_MAX);
        if (len < 5 || strncasecmp(text, "WIFI:", 5) != 0)
                return fail(error, esize, "not a WIFI: text (it must start with WIFI:)");
        while (i < len) {
                char key[4];
                size_t k = 0;
                UriValue skip, *v = &skip;

                if (text[i] == ';') { /* ";;": the end */
                        i++;
                        break;
                }
                while (i < len && text[i] != ':' && text[i] != ';' && k < 3)
                        key[k++] = text[i++];
                key[k] = 0;
                if (i >= len || text[i] != ':' || k == 0) {
                        fail(error, esize, "WIFI: a field without a NAME: before its value");
                        goto out;
                }
                i++;
                for (size_t j = 0; j < _F_MAX; j++)
                        if (strcasecmp(key, field_names[j]) == 0) {
                                if (f[j].set) {
                                        fail(error, esize, "WIFI: field %s given twice",
                                             field_names[j]);
                                        goto out;
                                }
                                v = &f[j];
                        }
                /* unknown fields are read and skipped (later versions add some) */
                if ((r = read_value(text, len, &i, key, v, error, esize)) < 0)
                        goto out;
                r = -EINVAL;
        }
        for (; i < len; i++)
                if (!isspace((unsigned char)text[i])) {
                        fail(error, esize, "WIFI: text goes on after the closing ;;");
                        goto out;
                }

        if (!f[F_S].set || f[F_S].n == 0) {
                fail(error, esize, "WIFI: text without a network name (S:)");
                goto out;
        }
        if (f[F_S].n > WIFI_SSID_MAX) {
                fail(error, esize, "WIFI: network name of %zu bytes (at most 32)", f[F_S].n);
                goto out;
        }
        memcpy(u.ssid, f[F_S].v, f[F_S].n);
        u.ssid_len = f[F_S].n;

        if (f[F_H].set) {
                if (strcasecmp(f[F_H].v, "true") == 0)
                        u.hidden = true;
                else if (strcasecmp(f[F_H].v, "false") != 0 && f[F_E].set && !f[F_PH2].set)
                        f[F_PH2] = f[F_H]; /* ZXing: an old writer put phase 2 in H: */
                else if (strcasecmp(f[F_H].v, "false") != 0) {
                        fail(error, esize, "WIFI: H: must be true or false");
                        goto out;
                }
        }
        if (f[F_R].set) {
                if (!all_hex(f[F_R].v, f[F_R].n) || f[F_R].n > 8) {
                        fail(error, esize, "WIFI: R: must be hexadecimal");
                        goto out;
                }
                u.wpa3_only = (strtoul(f[F_R].v, NULL, 16) & 1) != 0;
        }

        const char *t = f[F_T].set ? f[F_T].v : "nopass";
        if (f[F_E].set) {
                if (f[F_T].set && strcasecmp(t, "WPA") != 0 && strcasecmp(t, "WPA2") != 0 &&
                    strcasecmp(t, "WPA2-EAP") != 0 && strcasecmp(t, "WPA-EAP") != 0) {
                        fail(error, esize, "WIFI: an EAP method (E:) with T:%s", t);
                        goto out;
                }
                u.security = WIFI_SECURITY_ENTERPRISE;
                if (strcasecmp(f[F_E].v, "PEAP") == 0)
                        u.eap = WIFI_EAP_PEAP;
                else if (strcasecmp(f[F_E].v, "TTLS") == 0)
                        u.eap = WIFI_EAP_TTLS;
                if (u.eap < 0) {
                        fail(error, esize,
                             "WIFI: EAP method %s is not supported (PEAP and TTLS are)",
                             clean_text(f[F_E].v, f[F_E].n) ? f[F_E].v : "?");
                        goto out;
                }
                if ((r = copy_field(&f[F_PH2], u.phase2, sizeof(u.phase2), "PH2:", error, esize)) <
                        0 ||
                    (r = copy_field(&f[F_I], u.identity, sizeof(u.identity), "I:", error, esize)) <
                        0 ||
                    (r = copy_field(&f[F_A], u.anonymous_identity, sizeof(u.anonymous_identity),
                                    "A:", error, esize)) < 0)
                        goto out;
                r = -EINVAL;
        } else if (f[F_I].set) {
                /* the WPA3 specification's SAE password identifier */
                fail(error, esize,
                     "WIFI: SAE password identifiers (I: without E:) are not "
                     "supported");
                goto out;
        } else if (strcasecmp(t, "nopass") == 0 || t[0] == 0)
                u.security = WIFI_SECURITY_OPEN;
        else if (strcasecmp(t, "WPA") == 0 || strcasecmp(t, "WPA2") == 0)
                u.security = u.wpa3_only ? WIFI_SECURITY_WPA3 : WIFI_SECURITY_PSK;
        else if (strcasecmp(t, "SAE") == 0 || strcasecmp(t, "WPA3") == 0) {
                u.security = WIFI_SECURITY_WPA3;
                u.wpa3_only = true;
        } else if (strcasecmp(t, "WEP") == 0)
                u.security = WIFI_SECURITY_WEP;
        else {
                fail(error, esize, "WIFI: unknown type T:%s (WPA, SAE, WEP or nopass)",
                     clean_text(t, strlen(t)) ? t : "?");
                goto out;
        }

        const UriValue *p = &f[F_P];
        switch (u.security) {
        case WIFI_SECURITY_OPEN:
                if (p->n > 0) {
                        fail(error, esize, "WIFI: a password (P:) for an open network");
                        goto out;
                }
                break;
        case WIFI_SECURITY_PSK:
        case WIFI_SECURITY_WPA3:
                if (p->n == 64 && all_hex(p->v, 64) && u.security == WIFI_SECURITY_PSK)
                        u.raw_psk = true;
                else if (u.security == WIFI_SECURITY_PSK &&
                         (p->n < 8 || p->n > 63 || !printable_ascii(p->v, p->n))) {
                        fail(error, esize,
                             "WIFI: a WPA passphrase must be 8 to 63 printable characters or "
                             "64 hex digits (this one has %zu bytes)",
                             p->n);
                        goto out;
                } else if (p->n == 0 || !clean_text(p->v, p->n)) {
                        fail(error, esize, "WIFI: a WPA3 password must be text, not empty");
                        goto out;
                }
                break;
        case WIFI_SECURITY_WEP:
                if (!((p->n == 5 || p->n == 13) && printable_ascii(p->v, p->n)) &&
                    !((p->n == 10 || p->n == 26) && all_hex(p->v, p->n))) {
                        fail(error, esize,
                             "WIFI: a WEP key must be 5 or 13 characters or 10 or "
                             "26 hex digits");
                        goto out;
                }
                break;
        case WIFI_SECURITY_ENTERPRISE:
                if (p->n > 0 && !clean_text(p->v, p->n)) {
                        fail(error, esize, "WIFI: the password must be text");
                        goto out;
                }
                break;
        case WIFI_SECURITY_OWE:
        case WIFI_SECURITY_WPA:
        case WIFI_SECURITY_WPA2:
        case WIFI_SECURITY_WPA2_WPA3:
        case _WIFI_SECURITY_MAX:
        case _WIFI_SECURITY_INVALID:
                break;
        }
        memcpy(u.passphrase, p->v, p->n + 1);
        u.passphrase_len = p->n;
        *ret = u;
        r = 0;
out:
        explicit_bzero(f, sizeof(f));
        explicit_bzero(&u, sizeof(u));
        return r;
}

static int put(char *out, size_t size, size_t *o, const char *s, size_t n, bool escape)
{
        for (size_t i = 0; i < n; i++) {
                bool e = escape && strchr("\\;,\":", s[i]) && s[i];

                if (*o + 2 + (size_t)e >= size)
                        return -ENOBUFS;
                if (e)
                        out[(*o)++] = '\\';
                out[(*o)++] = s[i];
        }
        out[*o] = 0;
        return 0;
}

int wifi_uri_format(const uint8_t *ssid, size_t ssid_len, WifiSecurity security,
                    const char *passphrase, bool hidden, char *out, size_t size)
{
        const char *t = NULL;
        size_t o = 0;
        int r;

        if (size == 0 || ssid_len == 0 || ssid_len > WIFI_SSID_MAX)
                return -EINVAL;
        switch (security) {
        case WIFI_SECURITY_OPEN:
        case WIFI_SECURITY_OWE:
                t = "nopass";
                passphrase = NULL;
                break;
        case WIFI_SECURITY_WPA:
        case WIFI_SECURITY_WPA2:
        case WIFI_SECURITY_WPA3:
        case WIFI_SECURITY_WPA2_WPA3:
        case WIFI_SECURITY_PSK:
                /* as NetworkManager writes it: T:WPA for SAE too, the phone picks */
                t = "WPA";
                if (!passphrase || !passphrase[0])
                        return -EINVAL;
                break;
        case WIFI_SECURITY_WEP:
        case WIFI_SECURITY_ENTERPRISE:
        case _WIFI_SECURITY_MAX:
        case _WIFI_SECURITY_INVALID:
                return -EINVAL;
        }
        if (!t)
                return -EINVAL;
        out[0] = 0;
        if ((r = put(out, size, &o, "WIFI:T:", 7, false)) < 0 ||
            (r = put(out, size, &o, t, strlen(t), false)) < 0 ||
            (r = put(out, size, &o, ";S:", 3, false)) < 0 ||
            (r = put(out, size, &o, (const char *)ssid, ssid_len, true)) < 0 ||
            (r = put(out, size, &o, ";", 1, false)) < 0)
                goto fail;
        if (passphrase) {
                size_t n = strlen(passphrase);
                bool quote = all_hex(passphrase, n); /* not to be read as a raw key */

                if ((r = put(out, size, &o, quote ? "P:\"" : "P:", quote ? 3 : 2, false)) < 0 ||
                    (r = put(out, size, &o, passphrase, n, true)) < 0 ||
                    (r = put(out, size, &o, quote ? "\";" : ";", quote ? 2 : 1, false)) < 0)
                        goto fail;
        }
        if (hidden && (r = put(out, size, &o, "H:true;", 7, false)) < 0)
                goto fail;
        if ((r = put(out, size, &o, ";", 1, false)) < 0)
                goto fail;
        return 0;
fail:
        explicit_bzero(out, size);
        return r;
}

/* DPP */

static bool b64_char(char c)
{
        return isalnum((unsigned char)c) || c == '+' || c == '/';
}

int dpp_uri_parse(const char *text, size_t len, DppUri *ret, char *error, size_t esize)
{
        DppUri d = {};
        bool has_key = false, closed = false;
        size_t i = 4;

        error[0] = 0;
        if (len > WIFI_URI_MAX)
                return fail(error, esize, "DPP: text longer than %d bytes", WIFI_URI_MAX);
        if (len < 4 || strncmp(text, "DPP:", 4) != 0)
                return fail(error, esize, "not a DPP: text (it must start with DPP:)");
        while (i < len) {
                const char *v;
                size_t n, end;
                char tok;

                if (text[i] == ';') {
                        closed = true;
                        i++;
                        break;
                }
                if (i + 1 >= len || text[i + 1] != ':')
                        return fail(error, esize, "DPP: a token without a LETTER: before it");
                tok = text[i];
                v = text + i + 2;
                for (end = i + 2; end < len && text[end] != ';'; end++)
                        if (text[end] == 0)
                                return fail(error, esize, "DPP: token %c: holds a NUL byte", tok);
                if (end >= len)
                        return fail(error, esize, "DPP: token %c: does not end with ;", tok);
                n = end - (i + 2);
                switch (tok) {
                case 'C':
                        if (n == 0 || n >= sizeof(d.channels))
                                return fail(error, esize, "DPP: channel list of %zu bytes", n);
                        for (size_t j = 0; j < n; j++)
                                if (!isdigit((unsigned char)v[j]) && v[j] != '/' && v[j] != ',')
                                        return fail(error, esize,
                                                    "DPP: channel list must be CLASS/CHANNEL,...");
                        memcpy(d.channels, v, n);
                        d.channels[n] = 0;
                        break;
                case 'M':
                        if (n != 12 || !all_hex(v, 12))
                                return fail(error, esize,
                                            "DPP: MAC address must be 12 hex "
                                            "digits");
                        for (size_t j = 0; j < 6; j++)
                                snprintf(d.mac + 3 * j, sizeof(d.mac) - 3 * j, "%c%c%s",
                                         tolower((unsigned char)v[2 * j]),
                                         tolower((unsigned char)v[2 * j + 1]), j < 5 ? ":" : "");
                        break;
                case 'I':
                case 'H': {
                        char *dst = tok == 'I' ? d.info : d.host;
                        if (n >= sizeof(d.info) || !printable_ascii(v, n))
                                return fail(error, esize,
                                            "DPP: %c: must be at most 63 printable characters",
                                            tok);
                        memcpy(dst, v, n);
                        dst[n] = 0;
                        break;
                }
                case 'V': {
                        unsigned ver = 0;
                        for (size_t j = 0; j < n && j < 4; j++)
                                ver = isdigit((unsigned char)v[j])
                                          ? ver * 10 + (unsigned)(v[j] - '0')
                                          : 1000;
                        if (n < 1 || n > 3 || ver < 1 || ver > 255)
                                return fail(error, esize, "DPP: version must be 1 to 255");
                        d.version = (uint8_t)ver;
                        break;
                }
                case 'K': {
                        size_t pad = 0;
                        if (has_key)
                                return fail(error, esize, "DPP: two public keys (K:)");
                        if (n == 0 || n % 4 != 0)
                                return fail(error, esize, "DPP: public key is not base64");
                        for (size_t j = 0; j < n; j++) {
                                if (v[j] == '=' && j >= n - 2)
                                        pad++;
                                else if (!b64_char(v[j]) || pad)
                                        return fail(error, esize, "DPP: public key is not base64");
                        }
                        d.key_len = n / 4 * 3 - pad;
                        has_key = true;
                        break;
                }
                default:
                        break; /* B:, later tokens: skipped, as hostap does */
                }
                i = end + 1;
        }
        if (!closed)
                return fail(error, esize, "DPP: text does not end with ;;");
        for (; i < len; i++)
                if (!isspace((unsigned char)text[i]))
                        return fail(error, esize, "DPP: text goes on after the closing ;;");
        if (!has_key)
                return fail(error, esize, "DPP: text without a public key (K:)");
        *ret = d;
        return 0;
}
