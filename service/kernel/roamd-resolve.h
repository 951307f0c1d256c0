/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-event.h>

#include "roamd-config.h"
#include "roamd-verdict.h"

/* One DNS lookup through a given link's own DNS servers (c-ares, bound to the link with
 * SO_BINDTODEVICE), on sd-event. Debian's libcurl has no c-ares and would start a resolver
 * thread through the system's resolv.conf; this asks the right servers instead. */

#define RESOLVE_MAX_ADDRS 8

typedef struct Resolve Resolve;

typedef void (*ResolveDoneFn)(Resolve *r, DnsOutcome outcome, const IpAddr *addrs, size_t n,
                              void *userdata);

int resolve_start(sd_event *event, const char *ifname, const IpAddr *servers, size_t n_servers,
                  const char *host, int family, uint32_t mark, uint64_t timeout_usec,
                  ResolveDoneFn done, void *userdata, Resolve **ret);

/* Cancels (no callback follows) and frees. NULL allowed. */
Resolve *resolve_free(Resolve *r);
