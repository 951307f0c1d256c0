/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "roam-bus.h"
#include "roam-format.h"
#include "roam-verdict.h"
#include "roam-log.h"
#include "roam-plain-time.h"
#include "roam-props.h"
#include "roam-time.h"
#include "roam-util.h"

struct PlainTime {
        RoamLive *live;
        sd_bus *bus;
        RoamProps *props;      /* follows org.roam1.Time into view */
        RoamTimeView view;     /* what roamd said last */
        sd_bus_slot *set_call; /* time zone ZONE: SetZone, answered on its reply */
        char set_zone[128];
        char *state, *gate, *clock; /* what was said last; NULL before the first answer */
        char *zone;                 /* the zone in words, as said last */
        bool asked;                 /* a "time" command waits for the answer */
};

const char plain_time_help[] =
    "  time           the time as roamd's sources agree on it: state, bound, gate,\n"
    "                 the clock, the zone, each source's interval, verdict and age\n"
    "  time zone ZONE choose the time zone among those time lists\n";

static void on_loaded(RoamProps *props, const sd_bus_error *e, int r, void *userdata)
{
        PlainTime *pt = userdata;
        const RoamTimeView *v = &pt->view;
        bool asked = pt->asked;
        char head[128], clock[512], zone[256];

        pt->asked = false;
        if (e || r < 0) {
                if (asked)
                        puts("roamd has no time to tell (no org.roam1.Time).");
                return;
        }
        if (asked)
                roam_time_print_text(v);
        else if (pt->state) {
                /* only changes: the first answer is what the status already implies */
                if (!streq(pt->state, v->state)) {
                        roam_time_headline(v, head, sizeof(head));
                        roam_print_stamp();
                        printf("%s%s%s.\n", head, v->reasons && v->reasons[0] ? ": " : "",
                               v->reasons && v->reasons[0] ? v->reasons[0] : "");
                }
                if (!streq_ptr(pt->gate, v->gate)) {
                        roam_print_stamp();
                        printf("Time gate: %s.\n", roam_time_gate_words(v->gate));
                }
                roam_time_clock_words(v, clock, sizeof(clock));
                if (*clock && !streq_ptr(pt->clock, v->clock_state)) {
                        roam_print_stamp();
                        printf("Clock: %s.\n", clock);
                }
        }
        roam_time_zone_words(v, zone, sizeof(zone));
        if (!asked && pt->state && *zone && !streq_ptr(pt->zone, zone)) {
                roam_print_stamp();
                printf("Time zone: %s.\n", zone);
        }
        if (free_and_strdup(&pt->state, v->state) < 0 || free_and_strdup(&pt->gate, v->gate) < 0 ||
            free_and_strdup(&pt->clock, v->clock_state) < 0 || free_and_strdup(&pt->zone, zone) < 0)
                log_oom();
        fflush(stdout);
}

static void load(PlainTime *pt)
{
        int r;

        if (!pt->bus)
                return;
        r = pt->props
                ? roam_props_reload(pt->props)
                : roam_props_new(pt->bus, ROAM_TIME_PATH, ROAM_TIME_INTERFACE,
                                 roam_time_view_replace, &pt->view, on_loaded, pt, &pt->props);
        if (r < 0 && pt->asked) {
                pt->asked = false;
                printf("Cannot ask roamd for the time: %s\n", strerror(-r));
        }
}

void plain_time_watch(PlainTime *pt)
{
        sd_bus *bus = roam_live_get_bus(pt->live);

        if (bus != pt->bus) {
                pt->props = roam_props_free(pt->props);
                pt->set_call = sd_bus_slot_unref(pt->set_call);
                pt->bus = sd_bus_unref(pt->bus);
                free(pt->state);
                free(pt->gate);
                free(pt->clock);
                free(pt->zone);
                pt->state = pt->gate = pt->clock = pt->zone = NULL;
                pt->bus = sd_bus_ref(bus);
        }
        load(pt);
}

static int on_set_zone(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        PlainTime *pt = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(m);

        pt->set_call = sd_bus_slot_unref(pt->set_call);
        if (e)
                printf("Cannot set the time zone to %s: %s\n", pt->set_zone,
                       e->message ? e->message : e->name);
        else
                printf("Done: the time zone is now %s (your choice).\n", pt->set_zone);
        fflush(stdout);
        return 0;
}

/* time zone ZONE: the user's choice among the candidates (Time.SetZone). */
static int set_zone(PlainTime *pt, const char *zone)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        snprintf(pt->set_zone, sizeof(pt->set_zone), "%s", zone);
        pt->set_call = sd_bus_slot_unref(pt->set_call);
        r = sd_bus_message_new_method_call(pt->bus, &m, ROAM_BUS_NAME, ROAM_TIME_PATH,
                                           ROAM_TIME_INTERFACE, "SetZone");
        if (r >= 0)
                r = sd_bus_message_set_allow_interactive_authorization(m, true);
        if (r >= 0)
                r = sd_bus_message_append(m, "s", zone);
        if (r >= 0)
                r = sd_bus_call_async(pt->bus, &pt->set_call, m, on_set_zone, pt, 0);
        if (r < 0)
                printf("Cannot ask roamd: %s\n", strerror(-r));
        return 1;
}

int plain_time_command(PlainTime *pt, char **words)
{
        if (!streq(words[0], "time"))
                return 0;
        if (words[1] && streq(words[1], "zone") && words[2] && !words[3]) {
                if (!pt->bus) {
                        puts("roamd is not there yet.");
                        return 1;
                }
                return set_zone(pt, words[2]);
        }
        if (words[1]) {
                puts("Say: time, or time zone ZONE (one of the zones time lists).");
                return 1;
        }
        pt->asked = true;
        if (!pt->bus) {
                pt->asked = false;
                puts("roamd is not there yet.");
                return 1;
        }
        load(pt);
        return 1;
}

int plain_time_new(RoamLive *live, PlainTime **ret)
{
        PlainTime *pt = calloc(1, sizeof(*pt));

        if (!pt)
                return -ENOMEM;
        pt->live = live;
        *ret = pt;
        return 0;
}

PlainTime *plain_time_free(PlainTime *pt)
{
        if (!pt)
                return NULL;
        roam_props_free(pt->props);
        roam_time_view_done(&pt->view);
        sd_bus_slot_unref(pt->set_call);
        sd_bus_unref(pt->bus);
        free(pt->state);
        free(pt->gate);
        free(pt->clock);
        free(pt->zone);
        free(pt);
        return NULL;
}
