/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <systemd/sd-event.h>

#include "roamd-config.h"

/* Does a neighbour (the gateway) answer? ICMP echo on a raw socket bound to the link, a few
 * tries within a deadline, on sd-event. */

typedef struct Ping Ping;
typedef void (*PingDoneFn)(Ping *p, bool answered, void *userdata);

int ping_start(sd_event *event, const char *ifname, int ifindex, const IpAddr *target,
               uint64_t timeout_usec, PingDoneFn done, void *userdata, Ping **ret);
Ping *ping_free(Ping *p);
