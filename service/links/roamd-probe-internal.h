/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What the prober's parts share (roamd-probe.c: the rounds and what their answers decide;
 * roamd-probe-schedule.c: when the next round runs), not for other modules. */

#include <curl/curl.h>
#include <systemd/sd-event.h>

#include "roamd-ping.h"
#include "roamd-pmtu.h"
#include "roamd-probe-answer.h"
#include "roamd-probe.h"
#include "roamd-reconcile.h"
#include "roamd-resolve.h"

typedef struct ProbeFamily ProbeFamily;

/* A response body, cut at a limit in the write callback: Debian's curl (7.88) ignores
 * CURLOPT_MAXFILESIZE for bodies of unknown length, so a chunked 50 MB answer must be cut
 * here. */
typedef struct Body {
        char *data;
        size_t size, max;
        bool truncated;
        bool decided; /* cut once it could no longer be the expected answer */
} Body;

/* One URL fetched through the link: resolve its host with the link's DNS, then GET it. */
typedef struct Fetch {
        Prober *prober;
        ProbeFamily *family; /* NULL for the capport fetch */
        FetchKind kind;
        char *url;
        char *host;
        long port;
        Resolve *resolve;
        CURL *easy;
        struct curl_slist *connect_to, *headers;
        Body body;
        DnsOutcome dns;
        HttpOutcome outcome;
        char *portal_url;
        uint64_t connect_usec; /* the TCP handshake, measured by curl */
        uint32_t mark;         /* SO_MARK of its sockets: the VPN slot's, else 0 */
        IpAddr early;          /* the transfer started before DNS answered, to this address */
        bool speculative;      /* ... and the link's DNS has yet to confirm it */
        bool transfer_done;    /* the transfer ended; its outcome waits for DNS */
        bool shares_lookup;    /* the HTTPS probe waits for the HTTP probe's lookup */
        bool running, done;
        bool fastopen_lost; /* its Fast Open SYN was lost (roamd-tcp-fastopen.h) */
        char error[CURL_ERROR_SIZE];
} Fetch;

struct ProbeFamily {
        Prober *prober;
        int family;
        bool active;    /* a round runs for this family */
        bool settled;   /* its facts are complete */
        Fetch fetch[4]; /* FETCH_HTTP, FETCH_HTTPS, FETCH_GARDEN, FETCH_LARGE */
        Ping *ping;
        sd_event_source *grace;    /* HTTP answered: how long HTTPS may still take */
        sd_event_source *dns_wait; /* no DNS server known yet: how long the lookups wait */
        bool partial;              /* partial was published while HTTPS still ran */
        unsigned round;            /* counts the rounds started */
        IpAddr known[4];           /* per fetch kind: where the link's DNS sent it last round */
        sd_event_source *stall;    /* the small probes answered: how long the large one may be
                                    * silent */
        PmtuSearch *pmtu;   /* behind a black hole: the working MTU searched (not a round's) */
        bool pmtu_searched; /* since the verdict became mtu */
        ProbeFacts facts;
        ReconcileWait *pass;  /* a VPN's probes wait for the pass that routes its slot */
        bool opening;         /* family_open() ran, family_start_rest() has yet to; */
        bool checking;        /* then `checking` is published if the verdict is still */
        VerdictResult before; /* this one */
};

struct Prober {
        Link *link;
        ProbeFamily fam[2];
        Fetch capport;
        bool capport_active;
        bool capport_started; /* since the last full round: the API was looked at */
        bool starting;        /* rounds are being started: do not finish yet */
        bool rest_capport;    /* prober_start_rest() looks at the portal API */
        bool probed;          /* this round sent probes (else LastProbe stays) */
        sd_event_source *timer;
        sd_event_source *rest; /* prober_start_rest() */
        Resolve *nat64;        /* RFC 7050: ipv4only.arpa AAAA, beside the IPv6 round */
        unsigned failures;
        uint64_t round_start;
        /* While one family is online and the other is not, the timer's rounds probe only the
         * failing family (PROBE_IPV4/6); the online one waits for its re-check, due then
         * (CLOCK_MONOTONIC). retry 0: every family. */
        unsigned retry;
        uint64_t recheck_at;
        unsigned round_families; /* the families the round (since idle) started */
        /* The network a portal was last met on through this link (Link.NetworkId), when its
         * session there began (the round that found it online after the portal; 0: no
         * session runs), how long the one before lasted until a round found the portal
         * again (0: not known), and the short re-checks since (their backoff): an online
         * link on that network is re-checked sooner (roamd-probe-schedule.c). */
        char *portal_network;
        uint64_t session_start_usec;
        uint64_t session_usec;
        unsigned session_checks;
        Verdict last_verdict; /* the link's verdict after the last round */
        /* The link's TLS sessions, resumed by re-checks: on the network tls_network only. */
        CURLSH *tls_share;
        char *tls_network;
        bool tls_stale; /* the carrier went: whatever network comes next, not this share */
        /* TCP Fast Open for the HTTPS probe, on tls_network only (as its sessions): the check
         * hosts' addresses whose cookies, kept by the kernel from wherever, were forgotten
         * when connecting there first on this network, and whether a Fast Open SYN was lost
         * here (then no more Fast Open until the network changes). */
        IpAddr tfo_clean[4];
        unsigned n_tfo_clean;
        bool tfo_off;
};

/* roamd-probe.c */
/* families: PROBE_IPV4 | PROBE_IPV6; facts_changed: the link's facts moved (the old verdict
 * is not known to hold until the first answer). */
void prober_start(Prober *p, unsigned families, bool facts_changed);
/* The facts of a family the link's own state gives (addresses, routes, carrier). */
void probe_base_facts(const Link *l, int family, ProbeFacts *f);

/* roamd-probe-schedule.c */
/* The round ended: the next one at the re-check interval or with backoff. */
void prober_schedule_next(Prober *p);
/* Whether a family of the link needs a probe at all. */
bool link_needs_probe(const Link *l);
int prober_on_timer(sd_event_source *s, uint64_t usec, void *userdata);
