/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roam-bus-map.h"
#include "roam-bus-name.h"
#include "roam-log.h"
#include "roam-macro.h"
#include "roamd-client-timedated.h"

#define TIMEDATED_PATH   "/org/freedesktop/timedate1"
#define TIMEDATED_IFACE  "org.freedesktop.timedate1"
#define PROPERTIES_IFACE "org.freedesktop.DBus.Properties"

struct TimedatedClient {
        sd_bus *bus;
        TimedatedZoneFn on_zone;
        void *userdata;
        sd_bus_slot *match_props, *get, *set;
        BusNameWatch *owner;
        TimedatedSetFn set_done;
        void *set_userdata;
        char zone[64];
};

TimedatedClient *timedated_client_free(TimedatedClient *c)
{
        if (!c)
                return NULL;
        sd_bus_slot_unref(c->match_props);
        bus_name_watch_free(c->owner);
        sd_bus_slot_unref(c->get);
        sd_bus_slot_unref(c->set);
        sd_bus_unref(c->bus);
        free(c);
        return NULL;
}

const char *timedated_client_zone(TimedatedClient *c)
{
        return c ? c->zone : "";
}

static void zone_update(TimedatedClient *c, const char *zone)
{
        if (strlen(zone) >= sizeof(c->zone) || streq(zone, c->zone))
                return;
        log_info("timedated: time zone %s -> %s", *c->zone ? c->zone : "(unknown)", zone);
        snprintf(c->zone, sizeof(c->zone), "%s", zone);
        if (c->on_zone)
                c->on_zone(c, c->zone, c->userdata);
}

static int on_get(sd_bus_message *m, void *userdata, sd_bus_error *err)
{
        TimedatedClient *c = userdata;
        const char *zone;

        (void)err;
        c->get = sd_bus_slot_unref(c->get);
        if (sd_bus_message_is_method_error(m, NULL)) {
                log_debug("timedated: Timezone: %s", sd_bus_message_get_error(m)->message);
                return 0;
        }
        if (sd_bus_message_read(m, "v", "s", &zone) < 0) {
                log_warning("timedated: malformed Timezone ignored");
                return 0;
        }
        zone_update(c, zone);
        return 0;
}

static int get_zone(TimedatedClient *c)
{
        c->get = sd_bus_slot_unref(c->get);
        return sd_bus_call_method_async(c->bus, &c->get, TIMEDATED_BUS_NAME, TIMEDATED_PATH,
                                        PROPERTIES_IFACE, "Get", on_get, c, "ss", TIMEDATED_IFACE,
                                        "Timezone");
}

static int set_zone(sd_bus_message *m, const char *key, void *field)
{
        const char *zone;
        int r = sd_bus_message_read_basic(m, 's', &zone);

        if (r >= 0)
                zone_update(field, zone);
        return r;
}

static const BusMapEntry props_map[] = {
    {"Timezone", "s", set_zone, 0},
    {},
};

static int on_props(sd_bus_message *m, void *userdata, sd_bus_error *err)
{
        TimedatedClient *c = userdata;
        const char *iface;

        (void)err;
        if (sd_bus_message_read(m, "s", &iface) < 0 || !streq(iface, TIMEDATED_IFACE))
                return 0;
        if (bus_map_read(m, props_map, c) < 0)
                return 0;
        /* timedated announces Timezone as changed without a value: ask */
        (void)get_zone(c);
        return 0;
}

/* timedated exits when idle and is activated again: a new owner is asked afresh */
static int on_owner(BusNameWatch *w, const char *new, void *userdata)
{
        TimedatedClient *c = userdata;
        if (*new)
                (void)get_zone(c);
        return 0;
}

int timedated_client_new(sd_bus *bus, TimedatedZoneFn on_zone, void *userdata,
                         TimedatedClient **ret)
{
        TimedatedClient *c = calloc(1, sizeof(*c));
        int r;

        if (!c)
                return -ENOMEM;
        c->bus = sd_bus_ref(bus);
        c->on_zone = on_zone;
        c->userdata = userdata;
        r = sd_bus_match_signal_async(bus, &c->match_props, TIMEDATED_BUS_NAME, TIMEDATED_PATH,
                                      PROPERTIES_IFACE, "PropertiesChanged", on_props, NULL, c);
        if (r >= 0)
                r = bus_name_watch_new(bus, TIMEDATED_BUS_NAME, on_owner, c, &c->owner);
        if (r >= 0)
                r = get_zone(c);
        if (r < 0) {
                timedated_client_free(c);
                return log_error_errno(r, "Cannot watch timedated: %m");
        }
        *ret = c;
        return 0;
}

static int on_set(sd_bus_message *m, void *userdata, sd_bus_error *err)
{
        TimedatedClient *c = userdata;
        TimedatedSetFn done = c->set_done;
        const sd_bus_error *e = sd_bus_message_get_error(m);
        int r = 0;

        (void)err;
        c->set = sd_bus_slot_unref(c->set);
        c->set_done = NULL;
        if (e)
                r = sd_bus_error_get_errno(e) > 0 ? -sd_bus_error_get_errno(e) : -EIO;
        if (done)
                done(c, r, e ? e->message : NULL, c->set_userdata);
        /* the zone itself is taken from timedated, not assumed */
        if (r >= 0)
                (void)get_zone(c);
        return 0;
}

int timedated_client_set_zone(TimedatedClient *c, const char *zone, TimedatedSetFn done,
                              void *userdata)
{
        int r;

        c->set = sd_bus_slot_unref(c->set);
        /* interactive false: roamd runs without a user to ask; polkit decides for root */
        r = sd_bus_call_method_async(c->bus, &c->set, TIMEDATED_BUS_NAME, TIMEDATED_PATH,
                                     TIMEDATED_IFACE, "SetTimezone", on_set, c, "sb", zone, 0);
        if (r < 0)
                return log_error_errno(r, "Cannot call timedated SetTimezone(%s): %m", zone);
        c->set_done = done;
        c->set_userdata = userdata;
        return 0;
}
