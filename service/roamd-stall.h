/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Between re-checks (docs/connectivity.md): a network that was online may close again while
 * the link stays up (a portal's session ran out). The cheap sign of it is the apps' own
 * traffic: their new TCP connections through an online link get no answer. While a link is
 * online, every [Probe] StallInterval= this looks at the machine's TCP sockets that are
 * still waiting for the answer to their SYN (one sock_diag dump per family, asking the kernel
 * for that state only) and, where a SYN through a link had to be sent again (TCP's first
 * retransmission comes a second after it), probes that link at once instead of at its next
 * re-check; at most once per StallReprobeMin= per link, doubling while those rounds find the
 * link online, so a lossy link or a dead server does not make a probe storm. */

typedef struct Manager Manager;
typedef struct StallWatch StallWatch;

int stall_watch_new(Manager *m, StallWatch **ret);
StallWatch *stall_watch_free(StallWatch *s);
