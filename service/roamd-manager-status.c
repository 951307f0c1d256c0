/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The manager's state as others see it: PropertiesChanged of its own members and systemd's
 * status line, following the links, the reconciler and the time gate. */
#include <systemd/sd-daemon.h>

#include "roam-util.h"
#include "roamd-manager.h"
#include "roamd-time-feed.h"
#include "roamd-wake-run.h"

void manager_degraded_changed(void *userdata)
{
        Manager *m = userdata;

        core_emit_manager_changed(&m->core, "Degraded", "DegradedSince", NULL);
}

/* systemd's status line: the global state, "online" in the time gate's words. */
static void manager_notify_status(Manager *m)
{
        Links *links = m->core.links;
        const char *state = links->state;

        if (streq(state, "online") && m->time)
                state = roam_time_gate_online_words(time_feed_gate(m->time));
        (void)sd_notifyf(false, "STATUS=%s%s%s", state, links->best ? " via " : "",
                         links->best ? links->best->info.name : "");
}

/* The time gate is an input of the wake queue and of the status line: the composition root
 * hands it over (the time feed knows neither). */
void manager_follow_time(Manager *m)
{
        char why[256];

        manager_notify_status(m);
        if (m->wake && m->time)
                wake_set_time_gate(m->wake->queue, time_feed_gate(m->time) != ROAM_TIME_GATE_CLOSED,
                                   time_feed_gate_reason(m->time, why, sizeof(why)));
}

/* The manager's own share of link events: the bus properties and systemd's status line. */
static void on_links(Links *links, const LinksEvent *ev, void *userdata)
{
        Manager *m = userdata;

        switch (ev->type) {
        case LINKS_EVENT_BEST:
                if (ev->mask & LINKS_BEST_LINK)
                        core_emit_manager_changed(&m->core, "BestLink", NULL);
                if (ev->mask & LINKS_BEST_STATE) {
                        core_emit_manager_changed(&m->core, "State", NULL);
                        manager_notify_status(m);
                }
                break;
        case LINKS_EVENT_SYNCED:
                /* Links went away: give the freed heap back instead of keeping the peak of a
                 * burst. */
                if (ev->n_gone > 0)
                        core_schedule_trim(&m->core);
                break;
        case LINKS_EVENT_NEW:
        case LINKS_EVENT_CHANGED:
        case LINKS_EVENT_VERDICT:
        case LINKS_EVENT_CAPPORT:
        case LINKS_EVENT_NETWORK:
        case LINKS_EVENT_GONE:
        case LINKS_EVENT_PROBED:
        case LINKS_EVENT_LOCATION:
        case _LINKS_EVENT_MAX:
        case _LINKS_EVENT_INVALID:
                break;
        }
}

int manager_status_setup(Manager *m)
{
        return links_watch_add(m->core.links, on_links, m, NULL) == 0 ? -ENOMEM : 0;
}
