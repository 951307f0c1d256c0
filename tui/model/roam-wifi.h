/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

#include "roam-macro.h"

/* The client's model of a Wi-Fi link (org.roam1.WiFi, docs/dbus-api.md): its owner, its
 * networks and the join under way, read from roamd, and the words and bars every front end
 * shows for them. SSIDs are bytes from the radio: shown only through wifi_ssid_display(). */

#define ROAM_WIFI_INTERFACE "org.roam1.WiFi"
#define WIFI_SSID_MAX       32

/* How a join ended (JoinDone's result). connected and portal are joined: roamd says JoinDone
 * once the link's verdict after the join is decided, portal when it is a captive portal. */
typedef enum WifiJoinResult {
        WIFI_JOIN_CONNECTED,
        WIFI_JOIN_PORTAL,
        WIFI_JOIN_WRONG_KEY,
        WIFI_JOIN_WRONG_KEY_OR_OUT_OF_RANGE,
        WIFI_JOIN_AUTH_FAILED,
        WIFI_JOIN_NOT_FOUND,
        WIFI_JOIN_TIMEOUT,
        WIFI_JOIN_CANCELED,
        WIFI_JOIN_REFUSED,
        WIFI_JOIN_SHARED, /* a DPP configurator sent the network (JoinUri of a DPP: text) */
        _WIFI_JOIN_RESULT_MAX,
        _WIFI_JOIN_RESULT_INVALID = -EINVAL,
} WifiJoinResult;

const char *wifi_join_result_to_string(WifiJoinResult r);
WifiJoinResult wifi_join_result_from_string(const char *s);

/* The exit status of `roam wifi join` and `join-uri` for a result (roam(1)): 0 joined, 4 the
 * key or password was refused, 5 no such network, 6 refused (not allowed, or the owner said
 * no), 1 otherwise. */
#define WIFI_EXIT_WRONG_KEY 4
#define WIFI_EXIT_NOT_FOUND 5
#define WIFI_EXIT_REFUSED   6
int wifi_join_result_exit_status(WifiJoinResult r);

typedef struct WifiNetwork {
        uint8_t ssid[WIFI_SSID_MAX];
        size_t ssid_len;
        char *name; /* wifi_ssid_display() of ssid: safe for a terminal */
        int signal; /* dBm, 0 unknown or out of range */
        char *security;
        char *band;
        uint32_t bssids;
        bool known, connected, autoconnect, in_range;
        int32_t priority;
        uint64_t last_connected;
} WifiNetwork;

typedef struct WifiLink {
        char *path;
        char *name; /* the link's interface name */
        char *backend, *backend_why, *radio;
        bool scanning;
        uint64_t last_scan;
        uint32_t join_id;
        char *join_step;
        WifiNetwork *networks;
        size_t n_networks;
} WifiLink;

void wifi_link_done(WifiLink *l);
void wifi_networks_free(WifiNetwork *n, size_t count);

/* The SSID for a terminal: valid UTF-8 kept, controls and bidi/invisible characters left out
 * (each shown as '?' so two names cannot look alike by hiding one), broken bytes as \xNN;
 * an empty SSID is "(hidden network)". */
int wifi_ssid_display(const uint8_t *ssid, size_t len, char **ret);

/* Four bars for a signal: "▂▄▆█" with '_' for the missing ones (ASCII "||||" and '_' when
 * not utf8); "    " when out of range (0). */
void wifi_signal_bars(int dbm, bool utf8, char *buf, size_t size);
/* "excellent -48 dBm", or "out of range". */
void wifi_signal_words(int dbm, bool in_range, char *buf, size_t size);
/* The security in words: "open", "WPA2", "WPA2/WPA3", "enterprise (802.1X)", "WEP
 * (insecure)", "open, encrypted (OWE)", "password" (iwd, which does not tell WPA2 from WPA3);
 * "" when the owner did not say (a saved network out of range), "unknown security" for a word
 * this roam does not know. */
const char *wifi_security_words(const char *security);
/* The owner roam joins through, for people ("NetworkManager"); NULL for one roam cannot join
 * through (connman, none): then WiFiBackendWhy says why. */
const char *wifi_backend_words(const char *backend);
/* Whether the owner keeps a priority for known networks (SetPriority): iwd ranks them itself. */
bool wifi_backend_has_priority(const char *backend);
/* The priorities it takes: NetworkManager's autoconnect-priority -999..999, wpa_supplicant's
 * priority 0..1000000. */
void wifi_backend_priority_range(const char *backend, int32_t *lo, int32_t *hi);
/* Whether a network of that security needs a passphrase (a password, for enterprise). */
bool wifi_security_needs_secret(const char *security);

/* The link's org.roam1.WiFi properties from an a{sv} (GetAll, PropertiesChanged). */
int wifi_link_read_properties(sd_bus_message *m, WifiLink *l);
/* GetNetworks's a(aysa{sv}) into l's networks (replacing them), in the order people read:
 * connected, known in range, the others by signal, then known out of range. */
int wifi_link_read_networks(sd_bus_message *m, WifiLink *l);

/* Every Wi-Fi link (objects with org.roam1.WiFi) of a GetManagedObjects reply, with their
 * properties; their networks are not read. */
int wifi_links_parse_objects(sd_bus_message *m, WifiLink **ret, size_t *ret_n);
void wifi_links_free(WifiLink *l, size_t n);

/* The network whose SSID is ssid (len bytes), or NULL. */
WifiNetwork *wifi_link_find(const WifiLink *l, const uint8_t *ssid, size_t len);

/* RoamPropsReadFn of the WiFi interface (roam-props.h): userdata is the WifiLink. */
int wifi_link_read(sd_bus_message *props, void *userdata);

/* The TUI's and plain mode's: org.roam1.WiFi of one link followed on bus (its event loop):
 * the properties (GetAll after each PropertiesChanged, roam-props.h), the networks
 * (GetNetworks after each of those reads, asynchronously), and the join signals, handed to
 * the owner as they come. Actions are asynchronous calls whose answer comes to replied. */
typedef struct RoamWifiWatch RoamWifiWatch;

typedef enum WifiEventType {
        WIFI_EVENT_CHANGED,      /* the properties or the networks were read again */
        WIFI_EVENT_JOIN_STEP,    /* a = step, b = words */
        WIFI_EVENT_NEEDS_SECRET, /* a = kind, b = why */
        WIFI_EVENT_JOIN_DONE,    /* a = result, b = words */
        WIFI_EVENT_REPLIED,      /* a = the method; error set when roamd refused; id: Join's
                                  * and Enroll's, b: Enroll's DPP: URI (outside text: roamd
                                  * read it as a DPP: text; clean it for a terminal) */
        _WIFI_EVENT_MAX,
        _WIFI_EVENT_INVALID = -EINVAL,
} WifiEventType;

typedef struct WifiEvent {
        WifiEventType type;
        uint32_t id;
        const char *a, *b;
        const sd_bus_error *error;
} WifiEvent;

typedef void (*RoamWifiEventFn)(RoamWifiWatch *w, const WifiEvent *ev, void *userdata);

int roam_wifi_watch_new(sd_bus *bus, const char *path, RoamWifiEventFn fn, void *userdata,
                        RoamWifiWatch **ret);
RoamWifiWatch *roam_wifi_watch_free(RoamWifiWatch *w);
DEFINE_TRIVIAL_CLEANUP_FUNC(RoamWifiWatch *, roam_wifi_watch_free);
const WifiLink *roam_wifi_watch_get(const RoamWifiWatch *w);
const char *roam_wifi_watch_path(const RoamWifiWatch *w);
/* The properties and the networks were read at least once. */
bool roam_wifi_watch_loaded(const RoamWifiWatch *w);
/* roamd's refusal of the last read (NULL: none). */
const char *roam_wifi_watch_error(const RoamWifiWatch *w);

/* Asynchronous actions (one of each in flight; a second replaces the first's answer). */
int roam_wifi_watch_scan(RoamWifiWatch *w);
/* What an 802.1X join gives besides its password; NULL or "" leaves a field out. */
typedef struct WifiEapJoin {
        const char *eap; /* "peap" or "ttls" */
        const char *identity;
        const char *anonymous_identity;
        const char *ca_file; /* absolute; left out: the system's CA bundle */
        const char *domain;  /* the server certificate's domain */
} WifiEapJoin;

/* secret (may be NULL) and eap (NULL: not 802.1X; its secret is the password) go into the
 * request; the secret's copy in the message is the bus's to send, ours is the caller's to
 * wipe. */
int roam_wifi_watch_join(RoamWifiWatch *w, const uint8_t *ssid, size_t len, bool hidden,
                         const char *security, const char *secret, const WifiEapJoin *eap);
int roam_wifi_watch_secret(RoamWifiWatch *w, uint32_t id, const char *secret, const char *identity);
int roam_wifi_watch_cancel(RoamWifiWatch *w, uint32_t id);
int roam_wifi_watch_forget(RoamWifiWatch *w, const uint8_t *ssid, size_t len);
int roam_wifi_watch_autoconnect(RoamWifiWatch *w, const uint8_t *ssid, size_t len, bool on);
/* SetPriority: where the owner has one (NetworkManager, wpa_supplicant; iwd refuses). */
int roam_wifi_watch_priority(RoamWifiWatch *w, const uint8_t *ssid, size_t len, int32_t priority);
/* Enroll (Wi-Fi Easy Connect): REPLIED says the join id and the URI; then the join's signals. */
int roam_wifi_watch_enroll(RoamWifiWatch *w);

/* Appends {key: ay} to an a{sv} being built. */
int wifi_append_bytes(sd_bus_message *m, const char *key, const void *p, size_t n);
