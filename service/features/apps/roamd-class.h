/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The policy -> class compiler: what a class chain holds and where its new flows go, from an
 * effective policy and a snapshot of the links and routing slots. Pure (no Manager, no
 * kernel): table-tested in tests/unit/test-class.c. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "roamd-app-policy.h"
#include "roamd-bearer.h"
#include "roamd-nft.h"

/* What an app is doing, as the App.State property says it. */
typedef enum AppState {
        APP_STATE_ONLINE,
        APP_STATE_ONLINE_FOR_TASK,
        APP_STATE_LAN_ONLY,
        APP_STATE_LAN_THROUGH_VPN,
        APP_STATE_BLOCKED_DENIED,
        APP_STATE_BLOCKED_VPN_DOWN,
        APP_STATE_BLOCKED_NO_LINK,
        APP_STATE_PORTAL_LOGIN,      /* the portal-login app: the captive link only */
        APP_STATE_BLOCKED_NO_PORTAL, /* the portal-login app, no approved portal */
        /* Allowed out, but the link its traffic really takes (ClassResult.state_link) is not
         * online: the bus says which link and its verdict ("local via cell0"). */
        APP_STATE_VIA_NOT_ONLINE,
        /* The system policy while main has no default route (before any link is up): roamd
         * blocks nothing of it, but nothing of it gets out either. */
        APP_STATE_OFFLINE_NO_LINK,
        _APP_STATE_MAX,
        _APP_STATE_INVALID = -22,
} AppState;

const char *app_state_to_string(AppState s);
AppState app_state_from_string(const char *s);

/* A link as the compiler sees it. */
typedef struct ClassLink {
        int ifindex;
        Bearer bearer;
        int verdict[2];     /* Verdict per family ([0] IPv4, [1] IPv6): higher is better */
        uint32_t slot;      /* its routing slot when ready (rules installed), else 0 */
        uint32_t metric[2]; /* its main-table default route's metric, UINT32_MAX: none */
} ClassLink;

typedef struct ClassWorld {
        const ClassLink *links;
        size_t n_links;
        int main_default[2]; /* the link of main's default route per family, 0 none */
        int vpn_link;        /* the VPN in use, 0 none */
        bool vpn_carries[2]; /* its rules are in place and it has an address of the family */
        uint32_t vpn_slot;
        /* The link the portal-login app may use: behind a captive portal whose browser login
         * the user approved; 0 none. */
        int portal_link;
        /* [Routing] PreferOnline=: traffic that main sends out of a link that is not online
         * goes out of the best online link instead (docs/connectivity.md) */
        bool prefer_online;
} ClassWorld;

typedef struct ClassResult {
        NftClass spec;
        int route[2]; /* ifindex new flows take per family, 0 none */
        AppState state;
        /* APP_STATE_VIA_NOT_ONLINE: the link the state is about and its verdict */
        int state_link, state_verdict;
} ClassResult;

/* key: the policy as enforced; system: the system policy (routed by main, never marked). */
void class_compile(const AppPolicy *key, bool system, const ClassWorld *w, ClassResult *ret);
/* The portal-login app (ROAM_APP_PORTAL_LOGIN): every packet to the portal link's slot, so it
 * reaches that link only (not the main table's default, not another link's LAN, not a VPN);
 * refused while there is no portal link, or when its own access is deny. */
void class_compile_portal_login(const AppPolicy *key, const ClassWorld *w, ClassResult *ret);
