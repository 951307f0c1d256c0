/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The links' NTP servers from DHCP handed to chronyd (docs/time.md, "NTP servers from
 * DHCP"): after every sync and verdict change, each link whose verdict allows it and whose
 * leases name servers has DIR/IFNAME.sources ([Time] ChronySourceDir=, Debian's
 * /run/chrony-dhcp), written atomically; the file goes when the link goes, loses the servers
 * or its verdict no longer allows them. After a change chronyd is asked to reload its sources
 * over its command socket ([Time] ChronyCommandSocket=). Files of an earlier roamd that no
 * link wants are removed at the first sync. Watches the links registry (lower layers never
 * call up); the manager owns it. */

typedef struct ChronyClient ChronyClient;
typedef struct Core Core;
typedef struct NtpDhcp NtpDhcp;

/* chrony: the command socket's client (the time feed's, which reads chronyd's tracking over
 * it too); it must outlive the NtpDhcp. */
int ntp_dhcp_new(Core *core, ChronyClient *chrony, NtpDhcp **ret);
/* Leaves the files (their servers were right). Accepts NULL. */
NtpDhcp *ntp_dhcp_free(NtpDhcp *d);
/* Removes every DIR/IFNAME.sources that carries roamd's mark (roamd --flush-kernel-state,
 * when roamd is removed): 1 when one went, 0 none, negative errno. */
int ntp_dhcp_remove_all(const char *dir);
