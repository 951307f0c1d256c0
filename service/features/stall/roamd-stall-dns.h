/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Between re-checks, the quiet case (docs/connectivity.md): a portal whose session ran out
 * usually makes its DNS answer every name with its own address, whether or not an app is
 * trying. While a link is online, every [Probe] DNSWatchInterval= this looks the HTTP check
 * host up through the link's own DNS servers (one query, like the probe's) and tells its
 * owner when the answer points somewhere no check server can be (a private, link-local or
 * on-link address: stall_dns_private()) where the last answer, or the last round's, was
 * a public one. It starts no round itself. */

#include <stdbool.h>

#include "roamd-link.h"

typedef struct Core Core;
typedef struct StallDns StallDns;

/* The answer moved from was (public) to now (private). Returns true when a round was
 * started for it: the private answer is then taken as known and tells nothing again until
 * a public one came in between; false keeps it a news for the next look. */
typedef bool (*stall_dns_moved_t)(Link *l, const IpAddr *was, const IpAddr *now, void *userdata);

int stall_dns_new(Core *core, stall_dns_moved_t moved, void *userdata, StallDns **ret);
StallDns *stall_dns_free(StallDns *d);
/* Runs while a link is online and the interval is not 0 (call after verdicts, syncs). */
void stall_dns_arm(StallDns *d);
/* The same, with the interval as it is now (after a reload). */
void stall_dns_rearm(StallDns *d);
/* Forgets a link (gone, or no longer online: what it was told before is stale). */
void stall_dns_forget(StallDns *d, const Link *l);
