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

/* The same trigger serves every sign that the way out closed: also apps' connection
 * attempts refused with a TCP reset through an online link (counted in the kernel by
 * roamd-nft-refused.c, read at the same look), and the check host's name resolving to a
 * private address where it resolved to a public one (roamd-stall-dns.c). The backoff is
 * per link and shared: a false alarm of one signal holds the others back as well. */

#include <errno.h>

typedef enum StallSignal {
        STALL_SIGNAL_SYN,   /* apps' SYNs sent again without an answer */
        STALL_SIGNAL_RESET, /* apps' connection attempts refused with a reset */
        STALL_SIGNAL_DNS,   /* the check host's name now resolves to a private address */
        _STALL_SIGNAL_MAX,
        _STALL_SIGNAL_INVALID = -EINVAL,
} StallSignal;

const char *stall_signal_to_string(StallSignal s);

typedef struct Core Core;
typedef struct StallWatch StallWatch;

int stall_watch_new(Core *core, StallWatch **ret);
StallWatch *stall_watch_free(StallWatch *s);
/* The intervals may have changed: the looks are scheduled afresh with them. */
void stall_watch_reload(StallWatch *s);
