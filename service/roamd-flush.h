/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* `roamd --flush-kernel-state`: removes what a stopped roamd leaves in the kernel on purpose
 * (docs/apps.md, "When roamd stops"): its nftables tables (inet roam, inet usage_by_roamd,
 * inet budget_by_roamd), its ip rules and the routes in its routing tables, found with the
 * configured mark mask, table base and rule priority, and the chrony sources files it wrote.
 * Run by the package's prerm on removal, or by an admin who wants the firewall gone without
 * removing roam. roamd must not be running (it would put them back). Here, beside roamd.c, as
 * it uses kernel/ and features/time/ alike (the composition root's place). */

typedef struct Config Config;

int kernel_state_flush(const Config *c);
