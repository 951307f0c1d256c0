/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roam-macro.h"
#include "roam-util.h"
#include "roam-words.h"

const char *const roam_verdict_table[_ROAM_VERDICT_MAX] = {
    [ROAM_VERDICT_OFFLINE] = "offline", [ROAM_VERDICT_CHECKING] = "checking",
    [ROAM_VERDICT_LOCAL] = "local",     [ROAM_VERDICT_PORTAL] = "portal",
    [ROAM_VERDICT_PARTIAL] = "partial", [ROAM_VERDICT_ONLINE] = "online",
};
DEFINE_STRING_TABLE_LOOKUP(roam_verdict, RoamVerdict)

const char *const roam_reason_table[_ROAM_REASON_MAX] = {
    [ROAM_REASON_NOT_PROBED] = "not-probed",
    [ROAM_REASON_NO_CARRIER] = "no-carrier",
    [ROAM_REASON_NO_ADDRESS] = "no-address",
    [ROAM_REASON_LINK_LOCAL_ONLY] = "link-local-only",
    [ROAM_REASON_NO_ROUTE] = "no-route",
    [ROAM_REASON_GATEWAY_UNREACHABLE] = "gateway-unreachable",
    [ROAM_REASON_DNS_FAILED] = "dns-failed",
    [ROAM_REASON_HTTP_TIMEOUT] = "http-timeout",
    [ROAM_REASON_HTTP_FAILED] = "http-failed",
    [ROAM_REASON_PORTAL_REDIRECT] = "portal-redirect",
    [ROAM_REASON_PORTAL_CONTENT] = "portal-content",
    [ROAM_REASON_PORTAL_DNS] = "portal-dns",
    [ROAM_REASON_CAPPORT] = "capport",
    [ROAM_REASON_HTTPS_FAILED] = "https-failed",
    [ROAM_REASON_PORTAL_CERTIFICATE] = "portal-certificate",
    [ROAM_REASON_HTTP_CACHED] = "http-cached",
    [ROAM_REASON_WALLED_GARDEN] = "walled-garden",
    [ROAM_REASON_MTU] = "mtu",
    [ROAM_REASON_OK] = "ok",
};
DEFINE_STRING_TABLE_LOOKUP(roam_reason, RoamReason)

const char *const roam_bearer_table[_ROAM_BEARER_MAX] = {
    [ROAM_BEARER_ETHERNET] = "ethernet",       [ROAM_BEARER_WIFI] = "wifi",
    [ROAM_BEARER_CELLULAR] = "cellular",       [ROAM_BEARER_BLUETOOTH] = "bluetooth",
    [ROAM_BEARER_WIFI_DIRECT] = "wifi-direct", [ROAM_BEARER_VPN] = "vpn",
    [ROAM_BEARER_LOWPAN] = "lowpan",           [ROAM_BEARER_VIRTUAL] = "virtual",
};
DEFINE_STRING_TABLE_LOOKUP(roam_bearer, RoamBearer)

const char *const roam_access_table[_ROAM_ACCESS_MAX] = {
    [ROAM_ACCESS_ALLOW] = "allow",
    [ROAM_ACCESS_LAN] = "lan",
    [ROAM_ACCESS_DENY] = "deny",
};
DEFINE_STRING_TABLE_LOOKUP(roam_access, RoamAccess)

const char *const roam_vpn_table[_ROAM_VPN_MAX] = {
    [ROAM_VPN_ANY] = "any",
    [ROAM_VPN_REQUIRED] = "required",
    [ROAM_VPN_FORBIDDEN] = "forbidden",
};
DEFINE_STRING_TABLE_LOOKUP(roam_vpn, RoamVpnRule)

const char *const roam_time_gate_table[_ROAM_TIME_GATE_MAX] = {
    [ROAM_TIME_GATE_CLOSED] = "closed",
    [ROAM_TIME_GATE_OPEN] = "open",
    [ROAM_TIME_GATE_UNVERIFIED] = "unverified",
};
DEFINE_STRING_TABLE_LOOKUP(roam_time_gate, RoamTimeGate)

static const char *const roam_connectivity_table[_ROAM_CONNECTIVITY_MAX] = {
    [ROAM_CONNECTIVITY_LOCAL] = "local",
    [ROAM_CONNECTIVITY_LIMITED] = "limited",
    [ROAM_CONNECTIVITY_PORTAL] = "portal",
    [ROAM_CONNECTIVITY_FULL] = "full",
};
DEFINE_STRING_TABLE_LOOKUP(roam_connectivity, RoamConnectivity)

static const char *const time_gate_online_table[_ROAM_TIME_GATE_MAX] = {
    [ROAM_TIME_GATE_CLOSED] = "online, waiting for the time",
    [ROAM_TIME_GATE_OPEN] = "online",
    [ROAM_TIME_GATE_UNVERIFIED] = "online, time unverified",
};

const char *roam_time_gate_online_words(RoamTimeGate g)
{
        return g >= 0 && g < _ROAM_TIME_GATE_MAX ? time_gate_online_table[g] : NULL;
}

const char *const roam_clock_state_table[_ROAM_CLOCK_STATE_MAX] = {
    [ROAM_CLOCK_STEPPED] = "stepped",           [ROAM_CLOCK_OFF] = "off",
    [ROAM_CLOCK_UNSETTLED] = "unsettled",       [ROAM_CLOCK_AGREES] = "agrees",
    [ROAM_CLOCK_LOWER_BOUND] = "lower-bound",   [ROAM_CLOCK_DAEMON] = "clock-daemon",
    [ROAM_CLOCK_NO_TIMEDATED] = "no-timedated", [ROAM_CLOCK_REFUSED] = "timedated-refused",
};
DEFINE_STRING_TABLE_LOOKUP(roam_clock_state, RoamClockState)

static const char *const clock_state_words_table[_ROAM_CLOCK_STATE_MAX] = {
    [ROAM_CLOCK_STEPPED] = "stepped to the agreed time",
    [ROAM_CLOCK_OFF] = "left alone: roamd does not set it (SetClock=no)",
    [ROAM_CLOCK_UNSETTLED] = "left alone: the time is not settled",
    [ROAM_CLOCK_AGREES] = "agrees with the agreed time",
    [ROAM_CLOCK_LOWER_BOUND] = "left alone: the step would go before the last known good time",
    [ROAM_CLOCK_DAEMON] = "left alone: a clock daemon keeps it",
    [ROAM_CLOCK_NO_TIMEDATED] = "left alone: timedated does not answer",
    [ROAM_CLOCK_REFUSED] = "left alone: timedated refused to set it",
};

const char *roam_clock_state_words(RoamClockState s)
{
        return s >= 0 && s < _ROAM_CLOCK_STATE_MAX ? clock_state_words_table[s] : NULL;
}

const char *const roam_handover_table[_ROAM_HANDOVER_MAX] = {
    [ROAM_HANDOVER_STICKY] = "sticky",
    [ROAM_HANDOVER_MOVE] = "move",
};
DEFINE_STRING_TABLE_LOOKUP(roam_handover, RoamHandover)

const char *const roam_app_key_table[_ROAM_APP_KEY_MAX] = {
    [ROAM_APP_KEY_ACCESS] = "access",
    [ROAM_APP_KEY_BEARERS] = "bearers",
    [ROAM_APP_KEY_VPN] = "vpn",
    [ROAM_APP_KEY_HANDOVER] = "handover",
    [ROAM_APP_KEY_WAKE] = "wake",
    [ROAM_APP_KEY_WAKE_SLICE] = "wake-slice",
    [ROAM_APP_KEY_WAKE_BYTES] = "wake-bytes",
};

const char *const roam_app_key_property_table[_ROAM_APP_KEY_MAX] = {
    [ROAM_APP_KEY_ACCESS] = "Access",
    [ROAM_APP_KEY_BEARERS] = "Bearers",
    [ROAM_APP_KEY_VPN] = "VPN",
    [ROAM_APP_KEY_HANDOVER] = "Handover",
    [ROAM_APP_KEY_WAKE] = "Wake",
    [ROAM_APP_KEY_WAKE_SLICE] = "WakeSlice",
    [ROAM_APP_KEY_WAKE_BYTES] = "WakeBytes",
};

const char *roam_app_keys_text(void)
{
        static char text[128];

        if (!text[0])
                for (size_t k = 0, len = 0; k < _ROAM_APP_KEY_MAX; k++)
                        len += (size_t)snprintf(text + len, sizeof(text) - len, "%s%s",
                                                k > 0 ? ", " : "", roam_app_key_table[k]);
        return text;
}

const char *const roam_wake_table[_ROAM_WAKE_MAX] = {
    [ROAM_WAKE_WAITING] = "waiting",
    [ROAM_WAKE_OPENING] = "opening",
    [ROAM_WAKE_AWAKE] = "awake",
    [ROAM_WAKE_DONE] = "done",
};
DEFINE_STRING_TABLE_LOOKUP(roam_wake, RoamWake)

const char *const roam_location_table[_ROAM_LOCATION_MAX] = {
    [ROAM_LOCATION_HOME] = "home",
    [ROAM_LOCATION_WORK] = "work",
    [ROAM_LOCATION_PUBLIC] = "public",
    [ROAM_LOCATION_UNTRUSTED] = "untrusted",
};
DEFINE_STRING_TABLE_LOOKUP(roam_location, RoamLocation)

const char *const roam_location_source_table[_ROAM_LOCATION_SOURCE_MAX] = {
    [ROAM_LOCATION_SOURCE_CONFIG] = "config",
    [ROAM_LOCATION_SOURCE_USER] = "user",
    [ROAM_LOCATION_SOURCE_DEFAULT] = "default",
    [ROAM_LOCATION_SOURCE_TUNNEL] = "tunnel",
};
DEFINE_STRING_TABLE_LOOKUP(roam_location_source, RoamLocationSource)

const char *const roam_fw_direction_table[_ROAM_FW_DIRECTION_MAX] = {
    [ROAM_FW_DIRECTION_IN] = "in",
    [ROAM_FW_DIRECTION_OUT] = "out",
};
DEFINE_STRING_TABLE_LOOKUP(roam_fw_direction, RoamFwDirection)

const char *const roam_fw_action_table[_ROAM_FW_ACTION_MAX] = {
    [ROAM_FW_ACTION_ACCEPT] = "accept",
    [ROAM_FW_ACTION_DROP] = "drop",
    [ROAM_FW_ACTION_REJECT] = "reject",
};
DEFINE_STRING_TABLE_LOOKUP(roam_fw_action, RoamFwAction)

const char *const roam_p2p_reason_table[_ROAM_P2P_REASON_MAX] = {
    [ROAM_P2P_REASON_REQUESTED] = "requested",
    [ROAM_P2P_REASON_CANCELLED] = "cancelled",
    [ROAM_P2P_REASON_REJECTED] = "rejected",
    [ROAM_P2P_REASON_WITHDRAWN] = "withdrawn",
    [ROAM_P2P_REASON_PEER_LOST] = "peer-lost",
    [ROAM_P2P_REASON_PROVISIONING_FAILED] = "provisioning-failed",
    [ROAM_P2P_REASON_FAILED] = "failed",
    [ROAM_P2P_REASON_PEER_BUSY] = "peer-busy",
    [ROAM_P2P_REASON_NO_COMMON_CHANNEL] = "no-common-channel",
    [ROAM_P2P_REASON_BOTH_WANT_TO_LEAD] = "both-want-to-lead",
    [ROAM_P2P_REASON_NEGOTIATION_FAILED] = "negotiation-failed",
    [ROAM_P2P_REASON_FORMATION_FAILED] = "formation-failed",
    [ROAM_P2P_REASON_IDLE] = "idle",
    [ROAM_P2P_REASON_UNAVAILABLE] = "unavailable",
    [ROAM_P2P_REASON_GO_ENDING_SESSION] = "go-ending-session",
    [ROAM_P2P_REASON_PSK_FAILURE] = "psk-failure",
    [ROAM_P2P_REASON_FREQ_CONFLICT] = "freq-conflict",
    [ROAM_P2P_REASON_UNKNOWN] = "unknown",
};
DEFINE_STRING_TABLE_LOOKUP(roam_p2p_reason, RoamP2pReason)

static const char *const location_words_table[_ROAM_LOCATION_MAX] = {
    [ROAM_LOCATION_HOME] = "a network you trust, like your own",
    [ROAM_LOCATION_WORK] = "a network you mostly trust",
    [ROAM_LOCATION_PUBLIC] = "strangers share it (a cafe, a hotel)",
    [ROAM_LOCATION_UNTRUSTED] = "not trusted at all, the strictest rules",
};

/* What each built-in location lets in besides the replies to one's own connections and its
 * profiles' rules (roamd-firewall-conf.c: firewalld's zones of the same names); SSH is
 * [Firewall] SSH='s. roamd logs them at start, roam network shows them. */
static const char *const location_lets_in_table[_ROAM_LOCATION_MAX] = {
    [ROAM_LOCATION_HOME] = "mDNS (udp 5353), Samba browsing (udp 137, 138), DHCPv6 (udp 546)",
    [ROAM_LOCATION_WORK] = "DHCPv6 (udp 546)",
    [ROAM_LOCATION_PUBLIC] = "DHCPv6 (udp 546)",
    [ROAM_LOCATION_UNTRUSTED] = "no service of its own",
};

static const char *const location_source_words_table[_ROAM_LOCATION_SOURCE_MAX] = {
    [ROAM_LOCATION_SOURCE_CONFIG] = "from networks.d",
    [ROAM_LOCATION_SOURCE_USER] = "set by you",
    [ROAM_LOCATION_SOURCE_DEFAULT] = "unknown network, not chosen yet",
    [ROAM_LOCATION_SOURCE_TUNNEL] = "a VPN tunnel that names no network of its own",
};

static const char *const fw_direction_words_table[_ROAM_FW_DIRECTION_MAX] = {
    [ROAM_FW_DIRECTION_IN] = "inbound",
    [ROAM_FW_DIRECTION_OUT] = "outbound",
};

static const char *const fw_action_words_table[_ROAM_FW_ACTION_MAX] = {
    [ROAM_FW_ACTION_ACCEPT] = "let in",
    [ROAM_FW_ACTION_DROP] = "dropped silently",
    [ROAM_FW_ACTION_REJECT] = "refused (the sender is told)",
};

/* Short phrases fit the overview's column (at most 30 columns). */
static const char *const reason_short_table[_ROAM_REASON_MAX] = {
    [ROAM_REASON_NOT_PROBED] = "not probed yet",
    [ROAM_REASON_NO_CARRIER] = "no carrier",
    [ROAM_REASON_NO_ADDRESS] = "no address",
    [ROAM_REASON_LINK_LOCAL_ONLY] = "link-local address only",
    [ROAM_REASON_NO_ROUTE] = "no default route",
    [ROAM_REASON_GATEWAY_UNREACHABLE] = "nothing answers",
    [ROAM_REASON_DNS_FAILED] = "DNS failed",
    [ROAM_REASON_HTTP_TIMEOUT] = "HTTP check timed out",
    [ROAM_REASON_HTTP_FAILED] = "HTTP check failed",
    [ROAM_REASON_PORTAL_REDIRECT] = "redirected to a login page",
    [ROAM_REASON_PORTAL_CONTENT] = "login page instead of check",
    [ROAM_REASON_PORTAL_DNS] = "DNS answers are rewritten",
    [ROAM_REASON_CAPPORT] = "network says: portal",
    [ROAM_REASON_HTTPS_FAILED] = "HTTPS check failed",
    [ROAM_REASON_PORTAL_CERTIFICATE] = "HTTPS intercepted by a portal",
    [ROAM_REASON_HTTP_CACHED] = "only a cache answered",
    [ROAM_REASON_WALLED_GARDEN] = "only the check site answers",
    [ROAM_REASON_MTU] = "large packets vanish (MTU)",
    [ROAM_REASON_OK] = "checks answered",
};

static const char *const reason_long_table[_ROAM_REASON_MAX] = {
    [ROAM_REASON_NOT_PROBED] = "no probe round has ended yet, or the link is never probed",
    [ROAM_REASON_NO_CARRIER] = "the link is down or has no carrier",
    [ROAM_REASON_NO_ADDRESS] = "no address of this family",
    [ROAM_REASON_LINK_LOCAL_ONLY] = "only link-local addresses",
    [ROAM_REASON_NO_ROUTE] = "no default route of this family",
    [ROAM_REASON_GATEWAY_UNREACHABLE] = ("neither the probes, the DNS servers nor the gateway "
                                         "answered"),
    [ROAM_REASON_DNS_FAILED] = "the link's DNS servers gave no address",
    [ROAM_REASON_HTTP_TIMEOUT] = "DNS worked, the HTTP check timed out, the gateway answers",
    [ROAM_REASON_HTTP_FAILED] = "DNS worked, the HTTP check failed, the gateway answers",
    [ROAM_REASON_PORTAL_REDIRECT] = "the HTTP check was redirected to a login page",
    [ROAM_REASON_PORTAL_CONTENT] = "the HTTP check got another page than expected",
    [ROAM_REASON_PORTAL_DNS] = "DNS answered with unexpected addresses",
    [ROAM_REASON_CAPPORT] = "the network's captive portal API says captive",
    [ROAM_REASON_HTTPS_FAILED] = "plain HTTP works, HTTPS does not",
    [ROAM_REASON_PORTAL_CERTIFICATE] = ("the HTTP check was not answered by the check server and "
                                        "HTTPS came with a certificate that does not validate"),
    [ROAM_REASON_HTTP_CACHED] = ("the HTTP check was answered from a cache, not by the check "
                                 "server, and HTTPS does not get through"),
    [ROAM_REASON_WALLED_GARDEN] = ("the check server answers, a destination outside it "
                                   "(GardenURL) is redirected or blocked"),
    [ROAM_REASON_MTU] = ("small answers get through, full-size packets vanish (a path MTU "
                         "black hole): downloads stall"),
    [ROAM_REASON_OK] = "the HTTPS check got the expected answer",
};

static const char *const access_words_table[_ROAM_ACCESS_MAX] = {
    [ROAM_ACCESS_ALLOW] = "any network",
    [ROAM_ACCESS_LAN] = "local networks only",
    [ROAM_ACCESS_DENY] = "loopback only",
};

static const char *const vpn_words_table[_ROAM_VPN_MAX] = {
    [ROAM_VPN_ANY] = "with or without a VPN",
    [ROAM_VPN_REQUIRED] = "only through a VPN",
    [ROAM_VPN_FORBIDDEN] = "never through a VPN",
};

static const char *const handover_words_table[_ROAM_HANDOVER_MAX] = {
    [ROAM_HANDOVER_STICKY] = "existing flows finish on the old link",
    [ROAM_HANDOVER_MOVE] = "existing flows move to the new link",
};

const char *roam_reason_short(const char *reason)
{
        RoamReason r = roam_reason_from_string(reason);

        if (r < 0)
                return *reason ? reason : "no reason given";
        return reason_short_table[r];
}

const char *roam_reason_long(const char *reason)
{
        RoamReason r = roam_reason_from_string(reason);

        if (r < 0)
                return *reason ? reason : "no reason given";
        return reason_long_table[r];
}

const char *roam_access_words(const char *access)
{
        RoamAccess a = roam_access_from_string(access);

        return a < 0 ? access : access_words_table[a];
}

const char *roam_vpn_words(const char *vpn)
{
        RoamVpnRule v = roam_vpn_from_string(vpn);

        return v < 0 ? vpn : vpn_words_table[v];
}

static const char *const wake_words_table[_ROAM_WAKE_MAX] = {
    [ROAM_WAKE_WAITING] = "waiting for its turn",
    [ROAM_WAKE_OPENING] = "its turn: its gate is opening",
    [ROAM_WAKE_AWAKE] = "its turn",
    [ROAM_WAKE_DONE] = "its turn is over",
};

const char *roam_wake_words(const char *wake)
{
        RoamWake w = roam_wake_from_string(wake);

        return w < 0 ? wake : wake_words_table[w];
}

/* Keyed by the bus words: roamd's enums (service/features/wake/roamd-wake.c) are its own; these are
 * what a person reads. */
static const char *words_lookup(const char *const table[][2], size_t n, const char *key)
{
        for (size_t i = 0; i < n; i++)
                if (streq_ptr(table[i][0], key))
                        return table[i][1];
        return key;
}

const char *roam_wake_queue_words(const char *queue)
{
        static const char *const table[][2] = {
            {"offline", "offline: every listed app waits for the network"},
            {"settling", "settling: online, waiting a moment before the first turn"},
            {"time", "waiting for the time: only apps that do not need it get turns"},
            {"running", "running: turns are given, the highest priority first"},
            {"finished", "finished: every listed app had its turn"},
        };
        return words_lookup(table, ELEMENTSOF(table), queue);
}

const char *roam_wake_reason_words(const char *reason)
{
        static const char *const table[][2] = {
            {"turn", "its turn by priority"},
            {"overdue", "overdue: waited its longest delay"},
            {"user", "online for a task: asked by a user"},
            {"done", "the app said it is done"},
            {"slice", "its time slice ended"},
            {"quiet", "its traffic went quiet"},
            {"left", "its client went away or it left the list"},
            {"restart", "a new period began"},
            {"gate", "its gate did not open yet: roamd retries"},
        };
        return words_lookup(table, ELEMENTSOF(table), reason);
}

const char *roam_zone_state_words(const char *state)
{
        static const char *const table[][2] = {
            {"unknown", "unknown"},
            {"settled", "settled"},
            {"choose", "yours to choose"},
            {"disputed", "disputed"},
        };
        return words_lookup(table, ELEMENTSOF(table), state);
}

const char *roam_zone_reason_words(const char *reason)
{
        static const char *const table[][2] = {
            {"no-witness", "nothing has said where this machine is"},
            {"no-zone-data", "the zone data cannot be read"},
            {"manual", "you chose it"},
            {"current-zone-fits", "the current zone fits what the networks say"},
            {"agreed", "two or more networks agree on it"},
            {"single-witness", "only one network says so"},
            {"several-candidates", "several zones fit"},
            {"no-country", "the networks give only an offset"},
            {"witnesses-disagree", "the networks disagree"},
            {"offset-fits-no-zone", "the offset fits none of the country's zones"},
            {"timedated-refused", "timedated refused to set it"},
        };
        return words_lookup(table, ELEMENTSOF(table), reason);
}

const char *roam_handover_words(const char *handover)
{
        RoamHandover h = roam_handover_from_string(handover);

        return h < 0 ? handover : handover_words_table[h];
}

const char *roam_location_words(const char *location)
{
        RoamLocation l = roam_location_from_string(location);

        if (l >= 0)
                return location_words_table[l];
        return *location ? "a location that networks.d defines" : "no network";
}

const char *roam_location_lets_in(const char *location)
{
        RoamLocation l = roam_location_from_string(location);

        if (l >= 0)
                return location_lets_in_table[l];
        return *location ? "what firewall.d opens there" : "nothing new";
}

const char *roam_location_source_words(const char *source)
{
        RoamLocationSource s = roam_location_source_from_string(source);

        return s < 0 ? source : location_source_words_table[s];
}

const char *roam_fw_direction_words(const char *direction)
{
        RoamFwDirection d = roam_fw_direction_from_string(direction);

        return d < 0 ? direction : fw_direction_words_table[d];
}

const char *roam_fw_action_words(const char *action)
{
        RoamFwAction a = roam_fw_action_from_string(action);

        return a < 0 ? action : fw_action_words_table[a];
}

static const char *const p2p_reason_words_table[_ROAM_P2P_REASON_MAX] = {
    [ROAM_P2P_REASON_REQUESTED] = "disconnected from this computer",
    [ROAM_P2P_REASON_CANCELLED] = "cancelled on this computer",
    [ROAM_P2P_REASON_REJECTED] = "the device said no, or no one accepted on it in time",
    [ROAM_P2P_REASON_WITHDRAWN] = "the device withdrew its request",
    [ROAM_P2P_REASON_PEER_LOST] = "the device went out of reach",
    [ROAM_P2P_REASON_PROVISIONING_FAILED] = "the device did not take the request to connect",
    [ROAM_P2P_REASON_FAILED] = "wpa_supplicant refused to start the connection",
    [ROAM_P2P_REASON_PEER_BUSY] = "the device is busy with another connection",
    [ROAM_P2P_REASON_NO_COMMON_CHANNEL] = "no WiFi channel works for both",
    [ROAM_P2P_REASON_BOTH_WANT_TO_LEAD] = "both sides insisted on leading the group",
    [ROAM_P2P_REASON_NEGOTIATION_FAILED] = "the two could not agree how to connect",
    [ROAM_P2P_REASON_FORMATION_FAILED] =
        "it could not be set up (a wrong PIN, or the button not pressed in time)",
    [ROAM_P2P_REASON_IDLE] = "no one used it for a while",
    [ROAM_P2P_REASON_UNAVAILABLE] = "the WiFi device went away",
    [ROAM_P2P_REASON_GO_ENDING_SESSION] = "the device ended it",
    [ROAM_P2P_REASON_PSK_FAILURE] =
        "the device refused the saved key (forget this computer on it, then connect again)",
    [ROAM_P2P_REASON_FREQ_CONFLICT] = "the radio was needed on another channel",
    [ROAM_P2P_REASON_UNKNOWN] = "wpa_supplicant gave no reason",
};

const char *roam_p2p_reason_words(const char *reason)
{
        RoamP2pReason r;

        if (!reason || !*reason)
                return NULL;
        r = roam_p2p_reason_from_string(reason);
        return r < 0 ? reason : p2p_reason_words_table[r];
}

/* What comes before and after the link's name; "online" needs no link. */
static const char *const app_state_via_table[_ROAM_VERDICT_MAX][2] = {
    [ROAM_VERDICT_OFFLINE] = {"offline: ", " does not reach the internet"},
    [ROAM_VERDICT_CHECKING] = {"checking via ", ": not known yet to reach the internet"},
    [ROAM_VERDICT_LOCAL] = {"local via ", ": no internet"},
    [ROAM_VERDICT_PORTAL] = {"captive portal via ", ": log in first"},
    [ROAM_VERDICT_PARTIAL] = {"partial via ", ": HTTPS does not get through"},
    [ROAM_VERDICT_ONLINE] = {"online", NULL},
};

char *roam_app_state_via(RoamVerdict v, const char *link)
{
        char *s;

        if (v < 0 || v >= _ROAM_VERDICT_MAX)
                return NULL;
        if (!app_state_via_table[v][1])
                return strdup(app_state_via_table[v][0]);
        if (asprintf(&s, "%s%s%s", app_state_via_table[v][0], link ? link : "?",
                     app_state_via_table[v][1]) < 0)
                return NULL;
        return s;
}

static const char *const verdict_reaches_table[_ROAM_VERDICT_MAX] = {
    [ROAM_VERDICT_OFFLINE] = "reaches nothing",
    [ROAM_VERDICT_CHECKING] = "is still being checked",
    [ROAM_VERDICT_LOCAL] = "reaches only its local network",
    [ROAM_VERDICT_PORTAL] = "is behind a captive portal",
    [ROAM_VERDICT_PARTIAL] = "lets no HTTPS through",
    [ROAM_VERDICT_ONLINE] = "is online",
};

const char *roam_verdict_reaches(RoamVerdict v)
{
        return v >= 0 && v < _ROAM_VERDICT_MAX ? verdict_reaches_table[v] : NULL;
}

char *roam_state_reason_default_route(const char *best, RoamVerdict best_v, const char *route,
                                      RoamVerdict route_v)
{
        const char *b = roam_verdict_reaches(best_v), *d = roam_verdict_reaches(route_v);
        char *s;

        if (!b || !d ||
            asprintf(&s, "%s %s, but the default route goes through %s, which %s", best, b, route,
                     d) < 0)
                return NULL;
        return s;
}

char *roam_state_reason_follows(const char *kernel, RoamVerdict kernel_v, const char *link)
{
        const char *k = roam_verdict_reaches(kernel_v);
        char *s;

        if (!k || asprintf(&s,
                           "the default route goes through %s, which %s: apps go through %s "
                           "instead",
                           kernel, k, link) < 0)
                return NULL;
        return s;
}

/* The global state's word at the head of a sentence. */
static const char *const state_head_table[_ROAM_VERDICT_MAX] = {
    [ROAM_VERDICT_OFFLINE] = "Offline",          [ROAM_VERDICT_CHECKING] = "Checking",
    [ROAM_VERDICT_LOCAL] = "Local network only", [ROAM_VERDICT_PORTAL] = "Behind a captive portal",
    [ROAM_VERDICT_PARTIAL] = "HTTPS blocked",    [ROAM_VERDICT_ONLINE] = "Online",
};

char *roam_state_sentence_reason(const char *state, const char *sentence, const char *reason)
{
        RoamVerdict v = roam_verdict_from_string(state);
        char *s;
        int r;

        if (!reason || !*reason)
                return strdup(sentence);
        if (v == ROAM_VERDICT_ONLINE)
                r = asprintf(&s, "%s; %s", sentence, reason);
        else if (v >= 0)
                r = asprintf(&s, "%s: %s", state_head_table[v], reason);
        else
                r = asprintf(&s, "%s (%s)", sentence, reason);
        return r < 0 ? NULL : s;
}

char *roam_state_sentence(const char *state, const char *link, const char *bearer,
                          const char *reason, const char *portal_url)
{
        RoamVerdict v = roam_verdict_from_string(state);
        char *s = NULL;
        int r = 0;

        if (v < 0)
                r = asprintf(&s, "State unknown (roamd says \"%s\")", state);
        else if (!link) {
                if (v == ROAM_VERDICT_OFFLINE)
                        r = asprintf(&s, "Offline: no usable link");
                else
                        r = asprintf(&s, "%c%s (no best link known)", state[0] - 'a' + 'A',
                                     state + 1);
        } else
                switch (v) {
                case ROAM_VERDICT_ONLINE:
                        r = asprintf(&s, "Online via %s (%s)", link, bearer ? bearer : "?");
                        break;
                case ROAM_VERDICT_PARTIAL:
                        r = asprintf(&s, "HTTPS blocked on %s (partial)", link);
                        break;
                case ROAM_VERDICT_PORTAL:
                        if (portal_url)
                                r = asprintf(&s, "Behind a captive portal on %s: log in at %s",
                                             link, portal_url);
                        else
                                r = asprintf(&s,
                                             "Behind a captive portal on %s: open a web page to "
                                             "log in",
                                             link);
                        break;
                case ROAM_VERDICT_LOCAL:
                        r = asprintf(&s, "Local network only on %s: no Internet", link);
                        break;
                case ROAM_VERDICT_CHECKING:
                        r = asprintf(&s, "Checking %s: no answer yet", link);
                        break;
                case ROAM_VERDICT_OFFLINE:
                        r = asprintf(&s, "Offline: %s, %s", link,
                                     roam_reason_short(reason ? reason : ""));
                        break;
                case _ROAM_VERDICT_MAX:
                case _ROAM_VERDICT_INVALID:
                        break;
                }
        return r < 0 ? NULL : s;
}

const char *roam_signal_word(int dbm)
{
        if (dbm == 0)
                return NULL;
        if (dbm >= -50)
                return "excellent";
        if (dbm >= -60)
                return "good";
        if (dbm >= -70)
                return "fair";
        if (dbm >= -80)
                return "weak";
        return "very weak";
}

void roam_signal_text(int dbm, unsigned mbit, char *buf, size_t size)
{
        const char *w = roam_signal_word(dbm);

        if (!w)
                snprintf(buf, size, "%s", "");
        else if (mbit)
                snprintf(buf, size, "%s, %d dBm, %u Mbit/s", w, dbm, mbit);
        else
                snprintf(buf, size, "%s, %d dBm", w, dbm);
}
