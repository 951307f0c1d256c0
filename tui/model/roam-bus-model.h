/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <systemd/sd-bus.h>

#include "roam-macro.h"

/* A plain C snapshot of what roamd exports (docs/dbus-api.md): the manager, its links and its
 * apps. Filled from Properties.GetAll on the manager and ObjectManager.GetManagedObjects (which
 * lists only the objects below /org/roam1: the links and the apps); the property parsers take
 * any a{sv}
 * (also the changed properties of a PropertiesChanged signal), so a live client can keep the
 * same model up to date. Strings are never NULL: a property roamd did not send reads as "". */

typedef enum RoamLinkState {
        ROAM_LINK_STATE_NO_CARRIER,
        ROAM_LINK_STATE_NO_ADDRESS,
        ROAM_LINK_STATE_LINK_LOCAL,
        ROAM_LINK_STATE_ADDRESSED,
        ROAM_LINK_STATE_ROUTABLE,
        _ROAM_LINK_STATE_MAX,
        _ROAM_LINK_STATE_INVALID = -EINVAL,
} RoamLinkState;

const char *roam_link_state_to_string(RoamLinkState s);
RoamLinkState roam_link_state_from_string(const char *s);

typedef struct RoamAddress {
        int family; /* 4 or 6, as on the bus */
        char *address;
        uint32_t prefix;
        char *scope; /* global, site, link, host */
} RoamAddress;

/* A gateway or a DNS server. The address of a gateway may be "" (a device route). */
typedef struct RoamServer {
        int family;
        char *address;
} RoamServer;

/* RFC 8908 data from Link.CaptivePortal; the has_* flags say which members roamd sent. */
typedef struct RoamCapport {
        bool has_captive;
        bool captive;
        char *user_portal_url; /* NULL when not sent */
        char *venue_info_url;
        bool has_seconds_remaining;
        uint64_t seconds_remaining;
        bool has_bytes_remaining;
        uint64_t bytes_remaining;
        bool has_can_extend_session;
        bool can_extend_session;
        char *error; /* why the API could not be used, NULL when it could */
} RoamCapport;

/* One verdict seen by this client (the history is kept client-side: roamd has none). */
#define ROAM_HISTORY_MAX 32
typedef struct RoamHistoryEntry {
        uint64_t seen;           /* when the client saw it, µs CLOCK_REALTIME */
        uint64_t last_probe;     /* the round that gave it, 0 when no round did (yet) */
        uint64_t probe_duration; /* µs */
        char verdict[16];        /* closed sets: longer strings are cut */
        char reason[24];
        unsigned count;     /* probe rounds that gave this verdict in a row (folded repeats) */
        uint64_t last_seen; /* when the newest of them was seen */
} RoamHistoryEntry;

typedef struct RoamLink {
        char *path; /* D-Bus object path */

        int index;
        char *name;
        char *bearer;
        char *bearer_source;
        char *kind;
        char *driver;
        char *hwaddr;
        uint32_t mtu;
        bool admin_up;
        bool carrier;
        char *oper_state;
        char *state; /* as roamd sent it; see state_enum */
        RoamLinkState state_enum;

        RoamAddress *addresses;
        size_t n_addresses;
        RoamServer *gateways;
        size_t n_gateways;
        RoamServer *dns;
        size_t n_dns;
        char *dns_source;
        char **domains;     /* NULL-terminated, never NULL */
        char **ntp_servers; /* the leases' NTP servers: NULL-terminated, never NULL */
        char *captive_portal_url;

        /* Connectivity (docs/connectivity.md): verdicts and reasons as roamd sent them. */
        char *connectivity;
        char *connectivity_reason;
        char *connectivity4;
        char *connectivity_reason4;
        char *connectivity6;
        char *connectivity_reason6;
        char *portal_url;
        char *nat64_prefix;    /* RFC 7050, "prefix/plen"; "" when none was found */
        uint32_t working_mtu4; /* the path MTU found behind a black hole; 0 unknown */
        uint32_t working_mtu6;
        uint64_t last_probe;     /* µs, CLOCK_REALTIME; 0 before the first round */
        uint64_t probe_duration; /* µs */
        RoamCapport capport;

        /* wpa_supplicant's view ("" and 0 when it does not run the link or does not know). */
        char *wifi_state;
        char *wifi_ssid;
        int wifi_signal;          /* dBm */
        uint32_t wifi_link_speed; /* Mbit/s */
        /* The network the link is on and its location (docs/firewall.md); "" when roamd sent
         * none (no network, or an older roamd). */
        char *network_id;
        char **network_identity; /* key, value, key, value, ..., NULL; never NULL */
        char *location;
        char *location_source; /* config, user, default */
        char *location_reason;
        /* the network's location when the kernel has not taken it yet: differs from location
         * (the one in force) then; "" from an older roamd */
        char *location_wanted;

        /* Client-side only: a ring of the newest verdicts, see roam_link_history_*(). */
        RoamHistoryEntry history[ROAM_HISTORY_MAX];
        size_t n_history;
        size_t history_next; /* where the next entry goes */
} RoamLink;

/* An app's policy and what it gets now (org.roam1.App). */
typedef struct RoamApp {
        char *path; /* D-Bus object path */

        char *id;
        char *access;   /* allow, lan, deny */
        char **bearers; /* NULL-terminated, never NULL; empty: every bearer */
        char *vpn;      /* any, required, forbidden */
        char *handover; /* sticky, move */
        char *source;   /* builtin, config, runtime */
        char *route4;   /* the link new flows take now, "" when none may */
        char *route6;
        char *state;           /* in words, as roamd sent it */
        uint64_t online_until; /* µs CLOCK_REALTIME, UINT64_MAX until released, 0: no grant */
        char **cgroups;        /* NULL-terminated, never NULL */
        int wake;              /* wake priority, -1 when not wake-listed (or an older roamd) */
        uint64_t wake_slice;   /* µs a turn lasts at most (WakeSlice=), 0 unknown */
        uint64_t wake_bytes;   /* what a turn fetches (WakeBytes=), 0 none given */
        char *wake_state;      /* waiting, awake, done; "" when not wake-listed */
        char *wake_reason;
        uint64_t wake_since; /* µs CLOCK_REALTIME when wake_state last changed, 0 unknown */
} RoamApp;

typedef struct RoamModel {
        char *version;
        char *state;
        char *best_link_path; /* "/" when there is none */
        /* the link the default app's traffic takes, whose verdict State is ("/" none, NULL
         * from a roamd without it); why that is not the best link's, "" none */
        char *default_link_path;
        char *state_reason;
        char *config_file;
        char *firewall_error;    /* "" when the firewall files in force loaded */
        char **locations;        /* the location words SetLocation takes; never NULL */
        char *ssh;               /* [Firewall] SSH=: always, trusted, never; "" unknown */
        char **ssh_let_in;       /* the locations that let TCP 22 in; never NULL */
        char *degraded;          /* why the kernel lacks roamd's state, "" when it has it */
        uint64_t degraded_since; /* CLOCK_REALTIME µs, 0 while not degraded */
        char **mark_conflicts;   /* others' mark bits inside roamd's mask, NULL none */
        char *mask_suggestion;   /* a free FirewallMask, "" none */
        /* The ordered wake-up (docs/wake.md): "" from a roamd without one. */
        char *wake_queue; /* offline, settling, time, running, finished */
        uint64_t wake_period;
        bool time_gate;
        bool has_time_gate; /* roamd sent TimeGate (an older one has none) */
        char *time_gate_reason;
        char *p2p_state; /* WiFi Direct (docs/wifi-direct.md): "" when roamd runs none */

        RoamLink **links; /* sorted by index */
        size_t n_links;

        RoamApp **apps; /* sorted by ID, "default" and "system" last */
        size_t n_apps;
} RoamModel;

int roam_link_new(const char *path, RoamLink **ret);
RoamLink *roam_link_free(RoamLink *l);
DEFINE_TRIVIAL_CLEANUP_FUNC(RoamLink *, roam_link_free);

/* A NetworkIdentity fact ("ssid", "gateway-mac", ...), NULL when roamd sent none. */
const char *roam_link_identity(const RoamLink *l, const char *key);
/* Whether the TUI and plain mode should ask where this link's network is: it has one, and
 * roamd fell back to untrusted because nobody chose (LocationSource "default"). */
bool roam_link_needs_location(const RoamLink *l);

/* Where to log in when the link is behind a portal, else NULL. */
const char *roam_link_portal_url(const RoamLink *l);

/* True for the "virtual" bearer: shown, but never counted for the global state. */
bool roam_link_is_virtual(const RoamLink *l);
/* wpa_supplicant's view of the link in words: "Home, signal good, -58 dBm, 866 Mbit/s",
 * "Home, signal not reported", "not associated (SCANNING)"; "" when it does not run the link. */
void roam_link_wifi_text(const RoamLink *l, char *buf, size_t size);
/* The working path MTU per family behind a black hole ("IPv4 1400 bytes, IPv6 not known"),
 * "" when neither family has one or the reason mtu. */
void roam_link_working_mtu_text(const RoamLink *l, char *buf, size_t size);

/* The history, newest first: entry i (0 = newest), NULL past the end. */
const RoamHistoryEntry *roam_link_history_get(const RoamLink *l, size_t i);
/* Records changes only. verdict_changed: Connectivity or its reason changed, so a new entry
 * starts (unless it says what the newest already says); probe_ended: LastProbe changed, so the
 * newest entry gets the round's timing when it has none yet (roamd sends the verdict and then
 * the timing of the same round), otherwise the round is a recheck that changed nothing and is
 * folded into the newest entry (its count and last_seen). */
void roam_link_history_record(RoamLink *l, uint64_t now, bool verdict_changed, bool probe_ended);

int roam_app_new(const char *path, RoamApp **ret);
RoamApp *roam_app_free(RoamApp *a);
DEFINE_TRIVIAL_CLEANUP_FUNC(RoamApp *, roam_app_free);

/* "default" and "system": the two policies that are not apps. */
bool roam_app_is_special(const RoamApp *a);

int roam_model_new(RoamModel **ret);
RoamModel *roam_model_free(RoamModel *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(RoamModel *, roam_model_free);

/* Reads a{sv} of org.roam1.Link / org.roam1.Manager properties. Unknown properties are skipped
 * (a newer roamd may add some); a known property with the wrong type is -EBADMSG. */
int roam_link_update_properties(RoamLink *l, sd_bus_message *m);
int roam_app_update_properties(RoamApp *a, sd_bus_message *m);
int roam_model_update_manager_properties(RoamModel *m, sd_bus_message *msg);
/* The same as readers of one GetAll (RoamPropsReadFn, roam-props.h): for the CLI's reads of
 * one object. */
int roam_model_read_manager(sd_bus_message *props, void *model);
int roam_app_read(sd_bus_message *props, void *app);
int roam_link_read(sd_bus_message *props, void *link);

/* Reads one object's interfaces and their properties at m (the a{sa{sv}} of GetManagedObjects
 * and of InterfacesAdded), the object at path: *ret_link and *ret_app are a new link and app when
 * it is one (else NULL); manager, when given, takes the manager's properties should the object
 * be the manager; other interfaces are skipped. On failure nothing is returned, and
 * *ret_refused names what roamd sent wrong ("link", "app", "manager"), NULL when the failure was
 * not about properties (memory, the message's shape). */
int roam_model_read_object(sd_bus_message *m, const char *path, RoamModel *manager,
                           RoamLink **ret_link, RoamApp **ret_app, const char **ret_refused);

/* Reads a GetManagedObjects reply (a{oa{sa{sv}}}) into m, replacing its links and apps (and
 * reading the manager's properties too, should a reply ever list /org/roam1 itself). */
int roam_model_read_managed_objects(RoamModel *m, sd_bus_message *reply);

/* Adds or removes a link (InterfacesAdded / InterfacesRemoved); add takes ownership. */
int roam_model_add_link(RoamModel *m, RoamLink *l);
int roam_model_remove_link(RoamModel *m, const char *path);
void roam_model_sort_links(RoamModel *m);

RoamLink *roam_model_find_link(const RoamModel *m, const char *path);

/* Adds or removes an app (InterfacesAdded / InterfacesRemoved); add takes ownership. */
int roam_model_add_app(RoamModel *m, RoamApp *a);
int roam_model_remove_app(RoamModel *m, const char *path);
void roam_model_sort_apps(RoamModel *m);
RoamApp *roam_model_find_app(const RoamModel *m, const char *path);
RoamApp *roam_model_find_app_by_id(const RoamModel *m, const char *id);
/* A Route4/Route6 value as a link name: the docs say "the link", taken as its name, and an
 * object path of a known link is shown as that link's name too. Anything else as sent. */
const char *roam_model_route_name(const RoamModel *m, const char *route);
/* The wake-listed apps in turn order (priority, higher first; ties by ID, as roamd's own tie
 * order is not on the bus); malloc'd array, NULL on OOM (*ret_n 0 then). */
const RoamApp **roam_model_wake_order(const RoamModel *m, size_t *ret_n);
/* The link BestLink names, or NULL when it is "/" or not (yet) among the links. */
RoamLink *roam_model_best_link(const RoamModel *m);
/* The link DefaultLink names (BestLink's from a roamd without it), NULL for "/". */
RoamLink *roam_model_default_link(const RoamModel *m);

/* Loads the whole model (manager GetAll, then GetManagedObjects). Errors are logged; returns
 * -EHOSTDOWN when roamd is not running (nobody owns its name), another negative errno on other
 * failures. */
int roam_model_load(sd_bus *bus, RoamModel **ret);
