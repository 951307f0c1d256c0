/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

/* Changes need authorization: uid 0 always; otherwise polkit's answer for action when
 * polkit is on the bus, else membership of group netdev. 0 authorized; <0 refused
 * (AccessDenied set); 1 while polkit is asked (roamd-polkit.h): the method handler returns it
 * as is and runs again, from the start, once polkit answered. */
int bus_check_authorized(sd_bus_message *msg, const char *action, sd_bus_error *error);
