/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

/* The client's model of a Wi-Fi link (org.roam1.WiFi, docs/dbus-api.md): its owner, its
 * networks and the join under way, read from roamd, and the words and bars every front end
 * shows for them. SSIDs are bytes from the radio: shown only through wifi_ssid_display(). */

#define ROAM_WIFI_INTERFACE "org.roam1.WiFi"
#define WIFI_SSID_MAX       32

/* How a join ended (JoinDone's result). */
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
 * (insecure)", "open, encrypted (OWE)", "password" (iwd, which does not tell WPA2 from WPA3). */
const char *wifi_security_words(const char *security);
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
