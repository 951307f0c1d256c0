/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <sys/types.h>
#include <systemd/sd-bus.h>

/* polkit's CheckAuthorization without blocking the loop. A method handler asks; the first time
 * the question goes to polkit and the handler answers nothing yet (returns 1); polkit's answer
 * puts the caller's message back into the bus's read queue, the handler runs again and this
 * time gets the verdict. polkit may take seconds (or hang until its 25 s timeout): meanwhile
 * everyone else is served. */

/* At most this many checks wait for polkit per caller (bus name), and per user (uid, over all
 * its connections): beyond that a caller is refused at once rather than queued without bound.
 * There is no cap over all users, which one user could fill for everyone. The bus's own
 * limit of roamd's calls waiting for replies (max_replies_per_connection) is shared by all:
 * a user's share is kept small, and a call the bus refuses is LimitsExceeded, not a no. */
#define POLKIT_PENDING_PER_SENDER 4
#define POLKIT_PENDING_PER_USER   16

/* POLKIT_CHALLENGE: polkit's is_challenge (not unless the user authenticates: the call did not
 * allow interaction, or no agent answered). */
#define POLKIT_CHALLENGE 2
/* uid: the caller's effective uid (UID_INVALID when unknown: such callers share one share).
 * 1 authorized, 0 not, POLKIT_CHALLENGE, -ENOENT when polkit is not on the bus, -EINPROGRESS
 * when polkit was asked (the handler returns 1 and runs again with the answer), -EBUSY when the
 * caller or its user has too many checks waiting (or the bus holds no more of roamd's calls). */
int polkit_check(sd_bus_message *msg, const char *action, uid_t uid);
/* Drops every waiting check (roamd stops): their callers get no answer from us. */
void polkit_flush(void);
