/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "roamd-stats-budget.h"

#include "roamd-bearer.h"
#include "roamd-dns-source.h"

#define ROAMD_CONFIG_DEFAULT ROAM_SYSCONFDIR "/roam/roamd.conf"

typedef struct BearerOverride {
        char *pattern; /* fnmatch(3) glob on the interface name */
        Bearer bearer;
} BearerOverride;

/* An address as roamd carries it: family (AF_INET/AF_INET6) and its text form. */
typedef struct IpAddr {
        int family;
        char text[INET6_ADDRSTRLEN];
} IpAddr;

typedef struct DnsPin {
        char *pattern;
        IpAddr *servers;
        size_t n_servers;
} DnsPin;

typedef struct ProbeConfig {
        char *http_url;
        char *https_url;
        /* A destination a walled garden would not let through, expected to give the check's
         * answer too; a leading "*." is a random name per probe. NULL: not probed. */
        char *garden_url;
        /* A URL whose answer is at least PROBE_LARGE_BYTES (several full-size packets), to
         * find path MTU black holes. NULL: not probed. */
        char *large_url;
        long expect_status;
        char *expect_body;    /* NULL: any body */
        IpAddr *expect_addrs; /* answers outside this set mean a lying DNS; none: not checked */
        size_t n_expect_addrs;
        char *ca_file; /* NULL: the system's CA store */
        uint64_t timeout_usec;
        uint64_t dns_timeout_usec;
        uint64_t ping_timeout_usec;
        uint64_t recheck_usec;
        uint64_t backoff_min_usec;
        uint64_t backoff_max_usec;
        /* Once HTTP answered, HTTPS gets this long (a multiple of the link's measured TCP
         * handshake, held between these bounds) before the link is called partial. */
        uint64_t https_grace_min_usec;
        uint64_t https_grace_max_usec;
        size_t max_body;
        /* Between re-checks: how often apps' connections through online links are looked at
         * for SYNs that get no answer (0: never), and the least time between two rounds that
         * signal starts on one link (docs/connectivity.md, "Between re-checks"). */
        uint64_t stall_interval_usec;
        uint64_t stall_reprobe_min_usec;
        /* How often the HTTP check host is looked up through each online link, to see a DNS
         * that starts answering a private address (0: never; same section). */
        uint64_t dns_watch_interval_usec;
} ProbeConfig;

/* [Apps] and [Routing]: per-app enforcement (docs/apps.md). */
/* [Apps] DefaultFollows=: where apps that follow the main table go when its default link is
 * known not to reach the internet (docs/connectivity.md). */
typedef enum DefaultFollows {
        DEFAULT_FOLLOWS_KERNEL,  /* the main table's choice stands */
        DEFAULT_FOLLOWS_VERDICT, /* the best validated (online) link instead */
        _DEFAULT_FOLLOWS_MAX,
        _DEFAULT_FOLLOWS_INVALID = -EINVAL,
} DefaultFollows;

const char *default_follows_to_string(DefaultFollows v);
DefaultFollows default_follows_from_string(const char *s);

typedef struct AppsConfig {
        bool enforce;
        char *policy_dir;               /* drop-ins, default /etc/roam/apps.d */
        char *state_file;               /* runtime changes, default /var/lib/roam/apps.state */
        char **system_cgroups;          /* extra cgroup paths under the system policy */
        uint32_t max_apps_per_user;     /* App objects for apps without a policy, per uid */
        uint32_t mark_mask;             /* the packet mark bits roamd owns */
        uint32_t table_base;            /* routing tables table_base+1 ... */
        uint32_t rule_priority;         /* ip rules at this priority and the next */
        DefaultFollows default_follows; /* steer main's traffic off a link that is not online */
} AppsConfig;

/* [Wake]: the ordered wake-up (docs/wake.md). */
typedef struct WakeConfigSection {
        uint32_t at_once;                     /* apps awake at once, default 1 */
        uint32_t at_once_bearer[_BEARER_MAX]; /* per bearer of the best link; 0: at_once */
        uint64_t settle_usec, restart_usec, quiet_usec, max_delay_usec;
        uint64_t slow_rtt_usec; /* the best link's probe RTT from here on: cap 1; 0 never */
} WakeConfigSection;

/* [Roaming]: NAME_OR_GLOB=yes|no fixes whether traffic on a link counts as roaming. */
typedef struct RoamingOverride {
        char *pattern;
        bool roaming;
} RoamingOverride;

/* [Stats]: usage counting and history (docs/stats.md). */
typedef struct StatsConfig {
        bool enable;
        char *directory;         /* history file, default /var/lib/roam (not created) */
        uint64_t flush_usec;     /* how often counters are saved */
        uint32_t retention_days; /* hourly buckets kept this long */
        char *prometheus_file;   /* text-format export, rewritten at every save; NULL none */
        RoamingOverride *roaming;
        size_t n_roaming;
        RoamingOverride *metered; /* [Metered]: the same shape as [Roaming] */
        size_t n_metered;
        StatsBudget *budgets; /* Budget= lines, in order */
        size_t n_budgets;
        uint32_t budget_warn_percent; /* BudgetWarning=, default 80 */
} StatsConfig;
/* [Portal]: captive portal login (docs/portal.md). */
typedef struct PortalConfig {
        char *credentials_file;   /* default /var/lib/roam/portal.credentials */
        char **allow_login_hosts; /* extra hosts that may receive WISPr credentials */
        bool allow_http_login;    /* WISPr credentials over plain HTTP too */
} PortalConfig;
/* [WiFi]: wpa_supplicant's control interface (docs/wifi-direct.md). */
typedef struct WiFiConfig {
        bool enable;
        char *control_dir;    /* per-interface sockets, default /run/wpa_supplicant */
        char *global_control; /* wpa_supplicant -g socket; NULL: per-interface sockets */
        char *client_dir;     /* where roamd binds its own sockets */
        uint64_t timeout_usec;
        char *p2p_device_name;         /* NULL: the host name */
        uint64_t signal_interval_usec; /* SIGNAL_POLL while associated */
        uint64_t ping_interval_usec;   /* PING while no request is on the wire */
        /* Backend=: NULL for auto, else "networkmanager", "iwd" or "wpa_supplicant" (the
         * only owner asked: docs/wifi.md) */
        char *backend;
        char *iwd_state_dir; /* iwd's $STATE_DIRECTORY: its .8021x provisioning files */
} WiFiConfig;
/* [Bluetooth] (docs/bluetooth.md). */
typedef struct BluetoothConfig {
        bool enable;                    /* follow org.bluez and register the pairing agent */
        uint64_t question_timeout_usec; /* an unanswered agent question is refused after this */
        uint64_t nfc_discovery_usec;    /* how long an NFC pairing looks for an unknown device */
        uint64_t nfc_offer_usec;        /* a tag from neard unanswered this long is dropped */
} BluetoothConfig;

/* [Time] SetClock=: whether roamd sets the clock itself through timedated (docs/time.md). */
typedef enum TimeSetClock {
        TIME_SET_CLOCK_NO,
        TIME_SET_CLOCK_YES,  /* also when a clock daemon keeps the clock */
        TIME_SET_CLOCK_AUTO, /* only when no clock daemon keeps it */
        _TIME_SET_CLOCK_MAX,
        _TIME_SET_CLOCK_INVALID = -EINVAL,
} TimeSetClock;

const char *time_set_clock_to_string(TimeSetClock v);
TimeSetClock time_set_clock_from_string(const char *s);

/* [Time]: the time consensus and the online gate (docs/time.md). */
typedef struct TimeConfig {
        uint64_t gate_timeout_usec;  /* apps hear "online" at most this long after the first
                                      * online verdict, settled or not */
        char *state_file;            /* the last known good time, /var/lib/roam/time.state */
        char *chrony_socket;         /* chronyd's SOCK refclock, /run/chrony.roam.sock; NULL off */
        char *chrony_source_dir;     /* DHCP's NTP servers as IFNAME.sources, /run/chrony-dhcp */
        char *chrony_command_socket; /* chronyd's cmdmon socket, /run/chrony/chronyd.sock */
        char *gpsd_address;          /* gpsd's JSON port, 127.0.0.1:2947; NULL off */
        TimeSetClock set_clock;      /* roamd steps the clock through timedated: default auto */
} TimeConfig;

/* [Firewall]: the personal firewall that follows the network (docs/firewall.md). */
typedef enum FirewallSsh {
        FIREWALL_SSH_ALWAYS,  /* TCP 22 open in every location (the default: a headless box
                               * must stay reachable) */
        FIREWALL_SSH_TRUSTED, /* only at home and work */
        FIREWALL_SSH_NEVER,   /* only where a profile opens it */
        _FIREWALL_SSH_MAX,
        _FIREWALL_SSH_INVALID = -EINVAL,
} FirewallSsh;
const char *firewall_ssh_to_string(FirewallSsh v);
FirewallSsh firewall_ssh_from_string(const char *s);

typedef struct FirewallConfig {
        bool enable;
        char *networks_dir; /* default /etc/roam/networks.d */
        char *profiles_dir; /* default /etc/roam/firewall.d */
        char *state_file;   /* locations chosen with SetLocation, /var/lib/roam/locations.state */
        FirewallSsh ssh;
} FirewallConfig;

typedef struct Config {
        char *path;
        int log_level;
        char *sysfs_path;
        DnsSource dns_sources[_DNS_SOURCE_MAX];
        size_t n_dns_sources;
        char *dhcpcd_lease_dir;
        char *dhcpcd_ra_dir; /* dhcpcd's resolv.conf hook: IFNAME.ra from RAs' RDNSS */
        char *resolv_conf;
        BearerOverride *bearers;
        size_t n_bearers;
        DnsPin *dns_pins;
        size_t n_dns_pins;
        ProbeConfig probe;
        AppsConfig apps;
        StatsConfig stats;
        PortalConfig portal;
        WiFiConfig wifi;
        BluetoothConfig bluetooth;
        FirewallConfig firewall;
        TimeConfig time;
        WakeConfigSection wake;
} Config;

Config *config_free(Config *c);
static inline void config_freep(Config **c)
{
        config_free(*c);
}

/* Parses a configuration; every error is logged as file:line and makes the call fail with
 * -EINVAL. A missing file is an error unless missing_ok (the built-in defaults then apply). */
int config_load(const char *path, bool missing_ok, Config **ret);
int config_parse_string(const char *name, const char *text, size_t size, Config **ret);

/* The bearer override matching ifname, or _BEARER_INVALID. */
Bearer config_bearer_override(const Config *c, const char *ifname);
const DnsPin *config_dns_pin(const Config *c, const char *ifname);
/* 1 roaming, 0 home, -ENOENT when [Roaming] does not name the link. */
int config_roaming_override(const Config *c, const char *ifname);
/* [Metered]: 1 metered, 0 not, -ENOENT when it does not name the link. */
int config_metered_override(const Config *c, const char *ifname);

int ip_addr_parse(const char *s, IpAddr *ret);
