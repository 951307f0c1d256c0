/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* One Wi-Fi interface joined through the daemon that owns it (docs/wifi.md): NetworkManager
 * (roamd-wifi-nm.c), iwd (roamd-wifi-iwd.c) or a bare wpa_supplicant (roamd-wifi-wpa.c).
 * roamd never writes into an owner it does not own: roamd-wifi-owner.c decides the owner of
 * each interface (NM manages it -> NM; iwd has a station on it -> iwd; ConnMan runs Wi-Fi ->
 * ConnMan, refused in words; a wpa_supplicant control socket answers -> wpa_supplicant; else
 * none, with the reason), [WiFi] Backend= overrides, and the service core
 * (roamd-wifi.c, D-Bus in roamd-wifi-bus.c) talks to the chosen backend only through this
 * interface.
 *
 * The contract every backend keeps:
 * - Every operation is asynchronous and never blocks the loop. It answers through its callback
 *   exactly once, unless the caller cancels the operation first (wifi_op_cancel(): no callback
 *   after it). A synchronous error return means nothing was sent and no callback will run.
 * - -EOPNOTSUPP (synchronously) means the owner has no such thing; ops->why_not says why in
 *   words (the core turns it into org.roam1.Error.NotSupported).
 * - Errors are negative errno; `words` (may be NULL) is one sentence for people, e.g. the
 *   owner's own refusal. Never a secret in words, logs, or anything that leaves roamd, except
 *   WifiShare's passphrase, which the core hands out only behind org.roam1.wifi-share.
 * - A join reports through WifiJoinReport: any number of step() and needs_secret() calls, then
 *   exactly one done(); after done() the backend drops the join by itself and the handle is
 *   invalid (the core never cancels it then). The backend keeps secrets only for the life of
 *   the join and wipes them (explicit_bzero) on every path.
 * - Lower layers never call up: the backend tells the core what happens unasked (networks
 *   changed, scanning, owner gone) through WifiBackendEvents, given at construction. */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct Core Core;

#define WIFI_SSID_MAX  32
#define WIFI_WORDS_MAX 256

/* Who runs Wi-Fi on an interface; the words of WiFiBackend on the bus. */
typedef enum WifiOwner {
        WIFI_OWNER_NONE,
        WIFI_OWNER_NETWORKMANAGER,
        WIFI_OWNER_IWD,
        WIFI_OWNER_WPA_SUPPLICANT,
        WIFI_OWNER_CONNMAN, /* detected, never joined through (not supported yet) */
        _WIFI_OWNER_MAX,
        _WIFI_OWNER_INVALID = -EINVAL,
} WifiOwner;

/* "none", "networkmanager", "iwd", "wpa_supplicant", "connman" */
const char *wifi_owner_to_string(WifiOwner o);
WifiOwner wifi_owner_from_string(const char *s);
/* "NetworkManager", "iwd", "wpa_supplicant", "ConnMan", "nobody" */
const char *wifi_owner_to_name(WifiOwner o);

/* A network's security in words (GetNetworks' "security"). iwd names only the key type, so an
 * iwd PSK network is WIFI_SECURITY_PSK (WPA2 or WPA3: iwd does not say which). */
typedef enum WifiSecurity {
        WIFI_SECURITY_OPEN,
        WIFI_SECURITY_OWE,
        WIFI_SECURITY_WEP,
        WIFI_SECURITY_WPA,
        WIFI_SECURITY_WPA2,
        WIFI_SECURITY_WPA3,
        WIFI_SECURITY_WPA2_WPA3,
        WIFI_SECURITY_ENTERPRISE,
        WIFI_SECURITY_PSK,
        _WIFI_SECURITY_MAX,
        _WIFI_SECURITY_INVALID = -EINVAL,
} WifiSecurity;

/* "open", "owe", "wep", "wpa", "wpa2", "wpa3", "wpa2/wpa3", "enterprise", "psk" */
const char *wifi_security_to_string(WifiSecurity s);
WifiSecurity wifi_security_from_string(const char *s);

typedef enum WifiEap {
        WIFI_EAP_PEAP,
        WIFI_EAP_TTLS,
        _WIFI_EAP_MAX,
        _WIFI_EAP_INVALID = -EINVAL,
} WifiEap;

const char *wifi_eap_to_string(WifiEap e); /* "peap", "ttls" */
WifiEap wifi_eap_from_string(const char *s);

/* JoinStep's step. */
typedef enum WifiJoinStep {
        WIFI_JOIN_STEP_SCANNING,
        WIFI_JOIN_STEP_ASSOCIATING,
        WIFI_JOIN_STEP_AUTHENTICATING,
        WIFI_JOIN_STEP_CONFIGURING, /* the owner's own address configuration (NM, iwd) */
        WIFI_JOIN_STEP_CHECKING,    /* the core's: the link's verdict after the join */
        WIFI_JOIN_STEP_ENROLLING,   /* DPP: waiting for a configurator (roamd-wifi-dpp.h) */
        WIFI_JOIN_STEP_SHARING,     /* DPP: roamd's owner configures another device */
        _WIFI_JOIN_STEP_MAX,
        _WIFI_JOIN_STEP_INVALID = -EINVAL,
} WifiJoinStep;

const char *wifi_join_step_to_string(WifiJoinStep s);
WifiJoinStep wifi_join_step_from_string(const char *s);

/* JoinDone's result. A backend ends a join with any but PORTAL (the core's, after the
 * verdict); CANCELED only when the owner itself gave up (the core's cancel is silent). */
typedef enum WifiJoinResult {
        WIFI_JOIN_CONNECTED,
        WIFI_JOIN_WRONG_KEY,
        WIFI_JOIN_WRONG_KEY_OR_OUT_OF_RANGE, /* SAE: wpa_supplicant/iwd cannot tell */
        WIFI_JOIN_AUTH_FAILED,               /* EAP */
        WIFI_JOIN_NOT_FOUND,
        WIFI_JOIN_TIMEOUT,
        WIFI_JOIN_CANCELED,
        WIFI_JOIN_REFUSED, /* the owner refused; words carry its message */
        WIFI_JOIN_PORTAL,
        WIFI_JOIN_SHARED, /* DPP configurator: the device of the code received the network */
        _WIFI_JOIN_RESULT_MAX,
        _WIFI_JOIN_RESULT_INVALID = -EINVAL,
} WifiJoinResult;

/* "connected", "wrong-key", "wrong-key-or-out-of-range", "auth-failed", "not-found",
 * "timeout", "canceled", "refused", "portal", "shared" */
const char *wifi_join_result_to_string(WifiJoinResult r);
WifiJoinResult wifi_join_result_from_string(const char *s);

/* JoinNeedsSecret's kind and why. */
typedef enum WifiSecretKind {
        WIFI_SECRET_PASSPHRASE,
        WIFI_SECRET_IDENTITY_PASSWORD,
        _WIFI_SECRET_KIND_MAX,
        _WIFI_SECRET_KIND_INVALID = -EINVAL,
} WifiSecretKind;

const char *wifi_secret_kind_to_string(WifiSecretKind k); /* "passphrase", "identity+password" */
WifiSecretKind wifi_secret_kind_from_string(const char *s);

typedef enum WifiSecretWhy {
        WIFI_SECRET_WHY_FIRST,
        WIFI_SECRET_WHY_WRONG_KEY,
        WIFI_SECRET_WHY_KEY_FORMAT,
        _WIFI_SECRET_WHY_MAX,
        _WIFI_SECRET_WHY_INVALID = -EINVAL,
} WifiSecretWhy;

const char *wifi_secret_why_to_string(WifiSecretWhy w); /* "first", "wrong-key", "key-format" */
WifiSecretWhy wifi_secret_why_from_string(const char *s);

/* One network as the owner sees it: one entry per SSID (the strongest BSS's values), known
 * networks out of range included (in_range false). */
typedef struct WifiNetwork {
        uint8_t ssid[WIFI_SSID_MAX];
        size_t ssid_len; /* 0: a hidden network seen in range */
        WifiSecurity security;
        bool has_signal;
        int32_t signal_dbm; /* strongest BSS; NM's percentages mapped to dBm by the backend */
        uint32_t freq_mhz;  /* of that BSS; 0 unknown */
        uint32_t n_bssids;
        bool in_range, known, connected, autoconnect;
        bool has_priority; /* the owner has a priority for it */
        int32_t priority;
        uint64_t last_connected_usec; /* CLOCK_REALTIME; 0 unknown */
} WifiNetwork;

typedef struct WifiNetworkList {
        WifiNetwork *networks;
        size_t n;
} WifiNetworkList;

void wifi_network_list_done(WifiNetworkList *l);

/* What Join asks for. Strings are NUL-terminated and owned by the request;
 * wifi_join_request_done() wipes the secrets. security _WIFI_SECURITY_INVALID: the owner
 * chooses from what the network offers (never for hidden). eap _WIFI_EAP_INVALID: not 802.1X. */
typedef struct WifiJoinRequest {
        uint8_t ssid[WIFI_SSID_MAX];
        size_t ssid_len;
        bool hidden;
        WifiSecurity security;
        char *passphrase; /* NULL: none given (asked through needs_secret when needed) */
        size_t passphrase_len;
        WifiEap eap;
        char *identity, *anonymous_identity, *password;
        char *phase2;  /* "auth=MSCHAPV2" style is the backend's business; the words: "mschapv2" */
        char *ca_file; /* NULL: the system's CA bundle */
        char *domain;  /* the server's domain (suffix match) */
        bool remember;
        bool autoconnect;
} WifiJoinRequest;

void wifi_join_request_done(WifiJoinRequest *r);

/* JoinSecret's answer: passphrase for WIFI_SECRET_PASSPHRASE, identity+password for the
 * other kind; the core wipes it after the call returns (a backend copies what it keeps). */
typedef struct WifiSecrets {
        const char *passphrase;
        size_t passphrase_len;
        const char *identity;
        const char *password;
} WifiSecrets;

/* Share's answer: what a WIFI: URI needs. The passphrase is wiped by the core after use. */
typedef struct WifiShare {
        uint8_t ssid[WIFI_SSID_MAX];
        size_t ssid_len;
        WifiSecurity security;
        bool hidden;
        char *passphrase; /* NULL for open networks */
} WifiShare;

void wifi_share_done(WifiShare *s);

/* How a join reports (userdata is the core's join). words may be NULL for step(); done()'s
 * words are one sentence saying the result (the owner's message for REFUSED). */
typedef struct WifiJoinReport {
        void (*step)(WifiJoinStep step, const char *words, void *userdata);
        void (*needs_secret)(WifiSecretKind kind, WifiSecretWhy why, void *userdata);
        void (*done)(WifiJoinResult result, const char *words, void *userdata);
} WifiJoinReport;

/* What the backend tells the core unasked. */
typedef struct WifiBackendEvents {
        /* the networks or known networks changed (a scan ended, a network was added) */
        void (*networks_changed)(void *userdata);
        void (*scanning)(bool scanning, void *userdata);
        /* the owner stopped running this interface (its daemon or socket went, NM let go of
         * it): the core decides the owner again and frees this backend */
        void (*lost)(const char *words, void *userdata);
} WifiBackendEvents;

/* An operation in flight (a scan, a list, a join, ...), made by the backend. */
typedef struct WifiOp WifiOp;

typedef void (*WifiDoneFn)(int error, const char *words, void *userdata);
/* list and known: list is the backend's until the callback returns (the core copies). */
typedef void (*WifiListFn)(int error, const char *words, const WifiNetworkList *list,
                           void *userdata);
typedef void (*WifiShareFn)(int error, const char *words, const WifiShare *share, void *userdata);
/* enroll: roamd-wifi-dpp.h */
typedef struct WifiEnrollReport WifiEnrollReport;
typedef struct WifiEnroll WifiEnroll;

typedef enum WifiOpKind {
        WIFI_OP_SCAN,
        WIFI_OP_LIST,
        WIFI_OP_KNOWN,
        WIFI_OP_JOIN,
        WIFI_OP_FORGET,
        WIFI_OP_SET_AUTOCONNECT,
        WIFI_OP_SET_PRIORITY,
        WIFI_OP_SHARE,
        WIFI_OP_ENROLL,
        WIFI_OP_CONFIGURE,
        _WIFI_OP_MAX,
        _WIFI_OP_INVALID = -EINVAL,
} WifiOpKind;

typedef struct WifiBackend WifiBackend;

typedef struct WifiBackendOps {
        WifiOwner owner;
        /* Why an operation answered -EOPNOTSUPP, in words ("iwd has no priority for known
         * networks"). NULL for every operation the backend offers. */
        const char *(*why_not)(const WifiBackend *b, WifiOpKind op);

        int (*scan)(WifiBackend *b, WifiDoneFn cb, void *userdata, WifiOp **ret);
        /* networks in range and known ones out of range, one entry per SSID */
        int (*list)(WifiBackend *b, WifiListFn cb, void *userdata, WifiOp **ret);
        /* the owner's saved networks only */
        int (*known)(WifiBackend *b, WifiListFn cb, void *userdata, WifiOp **ret);
        /* The request is the backend's to read during the call only (it copies what it
         * keeps). One join at a time per interface: -EBUSY while one runs. */
        int (*join)(WifiBackend *b, const WifiJoinRequest *req, const WifiJoinReport *report,
                    void *userdata, WifiOp **ret);
        /* Answers the join's last needs_secret. -EINVAL: the join asked for nothing now. */
        int (*secret)(WifiOp *join, const WifiSecrets *secrets);
        int (*forget)(WifiBackend *b, const uint8_t *ssid, size_t ssid_len, WifiDoneFn cb,
                      void *userdata, WifiOp **ret);
        int (*set_autoconnect)(WifiBackend *b, const uint8_t *ssid, size_t ssid_len, bool on,
                               WifiDoneFn cb, void *userdata, WifiOp **ret);
        int (*set_priority)(WifiBackend *b, const uint8_t *ssid, size_t ssid_len, int32_t priority,
                            WifiDoneFn cb, void *userdata, WifiOp **ret);
        int (*share)(WifiBackend *b, const uint8_t *ssid, size_t ssid_len, WifiShareFn cb,
                     void *userdata, WifiOp **ret);
        /* DPP enrollee: a URI for a configurator (a phone) to scan, then what it sent
         * (roamd-wifi-dpp.h); wifi_enroll_free() stops it. */
        int (*enroll)(WifiBackend *b, const WifiEnrollReport *report, void *userdata,
                      WifiEnroll **ret);
        /* DPP configurator: sends the network the interface is on to the device of uri (a
         * DPP: text read already), reporting as a join (the passphrase asked with
         * needs_secret where the owner does not give it back; done SHARED); the object's
         * secret() answers, wifi_enroll_free() stops it. */
        int (*configure)(WifiBackend *b, const char *uri, const WifiJoinReport *report,
                         void *userdata, WifiEnroll **ret);

        /* Drops an operation: its callback never runs; a join is abandoned at the owner (the
         * network roamd added for it removed, the owner's activation deactivated). NULL-safe. */
        void (*cancel)(WifiOp *op);
        /* Cancels everything in flight (no callbacks) and frees the backend. NULL-safe. */
        WifiBackend *(*free)(WifiBackend *b);
} WifiBackendOps;

/* The part every backend starts with (its own struct embeds it first). */
struct WifiBackend {
        const WifiBackendOps *ops;
        Core *core;
        char *ifname;
        int ifindex;
        const WifiBackendEvents *events;
        void *userdata;
};

/* How each backend is made: for the interface ifname (ifindex), reporting to events. */
typedef int (*WifiBackendNewFn)(Core *core, const char *ifname, int ifindex,
                                const WifiBackendEvents *events, void *userdata, WifiBackend **ret);

/* The owner check each backend answers for detection (roamd-wifi-owner.c asks them in the
 * order above): manages is true when this owner runs ifname now; why says so in words
 * either way ("NetworkManager does not manage wlan0: unmanaged"). */
typedef void (*WifiProbeFn)(int error, bool manages, const char *why, void *userdata);
typedef int (*WifiBackendProbeFn)(Core *core, const char *ifname, WifiProbeFn cb, void *userdata,
                                  WifiOp **ret);

/* The fields every backend fills in, and the one free every caller uses. */
int wifi_backend_init(WifiBackend *b, const WifiBackendOps *ops, Core *core, const char *ifname,
                      int ifindex, const WifiBackendEvents *events, void *userdata);
void wifi_backend_done(WifiBackend *b);
static inline WifiBackend *wifi_backend_free(WifiBackend *b)
{
        return b ? b->ops->free(b) : NULL;
}
static inline void wifi_backend_freep(WifiBackend **b)
{
        wifi_backend_free(*b);
}

/* The SSID as a display name: printable ASCII and valid UTF-8 as is (control and bidi
 * characters escaped \xNN), other bytes \xNN; "(hidden network)" when empty. */
int wifi_ssid_to_display(const uint8_t *ssid, size_t len, char *out, size_t size);
