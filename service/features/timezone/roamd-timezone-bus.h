/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The time zone half of org.roam1.Time at /org/roam1/time (its own vtable: the time half
 * registers another one for the same interface and path), and the glue that feeds the zone
 * decision (roamd-timezone.h) with the modems' hints (roamd-client-mm.h, roamd-client-ofono.h). */

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

/* The ModemManager and oFono clients whose time watchers get the modems' NITZ samples (the
 * time consensus subscribes with mm_client_time_watch_add(), ofono_client_time_watch_add()). */
MMClient *zone_service_mm(ZoneService *z);
OfonoClient *zone_service_ofono(ZoneService *z);
