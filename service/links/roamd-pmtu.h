/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

#include "roamd-config.h"
#include "roamd-curl.h"

/* The working path MTU behind a black hole, searched the RFC 4821 way (packetization layer
 * probing): the large URL fetched again and again through the link, each time with the TCP
 * MSS we advertise clamped (TCP_MAXSEG before connect), so the server's segments are at
 * most that size plus the headers. A size whose answer comes passes the path; one that
 * stays silent does not. A binary search between the family's floor and the link's MTU, a
 * handful of short attempts one after another on sd-event, never blocking. */

typedef struct PmtuSearch PmtuSearch;

/* mtu: the largest size that passed, 0 when not even the floor did (not an MTU problem, or
 * the path failed meanwhile). The search is over when this is called; free it. */
typedef void (*PmtuDoneFn)(PmtuSearch *s, uint32_t mtu, void *userdata);

typedef struct PmtuTarget {
        const char *url;  /* an answer of at least PMTU_ANSWER_BYTES */
        const char *host; /* for Host, SNI and the certificate */
        long port;
        IpAddr addr; /* where the link's DNS sent the large transfer */
        const char *ifname;
        int ifindex;
        uint32_t mark;     /* SO_MARK of the sockets, 0: none */
        uint32_t link_mtu; /* the size that failed: the search's ceiling */
        uint64_t attempt_usec;
        const char *ca_file;
} PmtuTarget;

/* What one attempt must bring: several full-size segments of any size searched. */
#define PMTU_ANSWER_BYTES 8192
/* The search stops when the sizes that passed and failed are this close. */
#define PMTU_STEP 8

/* The floor of the search: RFC 8200's minimum for IPv6; for IPv4 the size RFC 4821 (7.2)
 * calls safe for nearly every path. */
uint32_t pmtu_floor(int family);

int pmtu_search_start(CurlGlue *curl, const PmtuTarget *target, PmtuDoneFn done, void *userdata,
                      PmtuSearch **ret);
/* Cancels a search still running (no callback follows). NULL allowed. */
PmtuSearch *pmtu_search_free(PmtuSearch *s);
