/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Pure parsing of what wpa_supplicant's control interface sends: the split between replies and
 * unsolicited events ("<N>" level prefix, "IFNAME=x " on the global interface), events into
 * name, positional arguments and key=value fields, key=value replies (STATUS, P2P_PEER), and
 * the WSC words of P2P peers (device type, config methods). No I/O; fuzzed. */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The largest datagram accepted from wpa_supplicant (its biggest replies, BSS and
 * SCAN_RESULTS, stay under this); anything larger is refused, never cut. */
#define WPA_MESSAGE_MAX 16384
#define WPA_FIELDS_MAX  32
#define WPA_IFNAME_MAX  64

typedef struct WpaMessage {
        bool event;
        int level;                   /* the <N> of an event (MSG_* of wpa_debug.h) */
        char ifname[WPA_IFNAME_MAX]; /* "IFNAME=" of the global interface, else "" */
        const char *text;            /* the event or reply text, inside the caller's buffer */
        size_t len;
} WpaMessage;

/* Classifies one datagram like wpa_ctrl.c does: starting with '<' or "IFNAME=" it is an event,
 * anything else a reply. -EBADMSG for an event with a broken prefix. */
int wpa_message_split(const char *buf, size_t len, WpaMessage *ret);

typedef struct WpaField {
        char *key; /* NULL: a positional argument */
        char *value;
} WpaField;

typedef struct WpaEvent {
        char *name; /* "P2P-DEVICE-FOUND", "CTRL-EVENT-CONNECTED", ... */
        char *rest; /* the text after the name and its space as sent, spaces kept (DPP's SSID) */
        WpaField fields[WPA_FIELDS_MAX];
        size_t n_fields;
        int level;
        char ifname[WPA_IFNAME_MAX];
} WpaEvent;

/* Parses an event text (without its <N> prefix). Values in '...' or "..." may hold spaces:
 * the quote ends at a quote followed by the end, or by " key=" or " [". -EBADMSG for control
 * characters, an empty name, too many fields or an unterminated quote. */
int wpa_event_parse(const char *text, size_t len, WpaEvent *ret);
void wpa_event_done(WpaEvent *e);
/* The value of key, or NULL. */
const char *wpa_event_get(const WpaEvent *e, const char *key);
/* The n-th positional argument (0-based), or NULL. */
const char *wpa_event_arg(const WpaEvent *e, size_t n);

/* A key=value reply (STATUS, P2P_PEER): lines "key=value". A first line without '=' (the
 * address P2P_PEER starts with) is stored under the key "". -EBADMSG for control
 * characters or too many lines; "FAIL" and "UNKNOWN COMMAND" give -EIO and -EOPNOTSUPP. */
typedef struct WpaKv {
        WpaField fields[64];
        size_t n_fields;
} WpaKv;

int wpa_kv_parse(const char *text, size_t len, WpaKv *ret);
void wpa_kv_done(WpaKv *kv);
const char *wpa_kv_get(const WpaKv *kv, const char *key);

/* Whether a reply is exactly "OK" (with or without its newline). */
bool wpa_reply_is_ok(const char *text, size_t len);

/* "02:00:00:00:01:00": six lowercase hex pairs. */
bool wpa_mac_valid(const char *s);

/* The WSC primary device type "category-OUI-subcategory" (wps_dev_type_bin2str) in words:
 * "TV", "phone", "printer", "computer", ... ("device" when unknown). -EINVAL when it is not
 * in that form. */
int wpa_device_type_word(const char *pri_dev_type, const char **ret);

/* WSC config methods (wps_defs.h) that matter to a person connecting. */
typedef enum WpaConfigMethod {
        WPA_CONFIG_PUSH_BUTTON = 1 << 0,
        WPA_CONFIG_DISPLAY = 1 << 1, /* the peer shows a PIN */
        WPA_CONFIG_KEYPAD = 1 << 2,  /* a PIN can be typed on the peer */
} WpaConfigMethod;

/* "0x188" -> flags; -EINVAL when not a hex number. */
int wpa_config_methods_parse(const char *s, unsigned *ret);

/* A WPS PIN as P2P_CONNECT takes it: 4 or 8 digits. */
bool wpa_pin_valid(const char *s);

/* "reason=REQUESTED" etc. of P2P-GROUP-REMOVED in lower-case words ("requested",
 * "formation-failed", "idle", "unavailable", "go-ending-session", "psk-failure",
 * "freq-conflict"); "unknown" for none or another. */
const char *wpa_group_removed_reason(const char *reason);
