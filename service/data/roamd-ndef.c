/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>
#include <strings.h>

#include "roam-macro.h"
#include "roam-text.h"
#include "roamd-ndef.h"

/* Written here: Debian 12 has no NDEF library for C (libnfc reads tags but does not parse NDEF;
 * neard's parser is internal to neard, which Debian does not ship). The formats are length-
 * prefixed records and TLVs that need only bounds checks. */

enum {
        NDEF_MB = 0x80,
        NDEF_ME = 0x40,
        NDEF_CF = 0x20,
        NDEF_SR = 0x10,
        NDEF_IL = 0x08,
        NDEF_TNF_MASK = 0x07,

        EIR_NAME_SHORT = 0x08,
        EIR_NAME_COMPLETE = 0x09,
        EIR_CLASS = 0x0d,
        EIR_HASH192 = 0x0e,
        EIR_RAND192 = 0x0f,
        EIR_APPEARANCE = 0x19,
        EIR_LE_ADDRESS = 0x1b,
        EIR_LE_ROLE = 0x1c,
        EIR_HASH256 = 0x1d,
        EIR_RAND256 = 0x1e,
        EIR_LE_SC_CONFIRM = 0x22,
        EIR_LE_SC_RANDOM = 0x23,

        WSC_ATTR_AUTH_TYPE = 0x1003,
        WSC_ATTR_CREDENTIAL = 0x100e,
        WSC_ATTR_ENCR_TYPE = 0x100f,
        WSC_ATTR_MAC = 0x1020,
        WSC_ATTR_NETWORK_INDEX = 0x1026,
        WSC_ATTR_NETWORK_KEY = 0x1027,
        WSC_ATTR_OOB_PASSWORD = 0x102c,
        WSC_ATTR_SSID = 0x1045,
        WSC_ATTR_UUID_E = 0x1047,
        WSC_ATTR_VENDOR_EXT = 0x1049,
        WSC_ATTR_VERSION = 0x104a,
};

#define MIME_BT_EP  "application/vnd.bluetooth.ep.oob"
#define MIME_BT_LE  "application/vnd.bluetooth.le.oob"
#define MIME_WSC    "application/vnd.wfa.wsc"
#define WSC_MAX_PWD 32

static const char *const carrier_power_state_table[_CARRIER_POWER_MAX] = {
    [CARRIER_POWER_INACTIVE] = "inactive",
    [CARRIER_POWER_ACTIVE] = "active",
    [CARRIER_POWER_ACTIVATING] = "activating",
    [CARRIER_POWER_UNKNOWN] = "unknown",
};
DEFINE_STRING_TABLE_LOOKUP(carrier_power_state, CarrierPowerState)

static const char *const ndef_carrier_kind_table[_NDEF_CARRIER_MAX] = {
    [NDEF_CARRIER_BLUETOOTH] = "bluetooth",
    [NDEF_CARRIER_BLUETOOTH_LE] = "bluetooth-le",
    [NDEF_CARRIER_WIFI] = "wifi",
};
DEFINE_STRING_TABLE_LOOKUP(ndef_carrier_kind, NdefCarrierKind)

static const char *const ndef_handover_kind_table[_NDEF_HANDOVER_MAX] = {
    [NDEF_HANDOVER_NONE] = "tag",
    [NDEF_HANDOVER_SELECT] = "handover-select",
    [NDEF_HANDOVER_REQUEST] = "handover-request",
};

const char *ndef_handover_kind_to_string(NdefHandoverKind k)
{
        if ((int)k < 0 || k >= _NDEF_HANDOVER_MAX)
                return NULL;
        return ndef_handover_kind_table[k];
}

_printf_(3, 4) static int fail(char *error, size_t size, const char *fmt, ...)
{
        va_list ap;

        if (error && size > 0) {
                va_start(ap, fmt);
                vsnprintf(error, size, fmt, ap);
                va_end(ap);
        }
        return -EBADMSG;
}

static void record_done(NdefRecord *r)
{
        free(r->type);
        free(r->id);
        erase_and_free(r->payload); /* a WSC record's payload holds the network key */
        *r = (NdefRecord){};
}

void ndef_message_erase(NdefMessage *m)
{
        for (size_t i = 0; m && i < m->n_records; i++)
                if (m->records[i].payload)
                        explicit_bzero(m->records[i].payload, m->records[i].payload_len);
}

void ndef_message_done(NdefMessage *m)
{
        if (!m)
                return;
        ndef_message_erase(m);
        for (size_t i = 0; i < m->n_records; i++)
                record_done(&m->records[i]);
        free(m->records);
        *m = (NdefMessage){};
}

void ndef_handover_erase(NdefHandover *h)
{
        if (h)
                explicit_bzero(h, sizeof(*h));
}

NdefHandover *ndef_handover_free(NdefHandover *h)
{
        ndef_handover_erase(h);
        free(h);
        return NULL;
}

bool ndef_record_is(const NdefRecord *r, NdefTnf tnf, const char *type)
{
        /* MIME types compare case-insensitively (RFC 2045); well-known types exactly. */
        if (r->tnf != tnf || r->type_len != strlen(type))
                return false;
        return tnf == NDEF_TNF_MEDIA ? strcasecmp(r->type, type) == 0 : streq(r->type, type);
}

static bool type_chars_ok(const uint8_t *p, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (p[i] < 0x20 || p[i] > 0x7e)
                        return false;
        return true;
}

/* One record header and its fields; advances *pos. */
typedef struct RawRecord {
        uint8_t flags;
        const uint8_t *type, *id, *payload;
        size_t type_len, id_len, payload_len;
} RawRecord;

static int read_raw(const uint8_t *buf, size_t len, size_t *pos, size_t index, RawRecord *r,
                    char *error, size_t esize)
{
        size_t p = *pos, left;

        if (len - p < 2)
                return fail(error, esize, "record %zu: header cut short", index + 1);
        r->flags = buf[p++];
        r->type_len = buf[p++];
        if (r->flags & NDEF_SR) {
                if (len - p < 1)
                        return fail(error, esize, "record %zu: header cut short", index + 1);
                r->payload_len = buf[p++];
        } else {
                if (len - p < 4)
                        return fail(error, esize, "record %zu: header cut short", index + 1);
                r->payload_len = (size_t)buf[p] << 24 | (size_t)buf[p + 1] << 16 |
                                 (size_t)buf[p + 2] << 8 | buf[p + 3];
                p += 4;
        }
        r->id_len = 0;
        if (r->flags & NDEF_IL) {
                if (len - p < 1)
                        return fail(error, esize, "record %zu: header cut short", index + 1);
                r->id_len = buf[p++];
        }
        /* Each length is compared with what is left, never summed first: a 4 GiB payload
         * length must not wrap around. */
        left = len - p;
        if (r->type_len > left)
                return fail(error, esize, "record %zu: type runs past the end", index + 1);
        r->type = buf + p;
        p += r->type_len, left -= r->type_len;
        if (r->id_len > left)
                return fail(error, esize, "record %zu: ID runs past the end", index + 1);
        r->id = buf + p;
        p += r->id_len, left -= r->id_len;
        if (r->payload_len > left)
                return fail(error, esize,
                            "record %zu: payload of %zu bytes runs past the end (%zu left)",
                            index + 1, r->payload_len, left);
        r->payload = buf + p;
        p += r->payload_len;
        *pos = p;
        return 0;
}

static int check_tnf(const RawRecord *r, size_t index, char *error, size_t esize)
{
        uint8_t tnf = r->flags & NDEF_TNF_MASK;

        switch (tnf) {
        case NDEF_TNF_EMPTY:
                if (r->type_len || r->id_len || r->payload_len)
                        return fail(error, esize, "record %zu: an empty record carries data",
                                    index + 1);
                break;
        case NDEF_TNF_UNKNOWN:
        case NDEF_TNF_UNCHANGED:
                if (r->type_len)
                        return fail(error, esize, "record %zu: type given for TNF %u", index + 1,
                                    tnf);
                break;
        case NDEF_TNF_RESERVED:
                return fail(error, esize, "record %zu: reserved TNF 7", index + 1);
        default:
                if (r->type_len == 0)
                        return fail(error, esize, "record %zu: TNF %u without a type", index + 1,
                                    tnf);
                if (!type_chars_ok(r->type, r->type_len))
                        return fail(error, esize, "record %zu: type is not printable ASCII",
                                    index + 1);
        }
        return 0;
}

static int copy_bytes(uint8_t **dst, const uint8_t *src, size_t n, bool nul)
{
        *dst = malloc(n + (nul ? 1 : 0) + 1);
        if (!*dst)
                return -ENOMEM;
        if (n > 0)
                memcpy(*dst, src, n);
        (*dst)[n] = 0;
        return 0;
}

int ndef_message_parse(const uint8_t *buf, size_t len, NdefMessage *ret, char *error, size_t esize)
{
        NdefMessage m = {};
        size_t pos = 0, index = 0;
        bool in_chunk = false, ended = false;
        int r;

        if (len == 0)
                return fail(error, esize, "the message is empty");
        if (len > NDEF_MAX_SIZE)
                return fail(error, esize, "the message is larger than %d bytes", NDEF_MAX_SIZE);

        m.records = calloc(NDEF_MAX_RECORDS, sizeof(NdefRecord));
        if (!m.records)
                return -ENOMEM;

        while (pos < len) {
                RawRecord raw = {};
                uint8_t tnf;

                if (ended) {
                        r = fail(error, esize, "%zu bytes after the last record", len - pos);
                        goto fail;
                }
                r = read_raw(buf, len, &pos, index, &raw, error, esize);
                if (r < 0)
                        goto fail;
                tnf = raw.flags & NDEF_TNF_MASK;
                r = check_tnf(&raw, index, error, esize);
                if (r < 0)
                        goto fail;
                if ((index == 0) != !!(raw.flags & NDEF_MB)) {
                        r = fail(error, esize,
                                 index == 0 ? "record 1: message-begin flag missing"
                                            : "record %zu: message-begin flag inside a message",
                                 index + 1);
                        goto fail;
                }

                if (in_chunk) {
                        /* A middle or last chunk: TNF unchanged, no type, no ID. */
                        NdefRecord *cur = &m.records[m.n_records - 1];
                        uint8_t *grown;

                        if (tnf != NDEF_TNF_UNCHANGED || raw.id_len) {
                                r = fail(error, esize,
                                         "record %zu: a following chunk must have TNF 6 and no ID",
                                         index + 1);
                                goto fail;
                        }
                        if (raw.payload_len > NDEF_MAX_SIZE - cur->payload_len) {
                                r = fail(error, esize, "record %zu: chunked payload too large",
                                         index + 1);
                                goto fail;
                        }
                        /* Not realloc(): it would free the old block (key and all)
                         * unwiped. */
                        grown = malloc(cur->payload_len + raw.payload_len + 1);
                        if (!grown) {
                                r = -ENOMEM;
                                goto fail;
                        }
                        memcpy(grown, cur->payload, cur->payload_len);
                        erase_and_free(cur->payload);
                        cur->payload = grown;
                        if (raw.payload_len > 0)
                                memcpy(cur->payload + cur->payload_len, raw.payload,
                                       raw.payload_len);
                        cur->payload_len += raw.payload_len;
                        cur->payload[cur->payload_len] = 0;
                        in_chunk = raw.flags & NDEF_CF;
                } else {
                        NdefRecord *cur;

                        if (tnf == NDEF_TNF_UNCHANGED) {
                                r = fail(error, esize, "record %zu: TNF 6 outside a chunked record",
                                         index + 1);
                                goto fail;
                        }
                        if (m.n_records >= NDEF_MAX_RECORDS) {
                                r = fail(error, esize, "more than %d records", NDEF_MAX_RECORDS);
                                goto fail;
                        }
                        cur = &m.records[m.n_records++];
                        cur->tnf = tnf;
                        cur->chunked = raw.flags & NDEF_CF;
                        cur->type_len = raw.type_len;
                        cur->id_len = raw.id_len;
                        cur->payload_len = raw.payload_len;
                        if (copy_bytes((uint8_t **)&cur->type, raw.type, raw.type_len, true) < 0 ||
                            copy_bytes(&cur->id, raw.id, raw.id_len, false) < 0 ||
                            copy_bytes(&cur->payload, raw.payload, raw.payload_len, false) < 0) {
                                r = -ENOMEM;
                                goto fail;
                        }
                        in_chunk = raw.flags & NDEF_CF;
                }
                if (raw.flags & NDEF_ME) {
                        if (raw.flags & NDEF_CF) {
                                r = fail(error, esize,
                                         "record %zu: message ends inside a chunked record",
                                         index + 1);
                                goto fail;
                        }
                        ended = true;
                }
                index++;
        }
        if (!ended) {
                r = fail(error, esize,
                         in_chunk ? "the message ends inside a chunked record"
                                  : "the last record lacks the message-end flag");
                goto fail;
        }
        *ret = m;
        return 0;
fail:
        ndef_message_done(&m);
        return r;
}

/* Bluetooth OOB data (Core Specification Supplement, part A; NFC Forum / Bluetooth SIG
 * "Bluetooth Secure Simple Pairing Using NFC"). */

static void format_address(char out[18], const uint8_t le[6])
{
        snprintf(out, 18, "%02X:%02X:%02X:%02X:%02X:%02X", le[5], le[4], le[3], le[2], le[1],
                 le[0]);
}

static bool all_zero(const uint8_t *p, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (p[i])
                        return false;
        return true;
}

/* Valid UTF-8 without controls or invisible bidi/zero-width characters (roam-text.c): the
 * name goes on the bus and to terminals. */
static bool utf8_text_ok(const uint8_t *p, size_t n)
{
        char out[ROAM_TEXT_CLEAN_MAX(sizeof(((BtOob *)NULL)->name))];
        size_t len;

        return n <= sizeof(((BtOob *)NULL)->name) &&
               roam_text_clean_chunk((const char *)p, n, ROAM_TEXT_STRICT, false, out, &len) >= 0;
}

static int eir_fixed(uint8_t type, size_t dlen, size_t want, char *error, size_t esize)
{
        if (dlen != want)
                return fail(error, esize, "EIR/AD type 0x%02x has %zu bytes, not %zu", type, dlen,
                            want);
        return 0;
}

static int parse_eir(const uint8_t *p, size_t n, BtOob *o, bool *has_le_addr, char *error,
                     size_t esize)
{
        bool seen_complete = false;
        int r;

        for (size_t i = 0; i < n;) {
                size_t l = p[i], dlen;
                uint8_t type;
                const uint8_t *d;

                if (l == 0) /* the significant part ends; the rest is padding */
                        break;
                if (l > n - i - 1)
                        return fail(error, esize, "EIR/AD structure at byte %zu runs past the end",
                                    i);
                type = p[i + 1];
                d = p + i + 2;
                dlen = l - 1;
                switch (type) {
                case EIR_NAME_SHORT:
                case EIR_NAME_COMPLETE:
                        if (dlen == 0 || dlen >= sizeof(o->name) || !utf8_text_ok(d, dlen))
                                return fail(error, esize,
                                            "the device name is not valid UTF-8 text");
                        /* A complete name beats a shortened one, whatever the order. */
                        if (type == EIR_NAME_COMPLETE || !seen_complete) {
                                memcpy(o->name, d, dlen);
                                o->name[dlen] = 0;
                                o->name_complete = type == EIR_NAME_COMPLETE;
                                seen_complete = seen_complete || o->name_complete;
                        }
                        break;
                case EIR_CLASS:
                        if ((r = eir_fixed(type, dlen, 3, error, esize)) < 0)
                                return r;
                        o->device_class = d[0] | d[1] << 8 | (uint32_t)d[2] << 16;
                        o->has_class = true;
                        break;
                case EIR_APPEARANCE:
                        if ((r = eir_fixed(type, dlen, 2, error, esize)) < 0)
                                return r;
                        o->appearance = d[0] | d[1] << 8;
                        o->has_appearance = true;
                        break;
                case EIR_HASH192:
                case EIR_RAND192:
                case EIR_HASH256:
                case EIR_RAND256:
                case EIR_LE_SC_CONFIRM:
                case EIR_LE_SC_RANDOM:
                        if ((r = eir_fixed(type, dlen, 16, error, esize)) < 0)
                                return r;
                        if (type == EIR_HASH192)
                                memcpy(o->hash192, d, 16), o->has_hash192 = true;
                        else if (type == EIR_RAND192)
                                memcpy(o->rand192, d, 16), o->has_rand192 = true;
                        else if (type == EIR_HASH256 || type == EIR_LE_SC_CONFIRM)
                                memcpy(o->hash256, d, 16), o->has_hash256 = true;
                        else
                                memcpy(o->rand256, d, 16), o->has_rand256 = true;
                        break;
                case EIR_LE_ADDRESS:
                        if ((r = eir_fixed(type, dlen, 7, error, esize)) < 0)
                                return r;
                        if (d[6] > 1)
                                return fail(error, esize, "LE address type %u is unknown", d[6]);
                        if (all_zero(d, 6))
                                return fail(error, esize, "the device address is all zero");
                        format_address(o->address, d);
                        o->address_random = d[6] == 1;
                        *has_le_addr = true;
                        break;
                case EIR_LE_ROLE:
                        if ((r = eir_fixed(type, dlen, 1, error, esize)) < 0)
                                return r;
                        if (d[0] > 3)
                                return fail(error, esize, "LE role %u is unknown", d[0]);
                        o->le_role = d[0];
                        o->has_le_role = true;
                        break;
                default: /* UUID lists, flags, manufacturer data: not needed to pair */
                        break;
                }
                i += l + 1;
        }
        return 0;
}

int ndef_bt_oob_parse(const uint8_t *p, size_t n, bool le, BtOob *ret, char *error, size_t esize)
{
        BtOob o = {};
        CLEANUP_ERASE(o); /* the OOB hash and randomizer are pairing secrets */
        bool has_le_addr = false;
        int r;

        if (le) {
                r = parse_eir(p, n, &o, &has_le_addr, error, esize);
                if (r < 0)
                        return r;
                if (!has_le_addr)
                        return fail(error, esize, "LE OOB data without an LE device address");
        } else {
                size_t oob_len;

                if (n < 8)
                        return fail(error, esize, "Bluetooth OOB data shorter than 8 bytes");
                /* The OOB data length counts itself and the address. Writers disagree on
                 * trailing bytes of the record, so only a length beyond the record fails. */
                oob_len = p[0] | p[1] << 8;
                if (oob_len < 8 || oob_len > n)
                        return fail(error, esize,
                                    "Bluetooth OOB data length %zu does not fit the record of %zu "
                                    "bytes",
                                    oob_len, n);
                if (all_zero(p + 2, 6))
                        return fail(error, esize, "the device address is all zero");
                format_address(o.address, p + 2);
                r = parse_eir(p + 8, oob_len - 8, &o, &has_le_addr, error, esize);
                if (r < 0)
                        return r;
        }
        if (o.has_hash192 != o.has_rand192 && !o.has_hash192)
                return fail(error, esize, "a randomizer R-192 without its hash C-192");
        if (o.has_hash256 != o.has_rand256 && !o.has_hash256)
                return fail(error, esize, "a randomizer R-256 without its hash C-256");
        *ret = o;
        return 0;
}

/* WiFi Simple Configuration attributes (WSC 2.0 specification, section 12). */

static uint16_t be16(const uint8_t *p)
{
        return (uint16_t)(p[0] << 8 | p[1]);
}

static int wsc_u16(const uint8_t *d, size_t dlen, const char *what, uint16_t *ret, char *error,
                   size_t esize)
{
        if (dlen != 2)
                return fail(error, esize, "WSC %s has %zu bytes, not 2", what, dlen);
        *ret = be16(d);
        return 0;
}

static int parse_credential(const uint8_t *p, size_t n, WscCredential *c, char *error, size_t esize)
{
        bool has_ssid = false, has_auth = false, has_encr = false;
        int r;

        for (size_t i = 0; i < n;) {
                uint16_t type, dlen;
                const uint8_t *d;

                if (n - i < 4)
                        return fail(error, esize, "WSC credential attribute header cut short");
                type = be16(p + i);
                dlen = be16(p + i + 2);
                if (dlen > n - i - 4)
                        return fail(error, esize, "WSC attribute 0x%04x runs past the end", type);
                d = p + i + 4;
                switch (type) {
                case WSC_ATTR_SSID:
                        if (has_ssid)
                                return fail(error, esize, "WSC credential with two SSIDs");
                        if (dlen == 0 || dlen > 32)
                                return fail(error, esize, "WSC SSID of %u bytes (1 to 32 allowed)",
                                            dlen);
                        memcpy(c->ssid, d, dlen);
                        c->ssid_len = dlen;
                        has_ssid = true;
                        break;
                case WSC_ATTR_AUTH_TYPE:
                        if ((r = wsc_u16(d, dlen, "authentication type", &c->auth_type, error,
                                         esize)) < 0)
                                return r;
                        has_auth = true;
                        break;
                case WSC_ATTR_ENCR_TYPE:
                        if ((r = wsc_u16(d, dlen, "encryption type", &c->encr_type, error, esize)) <
                            0)
                                return r;
                        has_encr = true;
                        break;
                case WSC_ATTR_NETWORK_KEY:
                        if (dlen > 64)
                                return fail(error, esize,
                                            "WSC network key of %u bytes (at most 64 allowed)",
                                            dlen);
                        /* Some writers NUL-terminate the passphrase. */
                        if (dlen > 0 && d[dlen - 1] == 0)
                                dlen--;
                        memcpy(c->key, d, dlen);
                        c->key_len = dlen;
                        break;
                case WSC_ATTR_MAC:
                        if (dlen != 6)
                                return fail(error, esize, "WSC MAC address of %u bytes", dlen);
                        if (all_zero(d, 6))
                                c->mac[0] = 0;
                        else
                                snprintf(c->mac, sizeof(c->mac), "%02x:%02x:%02x:%02x:%02x:%02x",
                                         d[0], d[1], d[2], d[3], d[4], d[5]);
                        break;
                case WSC_ATTR_NETWORK_INDEX:
                        if (dlen != 1)
                                return fail(error, esize, "WSC network index of %u bytes", dlen);
                        c->network_index = d[0];
                        break;
                default:
                        break;
                }
                i += 4 + (size_t)dlen;
        }
        if (!has_ssid)
                return fail(error, esize, "WSC credential without an SSID");
        if (!has_auth)
                return fail(error, esize, "WSC credential without an authentication type");
        if (!has_encr) {
                /* neard's tag writer and Android apps (WiFiKeyShare) write SSID, Auth Type and
                 * key only; wpa_supplicant's wps_process_cred() would refuse them, but the
                 * authentication type says all a join needs: WPA2 and mixed PSK networks use
                 * AES (CCMP), WPA-only ones TKIP, open ones nothing. Shared-key (WEP) says
                 * nothing of its cipher and stays refused. */
                if (c->auth_type & (WSC_AUTH_WPA2PSK | WSC_AUTH_WPA2))
                        c->encr_type = WSC_ENCR_AES;
                else if (c->auth_type & (WSC_AUTH_WPAPSK | WSC_AUTH_WPA))
                        c->encr_type = WSC_ENCR_TKIP;
                else if (c->auth_type == WSC_AUTH_OPEN)
                        c->encr_type = WSC_ENCR_NONE;
                else
                        return fail(error, esize,
                                    "WSC credential without an encryption type, and "
                                    "authentication type 0x%04x does not imply one",
                                    c->auth_type);
                c->encr_inferred = true;
        }
        return 0;
}

static bool is_credential_attr(uint16_t type)
{
        return type == WSC_ATTR_SSID || type == WSC_ATTR_AUTH_TYPE || type == WSC_ATTR_ENCR_TYPE ||
               type == WSC_ATTR_NETWORK_KEY || type == WSC_ATTR_NETWORK_INDEX;
}

int ndef_wsc_parse(const uint8_t *p, size_t n, WscInfo *ret, char *error, size_t esize)
{
        WscInfo w = {};
        CLEANUP_ERASE(w); /* its credentials' keys, on the failing returns too */
        bool bare = false;
        int r;

        /* A negotiated-handover carrier puts a 2-byte length before the WSC attributes (and
         * may append P2P attributes after them); a tag's record starts with an attribute. Every
         * WSC attribute type is 0x10xx, so the first byte tells them apart. */
        if (n >= 1 && p[0] != 0x10) {
                size_t wsc_len;

                if (n < 2)
                        return fail(error, esize, "WSC data cut short");
                wsc_len = be16(p);
                if (wsc_len > n - 2)
                        return fail(error, esize, "WSC length %zu runs past the end", wsc_len);
                p += 2;
                n = wsc_len;
        }
        for (size_t i = 0; i < n;) {
                uint16_t type, dlen;
                const uint8_t *d;

                if (n - i < 4)
                        return fail(error, esize, "WSC attribute header cut short");
                type = be16(p + i);
                dlen = be16(p + i + 2);
                if (dlen > n - i - 4)
                        return fail(error, esize, "WSC attribute 0x%04x runs past the end", type);
                d = p + i + 4;
                if (type == WSC_ATTR_CREDENTIAL) {
                        if (bare)
                                return fail(error, esize,
                                            "WSC record mixes a Credential and bare network "
                                            "attributes");
                        if (w.n_credentials >= WSC_MAX_CREDENTIALS)
                                return fail(error, esize, "more than %d WSC credentials",
                                            WSC_MAX_CREDENTIALS);
                        r = parse_credential(d, dlen, &w.credentials[w.n_credentials], error,
                                             esize);
                        if (r < 0)
                                return r;
                        w.n_credentials++;
                        w.credential_wrapped = true;
                } else if (is_credential_attr(type)) {
                        /* Without the wrapper the network attributes stand at the top. */
                        if (w.credential_wrapped)
                                return fail(error, esize,
                                            "WSC record mixes a Credential and bare network "
                                            "attributes");
                        bare = true;
                } else if (type == WSC_ATTR_OOB_PASSWORD) {
                        if (dlen < 22 || dlen > 22 + WSC_MAX_PWD)
                                return fail(
                                    error, esize,
                                    "WSC OOB device password of %u bytes (22 to %d allowed)", dlen,
                                    22 + WSC_MAX_PWD);
                        memcpy(w.public_key_hash, d, 20);
                        w.password_id = be16(d + 20);
                        w.has_password = true;
                } else if (type == WSC_ATTR_UUID_E) {
                        if (dlen != 16)
                                return fail(error, esize, "WSC UUID of %u bytes", dlen);
                        snprintf(w.uuid, sizeof(w.uuid),
                                 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x"
                                 "%02x",
                                 d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7], d[8], d[9], d[10],
                                 d[11], d[12], d[13], d[14], d[15]);
                } else if (type == WSC_ATTR_VENDOR_EXT && dlen >= 3 && d[0] == 0x00 &&
                           d[1] == 0x37 && d[2] == 0x2a) {
                        /* WFA vendor extension: subelements id, length, data. */
                        for (size_t j = 3; j < dlen;) {
                                if (dlen - j < 2 || d[j + 1] > dlen - j - 2)
                                        return fail(error, esize,
                                                    "WFA vendor extension subelement runs past "
                                                    "the end");
                                if (d[j] == 0x00 && d[j + 1] == 1)
                                        w.version2 = d[j + 2];
                                j += 2 + (size_t)d[j + 1];
                        }
                }
                i += 4 + (size_t)dlen;
        }
        if (bare) {
                r = parse_credential(p, n, &w.credentials[0], error, esize);
                if (r < 0)
                        return r;
                w.n_credentials = 1;
        }
        if (w.n_credentials == 0 && !w.has_password)
                return fail(error, esize, "WSC record holds neither a credential nor a password");
        *ret = w;
        return 0;
}

/* Connection Handover (NFC Forum Connection Handover 1.2-1.4). */

static int carrier_kind_of(const NdefRecord *r)
{
        if (ndef_record_is(r, NDEF_TNF_MEDIA, MIME_BT_EP))
                return NDEF_CARRIER_BLUETOOTH;
        if (ndef_record_is(r, NDEF_TNF_MEDIA, MIME_BT_LE))
                return NDEF_CARRIER_BLUETOOTH_LE;
        if (ndef_record_is(r, NDEF_TNF_MEDIA, MIME_WSC))
                return NDEF_CARRIER_WIFI;
        return -ENOENT;
}

static int parse_carrier(const NdefRecord *rec, CarrierPowerState power, NdefHandover *h,
                         char *error, size_t esize)
{
        int kind = carrier_kind_of(rec);
        NdefCarrier *c;
        int r;

        if (kind < 0) {
                h->n_ignored++;
                return 0;
        }
        if (h->n_carriers >= NDEF_MAX_CARRIERS)
                return fail(error, esize, "more than %d carriers", NDEF_MAX_CARRIERS);
        c = &h->carriers[h->n_carriers];
        *c = (NdefCarrier){.kind = kind, .power = power};
        if (kind == NDEF_CARRIER_WIFI)
                r = ndef_wsc_parse(rec->payload, rec->payload_len, &c->wsc, error, esize);
        else
                r = ndef_bt_oob_parse(rec->payload, rec->payload_len,
                                      kind == NDEF_CARRIER_BLUETOOTH_LE, &c->bt, error, esize);
        if (r < 0)
                return r;
        h->n_carriers++;
        return 0;
}

static const NdefRecord *find_by_id(const NdefMessage *m, const uint8_t *id, size_t n)
{
        for (size_t i = 0; i < m->n_records; i++)
                if (m->records[i].id_len == n && n > 0 && memcmp(m->records[i].id, id, n) == 0)
                        return &m->records[i];
        return NULL;
}

static int parse_ac(const NdefRecord *ac, const NdefMessage *outer, NdefHandover *h, char *error,
                    size_t esize)
{
        const uint8_t *p = ac->payload;
        size_t n = ac->payload_len, ref_len;
        const NdefRecord *carrier;

        if (n < 2)
                return fail(error, esize, "alternative carrier record shorter than 2 bytes");
        ref_len = p[1];
        if (ref_len == 0 || ref_len > n - 2)
                return fail(error, esize, "alternative carrier reference of %zu bytes is invalid",
                            ref_len);
        /* Auxiliary data references follow; they are length-checked but not needed. */
        if (n - 2 - ref_len < 1)
                return fail(error, esize, "alternative carrier record lacks its auxiliary count");
        for (size_t i = 2 + ref_len + 1, k = 0; k < p[2 + ref_len]; k++) {
                if (i >= n || p[i] > n - i - 1)
                        return fail(error, esize, "auxiliary data reference runs past the end");
                i += 1 + (size_t)p[i];
        }
        carrier = find_by_id(outer, p + 2, ref_len);
        if (!carrier)
                return fail(error, esize,
                            "alternative carrier refers to a record ID the message lacks");
        return parse_carrier(carrier, (CarrierPowerState)(p[0] & 0x03), h, error, esize);
}

int ndef_handover_parse(const uint8_t *buf, size_t len, NdefHandover *ret, char *error,
                        size_t esize)
{
        _cleanup_(ndef_message_done) NdefMessage m = {};
        NdefHandover h = {.kind = NDEF_HANDOVER_NONE};
        CLEANUP_ERASE(h); /* the keys of carriers parsed before a later one failed */
        const NdefRecord *hs = NULL;
        int r;

        r = ndef_message_parse(buf, len, &m, error, esize);
        if (r < 0)
                return r;

        for (size_t i = 0; i < m.n_records; i++) {
                const NdefRecord *rec = &m.records[i];

                if (ndef_record_is(rec, NDEF_TNF_WELL_KNOWN, "Hs") ||
                    ndef_record_is(rec, NDEF_TNF_WELL_KNOWN, "Hr")) {
                        if (i != 0)
                                return fail(error, esize,
                                            "a handover record must be the first record");
                        hs = rec;
                }
        }

        if (hs) {
                _cleanup_(ndef_message_done) NdefMessage inner = {};
                char inner_error[NDEF_ERROR_MAX];

                h.kind = hs->type[1] == 's' ? NDEF_HANDOVER_SELECT : NDEF_HANDOVER_REQUEST;
                if (hs->payload_len < 1)
                        return fail(error, esize, "handover record without a version");
                h.version = hs->payload[0];
                if (h.version >> 4 != 1)
                        return fail(error, esize, "handover version %u.%u is not supported",
                                    h.version >> 4, h.version & 0x0f);
                if (hs->payload_len > 1) {
                        r = ndef_message_parse(hs->payload + 1, hs->payload_len - 1, &inner,
                                               inner_error, sizeof(inner_error));
                        if (r < 0)
                                return fail(error, esize, "inside the handover record: %s",
                                            inner_error);
                }
                for (size_t i = 0; i < inner.n_records; i++) {
                        const NdefRecord *rec = &inner.records[i];

                        /* Handover records do not nest: one inside another is refused, so
                         * a deeply nested message costs one level of parsing. */
                        if (ndef_record_is(rec, NDEF_TNF_WELL_KNOWN, "Hs") ||
                            ndef_record_is(rec, NDEF_TNF_WELL_KNOWN, "Hr"))
                                return fail(error, esize,
                                            "a handover record nested in a handover record");
                        if (!ndef_record_is(rec, NDEF_TNF_WELL_KNOWN, "ac"))
                                continue; /* "cr", "err" and unknown local records */
                        r = parse_ac(rec, &m, &h, error, esize);
                        if (r < 0)
                                return r;
                }
        } else
                for (size_t i = 0; i < m.n_records; i++) {
                        r = parse_carrier(&m.records[i], CARRIER_POWER_UNKNOWN, &h, error, esize);
                        if (r < 0)
                                return r;
                }

        if (h.n_carriers == 0) {
                if (error && esize > 0)
                        snprintf(error, esize,
                                 "the message holds no Bluetooth or WiFi carrier (%zu records)",
                                 m.n_records);
                return -ENOMSG;
        }
        *ret = h;
        return 0;
}
