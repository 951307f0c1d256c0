/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "roam-macro.h"
#include "roam-text.h"
#include "roam-words.h"
#include "roamd-client-wpa-parse.h"

/* wpa_supplicant prints SSIDs with printf_encode()/wpa_ssid_txt(), which never emit control
 * characters, and P2P device names after p2p_copy_filter_devname() (C0 controls become '_'); a
 * message with a C0 control did not come from it. Tabs and a final newline are fine. */
static bool text_clean(const char *s, size_t len)
{
        for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char)s[i];
                if (c < ' ' && c != '\n' && c != '\t')
                        return false;
        }
        return true;
}

/* A copy of a name, key or value: a P2P device name is whatever bytes the peer sent over the
 * air (DEL, broken UTF-8, C1 and bidi controls pass wpa_supplicant's filter), and sd-bus
 * refuses a reply with broken UTF-8 in it, so every piece is cleaned here (roam-text.c). */
static char *dup_clean(const char *p, size_t n)
{
        char *s;

        return roam_text_clean(p, n, 0, &s) < 0 ? NULL : s;
}

int wpa_message_split(const char *buf, size_t len, WpaMessage *ret)
{
        const char *p = buf, *end = buf + len;
        WpaMessage m = {};

        if (len > WPA_MESSAGE_MAX)
                return -EMSGSIZE;
        /* Global control interface: "IFNAME=wlan0 <3>EVENT" (ctrl_iface_unix.c,
         * wpa_supplicant_ctrl_iface_send()). */
        if (len >= 7 && memcmp(p, "IFNAME=", 7) == 0) {
                const char *sp = memchr(p + 7, ' ', (size_t)(end - p - 7));
                size_t n;

                if (!sp)
                        return -EBADMSG;
                n = (size_t)(sp - (p + 7));
                if (n == 0 || n >= sizeof(m.ifname))
                        return -EBADMSG;
                memcpy(m.ifname, p + 7, n);
                m.ifname[n] = 0;
                if (!roam_text_is_clean(m.ifname, 0))
                        return -EBADMSG;
                p = sp + 1;
                m.event = true;
        }
        if (p < end && *p == '<') {
                int level = 0;
                const char *q = p + 1;

                while (q < end && *q >= '0' && *q <= '9' && level < 1000)
                        level = level * 10 + (*q++ - '0');
                if (q == p + 1 || q >= end || *q != '>')
                        return -EBADMSG;
                m.level = level;
                m.event = true;
                p = q + 1;
        } else if (m.event)
                return -EBADMSG;
        m.text = p;
        m.len = (size_t)(end - p);
        *ret = m;
        return 0;
}

static bool is_key_char(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_' || c == '-' || c == '.';
}

/* Length of "key=" at p (0 when p does not start with one). */
static size_t key_len(const char *p, const char *end)
{
        const char *q = p;

        while (q < end && is_key_char(*q))
                q++;
        if (q == p || q >= end || *q != '=')
                return 0;
        return (size_t)(q - p);
}

/* Where a value quoted with q, starting after the opening quote at p, ends (pointing at the
 * closing quote), or NULL. */
static const char *quote_end(const char *p, const char *end, char q)
{
        for (const char *c = p; c < end; c++) {
                if (*c != q)
                        continue;
                if (c + 1 == end)
                        return c;
                if (c[1] != ' ')
                        continue;
                if (c + 2 == end || c[2] == '[' || key_len(c + 2, end) > 0)
                        return c;
        }
        return NULL;
}

void wpa_event_done(WpaEvent *e)
{
        if (!e)
                return;
        free(e->name);
        free(e->rest);
        e->rest = NULL;
        for (size_t i = 0; i < e->n_fields; i++) {
                free(e->fields[i].key);
                free(e->fields[i].value);
        }
        e->name = NULL;
        e->n_fields = 0;
}

int wpa_event_parse(const char *text, size_t len, WpaEvent *ret)
{
        const char *p = text, *end = text + len;
        WpaEvent e = {};

        while (end > p && (end[-1] == '\n' || end[-1] == ' '))
                end--;
        if (len > WPA_MESSAGE_MAX || !text_clean(p, (size_t)(end - p)) || memchr(p, '\n', end - p))
                return -EBADMSG;
        /* The name: up to the first space. */
        {
                const char *sp = p;
                while (sp < end && *sp != ' ')
                        sp++;
                if (sp == p)
                        return -EBADMSG;
                e.name = dup_clean(p, (size_t)(sp - p));
                if (!e.name)
                        return -ENOMEM;
                if (!*e.name) { /* nothing but characters the cleaner drops */
                        wpa_event_done(&e);
                        return -EBADMSG;
                }
                {
                        const char *re = text + len, *rs = sp + (sp < re && *sp == ' ');
                        while (re > rs && re[-1] == '\n')
                                re--;
                        if (re < rs)
                                re = rs;
                        if (memchr(rs, '\n', (size_t)(re - rs))) {
                                wpa_event_done(&e);
                                return -EBADMSG;
                        }
                        e.rest = strndup(rs, (size_t)(re - rs));
                        if (!e.rest) {
                                wpa_event_done(&e);
                                return -ENOMEM;
                        }
                }
                p = sp;
        }
        while (p < end) {
                WpaField f = {};
                size_t k;
                const char *v, *vend;

                while (p < end && *p == ' ')
                        p++;
                if (p >= end)
                        break;
                if (e.n_fields >= WPA_FIELDS_MAX) {
                        wpa_event_done(&e);
                        return -EBADMSG;
                }
                k = key_len(p, end);
                v = k > 0 ? p + k + 1 : p;
                if (v < end && (*v == '\'' || *v == '"') && k > 0) {
                        const char *c = quote_end(v + 1, end, *v);
                        if (!c) {
                                wpa_event_done(&e);
                                return -EBADMSG;
                        }
                        vend = c + 1;
                        f.value = dup_clean(v + 1, (size_t)(c - v - 1));
                } else {
                        vend = v;
                        while (vend < end && *vend != ' ')
                                vend++;
                        f.value = dup_clean(v, (size_t)(vend - v));
                }
                if (k > 0)
                        f.key = strndup(p, k); /* key_len(): [A-Za-z0-9_.-] only */
                if (!f.value || (k > 0 && !f.key)) {
                        free(f.key);
                        free(f.value);
                        wpa_event_done(&e);
                        return -ENOMEM;
                }
                e.fields[e.n_fields++] = f;
                p = vend;
        }
        *ret = e;
        return 0;
}

const char *wpa_event_get(const WpaEvent *e, const char *key)
{
        for (size_t i = 0; i < e->n_fields; i++)
                if (e->fields[i].key && streq(e->fields[i].key, key))
                        return e->fields[i].value;
        return NULL;
}

const char *wpa_event_arg(const WpaEvent *e, size_t n)
{
        for (size_t i = 0; i < e->n_fields; i++)
                if (!e->fields[i].key && n-- == 0)
                        return e->fields[i].value;
        return NULL;
}

static bool reply_is(const char *text, size_t len, const char *word)
{
        size_t n = strlen(word);

        return (len == n || (len == n + 1 && text[n] == '\n')) && memcmp(text, word, n) == 0;
}

bool wpa_reply_is_ok(const char *text, size_t len)
{
        return reply_is(text, len, "OK");
}

void wpa_kv_done(WpaKv *kv)
{
        if (!kv)
                return;
        for (size_t i = 0; i < kv->n_fields; i++) {
                free(kv->fields[i].key);
                free(kv->fields[i].value);
        }
        kv->n_fields = 0;
}

int wpa_kv_parse(const char *text, size_t len, WpaKv *ret)
{
        const char *p = text, *end = text + len;
        WpaKv kv = {};

        if (reply_is(text, len, "FAIL"))
                return -EIO;
        if (reply_is(text, len, "UNKNOWN COMMAND"))
                return -EOPNOTSUPP;
        if (len > WPA_MESSAGE_MAX || !text_clean(text, len))
                return -EBADMSG;
        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t)(end - p)), *eq;
                const char *lend = nl ? nl : end;
                WpaField f = {};

                if (lend == p) {
                        p = lend + 1;
                        continue;
                }
                if (kv.n_fields >= ELEMENTSOF(kv.fields)) {
                        wpa_kv_done(&kv);
                        return -EBADMSG;
                }
                eq = memchr(p, '=', (size_t)(lend - p));
                if (!eq && kv.n_fields > 0) {
                        wpa_kv_done(&kv);
                        return -EBADMSG;
                }
                f.key = eq ? dup_clean(p, (size_t)(eq - p)) : strdup("");
                f.value = eq ? dup_clean(eq + 1, (size_t)(lend - eq - 1))
                             : dup_clean(p, (size_t)(lend - p));
                if (!f.key || !f.value) {
                        free(f.key);
                        free(f.value);
                        wpa_kv_done(&kv);
                        return -ENOMEM;
                }
                kv.fields[kv.n_fields++] = f;
                p = lend + (nl ? 1 : 0);
        }
        *ret = kv;
        return 0;
}

const char *wpa_kv_get(const WpaKv *kv, const char *key)
{
        for (size_t i = 0; i < kv->n_fields; i++)
                if (streq(kv->fields[i].key, key))
                        return kv->fields[i].value;
        return NULL;
}

bool wpa_mac_valid(const char *s)
{
        if (!s || strlen(s) != 17)
                return false;
        for (size_t i = 0; i < 17; i++) {
                if (i % 3 == 2) {
                        if (s[i] != ':')
                                return false;
                } else if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i]))
                        return false;
        }
        return true;
}

/* WSC primary device types (Wi-Fi Simple Configuration 2.0, Table 41), category first; the
 * subcategory refines only where a person would say something else. */
typedef struct DevTypeWord {
        unsigned category, subcategory; /* subcategory 0: any */
        const char *word;
} DevTypeWord;

static const DevTypeWord dev_type_words[] = {
    {1, 5, "laptop"},        {1, 8, "laptop"},       {1, 9, "tablet"},        {1, 10, "laptop"},
    {1, 0, "computer"},      {2, 0, "keyboard"},     {3, 2, "scanner"},       {3, 0, "printer"},
    {4, 0, "camera"},        {5, 0, "storage"},      {6, 0, "router"},        {7, 1, "TV"},
    {7, 2, "picture frame"}, {7, 3, "projector"},    {7, 0, "display"},       {8, 4, "set-top box"},
    {8, 0, "media player"},  {9, 0, "game console"}, {10, 0, "phone"},        {11, 2, "speaker"},
    {11, 4, "headset"},      {11, 5, "headphones"},  {11, 0, "audio device"}, {12, 0, "dock"},
};

int wpa_device_type_word(const char *s, const char **ret)
{
        unsigned long cat, sub;
        char *end;

        /* wps_dev_type_bin2str(): "%u-%08X-%u". */
        if (!s || !isdigit((unsigned char)s[0]))
                return -EINVAL;
        cat = strtoul(s, &end, 10);
        if (*end != '-' || strlen(end) < 11 || end[9] != '-')
                return -EINVAL;
        for (size_t i = 1; i < 9; i++)
                if (!isxdigit((unsigned char)end[i]))
                        return -EINVAL;
        if (!isdigit((unsigned char)end[10]))
                return -EINVAL;
        sub = strtoul(end + 10, &end, 10);
        if (*end || cat > 65535 || sub > 65535)
                return -EINVAL;
        *ret = "device";
        for (size_t i = 0; i < ELEMENTSOF(dev_type_words); i++) {
                const DevTypeWord *w = &dev_type_words[i];
                if (w->category == cat && (w->subcategory == 0 || w->subcategory == sub)) {
                        *ret = w->word;
                        break;
                }
        }
        return 0;
}

int wpa_config_methods_parse(const char *s, unsigned *ret)
{
        unsigned long v;
        unsigned f = 0;
        char *end;

        if (!s || strncmp(s, "0x", 2) != 0 || !isxdigit((unsigned char)s[2]))
                return -EINVAL;
        v = strtoul(s + 2, &end, 16);
        if (*end || v > 0xffff)
                return -EINVAL;
        /* wps_defs.h: WPS_CONFIG_DISPLAY 0x0008, _PUSHBUTTON 0x0080, _KEYPAD 0x0100 (the
         * virtual/physical variants include these bits). */
        if (v & 0x0080)
                f |= WPA_CONFIG_PUSH_BUTTON;
        if (v & 0x0008)
                f |= WPA_CONFIG_DISPLAY;
        if (v & 0x0100)
                f |= WPA_CONFIG_KEYPAD;
        *ret = f;
        return 0;
}

bool wpa_pin_valid(const char *s)
{
        size_t n = s ? strlen(s) : 0;

        if (n != 4 && n != 8)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!isdigit((unsigned char)s[i]))
                        return false;
        return true;
}

const char *wpa_group_removed_reason(const char *reason)
{
        /* p2p_supplicant.c, wpas_p2p_group_delete(). */
        static const struct {
                const char *wire;
                RoamP2pReason reason;
        } table[] = {
            {"REQUESTED", ROAM_P2P_REASON_REQUESTED},
            {"FORMATION_FAILED", ROAM_P2P_REASON_FORMATION_FAILED},
            {"IDLE", ROAM_P2P_REASON_IDLE},
            {"UNAVAILABLE", ROAM_P2P_REASON_UNAVAILABLE},
            {"GO_ENDING_SESSION", ROAM_P2P_REASON_GO_ENDING_SESSION},
            {"PSK_FAILURE", ROAM_P2P_REASON_PSK_FAILURE},
            {"FREQ_CONFLICT", ROAM_P2P_REASON_FREQ_CONFLICT},
        };

        for (size_t i = 0; reason && i < ELEMENTSOF(table); i++)
                if (streq(reason, table[i].wire))
                        return roam_p2p_reason_to_string(table[i].reason);
        return roam_p2p_reason_to_string(ROAM_P2P_REASON_UNKNOWN);
}
