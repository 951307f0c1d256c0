/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#include "roamd-bearer.h"
#include "roamd-config.h"
#include "roamd-capport.h"
#include "roamd-dhcp-lease.h"
#include "roamd-link-info.h"
#include "roamd-netid.h"
#include "roamd-time-sample.h"
#include "roamd-verdict.h"
#include "roamd-wpa-station.h"

typedef struct Core Core;
typedef struct Links Links;
typedef struct Prober Prober;

/* The address families of a probe round */
#define PROBE_IPV4 1u
#define PROBE_IPV6 2u

typedef struct Link Link;
/* What a link tells the registry it is in. */
typedef enum LinkNote {
        LINK_NOTE_VERDICT, /* its verdict (or portal URL) changed */
        LINK_NOTE_PROBED,  /* a probe round ended, the verdict maybe unchanged */
        LINK_NOTE_CAPPORT, /* its RFC 8908 data changed */
        _LINK_NOTE_MAX,
        _LINK_NOTE_INVALID = -EINVAL,
} LinkNote;
typedef void (*LinkNoteFn)(Link *l, LinkNote note, void *userdata);

/* What the links' facts stage (roamd-link-facts.c) found about a link's network in the last
 * sync: each input read once there, for every feature. */
typedef struct LinkFacts {
        DhcpLeases leases; /* the current ones (a stale lease is none) */
        /* Link.NetworkIdentity: the facts that name the network (NULL unknown) */
        char *fact[_NETID_FACT_MAX];
        bool has_network;           /* carrier and an address or gateway: on some network */
        bool gateway_pending;       /* a gateway whose MAC is not known yet */
        char network_id[NETID_MAX]; /* Link.NetworkId, "" no network (yet) */
        /* the last id that was not "" (a gateway being resolved again is no other network) */
        char known_id[NETID_MAX];
        /* the carrier went since known_id: the rounds that start when it is back judge the
         * network found then, so a new id then is no network swapped under the same
         * addressing (the case a re-probe is for) */
        bool carrier_lost;
        /* a cellular link's registration, from the modem clients (views.roaming): modem
         * false: no modem says (home for the usage) */
        bool modem;
        bool roaming;
        /* a Wi-Fi link's station as wpa_supplicant runs it (views.station; p2p_device_address
         * unused): Link.WiFi*, the SSID and BSSID of the identity. All NULL/0: none. */
        WpaStation wifi;
} LinkFacts;

void link_facts_done(LinkFacts *f);

/* A link's location as the firewall decided it (Link.Location...): the firewall above fills
 * it in through the hook the manager registers. */
typedef struct LinkIdentityView {
        const char *location; /* "" none */
        const char *source;   /* "config", "user", "default", "" none */
        const char *reason;   /* of location */
        /* the network's location now: differs from location (the one in force) while the
         * kernel has not taken it, "" no network */
        const char *wanted;
} LinkIdentityView;
typedef void (*LinkIdentityFn)(int ifindex, LinkIdentityView *ret, void *userdata);
/* wpa_supplicant's station facts of an interface (NULL: it does not run it) */
typedef const WpaStation *(*LinkStationFn)(const char *ifname, void *userdata);
/* a modem's registration on an interface: 1 roaming, 0 home, < 0 no modem says */
typedef int (*LinkRoamingFn)(const char *ifname, void *userdata);

/* What a link's layer (its bus glue, its prober) asks of those above it: the registry holds
 * these hooks for all its links, whoever knows the answer fills one in (NULL: no answer). */
typedef struct LinkViews {
        LinkIdentityFn identity; /* Link.Location...: the firewall's view */
        void *identity_userdata;
        LinkStationFn station; /* Link.WiFi*: wpa_supplicant's */
        void *station_userdata;
        LinkRoamingFn roaming; /* Link facts' roaming: the Core's modem clients' */
        void *roaming_userdata;
        /* The VPN link the apps' VPN slot routes into now (the first usable one; NULL:
         * none): its probes carry the slot's mark. */
        Link *(*vpn)(void *userdata);
        void *vpn_userdata;
} LinkViews;

/* What a sync changed about a link, by kind (LINKS_EVENT_CHANGED's mask): a watcher looks only
 * at the kinds it uses. */
enum {
        LINK_CHANGE_NAME = 1 << 0,
        LINK_CHANGE_CARRIER = 1 << 1, /* carrier or administrative state */
        LINK_CHANGE_ADDRESSES = 1 << 2,
        LINK_CHANGE_GATEWAYS = 1 << 3,
        LINK_CHANGE_DNS = 1 << 4, /* servers, domains, their source, the RFC 8910 URL */
        LINK_CHANGE_STATE = 1 << 5,
        LINK_CHANGE_OTHER = 1 << 6, /* kind, driver, MTU, bearer, ... */
        LINK_CHANGE_NTP = 1 << 7,   /* the leases' NTP servers */
        /* the facts stage's (roamd-link-facts.c): */
        LINK_CHANGE_LEASE = 1 << 8,    /* a current lease came, went or says something else */
        LINK_CHANGE_IDENTITY = 1 << 9, /* NetworkId or NetworkIdentity */
        LINK_CHANGE_MODEM = 1 << 10,   /* a modem's registration: home, roaming or none */
        /* a Wi-Fi station's association (state, SSID, BSSID, key management, frequency) or
         * its signal (Link.WiFi*); another SSID, or a new join, changes IDENTITY too (a roam
         * within the network keeps the identity's BSSID) */
        LINK_CHANGE_WIFI = 1 << 11,
};

typedef enum LinkState {
        LINK_STATE_NO_CARRIER,
        LINK_STATE_NO_ADDRESS,
        LINK_STATE_LINK_LOCAL,
        LINK_STATE_ADDRESSED,
        LINK_STATE_ROUTABLE,
        _LINK_STATE_MAX,
        _LINK_STATE_INVALID = -EINVAL,
} LinkState;

const char *link_state_to_string(LinkState s);
LinkState link_state_from_string(const char *s);

typedef struct Link {
        Core *core;
        /* The registry it is in, told of the link's verdict, probe rounds and RFC 8908 data
         * through this hook (a link includes nothing above itself). */
        LinkNoteFn note;
        void *note_userdata;
        const LinkViews *views; /* the registry's, NULL outside one */
        int ifindex;
        char *path;
        /* While held (the registry's sync), the names of changed properties are collected and
         * go out in one PropertiesChanged at the release (roamd-link-bus.c). */
        unsigned bus_hold;
        char **bus_pending;
        Bearer bearer;
        bool bearer_from_config;
        LinkState state;
        LinkInfo info;
        LinkFacts facts;
        /* LINK_CHANGE_* the last sync changed on the link (0: nothing): a feature told of a
         * sync looks at the links and kinds that changed only */
        unsigned sync_changed;
        /* Connectivity, per family and overall (the better of the two). */
        VerdictResult verdict4, verdict6, verdict;
        char *portal_url;         /* where the user logs in, when behind a portal */
        uint64_t last_probe_usec; /* CLOCK_REALTIME of the last finished probe round */
        uint64_t probe_duration_usec;
        /* The TCP handshake of the last HTTP probe that connected (curl's connect time): one
         * round trip to the check host; 0 unknown. The wake-up's slow-link rule reads it. */
        uint64_t probe_rtt_usec;
        CapportInfo capport; /* RFC 8908 data; capport_valid says whether there is any */
        bool capport_valid;
        char *capport_error; /* why the announced API could not be used, else NULL */
        char *nat64_prefix;  /* RFC 7050: what ipv4only.arpa says, "prefix/plen"; else NULL */
        /* Per family (0 IPv4, 1 IPv6): the path MTU found behind a black hole (verdict
         * partial, reason mtu; roamd-pmtu.c); 0 unknown or no black hole. */
        uint32_t working_mtu[2];
        /* The Date of the last HTTPS probe answer per family (0 IPv4, 1 IPv6) whose TLS was
         * validated and which was the expected answer; realtime 0: none. The time module reads
         * it (docs/time.md). */
        TimeSample https_date[2];
        Prober *prober;

        bool seen;      /* marked during a sync; unseen links are gone */
        bool announced; /* InterfacesAdded sent, visible on the bus */
} Link;

int link_new(Core *core, int ifindex, Link **ret);
Link *link_free(Link *l);

/* Applies a freshly gathered LinkInfo (taking ownership of its contents), reclassifying the
 * bearer when the name changed, and emits PropertiesChanged for what differs. ret_families:
 * the families (PROBE_IPV4 | PROBE_IPV6) whose verdict depends on what changed; the registry
 * has them probed again (a link knows nothing of its prober). */
int link_update(Link *l, LinkInfo *info, bool force_classify, unsigned *ret_families);

/* Re-runs bearer classification (config override first, then sysfs). Returns 1 if changed,
 * appending the changed property names ("Bearer", "BearerSource") to names[*n]. */
int link_classify(Link *l, const char **names, size_t *n);

/* The one place a link's state changes: logs old -> new and emits PropertiesChanged. */
void link_set_state(Link *l, LinkState s);

bool link_is_usable(const Link *l);

/* The link has a global (or site) address of the family (AF_INET, AF_INET6). */
bool link_has_global(const Link *l, int family);

/* The one place a link's connectivity changes: logs old -> new with the reason, emits
 * PropertiesChanged and lets the manager re-pick the best link. family is AF_INET or
 * AF_INET6. portal_url may be NULL. */
void link_set_verdict(Link *l, int family, VerdictResult v, const char *portal_url);

/* The API URL the link announced (RFC 8910) is one roamd refuses to fetch (not https...). */
bool link_capport_url_rejected(const Link *l);

/* A probe round ended: emits LastProbe and ProbeDuration. */
void link_probe_finished(Link *l);

/* Records the NAT64 prefix the link's DNS64 revealed (NULL: none): logs old -> new and
 * emits PropertiesChanged. */
void link_set_nat64_prefix(Link *l, const char *prefix);

/* Records the working path MTU of a family (0: unknown): logs old -> new and emits
 * PropertiesChanged. */
void link_set_working_mtu(Link *l, int family, uint32_t mtu);

/* Records the RFC 8908 state of the link (info NULL: none), or why it is unusable. */
void link_set_capport(Link *l, const CapportInfo *info, const char *error);
