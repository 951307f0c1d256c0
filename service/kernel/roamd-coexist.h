/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Coexistence with other users of the packet mark: reads the whole nftables ruleset (a
 * libnftnl dump) and the ip rules, and finds every other table's rule that writes mark bits
 * (meta mark or ct mark) and every other ip rule whose fwmark matches bits inside roamd's
 * FirewallMask. kube-proxy, Calico, Tailscale, Cilium, wg-quick all use some bits; a clash
 * silently breaks one of them. */

#include <stdint.h>

typedef struct CoexistReport {
        char **conflicts; /* "table inet foreign chain out writes meta mark bits 0x01000000" */
        uint32_t used;    /* every bit others write or match on */
        uint32_t suggest; /* a free contiguous mask as wide as ours, 0 none (or no conflict) */
} CoexistReport;

/* mask: roamd's FirewallMask; rule_priority: roamd's lookups (its own rules are skipped). */
int coexist_scan(uint32_t mask, uint32_t rule_priority, CoexistReport *ret);
void coexist_report_done(CoexistReport *r);
