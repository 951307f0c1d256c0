/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roam-bus.h"
#include "roam-log.h"
#include "roam-macro.h"
#include "roam-util.h"
#include "roamd-bus-auth.h"
#include "roamd-config.h"
#include "roamd-core.h"
#include "roamd-links.h"
#include "roamd-client-ofono.h"
#include "roamd-config.h"
#include "roamd-links.h"
#include "roamd-timezone-bus.h"
#include "roamd-timezone.h"

#ifndef ROAM_TIME_PATH
#define ROAM_TIME_PATH "/org/roam1/time"
#endif
#ifndef ROAM_TIME_INTERFACE
#define ROAM_TIME_INTERFACE "org.roam1.Time"
#endif

struct ZoneService {
        Core *core;
        Timezone *tz;
        MMClient *mm;       /* the Core's (borrowed): NITZ and the network's zone */
        OfonoClient *ofono; /* the Core's (borrowed) */
        unsigned mm_watch, ofono_watch, tz_watch, links_watch;
        char **lease_witnesses; /* "link:IFNAME" of the leases that named a zone */
        sd_bus_slot *slot;
        char zone[64]; /* last announced */
};

ZoneService *zone_service_free(ZoneService *z)
{
        if (!z)
                return NULL;
        sd_bus_slot_unref(z->slot);
        links_watch_remove(z->core->links, z->links_watch);
        strv_free(z->lease_witnesses);
        mm_client_time_watch_remove(z->mm, z->mm_watch);
        ofono_client_time_watch_remove(z->ofono, z->ofono_watch);
        timezone_free(z->tz);
        free(z);
        return NULL;
}

static int property_zone(sd_bus *bus, const char *path, const char *interface, const char *property,
                         sd_bus_message *reply, void *userdata, sd_bus_error *error)
{
        ZoneService *z = userdata;
        return sd_bus_message_append(reply, "s", timezone_zone(z->tz));
}

static int property_candidates(sd_bus *bus, const char *path, const char *interface,
                               const char *property, sd_bus_message *reply, void *userdata,
                               sd_bus_error *error)
{
        ZoneService *z = userdata;
        char **l = timezone_candidates(z->tz);
        return sd_bus_message_append_strv(reply, l ? l : (char *[]){NULL});
}

static int property_state(sd_bus *bus, const char *path, const char *interface,
                          const char *property, sd_bus_message *reply, void *userdata,
                          sd_bus_error *error)
{
        ZoneService *z = userdata;
        return sd_bus_message_append(reply, "s", zone_state_to_string(timezone_state(z->tz)));
}

static int property_reason(sd_bus *bus, const char *path, const char *interface,
                           const char *property, sd_bus_message *reply, void *userdata,
                           sd_bus_error *error)
{
        ZoneService *z = userdata;
        return sd_bus_message_append(reply, "s", timezone_reason(z->tz));
}

static int method_set_zone(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        ZoneService *z = userdata;
        const char *zone;
        int r;

        r = sd_bus_message_read(msg, "s", &zone);
        if (r < 0)
                return r;
        r = bus_check_authorized(msg, "org.roam1.set-timezone", error);
        if (r != 0) /* refused, or polkit asked: answered later */
                return r;
        r = timezone_set_manual(z->tz, zone);
        if (r == -EINVAL)
                return sd_bus_error_set(error, ROAM_ERROR_INVALID_ARGS,
                                        "Not a time zone of this system's tzdata.");
        if (r < 0)
                return r;
        log_info("Time zone: the user chose it");
        return sd_bus_reply_method_return(msg, NULL);
}

static const sd_bus_vtable zone_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_PROPERTY("Zone", "s", property_zone, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("ZoneCandidates", "as", property_candidates, 0,
                    SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("ZoneState", "s", property_state, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("ZoneReason", "s", property_reason, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_METHOD_WITH_ARGS("SetZone", SD_BUS_ARGS("s", zone), SD_BUS_NO_RESULT, method_set_zone,
                            SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_SIGNAL_WITH_ARGS("ZoneChanged", SD_BUS_ARGS("s", zone), 0),
    SD_BUS_VTABLE_END,
};

static void on_timezone(Timezone *tz, void *userdata)
{
        ZoneService *z = userdata;
        sd_bus *bus = z->core->bus;
        const char *zone = timezone_zone(tz);

        (void)sd_bus_emit_properties_changed(bus, ROAM_TIME_PATH, ROAM_TIME_INTERFACE, "Zone",
                                             "ZoneCandidates", "ZoneState", "ZoneReason", NULL);
        if (streq(zone, z->zone))
                return;
        /* learning the zone at start (or from a new timedated) is no change of zone */
        bool changed = *z->zone && *zone;
        snprintf(z->zone, sizeof(z->zone), "%s", zone);
        if (changed) {
                log_info("Time zone: ZoneChanged(%s)", zone);
                (void)sd_bus_emit_signal(bus, ROAM_TIME_PATH, ROAM_TIME_INTERFACE, "ZoneChanged",
                                         "s", zone);
        }
}

static void on_time_event(const TimeEvent *ev, void *userdata)
{
        ZoneService *z = userdata;

        switch (ev->type) {
        case TIME_EVENT_HINT:
                (void)timezone_add_hint(z->tz, ev->hint);
                break;
        case TIME_EVENT_GONE:
                (void)timezone_drop_witness(z->tz, ev->witness);
                break;
        case TIME_EVENT_SAMPLE: /* the time feed's (time_feed_follow_modems()) */
                break;
        case _TIME_EVENT_TYPE_MAX:
        case _TIME_EVENT_TYPE_INVALID:
                break;
        }
}

/* The link's RFC 4833 zone, from its DHCPv4 lease, else its DHCPv6 one (the current ones:
 * the links' facts stage drops the stale leases dhcpcd keeps of old networks). */
static int link_lease_hint(Link *l, TimeZoneHint *ret)
{
        usec_t now = clock_now_usec(CLOCK_REALTIME), boot = clock_now_usec(CLOCK_BOOTTIME);

        for (size_t f = 0; f < 2; f++) {
                const DhcpLease *lease = &l->facts.leases.lease[f];
                if (l->facts.leases.has[f] &&
                    timezone_hint_from_lease(l->info.name, lease->tz_name, lease->tz_posix, now,
                                             boot, ret) >= 0)
                        return 0;
        }
        return -ENOENT;
}

/* After every sync: each link's lease is a witness while it names a zone. */
static void on_links(Links *links, const LinksEvent *ev, void *userdata)
{
        ZoneService *z = userdata;
        _cleanup_strv_free_ char **now = NULL;

        /* only a sync that changed a lease, or lost a link, changes the witnesses */
        if (ev->type != LINKS_EVENT_SYNCED || (!(ev->mask & LINK_CHANGE_LEASE) && ev->n_gone == 0))
                return;
        for (size_t i = 0; i < links->n_links; i++) {
                Link *l = links->links[i];
                TimeZoneHint h;
                if (!l->info.name || link_lease_hint(l, &h) < 0)
                        continue;
                if (strv_extend(&now, h.witness) < 0) {
                        log_oom();
                        return;
                }
                (void)timezone_add_hint(z->tz, &h);
        }
        STRV_FOREACH (w, z->lease_witnesses)
                if (!strv_contains(now, *w))
                        (void)timezone_drop_witness(z->tz, *w);
        strv_free(z->lease_witnesses);
        z->lease_witnesses = TAKE_PTR(now);
}

int zone_service_new(Core *m, ZoneService **ret)
{
        _cleanup_(zone_service_freep) ZoneService *z = calloc(1, sizeof(*z));
        TzDb *db = NULL;
        int r;

        if (!z)
                return log_oom();
        z->core = m;
        r = tzdb_new(NULL, NULL, &db);
        if (r < 0)
                return log_oom();
        r = timezone_new(m->bus, db, &z->tz);
        if (r < 0) {
                tzdb_free(db);
                return r;
        }
        z->tz_watch = timezone_watch_add(z->tz, on_timezone, z, NULL);
        z->mm = m->mm;
        z->ofono = m->ofono;
        if (z->mm && !(z->mm_watch = mm_client_time_watch_add(z->mm, on_time_event, z, NULL)))
                return log_oom();
        if (z->ofono &&
            !(z->ofono_watch = ofono_client_time_watch_add(z->ofono, on_time_event, z, NULL)))
                return log_oom();
        z->links_watch = links_watch_add(m->links, on_links, z, NULL);
        if (!z->tz_watch || !z->links_watch)
                return log_oom();
        r = sd_bus_add_object_vtable(m->bus, &z->slot, ROAM_TIME_PATH, ROAM_TIME_INTERFACE,
                                     zone_vtable, z);
        if (r < 0)
                return log_error_errno(r, "Cannot publish the time zone on the bus: %m");
        *ret = TAKE_PTR(z);
        return 0;
}
