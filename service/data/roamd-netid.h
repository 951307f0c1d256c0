/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A link's network identity (docs/firewall.md): the facts the link shows about the network it
 * is on, and one stable id made from them. The id is what networks.d and `roam network trust`
 * remember, so it must stay the same across reconnects, restarts and DHCP renewals: it is
 * built from facts of the network (SSID + BSSID, the gateway's MAC address, the DHCP server),
 * never from what changes between joins (our address, the lease time). */

#include <stdbool.h>
#include <stddef.h>

#define NETID_MAX 512

typedef enum NetIdFact {
        NETID_INTERFACE,
        NETID_BEARER,
        NETID_SSID,
        NETID_BSSID,
        NETID_GATEWAY_MAC,
        NETID_DHCP_SERVER,
        NETID_DOMAIN,
        _NETID_FACT_MAX,
        _NETID_FACT_INVALID = -22,
} NetIdFact;

/* The key in Link.NetworkIdentity ("gateway-mac", ...). */
const char *netid_fact_to_string(NetIdFact f);
NetIdFact netid_fact_from_string(const char *s);

typedef struct NetIdFacts {
        /* NULL or "" when unknown; owned by the caller */
        const char *fact[_NETID_FACT_MAX];
        bool has_network;     /* carrier and an address: the link is on some network */
        bool gateway_pending; /* the link has a gateway whose MAC is not known yet */
} NetIdFacts;

/* Whether fact k is known (set and not empty). */
bool netid_fact_known(const NetIdFacts *f, NetIdFact k);

/* The id, in buf (NETID_MAX bytes): "" when the link has no network or the facts that name it
 * are not known yet (a gateway not resolved), else, first that applies:
 *   wifi:SSID:BSSID         a WiFi station (wpa_supplicant's STATUS; the AP it joined by)
 *   BEARER:gw=MAC           the gateway's MAC address (the neighbour table)
 *   BEARER:dhcp=ADDRESS     the DHCP server identifier (option 54) of the lease
 *   BEARER:if=IFNAME        a network without gateway nor DHCP (a link-local LAN)
 * Characters outside printable ASCII in an SSID are written as \xNN. */
const char *netid_compose(const NetIdFacts *f, char buf[static NETID_MAX]);
