/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* NFC Data Exchange Format (NFC Forum NDEF 1.0), Connection Handover (Hs/Hr with "ac"
 * alternative carrier records) and the two carriers roam acts on: Bluetooth BR/EDR and LE
 * out-of-band pairing data (application/vnd.bluetooth.ep.oob, .le.oob) and WiFi Simple Config
 * (application/vnd.wfa.wsc). A tag is outside input: every length is checked against what is
 * left, chunks are reassembled with a size cap, nesting is bounded, and a malformed message
 * fails as a whole with a sentence in `error`. */

#define NDEF_MAX_RECORDS  64
#define NDEF_MAX_SIZE     (64 * 1024)
#define NDEF_MAX_CARRIERS 8
#define NDEF_ERROR_MAX    160

typedef enum NdefTnf {
        NDEF_TNF_EMPTY = 0,
        NDEF_TNF_WELL_KNOWN = 1,
        NDEF_TNF_MEDIA = 2,
        NDEF_TNF_URI = 3,
        NDEF_TNF_EXTERNAL = 4,
        NDEF_TNF_UNKNOWN = 5,
        NDEF_TNF_UNCHANGED = 6,
        NDEF_TNF_RESERVED = 7,
} NdefTnf;

typedef struct NdefRecord {
        NdefTnf tnf;
        bool chunked; /* reassembled from chunks */
        char *type;   /* NUL-terminated copy; types are ASCII per the spec */
        size_t type_len;
        uint8_t *id;
        size_t id_len;
        uint8_t *payload;
        size_t payload_len;
} NdefRecord;

typedef struct NdefMessage {
        NdefRecord *records;
        size_t n_records;
} NdefMessage;

/* Parses one complete NDEF message (MB on the first record, ME on the last). */
int ndef_message_parse(const uint8_t *buf, size_t len, NdefMessage *ret, char *error,
                       size_t error_size);
/* Payloads may hold a WiFi key: ndef_message_done() wipes them (ndef_message_erase()) before
 * freeing, and so does every failure path of the parsers. */
void ndef_message_erase(NdefMessage *m);
void ndef_message_done(NdefMessage *m);
bool ndef_record_is(const NdefRecord *r, NdefTnf tnf, const char *type);

/* Connection Handover carrier power state (the low two bits of an "ac" record). */
typedef enum CarrierPowerState {
        CARRIER_POWER_INACTIVE,
        CARRIER_POWER_ACTIVE,
        CARRIER_POWER_ACTIVATING,
        CARRIER_POWER_UNKNOWN,
        _CARRIER_POWER_MAX,
        _CARRIER_POWER_INVALID = -EINVAL,
} CarrierPowerState;

const char *carrier_power_state_to_string(CarrierPowerState s);
CarrierPowerState carrier_power_state_from_string(const char *s);

typedef enum NdefCarrierKind {
        NDEF_CARRIER_BLUETOOTH,    /* BR/EDR, application/vnd.bluetooth.ep.oob */
        NDEF_CARRIER_BLUETOOTH_LE, /* application/vnd.bluetooth.le.oob */
        NDEF_CARRIER_WIFI,         /* application/vnd.wfa.wsc */
        _NDEF_CARRIER_MAX,
        _NDEF_CARRIER_INVALID = -EINVAL,
} NdefCarrierKind;

const char *ndef_carrier_kind_to_string(NdefCarrierKind k);
NdefCarrierKind ndef_carrier_kind_from_string(const char *s);

typedef struct BtOob {
        char address[18];    /* "AA:BB:CC:DD:EE:FF" */
        bool address_random; /* LE random address */
        char name[249];      /* complete, else shortened local name; UTF-8 checked */
        bool name_complete;
        uint32_t device_class; /* 24-bit Class of Device, 0 when absent */
        bool has_class;
        uint16_t appearance; /* LE appearance */
        bool has_appearance;
        uint8_t hash192[16], rand192[16], hash256[16], rand256[16];
        bool has_hash192, has_rand192, has_hash256, has_rand256;
        uint8_t le_role;
        bool has_le_role;
} BtOob;

/* WSC authentication and encryption type bits (WSC 2.0 specification, table 32/33). */
enum {
        WSC_AUTH_OPEN = 0x0001,
        WSC_AUTH_WPAPSK = 0x0002,
        WSC_AUTH_SHARED = 0x0004,
        WSC_AUTH_WPA = 0x0008,
        WSC_AUTH_WPA2 = 0x0010,
        WSC_AUTH_WPA2PSK = 0x0020,
        WSC_ENCR_NONE = 0x0001,
        WSC_ENCR_WEP = 0x0002,
        WSC_ENCR_TKIP = 0x0004,
        WSC_ENCR_AES = 0x0008,
};

#define WSC_MAX_CREDENTIALS 4

typedef struct WscCredential {
        uint8_t ssid[32];
        size_t ssid_len;
        uint16_t auth_type;
        uint16_t encr_type;
        uint8_t key[64];
        size_t key_len;
        char mac[18]; /* "" when absent or all zero */
        uint8_t network_index;
        /* The tag left the Encryption Type out (neard's writer, Android apps): encr_type was
         * inferred from auth_type (PSK or WPA2 -> AES, WPA only -> TKIP, open -> none). */
        bool encr_inferred;
} WscCredential;

typedef struct WscInfo {
        WscCredential credentials[WSC_MAX_CREDENTIALS];
        size_t n_credentials;
        bool credential_wrapped; /* inside a Credential (0x100E) attribute */
        /* A password token or a handover carrier (OOB Device Password, 0x102C). */
        bool has_password;
        uint16_t password_id;
        uint8_t public_key_hash[20];
        uint8_t version2; /* WFA Version2 subelement, 0 when absent */
        char uuid[37];    /* UUID-E of a handover request, "" when absent */
} WscInfo;

typedef struct NdefCarrier {
        NdefCarrierKind kind;
        CarrierPowerState power; /* CARRIER_POWER_UNKNOWN outside a handover record */
        BtOob bt;
        WscInfo wsc;
} NdefCarrier;

typedef enum NdefHandoverKind {
        NDEF_HANDOVER_NONE, /* bare carrier records (a static tag) */
        NDEF_HANDOVER_SELECT,
        NDEF_HANDOVER_REQUEST,
        _NDEF_HANDOVER_MAX,
        _NDEF_HANDOVER_INVALID = -EINVAL,
} NdefHandoverKind;

const char *ndef_handover_kind_to_string(NdefHandoverKind k);

typedef struct NdefHandover {
        NdefHandoverKind kind;
        uint8_t version; /* major << 4 | minor */
        NdefCarrier carriers[NDEF_MAX_CARRIERS];
        size_t n_carriers;
        size_t n_ignored; /* records of carriers roam does not handle */
} NdefHandover;

/* Parses a message and collects what roam can act on: the carriers of a Handover Select or
 * Request (in the order of their "ac" records, with power states) or, for a static tag, every
 * carrier record. -EBADMSG with a sentence in error on malformed input; -ENOMSG (with a
 * sentence) when the message is well formed but holds no Bluetooth or WiFi carrier. */
int ndef_handover_parse(const uint8_t *buf, size_t len, NdefHandover *ret, char *error,
                        size_t error_size);
/* A handover holds the tag's WiFi keys: wiped (all of it) when dropped. */
void ndef_handover_erase(NdefHandover *h);
NdefHandover *ndef_handover_free(NdefHandover *h);
static inline void ndef_handover_freep(NdefHandover **h)
{
        ndef_handover_free(*h);
}

/* The carrier parsers, usable on their own (a record payload). */
int ndef_bt_oob_parse(const uint8_t *p, size_t n, bool le, BtOob *ret, char *error,
                      size_t error_size);
int ndef_wsc_parse(const uint8_t *p, size_t n, WscInfo *ret, char *error, size_t error_size);
