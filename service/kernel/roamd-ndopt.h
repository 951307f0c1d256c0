/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-event.h>

#include "roamd-link-info.h"

/* The captive portal API URI of RFC 8910 option 37 in IPv6 Router Advertisements, as the
 * kernel passes it on (RTM_NEWNDUSEROPT, rtnetlink group RTNLGRP_ND_USEROPT) when it
 * processes RAs itself (accept_ra). Remembered per link until another RA replaces it or the
 * link loses its carrier or its IPv6 addresses; option 37 has no lifetime of its own. */

typedef struct NdOpt NdOpt;

/* changed(userdata) when a router announced another URI. */
int ndopt_new(sd_event *event, LinkChangedFn changed, void *userdata, NdOpt **ret);
NdOpt *ndopt_free(NdOpt *n);

/* During a sync: forgets the link's URI when the link has no carrier or no IPv6 address;
 * otherwise, when info has no API URL yet (the DHCP leases come first), gives it the one the
 * link's routers announced. Returns 0 or -ENOMEM. */
int ndopt_fill(NdOpt *n, int ifindex, LinkInfo *info);

/* The link is gone: its URI goes too (an index can be reused by a new link). */
void ndopt_forget(NdOpt *n, int ifindex);
