/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A link's NTP servers from DHCP as chronyd's sourcedir file (pure; docs/time.md, "NTP
 * servers from DHCP"): Debian's chrony reads `sourcedir /run/chrony-dhcp`, whose IFACE.sources
 * files its DHCP hooks write as `server ADDR iburst` lines; roamd writes the same for the links
 * whose leases it reads, with a first line that marks the file as roamd's. */

#include <stdbool.h>

#include "roamd-verdict.h"

#define NTP_SOURCES_MARK   "# roamd:"
#define NTP_SOURCES_SUFFIX ".sources"

/* Whether a link with this verdict hands its servers to chronyd: local, partial, online yes
 * (the network answers; a LAN's own NTP server is the point); offline and portal no (nothing
 * answers, or a portal's network, which is not believed, as its Date is not); checking keeps
 * what was decided before (a re-check does not withdraw them). */
bool ntp_sources_verdict_allows(Verdict v, bool before);

/* The file's text for ifname's servers (addresses or host names; those with characters other
 * than letters, digits, ':', '.', '-' are left out, as Debian's NetworkManager hook does).
 * *ret NULL when no server is left. 0 or -ENOMEM. */
int ntp_sources_text(const char *ifname, char *const *servers, char **ret);

/* Whether name is a file roamd may write for a link: IFNAME.sources with a kernel link name. */
bool ntp_sources_ifname_ok(const char *ifname);
