/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <systemd/sd-bus.h>

/* The client's side of the bus: connecting and telling "roamd is not running" apart from other
 * failures. Every function here logs its errors; -EHOSTDOWN always means roamd is not running
 * (no system bus to reach it on, or nobody owns org.roam1), so the caller can pick the exit
 * status without logging again. */

#define ROAM_ERR_NOT_RUNNING EHOSTDOWN

/* Connects to the system bus (sd_bus_open_system: honours DBUS_SYSTEM_BUS_ADDRESS). Its calls
 * allow interactive authorization (as systemctl's do). */
int roam_bus_connect(sd_bus **ret);
/* Before a call that polkit may want a password for (a change, or reading every user's
 * usage), as systemctl starts its agent for the verbs that change something only: when we are
 * not root, stdin is a terminal and polkit is installed (the bus starts it), polkit's text agent
 * runs for us (roam-polkit-agent.h) and the bus's calls may wait 5 min. Reading commands start
 * nothing. */
int roam_bus_may_ask(sd_bus *bus);

/* roamd refused for want of authorization: its AccessDenied, or polkit wanting a password
 * the call did not allow it to ask for (InteractiveAuthorizationRequired). */
bool roam_bus_error_is_denied(const sd_bus_error *e);
/* Why, in words, without a final period: roamd's own message, which says who decided
 * (polkit, or, where polkit is not running, root and group netdev). */
const char *roam_bus_denied_reason(const sd_bus_error *e, char *buf, size_t size);

/* Logs why a call to roamd failed ("Failed to <what>: ...") and returns a negative errno:
 * -EHOSTDOWN when the error means that nobody owns org.roam1. */
int roam_bus_log_call_error(const sd_bus_error *error, int r, const char *what);

/* 0 when roamd has a link called name; otherwise logs "no link 'NAME' (...)" and returns
 * -ENOENT (or what roam_bus_log_call_error returns). A name that is no interface name is no
 * link either. */
int roam_bus_check_link(sd_bus *bus, const char *name);

/* The same for an app (GetApp); creates, if not NULL, is appended to the message: how to make
 * such an app. */
int roam_bus_check_app(sd_bus *bus, const char *id, const char *creates);
