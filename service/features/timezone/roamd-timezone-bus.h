/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The time zone half of org.roam1.Time at /org/roam1/time (its own vtable: the time half
 * registers another one for the same interface and path), and the glue that feeds the zone
 * decision (roamd-timezone.h) with the modems' hints (the Core's one roamd-client-mm.h and
 * roamd-client-ofono.h). */

#include "roamd-client-mm.h"
#include "roamd-client-ofono.h"

typedef struct Core Core;
typedef struct ZoneService ZoneService;

int zone_service_new(Core *core, ZoneService **ret);
ZoneService *zone_service_free(ZoneService *z);
static inline void zone_service_freep(ZoneService **z)
{
        zone_service_free(*z);
}
