/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "roamd-link.h"

/* The connectivity prober of one link: per address family, DNS through the link's own
 * servers, then an HTTP and an HTTPS probe in parallel (bound to the link), a gateway ping
 * when they fail, and the RFC 8908 API when the link announced one. A round ends in
 * link_set_verdict() for both families; the next round is scheduled with capped exponential
 * backoff while not online and a slow re-check while online. */

typedef struct Prober Prober;

int prober_new(Link *l, Prober **ret);
Prober *prober_free(Prober *p);

/* Something relevant changed (carrier, addresses, routes, DNS) or a user asked: cancel what
 * runs and start a new round now. Facts that need no probe (no carrier...) apply at once. */
void prober_trigger(Prober *p);
