/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "roamd-monitor.h"
#include "roamd-verdict.h"

/* An app's state (its class, as the last pass computed it) in GLib's terms. */
void monitor_answer(const AppView *view, bool metered, MonitorAnswer *ret)
{
        *ret = (MonitorAnswer){.connectivity = ROAM_CONNECTIVITY_LOCAL};
        if (!view)
                return;
        switch (view->state) {
        case APP_STATE_ONLINE:
        case APP_STATE_ONLINE_FOR_TASK:
                ret->available = true;
                ret->connectivity = ROAM_CONNECTIVITY_FULL;
                break;
        case APP_STATE_LAN_ONLY:
        case APP_STATE_LAN_THROUGH_VPN:
                ret->available = true;
                ret->connectivity = ROAM_CONNECTIVITY_LIMITED;
                break;
        case APP_STATE_PORTAL_LOGIN:
                ret->available = true;
                ret->connectivity = ROAM_CONNECTIVITY_PORTAL;
                break;
        case APP_STATE_VIA_NOT_ONLINE:
                /* a route it may use exists; the link it leaves by is not online */
                ret->available = true;
                ret->connectivity = view->state_verdict == VERDICT_PORTAL
                                        ? ROAM_CONNECTIVITY_PORTAL
                                        : ROAM_CONNECTIVITY_LIMITED;
                break;
        case APP_STATE_BLOCKED_DENIED:
        case APP_STATE_BLOCKED_VPN_DOWN:
        case APP_STATE_BLOCKED_NO_LINK:
        case APP_STATE_BLOCKED_NO_PORTAL:
        case APP_STATE_OFFLINE_NO_LINK:
        case _APP_STATE_MAX:
        case _APP_STATE_INVALID:
                return; /* nothing of it routes: not available, local, not metered */
        }
        ret->metered = metered;
}
