/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>
#include <sys/socket.h>

#include "roam-macro.h"
#include "roamd-class.h"
#include "roamd-verdict.h"

static const char *const app_state_table[_APP_STATE_MAX] = {
    [APP_STATE_ONLINE] = "online",
    [APP_STATE_ONLINE_FOR_TASK] = "online for a task",
    [APP_STATE_LAN_ONLY] = "local networks only",
    [APP_STATE_LAN_THROUGH_VPN] = "local networks only, through the VPN",
    [APP_STATE_BLOCKED_DENIED] = "blocked: access denied",
    [APP_STATE_BLOCKED_VPN_DOWN] = "blocked: VPN down",
    [APP_STATE_BLOCKED_NO_LINK] = "blocked: no allowed link",
    [APP_STATE_PORTAL_LOGIN] = "captive portal login only",
    [APP_STATE_BLOCKED_NO_PORTAL] = "blocked: no approved captive portal",
    /* the bus says which link and verdict: roam_app_state_via() */
    [APP_STATE_VIA_NOT_ONLINE] = "not online via its link",
    [APP_STATE_OFFLINE_NO_LINK] = "offline: no link",
};

const char *app_state_to_string(AppState s)
{
        return s >= 0 && s < _APP_STATE_MAX ? app_state_table[s] : NULL;
}

AppState app_state_from_string(const char *s)
{
        for (int i = 0; s && i < _APP_STATE_MAX; i++)
                if (streq(s, app_state_table[i]))
                        return (AppState)i;
        return _APP_STATE_INVALID;
}

static const ClassLink *link_find(const ClassWorld *w, int ifindex)
{
        for (size_t i = 0; ifindex > 0 && i < w->n_links; i++)
                if (w->links[i].ifindex == ifindex)
                        return &w->links[i];
        return NULL;
}

static bool allowed(const AppPolicy *key, const ClassLink *l)
{
        return app_policy_allows_bearer(key, l->bearer) &&
               !(key->vpn == APP_VPN_FORBIDDEN && l->bearer == BEARER_VPN);
}

static bool better(const ClassLink *l, const ClassLink *best, int f)
{
        return !best || l->verdict[f] > best->verdict[f] ||
               (l->verdict[f] == best->verdict[f] &&
                (l->metric[f] < best->metric[f] ||
                 (l->metric[f] == best->metric[f] &&
                  bearer_preference(l->bearer) < bearer_preference(best->bearer))));
}

/* Whether traffic main sends out of link l is steered elsewhere: its verdict for the family
 * is known to reach nothing beyond it (offline, local, a portal). A link still being checked
 * keeps its traffic (its round takes milliseconds on a working network), and so does a
 * partial one (plain HTTP gets through, and a socket bound to the link, curl --interface,
 * would find no route while steered); a VPN's traffic never leaves the tunnel. */
static bool steer_away(const ClassWorld *w, const ClassLink *l, int f)
{
        return w->prefer_online && l->bearer != BEARER_VPN &&
               (l->verdict[f] == VERDICT_OFFLINE || l->verdict[f] == VERDICT_LOCAL ||
                l->verdict[f] == VERDICT_PORTAL);
}

/* The best online link allowed to the class (never a VPN: only vpn=required goes there). */
static const ClassLink *best_online(const AppPolicy *key, const ClassWorld *w, int f)
{
        const ClassLink *best = NULL;

        for (size_t i = 0; i < w->n_links; i++) {
                const ClassLink *l = &w->links[i];
                if (!l->slot || l->metric[f] == UINT32_MAX || !allowed(key, l) ||
                    l->bearer == BEARER_VPN || l->verdict[f] != VERDICT_ONLINE)
                        continue;
                if (better(l, best, f))
                        best = l;
        }
        return best;
}

/* Which link new flows of a class take for family f (0 IPv4, 1 IPv6). */
static const ClassLink *pick_link(const AppPolicy *key, const ClassWorld *w, int f, bool restricted)
{
        const ClassLink *main_link = link_find(w, w->main_default[f]), *best = NULL;

        if (main_link && main_link->slot && allowed(key, main_link)) {
                /* As Android and ConnMan prefer validated networks: main's default link
                 * stands unless it is known not to reach the internet and another does. */
                const ClassLink *online =
                    steer_away(w, main_link, f) ? best_online(key, w, f) : NULL;
                return online ?: main_link;
        }
        if (!restricted && key->vpn != APP_VPN_FORBIDDEN)
                return NULL; /* unrestricted apps follow main, which has no default */

        /* The best allowed link: best verdict, lowest default metric, bearer preference. */
        for (size_t i = 0; i < w->n_links; i++) {
                const ClassLink *l = &w->links[i];
                if (!l->slot || l->metric[f] == UINT32_MAX || !allowed(key, l))
                        continue;
                if (better(l, best, f))
                        best = l;
        }
        return best;
}

/* The state of a class that may go out through route[]: online when a family's link is online
 * for it; otherwise the best of those links' verdicts names the link ("local via cell0"). */
static void state_of_routes(const ClassWorld *w, AppState blocked, ClassResult *ret)
{
        const ClassLink *best = NULL;
        int best_f = 0;

        for (int f = 0; f < 2; f++) {
                const ClassLink *l = link_find(w, ret->route[f]);
                if (l && (!best || l->verdict[f] > best->verdict[best_f])) {
                        best = l;
                        best_f = f;
                }
        }
        if (!ret->route[0] && !ret->route[1])
                ret->state = blocked;
        else if (!best || best->verdict[best_f] == VERDICT_ONLINE)
                /* a route through a link the snapshot does not know (the VPN before its first
                 * sync): nothing says it does not work */
                ret->state = APP_STATE_ONLINE;
        else {
                ret->state = APP_STATE_VIA_NOT_ONLINE;
                ret->state_link = best->ifindex;
                ret->state_verdict = best->verdict[best_f];
        }
}

/* Every packet to the VPN's slot; families it does not carry are refused. */
static void through_vpn(const ClassWorld *w, ClassResult *ret)
{
        ret->spec.vpn_required = true;
        /* A local stub forwards by its own routes, not through the VPN: its queries would
         * leave outside the tunnel (and while the VPN is down). */
        ret->spec.local_dns_refused = true;
        for (int f = 0; f < 2; f++)
                if (w->vpn_link && w->vpn_carries[f]) {
                        ret->spec.fam[f].slot = w->vpn_slot;
                        ret->route[f] = w->vpn_link;
                }
}

void class_compile(const AppPolicy *key, bool system, const ClassWorld *w, ClassResult *ret)
{
        memset(ret, 0, sizeof(*ret));
        switch (key->access) {
        case APP_ACCESS_DENY:
                ret->spec.kind = NFT_CLASS_REJECT;
                ret->state = APP_STATE_BLOCKED_DENIED;
                return;
        case APP_ACCESS_LAN:
                ret->spec.kind = NFT_CLASS_LAN;
                /* a local forwarder would reach beyond the LAN for it */
                ret->spec.local_dns_refused = true;
                ret->state = APP_STATE_LAN_ONLY;
                if (key->vpn == APP_VPN_REQUIRED && !system) {
                        /* Privacy wins: its local traffic and DNS also go only through the
                         * VPN (docs/apps.md); without a VPN it is refused. */
                        through_vpn(w, ret);
                        ret->state = ret->route[0] || ret->route[1] ? APP_STATE_LAN_THROUGH_VPN
                                                                    : APP_STATE_BLOCKED_VPN_DOWN;
                }
                return;
        case APP_ACCESS_ALLOW:
                break;
        case _APP_ACCESS_MAX:
        case _APP_ACCESS_INVALID:
                ret->spec.kind = NFT_CLASS_REJECT;
                ret->state = APP_STATE_BLOCKED_DENIED;
                return;
        }
        if (system) {
                ret->spec.kind = NFT_CLASS_ACCEPT;
                ret->route[0] = w->main_default[0];
                ret->route[1] = w->main_default[1];
                /* no default route in main (no link up yet): it goes nowhere, and says so */
                state_of_routes(w, APP_STATE_OFFLINE_NO_LINK, ret);
                return;
        }
        ret->spec.kind = NFT_CLASS_ROUTE;
        ret->spec.sticky = key->handover == APP_HANDOVER_STICKY;
        if (key->vpn == APP_VPN_REQUIRED) {
                through_vpn(w, ret);
                state_of_routes(w, APP_STATE_BLOCKED_VPN_DOWN, ret);
                return;
        }
        for (int f = 0; f < 2; f++) {
                NftFamilyRoute *fr = &ret->spec.fam[f];
                bool restricted = key->bearers != 0;
                const ClassLink *l = pick_link(key, w, f, restricted);

                fr->restricted = restricted;
                fr->slot = l ? l->slot : 0;
                fr->slot_oif = fr->slot ? (uint32_t)l->ifindex : 0;
                fr->main_oif = (uint32_t)w->main_default[f];
                fr->around_vpn = key->vpn == APP_VPN_FORBIDDEN;
                fr->keep_lan = fr->slot && !restricted && fr->main_oif != fr->slot_oif;
                ret->route[f] = fr->slot ? l->ifindex : 0;
        }
        state_of_routes(w, APP_STATE_BLOCKED_NO_LINK, ret);
}

void class_compile_portal_login(const AppPolicy *key, const ClassWorld *w, ClassResult *ret)
{
        const ClassLink *l = link_find(w, w->portal_link);

        memset(ret, 0, sizeof(*ret));
        /* A portal's page must not reach services on the host (docs/portal.md). */
        ret->spec.loopback_refused = true;
        if (key->access == APP_ACCESS_DENY || !l || !l->slot) {
                ret->spec.kind = NFT_CLASS_REJECT;
                ret->state = key->access == APP_ACCESS_DENY ? APP_STATE_BLOCKED_DENIED
                                                            : APP_STATE_BLOCKED_NO_PORTAL;
                return;
        }
        /* Every packet, both families, marked for the captive link's table (which holds only
         * that link's routes); flows follow the pin, so when it goes they are refused. */
        ret->spec.kind = NFT_CLASS_ROUTE;
        for (int f = 0; f < 2; f++) {
                ret->spec.fam[f].restricted = true;
                ret->spec.fam[f].slot = l->slot;
                ret->spec.fam[f].slot_oif = (uint32_t)l->ifindex;
                ret->route[f] = l->ifindex;
        }
        ret->state = APP_STATE_PORTAL_LOGIN;
}
