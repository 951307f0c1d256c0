/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What an app hears from its network monitor (docs/apps-hear.md): GLib's GNetworkMonitor in
 * every GLib process is roam's GIO module (gio/), which asks org.roam1.AppMonitor. roamd
 * answers each caller for its own app, found from the caller's cgroup (never from anything
 * it says): whether a route it may use exists, its connectivity, whether its link is metered;
 * and tells each subscribed connection of the app alone (unicast) when that changes, an
 * answer that brings the app online held until its turn in the ordered wake-up. */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>

#include "roam-words.h"
#include "roamd-apps.h"

typedef struct Core Core;
typedef struct Stats Stats;
typedef struct WakeRun WakeRun;
typedef struct Monitor Monitor;
typedef struct MonitorSub MonitorSub;

/* The version of org.roam1.AppMonitor that Subscribe() answers: the module refuses an older
 * roamd (and GLib falls back to another monitor). */
#define MONITOR_API_VERSION 1u

/* At most this many subscriptions, and per user (a subscription is a bus connection). */
#define MONITOR_SUBS_MAX          8192u
#define MONITOR_SUBS_PER_USER_MAX 1024u

typedef struct MonitorAnswer {
        bool available;
        RoamConnectivity connectivity;
        bool metered;
} MonitorAnswer;

/* The answer for one instance of an app (pure: table-tested). view NULL: its class is not
 * made yet (nothing routes). metered: the app's traffic on the link it takes is metered
 * (stats_link_metered_for()). */
void monitor_answer(const AppView *view, bool metered, MonitorAnswer *ret);

/* After the apps (and the wake-up, the usage: NULL without them) started. */
int monitor_new(Core *core, Apps *apps, WakeRun *wake, Stats *stats, Monitor **ret);
Monitor *monitor_free(Monitor *m);

/* For the bus (roamd-monitor-bus.c): */
/* The caller's app and its user (from its cgroup); -ESRCH when it cannot be told. */
int monitor_caller(Monitor *m, sd_bus_message *msg, App **ret_app, uid_t *ret_uid);
/* The answer for app's instance in uid's subtree now. */
void monitor_answer_for(Monitor *m, App *app, uid_t uid, MonitorAnswer *ret);
/* Subscribes the message's sender (its connection) for app's instance in uid's subtree; a
 * second Subscribe of the same connection changes nothing. ret: what it was told. */
int monitor_subscribe(Monitor *m, sd_bus_message *msg, App *app, uid_t uid, MonitorAnswer *ret);
int monitor_unsubscribe(Monitor *m, const char *sender);
/* How many connections of app listen. */
unsigned monitor_listeners(Monitor *m, const char *app_id);
/* Whether app's instance may reach address (family AF_INET/AF_INET6, 4 or 16 bytes) by the
 * routes its policy lets it use; why: a sentence when not. */
bool monitor_can_reach(Monitor *m, App *app, uid_t uid, int family, const uint8_t *addr,
                       const char **why);

int monitor_bus_setup(Monitor *m);
int monitor_bus_send(Monitor *m, const char *destination, const MonitorAnswer *a);
sd_bus_slot **monitor_slot(Monitor *m);
Core *monitor_core(Monitor *m);
