/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The manager's state as others see it: PropertiesChanged of its own members and systemd's
 * status line, following the links, the reconciler and the time gate. */
#include <systemd/sd-daemon.h>

#include "roam-log.h"
#include "roam-util.h"
#include "roam-words.h"
#include "roamd-apps.h"
#include "roamd-manager.h"
#include "roamd-verdict.h"
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
        Link *l = m->default_ifindex ? links_get(m->core.links, m->default_ifindex) : NULL;
        const char *state = m->state;

        if (streq(state, "online") && m->time)
                state = roam_time_gate_online_words(time_feed_gate(m->time));
        (void)sd_notifyf(false, "STATUS=%s%s%s%s%s", state, l ? " via " : "", l ? l->info.name : "",
                         *strempty(m->state_reason) ? ": " : "", strempty(m->state_reason));
}

/* The global state is what an app with the default policy gets: the verdict of the link its
 * traffic takes (the apps' default class: no second route computation), not the best link's.
 * Without governed apps the best link judges, as before. */
static void manager_state_update(Manager *m)
{
        Links *links = m->core.links;
        const AppsDefaultRoute *d = m->apps ? apps_default_route(m->apps) : NULL;
        const char *state = links->state, *changed[4] = {};
        Link *link = links->best, *best = links->best;
        _cleanup_free_ char *reason = NULL;
        size_t n = 0;

        if (d && d->known) {
                Link *kernel = d->kernel ? links_get(links, d->kernel) : NULL;

                /* no link takes the default traffic (no default route): the best link says
                 * why ("veth0, no default route") */
                link = d->link ? links_get(links, d->link) : best;
                state = verdict_to_string(d->verdict) ?: "offline";
                if (link && kernel && kernel != link)
                        /* DefaultFollows=verdict took the default apps off the kernel's choice */
                        reason = roam_state_reason_follows(kernel->info.name,
                                                           (RoamVerdict)kernel->verdict.verdict,
                                                           link->info.name);
                else if (best && best != link && best->verdict.verdict > d->verdict)
                        reason = roam_state_reason_default_route(
                            best->info.name, (RoamVerdict)best->verdict.verdict,
                            link ? link->info.name : "no link", (RoamVerdict)d->verdict);
        }
        if (!streq(state, m->state)) {
                log_info("State (the default route's): %s -> %s", m->state, state);
                m->state = state;
                changed[n++] = "State";
        }
        if ((link ? link->ifindex : 0) != m->default_ifindex) {
                Link *old = links_get(links, m->default_ifindex);
                log_info("Default route's link: %s -> %s", old ? old->info.name : "none",
                         link ? link->info.name : "none");
                m->default_ifindex = link ? link->ifindex : 0;
                changed[n++] = "DefaultLink";
        }
        if (!streq(strempty(reason), strempty(m->state_reason))) {
                log_info("State's reason: %s -> %s",
                         *strempty(m->state_reason) ? m->state_reason : "none",
                         *strempty(reason) ? reason : "none");
                free(m->state_reason);
                m->state_reason = TAKE_PTR(reason);
                changed[n++] = "StateReason";
        }
        if (n == 0)
                return;
        core_emit_manager_changed(&m->core, changed[0], changed[1], changed[2], NULL);
        manager_notify_status(m);
        manager_follow_state(m);
}

/* The global state is an input of the wake queue and of the time gate's wait: apps are woken,
 * and the time sources' wait counts, only once apps' traffic really gets out, not when the
 * best link does (the composition root hands it over: neither feature knows the apps'
 * default route). */
void manager_follow_state(Manager *m)
{
        bool online = streq(m->state, "online");

        wake_run_set_state(m->wake, online, m->default_ifindex);
        if (online)
                time_feed_online(m->time);
}

static void on_apps_default(Apps *a, void *userdata)
{
        manager_state_update(userdata);
}

int manager_status_follow_apps(Manager *m)
{
        m->apps_default_watch = apps_default_watch_add(m->apps, on_apps_default, m);
        if (m->apps_default_watch == 0)
                return log_oom();
        manager_state_update(m);
        return 0;
}

void manager_status_unfollow_apps(Manager *m)
{
        apps_default_watch_remove(m->apps, m->apps_default_watch);
        m->apps_default_watch = 0;
}

void manager_status_done(Manager *m)
{
        free(m->state_reason);
        m->state_reason = NULL;
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
                manager_state_update(m);
                break;
        case LINKS_EVENT_SYNCED:
                /* Links went away: give the freed heap back instead of keeping the peak of a
                 * burst. */
                if (ev->n_gone > 0)
                        core_schedule_trim(&m->core);
                manager_state_update(m);
                break;
        case LINKS_EVENT_VERDICT:
                /* the best link's or the kernel's default link's verdict words the reason */
                manager_state_update(m);
                break;
        case LINKS_EVENT_NEW:
        case LINKS_EVENT_CHANGED:
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
        m->state = m->core.links->state;
        return links_watch_add(m->core.links, on_links, m, NULL) == 0 ? -ENOMEM : 0;
}
