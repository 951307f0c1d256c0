/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

#include "roamd-link.h"

/* The connectivity prober of one link: per address family, DNS through the link's own
 * servers, then an HTTP and an HTTPS probe in parallel (bound to the link), a gateway ping
 * when they fail, and the RFC 8908 API when the link announced one. A verdict is published
 * as soon as it is proven (a portal by the HTTP answer; partial when HTTPS overruns its
 * budget) and refined when the round ends; the next round is scheduled with capped
 * exponential backoff while not online and a slow re-check while online. */

typedef struct Prober Prober;

int prober_new(Link *l, Prober **ret);
/* The registry frees a link's prober before the link (link->prober). */
Prober *prober_free(Prober *p);

/* Something relevant changed (carrier, addresses, routes, DNS) or a user asked: cancel what
 * runs and start a new round now. Facts that need no probe (no carrier...) apply at once. */
void prober_trigger(Prober *p);

/* The facts of these families (PROBE_IPV4 | PROBE_IPV6) changed: restart their rounds only,
 * saying `checking` until their first answer. The other family's round runs on. */
void prober_restart(Prober *p, unsigned families);

/* Where the link's DNS sent the HTTP check host in the family's last answered lookup
 * (-ENOENT: none yet). */
int prober_known_http(const Prober *p, int family, IpAddr *ret);

/* The packet mark of the link's probe sockets in a family (a VPN's slot; 0: none). */
uint32_t probe_mark(const Link *l, int family);

/* A round runs (or is being started) for either family. */
bool prober_round_running(const Prober *p);
/* The object a family's own timers (AF_INET, AF_INET6: the wait for a DNS server) are made
 * with: the unit tests find them by it. */
const void *prober_family(const Prober *p, int family);

/* A probe round runs on the link and none of its families has an answer yet (a family
 * that is offline for the link's own reasons, no route say, is no answer). */
bool link_awaits_first_answer(const Link *l);

/* Starts a probe round of the link now (its prober made on first use), or, for a virtual
 * link, drops its prober and clears its verdict. */
int link_reprobe(Link *l);

/* What a family's verdict depends on changed (PROBE_IPV4 | PROBE_IPV6 in families): restart
 * that family's round only. */
int link_reprobe_families(Link *l, unsigned families);

/* org.roam1.Link's Reprobe() (roamd-probe-bus.c): registered beside link_vtable on the same
 * objects. */
extern const sd_bus_vtable probe_link_vtable[];
