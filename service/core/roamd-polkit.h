/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

/* polkit's CheckAuthorization without blocking the loop. A method handler asks; the first time
 * the question goes to polkit and the handler answers nothing yet (returns 1); polkit's answer
 * puts the caller's message back into the bus's read queue, the handler runs again and this
 * time gets the verdict. polkit may take seconds (or hang until its 25 s timeout): meanwhile
 * everyone else is served. */

/* At most this many checks wait for polkit per caller (bus name), and in all: beyond that a
 * caller is refused at once rather than queued without bound. */
#define POLKIT_PENDING_PER_SENDER 4
#define POLKIT_PENDING_MAX        256

/* 1 authorized, 0 not, POLKIT_CHALLENGE not unless the user authenticates (polkit's
 * is_challenge: the call did not allow interaction, or no agent answered), -ENOENT when polkit is
 * not on the bus, -EINPROGRESS when polkit was asked (the handler returns 1 and runs again with the
 * answer), -EBUSY when the caller has too many checks waiting. */
#define POLKIT_CHALLENGE 2
int polkit_check(sd_bus_message *msg, const char *action);
/* Drops every waiting check (roamd stops): their callers get no answer from us. */
void polkit_flush(void);
