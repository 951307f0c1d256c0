/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <errno.h>
#include <stddef.h>

/* The words roamd and roam share, from one table: connectivity verdicts and their reasons
 * (docs/connectivity.md), bearers, and an app's access, VPN rule and handover; with the
 * phrases and the one sentence that say them to people. roamd's string tables, `roam status`,
 * the TUI and plain mode all use these; nothing spells them twice. */

typedef enum RoamVerdict {
        ROAM_VERDICT_OFFLINE,
        ROAM_VERDICT_CHECKING, /* a probe runs, no answer of this family yet */
        ROAM_VERDICT_LOCAL,
        ROAM_VERDICT_PORTAL,
        ROAM_VERDICT_PARTIAL,
        ROAM_VERDICT_ONLINE,
        _ROAM_VERDICT_MAX,
        _ROAM_VERDICT_INVALID = -EINVAL,
} RoamVerdict;

typedef enum RoamReason {
        ROAM_REASON_NOT_PROBED,
        ROAM_REASON_NO_CARRIER,
        ROAM_REASON_NO_ADDRESS,
        ROAM_REASON_LINK_LOCAL_ONLY,
        ROAM_REASON_NO_ROUTE,
        ROAM_REASON_GATEWAY_UNREACHABLE,
        ROAM_REASON_DNS_FAILED,
        ROAM_REASON_HTTP_TIMEOUT,
        ROAM_REASON_HTTP_FAILED,
        ROAM_REASON_PORTAL_REDIRECT,
        ROAM_REASON_PORTAL_CONTENT,
        ROAM_REASON_PORTAL_DNS,
        ROAM_REASON_CAPPORT,
        ROAM_REASON_HTTPS_FAILED,
        ROAM_REASON_PORTAL_CERTIFICATE,
        ROAM_REASON_HTTP_CACHED,
        ROAM_REASON_WALLED_GARDEN,
        ROAM_REASON_MTU,
        ROAM_REASON_OK,
        _ROAM_REASON_MAX,
        _ROAM_REASON_INVALID = -EINVAL,
} RoamReason;

typedef enum RoamBearer {
        ROAM_BEARER_ETHERNET,
        ROAM_BEARER_WIFI,
        ROAM_BEARER_CELLULAR,
        ROAM_BEARER_BLUETOOTH,
        ROAM_BEARER_WIFI_DIRECT,
        ROAM_BEARER_VPN,
        ROAM_BEARER_LOWPAN,
        ROAM_BEARER_VIRTUAL, /* bridges, veths of containers: never an uplink, never an app's */
        _ROAM_BEARER_MAX,
        _ROAM_BEARER_INVALID = -EINVAL,
} RoamBearer;

typedef enum RoamAccess {
        ROAM_ACCESS_ALLOW,
        ROAM_ACCESS_LAN,
        ROAM_ACCESS_DENY,
        _ROAM_ACCESS_MAX,
        _ROAM_ACCESS_INVALID = -EINVAL,
} RoamAccess;

typedef enum RoamVpnRule {
        ROAM_VPN_ANY,
        ROAM_VPN_REQUIRED,
        ROAM_VPN_FORBIDDEN,
        _ROAM_VPN_MAX,
        _ROAM_VPN_INVALID = -EINVAL,
} RoamVpnRule;

/* The online gate (docs/time.md): whether apps were told "online", and on what time. */
typedef enum RoamTimeGate {
        ROAM_TIME_GATE_CLOSED,     /* online, waiting for the time to settle */
        ROAM_TIME_GATE_OPEN,       /* the time settled */
        ROAM_TIME_GATE_UNVERIFIED, /* the bounded wait ended before the time settled */
        _ROAM_TIME_GATE_MAX,
        _ROAM_TIME_GATE_INVALID = -EINVAL,
} RoamTimeGate;

/* What an app hears from its network monitor (org.roam1.AppMonitor, docs/apps-hear.md): the
 * order and meaning of GLib's GNetworkConnectivity (LOCAL = 1 ... FULL = 4). */
typedef enum RoamConnectivity {
        ROAM_CONNECTIVITY_LOCAL,   /* nothing of the app's routes anywhere */
        ROAM_CONNECTIVITY_LIMITED, /* the LAN only (its policy, or its link's verdict) */
        ROAM_CONNECTIVITY_PORTAL,  /* its link is behind a captive portal */
        ROAM_CONNECTIVITY_FULL,    /* the internet */
        _ROAM_CONNECTIVITY_MAX,
        _ROAM_CONNECTIVITY_INVALID = -EINVAL,
} RoamConnectivity;

/* What roamd did with the clock (docs/time.md "Setting the clock"; Time.ClockState). */
typedef enum RoamClockState {
        ROAM_CLOCK_STEPPED,      /* the clock was stepped to the agreed time */
        ROAM_CLOCK_OFF,          /* SetClock=no */
        ROAM_CLOCK_UNSETTLED,    /* the time is not settled */
        ROAM_CLOCK_AGREES,       /* the clock lies within the threshold */
        ROAM_CLOCK_LOWER_BOUND,  /* the step would go before the saved lower bound */
        ROAM_CLOCK_DAEMON,       /* a clock daemon keeps the clock */
        ROAM_CLOCK_NO_TIMEDATED, /* timedated is not there (or no system bus) */
        ROAM_CLOCK_REFUSED,      /* timedated refused SetTime */
        _ROAM_CLOCK_STATE_MAX,
        _ROAM_CLOCK_STATE_INVALID = -EINVAL,
} RoamClockState;

/* An app's state in the ordered wake-up (docs/wake.md; App.WakeState). */
typedef enum RoamWake {
        ROAM_WAKE_WAITING,
        ROAM_WAKE_OPENING, /* its turn came; told once its gate is open in the kernel */
        ROAM_WAKE_AWAKE,
        ROAM_WAKE_DONE,
        _ROAM_WAKE_MAX,
        _ROAM_WAKE_INVALID = -EINVAL,
} RoamWake;

typedef enum RoamHandover {
        ROAM_HANDOVER_STICKY,
        ROAM_HANDOVER_MOVE,
        _ROAM_HANDOVER_MAX,
        _ROAM_HANDOVER_INVALID = -EINVAL,
} RoamHandover;

/* An app's policy keys (docs/apps.md), in this order everywhere: as SetAppPolicy and `roam app
 * ID set` take them (roam_app_key_table) and as apps.d files and the App object's properties
 * name them (roam_app_key_property_table: a key changes the property of that name). */
typedef enum RoamAppKey {
        ROAM_APP_KEY_ACCESS,
        ROAM_APP_KEY_BEARERS,
        ROAM_APP_KEY_VPN,
        ROAM_APP_KEY_HANDOVER,
        ROAM_APP_KEY_WAKE,
        ROAM_APP_KEY_WAKE_SLICE,
        ROAM_APP_KEY_WAKE_BYTES,
        _ROAM_APP_KEY_MAX,
        _ROAM_APP_KEY_INVALID = -EINVAL,
} RoamAppKey;

/* The personal firewall (docs/firewall.md): where a link's network is, how that was decided,
 * and the rules' direction and action. A location may also be a name that networks.d defines:
 * roam_location_from_string() knows only the four built-in words. */
typedef enum RoamLocation {
        ROAM_LOCATION_HOME,
        ROAM_LOCATION_WORK,
        ROAM_LOCATION_PUBLIC,
        ROAM_LOCATION_UNTRUSTED, /* an unknown network: the strictest rules */
        _ROAM_LOCATION_MAX,
        _ROAM_LOCATION_INVALID = -EINVAL,
} RoamLocation;

typedef enum RoamLocationSource {
        ROAM_LOCATION_SOURCE_CONFIG,  /* a networks.d file matched */
        ROAM_LOCATION_SOURCE_USER,    /* set with SetLocation */
        ROAM_LOCATION_SOURCE_DEFAULT, /* unknown network: untrusted until the user decides */
        ROAM_LOCATION_SOURCE_TUNNEL,  /* a VPN tunnel that names no network: untrusted, unasked */
        _ROAM_LOCATION_SOURCE_MAX,
        _ROAM_LOCATION_SOURCE_INVALID = -EINVAL,
} RoamLocationSource;

typedef enum RoamFwDirection {
        ROAM_FW_DIRECTION_IN,
        ROAM_FW_DIRECTION_OUT,
        _ROAM_FW_DIRECTION_MAX,
        _ROAM_FW_DIRECTION_INVALID = -EINVAL,
} RoamFwDirection;

typedef enum RoamFwAction {
        ROAM_FW_ACTION_ACCEPT,
        ROAM_FW_ACTION_DROP,
        ROAM_FW_ACTION_REJECT,
        _ROAM_FW_ACTION_MAX,
        _ROAM_FW_ACTION_INVALID = -EINVAL,
} RoamFwAction;

/* Why a WiFi Direct connection failed or ended (docs/wifi-direct.md): roamd's Peer.Reason and
 * its P2PConnectionFailed / P2PGroupRemoved signals. */
typedef enum RoamP2pReason {
        ROAM_P2P_REASON_REQUESTED, /* disconnected here (P2P_GROUP_REMOVE) */
        ROAM_P2P_REASON_CANCELLED,
        ROAM_P2P_REASON_REJECTED,
        ROAM_P2P_REASON_WITHDRAWN,
        ROAM_P2P_REASON_PEER_LOST,
        ROAM_P2P_REASON_PROVISIONING_FAILED,
        ROAM_P2P_REASON_FAILED, /* wpa_supplicant refused the P2P_CONNECT */
        ROAM_P2P_REASON_PEER_BUSY,
        ROAM_P2P_REASON_NO_COMMON_CHANNEL,
        ROAM_P2P_REASON_BOTH_WANT_TO_LEAD,
        ROAM_P2P_REASON_NEGOTIATION_FAILED,
        ROAM_P2P_REASON_FORMATION_FAILED,
        ROAM_P2P_REASON_IDLE,
        ROAM_P2P_REASON_UNAVAILABLE,
        ROAM_P2P_REASON_GO_ENDING_SESSION,
        ROAM_P2P_REASON_PSK_FAILURE,
        ROAM_P2P_REASON_FREQ_CONFLICT,
        ROAM_P2P_REASON_UNKNOWN,
        _ROAM_P2P_REASON_MAX,
        _ROAM_P2P_REASON_INVALID = -EINVAL,
} RoamP2pReason;

/* The tables themselves, indexed by the enums (roamd joins them into error messages). */
extern const char *const roam_verdict_table[_ROAM_VERDICT_MAX];
extern const char *const roam_reason_table[_ROAM_REASON_MAX];
extern const char *const roam_bearer_table[_ROAM_BEARER_MAX];
extern const char *const roam_access_table[_ROAM_ACCESS_MAX];
extern const char *const roam_vpn_table[_ROAM_VPN_MAX];
extern const char *const roam_handover_table[_ROAM_HANDOVER_MAX];
extern const char *const roam_app_key_table[_ROAM_APP_KEY_MAX];
extern const char *const roam_app_key_property_table[_ROAM_APP_KEY_MAX];
extern const char *const roam_time_gate_table[_ROAM_TIME_GATE_MAX];
extern const char *const roam_wake_table[_ROAM_WAKE_MAX];
extern const char *const roam_clock_state_table[_ROAM_CLOCK_STATE_MAX];
extern const char *const roam_location_table[_ROAM_LOCATION_MAX];
extern const char *const roam_location_source_table[_ROAM_LOCATION_SOURCE_MAX];
extern const char *const roam_fw_direction_table[_ROAM_FW_DIRECTION_MAX];
extern const char *const roam_fw_action_table[_ROAM_FW_ACTION_MAX];
extern const char *const roam_p2p_reason_table[_ROAM_P2P_REASON_MAX];

const char *roam_verdict_to_string(RoamVerdict v);
const char *roam_connectivity_to_string(RoamConnectivity c);
RoamConnectivity roam_connectivity_from_string(const char *s);
const char *roam_time_gate_to_string(RoamTimeGate g);
RoamTimeGate roam_time_gate_from_string(const char *s);
/* The global state "online" with the gate's words: "online, time unverified". */
const char *roam_time_gate_online_words(RoamTimeGate g);
const char *roam_clock_state_to_string(RoamClockState s);
RoamClockState roam_clock_state_from_string(const char *s);
/* The clock's state in words for people: "left alone: a clock daemon keeps it". */
const char *roam_clock_state_words(RoamClockState s);
RoamVerdict roam_verdict_from_string(const char *s);
const char *roam_reason_to_string(RoamReason r);
RoamReason roam_reason_from_string(const char *s);
const char *roam_bearer_to_string(RoamBearer b);
RoamBearer roam_bearer_from_string(const char *s);
const char *roam_access_to_string(RoamAccess a);
RoamAccess roam_access_from_string(const char *s);
const char *roam_vpn_to_string(RoamVpnRule v);
RoamVpnRule roam_vpn_from_string(const char *s);
const char *roam_handover_to_string(RoamHandover h);
RoamHandover roam_handover_from_string(const char *s);
/* "access, bearers, vpn, handover, wake, wake-slice, wake-bytes", for messages and help. */
const char *roam_app_keys_text(void);
const char *roam_wake_to_string(RoamWake w);
RoamWake roam_wake_from_string(const char *s);
const char *roam_location_to_string(RoamLocation l);
RoamLocation roam_location_from_string(const char *s);
const char *roam_location_source_to_string(RoamLocationSource s);
RoamLocationSource roam_location_source_from_string(const char *s);
const char *roam_fw_direction_to_string(RoamFwDirection d);
RoamFwDirection roam_fw_direction_from_string(const char *s);
const char *roam_fw_action_to_string(RoamFwAction a);
RoamFwAction roam_fw_action_from_string(const char *s);
const char *roam_p2p_reason_to_string(RoamP2pReason r);
RoamP2pReason roam_p2p_reason_from_string(const char *s);

/* A short phrase ("no carrier", "redirected to a login page", at most 30 columns) and a
 * sentence for a reason as sent on the bus; an unknown one (a newer roamd) is returned as is. */
const char *roam_reason_short(const char *reason);
const char *roam_reason_long(const char *reason);

/* What an access, VPN rule or handover means ("local networks only"); unknown: as is. */
const char *roam_access_words(const char *access);
const char *roam_vpn_words(const char *vpn);
const char *roam_handover_words(const char *handover);
/* "waiting for its turn", "its turn", "its turn is over"; other words as they are. */
const char *roam_wake_words(const char *wake);
/* Manager.WakeQueue and App.WakeReason in words ("running: turns are given, ...", "overdue:
 * waited its longest delay"); an unknown word (a newer roamd) as it is. */
const char *roam_wake_queue_words(const char *queue);
const char *roam_wake_reason_words(const char *reason);

/* The time zone's consensus (docs/time.md "Time zone": Time.ZoneState, Time.ZoneReason) in
 * words: "yours to choose", "several zones fit"; an unknown word as is. */
const char *roam_zone_state_words(const char *state);
const char *roam_zone_reason_words(const char *reason);

/* What a location, a location's source, a rule's direction and action mean, in words
 * ("a network you trust: your devices may reach this one", "set by you"); a location that
 * networks.d names is "a location that networks.d defines", "" is "no network"; any other
 * unknown word as is. */
const char *roam_location_words(const char *location);
/* What a location lets in by itself, in words ("mDNS (udp 5353), ..."): besides the replies
 * to one's own connections, SSH as [Firewall] SSH= says, and firewall.d's rules. */
const char *roam_location_lets_in(const char *location);
const char *roam_location_source_words(const char *source);
const char *roam_fw_direction_words(const char *direction);
const char *roam_fw_action_words(const char *action);

/* Why a WiFi Direct connection failed or ended, said to a person ("the device said no, or no
 * one accepted on it in time"); "" is NULL (no reason yet); an unknown word as is. */
const char *roam_p2p_reason_words(const char *reason);

/* The first-join question, the same in the TUI and plain mode. */
#define ROAM_LOCATION_QUESTION "Is this a home, work or public network?"
/* Link.LocationWanted while it differs from Location (the kernel has not taken it): the
 * location, then these words */
#define ROAM_LOCATION_NOT_IN_FORCE "wanted, not in force yet (see Degraded)"

/* The global state in one sentence, the same everywhere: "Online via wlan0 (wifi)",
 * "Behind a captive portal on wifi0: log in at http://...", "Offline: no usable link".
 * state: the global verdict; link, bearer: the best link (NULL: none); reason: its reason;
 * portal_url: where to log in (NULL: not known). Returns a malloc'd string, NULL on OOM. */
char *roam_state_sentence(const char *state, const char *link, const char *bearer,
                          const char *reason, const char *portal_url);

/* What a link reaches, after its name: "is online", "reaches nothing", "reaches only its
 * local network", "is behind a captive portal"; NULL for an unknown verdict. */
const char *roam_verdict_reaches(RoamVerdict v);

/* Manager.StateReason, why the global state is not simply the best link's (the default
 * route's link is another): "wifi0 is online, but the default route goes through eth0, which
 * reaches nothing" (the default apps follow the kernel's default route), or, when roamd took
 * them to the best validated link ([Apps] DefaultFollows=verdict), "the default route goes
 * through eth0, which reaches nothing: apps go through wifi0 instead". Returns a malloc'd
 * string, NULL on OOM or an unknown verdict. */
char *roam_state_reason_default_route(const char *best, RoamVerdict best_v, const char *route,
                                      RoamVerdict route_v);
char *roam_state_reason_follows(const char *kernel, RoamVerdict kernel_v, const char *link);

/* The global sentence with Manager.StateReason: "Offline: wifi0 is online, but the default
 * route goes through eth0, which reaches nothing"; an online sentence keeps its link and adds
 * the reason ("Online via wifi0 (wifi); the default route goes through eth0, ..."). sentence:
 * roam_state_sentence()'s; reason "" or NULL returns a copy of it. NULL on OOM. */
char *roam_state_sentence_reason(const char *state, const char *sentence, const char *reason);

/* An app's state when the link its traffic really takes is not online, naming that link:
 * "offline: eth0 does not reach the internet", "local via cell0" (roamd's App.State; roam
 * prints it as it comes). v: that link's verdict for the family; ONLINE gives "online".
 * Returns a malloc'd string, NULL on OOM or an unknown verdict. */
char *roam_app_state_via(RoamVerdict v, const char *link);

/* A WiFi signal in words, so no one reads a colour or a bar alone: "excellent" (-50 dBm and
 * above), "good" (-60), "fair" (-70), "weak" (-80), "very weak"; NULL when unknown (0). */
const char *roam_signal_word(int dbm);
/* "good, -58 dBm, 866 Mbit/s" (the speed left out when unknown); "" when the signal is
 * unknown. */
void roam_signal_text(int dbm, unsigned mbit, char *buf, size_t size);
