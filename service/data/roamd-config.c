/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <ctype.h>
#include <fnmatch.h>
#include <syslog.h>

#include "roam-conf.h"
#include "roam-log.h"
#include "roam-util.h"
#include "roamd-config.h"
#include "roamd-gpsd.h"
#include "roamd-nft-mark.h"

static const char *const dns_source_table[_DNS_SOURCE_MAX] = {
    [DNS_SOURCE_NONE] = "none",         [DNS_SOURCE_CONFIG] = "config",
    [DNS_SOURCE_RESOLVED] = "resolved", [DNS_SOURCE_NETWORKMANAGER] = "networkmanager",
    [DNS_SOURCE_DHCPCD] = "dhcpcd",     [DNS_SOURCE_RESOLV_CONF] = "resolv.conf",
};
DEFINE_STRING_TABLE_LOOKUP(dns_source, DnsSource)

static const char *const time_set_clock_table[_TIME_SET_CLOCK_MAX] = {
    [TIME_SET_CLOCK_NO] = "no",
    [TIME_SET_CLOCK_YES] = "yes",
    [TIME_SET_CLOCK_AUTO] = "auto",
};
DEFINE_STRING_TABLE_LOOKUP(time_set_clock, TimeSetClock)

static const char *const default_follows_table[_DEFAULT_FOLLOWS_MAX] = {
    [DEFAULT_FOLLOWS_KERNEL] = "kernel",
    [DEFAULT_FOLLOWS_VERDICT] = "verdict",
};
DEFINE_STRING_TABLE_LOOKUP(default_follows, DefaultFollows)

static const char *const firewall_ssh_table[_FIREWALL_SSH_MAX] = {
    [FIREWALL_SSH_ALWAYS] = "always",
    [FIREWALL_SSH_TRUSTED] = "trusted",
    [FIREWALL_SSH_NEVER] = "never",
};
DEFINE_STRING_TABLE_LOOKUP(firewall_ssh, FirewallSsh)

int ip_addr_parse(const char *s, IpAddr *ret)
{
        unsigned char buf[sizeof(struct in6_addr)];
        int family = strchr(s, ':') ? AF_INET6 : AF_INET;

        if (inet_pton(family, s, buf) != 1)
                return -EINVAL;
        *ret = (IpAddr){.family = family};
        /* Normalise the text form so equal addresses compare equal. */
        if (!inet_ntop(family, buf, ret->text, sizeof(ret->text)))
                return -EINVAL;
        return 0;
}

Config *config_free(Config *c)
{
        if (!c)
                return NULL;
        free(c->path);
        free(c->sysfs_path);
        free(c->dhcpcd_lease_dir);
        free(c->dhcpcd_ra_dir);
        free(c->resolv_conf);
        for (size_t i = 0; i < c->n_bearers; i++)
                free(c->bearers[i].pattern);
        free(c->bearers);
        for (size_t i = 0; i < c->n_dns_pins; i++) {
                free(c->dns_pins[i].pattern);
                free(c->dns_pins[i].servers);
        }
        free(c->dns_pins);
        free(c->probe.http_url);
        free(c->probe.https_url);
        free(c->probe.garden_url);
        free(c->probe.large_url);
        free(c->probe.expect_body);
        free(c->probe.expect_addrs);
        free(c->probe.ca_file);
        free(c->apps.policy_dir);
        free(c->firewall.networks_dir);
        free(c->firewall.profiles_dir);
        free(c->firewall.state_file);
        free(c->apps.state_file);
        strv_free(c->apps.system_cgroups);
        free(c->stats.directory);
        free(c->time.state_file);
        free(c->time.chrony_socket);
        free(c->time.chrony_source_dir);
        free(c->time.chrony_command_socket);
        free(c->time.gpsd_address);
        free(c->stats.prometheus_file);
        for (size_t i = 0; i < c->stats.n_roaming; i++)
                free(c->stats.roaming[i].pattern);
        free(c->stats.roaming);
        for (size_t i = 0; i < c->stats.n_metered; i++)
                free(c->stats.metered[i].pattern);
        free(c->stats.metered);
        for (size_t i = 0; i < c->stats.n_budgets; i++)
                stats_budget_done(&c->stats.budgets[i]);
        free(c->stats.budgets);
        free(c->portal.credentials_file);
        strv_free(c->portal.allow_login_hosts);
        free(c->wifi.control_dir);
        free(c->wifi.global_control);
        free(c->wifi.client_dir);
        free(c->wifi.p2p_device_name);
        free(c->wifi.backend);
        free(c->wifi.iwd_state_dir);
        free(c);
        return NULL;
}

static int config_new(const char *name, Config **ret)
{
        _cleanup_(config_freep) Config *c = NULL;

        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->log_level = LOG_INFO;
        c->path = strdup(name);
        c->sysfs_path = strdup("/sys");
        c->dhcpcd_lease_dir = strdup("/var/lib/dhcpcd");
        c->dhcpcd_ra_dir = strdup("/run/dhcpcd/hook-state/resolv.conf");
        c->resolv_conf = strdup("/etc/resolv.conf");
        /* GNOME's check server, the same NetworkManager uses by default. */
        c->probe.http_url = strdup("http://nmcheck.gnome.org/check_network_status.txt");
        c->probe.https_url = strdup("https://nmcheck.gnome.org/check_network_status.txt");
        c->probe.expect_body = strdup("NetworkManager is online\n");
        c->probe.expect_status = 200;
        c->probe.timeout_usec = 10 * USEC_PER_SEC;
        c->probe.dns_timeout_usec = 5 * USEC_PER_SEC;
        c->probe.ping_timeout_usec = 2 * USEC_PER_SEC;
        c->probe.recheck_usec = 300 * USEC_PER_SEC;
        c->probe.backoff_min_usec = 1 * USEC_PER_SEC;
        c->probe.backoff_max_usec = 60 * USEC_PER_SEC;
        c->probe.https_grace_min_usec = 1 * USEC_PER_SEC;
        c->probe.https_grace_max_usec = 5 * USEC_PER_SEC;
        c->probe.max_body = 64 * 1024;
        c->probe.stall_interval_usec = 2 * USEC_PER_SEC;
        c->probe.stall_reprobe_min_usec = 30 * USEC_PER_SEC;
        c->probe.dns_watch_interval_usec = 30 * USEC_PER_SEC;
        c->apps.enforce = true;
        c->apps.policy_dir = strdup(ROAM_SYSCONFDIR "/roam/apps.d");
        c->apps.state_file = strdup(ROAM_LOCALSTATEDIR "/lib/roam/apps.state");
        c->apps.mark_mask = 0x7f000000;
        c->apps.max_apps_per_user = 256;
        c->apps.table_base = 29000;
        c->apps.rule_priority = 29000;
        c->apps.default_follows = DEFAULT_FOLLOWS_VERDICT;
        c->wake.at_once = 1;
        c->wake.settle_usec = 1 * USEC_PER_SEC;
        c->wake.restart_usec = 30 * USEC_PER_SEC;
        c->wake.quiet_usec = 2 * USEC_PER_SEC;
        c->wake.max_delay_usec = 300 * USEC_PER_SEC;
        c->wake.slow_rtt_usec = 300 * USEC_PER_MSEC;
        c->bluetooth.enable = true;
        c->bluetooth.question_timeout_usec = 30 * USEC_PER_SEC;
        c->bluetooth.nfc_discovery_usec = 20 * USEC_PER_SEC;
        c->bluetooth.nfc_offer_usec = 60 * USEC_PER_SEC;
        if (!c->apps.policy_dir || !c->apps.state_file)
                return -ENOMEM;
        c->stats.enable = true;
        c->stats.directory = strdup(ROAM_LOCALSTATEDIR "/lib/roam");
        c->stats.flush_usec = 60 * USEC_PER_SEC;
        c->stats.retention_days = 90;
        c->stats.budget_warn_percent = 80;
        if (!c->stats.directory)
                return -ENOMEM;
        c->portal.credentials_file = strdup(ROAM_LOCALSTATEDIR "/lib/roam/portal.credentials");
        if (!c->portal.credentials_file)
                return -ENOMEM;
        c->time.gate_timeout_usec = 5 * USEC_PER_SEC;
        c->time.state_file = strdup(ROAM_LOCALSTATEDIR "/lib/roam/time.state");
        c->time.chrony_socket = strdup("/run/chrony.roam.sock");
        c->time.chrony_source_dir = strdup("/run/chrony-dhcp");
        c->time.chrony_command_socket = strdup("/run/chrony/chronyd.sock");
        c->time.gpsd_address = strdup("127.0.0.1:2947");
        c->time.set_clock = TIME_SET_CLOCK_AUTO;
        if (!c->time.state_file || !c->time.chrony_socket || !c->time.gpsd_address ||
            !c->time.chrony_source_dir || !c->time.chrony_command_socket)
                return -ENOMEM;
        c->firewall.enable = true;
        c->firewall.networks_dir = strdup(ROAM_SYSCONFDIR "/roam/networks.d");
        c->firewall.profiles_dir = strdup(ROAM_SYSCONFDIR "/roam/firewall.d");
        c->firewall.state_file = strdup(ROAM_LOCALSTATEDIR "/lib/roam/locations.state");
        c->firewall.ssh = FIREWALL_SSH_ALWAYS;
        if (!c->firewall.networks_dir || !c->firewall.profiles_dir || !c->firewall.state_file)
                return -ENOMEM;
        c->wifi.enable = true;
        c->wifi.control_dir = strdup("/run/wpa_supplicant");
        c->wifi.client_dir = strdup("/run/roam/wpa");
        c->wifi.iwd_state_dir = strdup("/var/lib/iwd");
        c->wifi.timeout_usec = 10 * USEC_PER_SEC;
        c->wifi.signal_interval_usec = 10 * USEC_PER_SEC;
        c->wifi.ping_interval_usec = 30 * USEC_PER_SEC;
        if (!c->wifi.control_dir || !c->wifi.client_dir || !c->wifi.iwd_state_dir)
                return -ENOMEM;
        if (!c->path || !c->sysfs_path || !c->dhcpcd_lease_dir || !c->dhcpcd_ra_dir ||
            !c->resolv_conf || !c->probe.http_url || !c->probe.https_url || !c->probe.expect_body)
                return -ENOMEM;
        c->dns_sources[c->n_dns_sources++] = DNS_SOURCE_RESOLVED;
        c->dns_sources[c->n_dns_sources++] = DNS_SOURCE_NETWORKMANAGER;
        c->dns_sources[c->n_dns_sources++] = DNS_SOURCE_DHCPCD;
        c->dns_sources[c->n_dns_sources++] = DNS_SOURCE_RESOLV_CONF;
        *ret = TAKE_PTR(c);
        return 0;
}

static bool valid_ifname_glob(const char *s)
{
        size_t n = strlen(s);

        if (n == 0 || n > 64)
                return false;
        for (; *s; s++)
                if (*s == '/' || *s == ':' || (unsigned char)*s <= ' ')
                        return false;
        return true;
}

static int parse_path(const char *file, unsigned line, const char *key, const char *value,
                      char **dst)
{
        if (value[0] != '/')
                return conf_log_error(file, line, "%s= must be an absolute path, got \"%s\".", key,
                                      value);
        if (free_and_strdup(dst, value) < 0)
                return log_oom();
        return 0;
}

/* ---- the values' parsers; every key of roamd.conf is one row of config_keys[] below ---- */

typedef struct ConfigKey ConfigKey;
typedef int (*config_parse_t)(Config *c, const ConfigKey *k, const char *file, unsigned line,
                              const char *key, const char *value);

/* One key of a section: its parser, and for the shared parsers where the value goes (an
 * offset into Config), its range and the words of the error. key NULL: any name (a section of
 * interface names or patterns); a key ending in ".": every key with that prefix. */
struct ConfigKey {
        const char *section;
        const char *key;
        config_parse_t parse;
        size_t offset;
        uint64_t min, max;
        const char *must; /* "%s= must be <must>, got ..." (durations) */
};

#define FIELD(c, k, type) ((type *)((uint8_t *)(c) + (k)->offset))

static int parse_bool_key(Config *c, const ConfigKey *k, const char *file, unsigned line,
                          const char *key, const char *value)
{
        if (conf_parse_boolean(value, FIELD(c, k, bool)) < 0)
                return conf_log_error(file, line, "%s= must be a boolean, got \"%s\".", key, value);
        return 0;
}

static int parse_path_key(Config *c, const ConfigKey *k, const char *file, unsigned line,
                          const char *key, const char *value)
{
        return parse_path(file, line, key, value, FIELD(c, k, char *));
}

static int parse_u32(const char *file, unsigned line, const char *key, const char *value,
                     uint32_t min, uint32_t max, uint32_t *ret)
{
        char *end;
        unsigned long long v;

        errno = 0;
        v = strtoull(value, &end, 0);
        if (errno != 0 || end == value || *end != '\0' || value[0] == '-' || v < min || v > max)
                return conf_log_error(file, line, "%s= must be a number from %u to %u, got \"%s\".",
                                      key, min, max, value);
        *ret = (uint32_t)v;
        return 0;
}

static int parse_u32_key(Config *c, const ConfigKey *k, const char *file, unsigned line,
                         const char *key, const char *value)
{
        return parse_u32(file, line, key, value, (uint32_t)k->min, (uint32_t)k->max,
                         FIELD(c, k, uint32_t));
}

/* Seconds, with an optional fraction ("1.5") and an optional "s" or "ms" suffix. */
static int parse_duration(const char *v, uint64_t *ret)
{
        char *end;
        double d;

        errno = 0;
        d = strtod(v, &end);
        if (errno || end == v || !(d >= 0 && d <= 86400)) /* (NaN too) */
                return -EINVAL;
        if (streq(end, "ms"))
                d /= 1000;
        else if (*end && !streq(end, "s"))
                return -EINVAL;
        *ret = (uint64_t)(d * USEC_PER_SEC);
        return 0;
}

/* A duration from k->min to k->max µs. */
static int parse_duration_key(Config *c, const ConfigKey *k, const char *file, unsigned line,
                              const char *key, const char *value)
{
        uint64_t v;

        if (parse_duration(value, &v) < 0 || v < k->min || v > k->max)
                return conf_log_error(file, line, "%s= must be %s, got \"%s\".", key, k->must,
                                      value);
        *FIELD(c, k, uint64_t) = v;
        return 0;
}

/* 0 (off), or a duration from k->min to k->max µs. */
static int parse_interval_key(Config *c, const ConfigKey *k, const char *file, unsigned line,
                              const char *key, const char *value)
{
        uint64_t v;

        if (parse_duration(value, &v) < 0 || (v > 0 && v < k->min) || v > k->max)
                return conf_log_error(file, line, "%s= must be %s, got \"%s\".", key, k->must,
                                      value);
        *FIELD(c, k, uint64_t) = v;
        return 0;
}

/* An absolute path, or empty: off (NULL). */
static int parse_path_or_off_key(Config *c, const ConfigKey *k, const char *file, unsigned line,
                                 const char *key, const char *value)
{
        char **v = FIELD(c, k, char *);

        if (!*value) {
                free(*v);
                *v = NULL;
                return 0;
        }
        /* a socket's path (sun_path, 108 bytes), with room for what goes beside it */
        if (k->max > 0 && strlen(value) >= k->max)
                return conf_log_error(file, line, "%s= is %s.", key, k->must);
        return parse_path(file, line, key, value, v);
}

/* [Daemon] */

static int parse_log_level(Config *c, const ConfigKey *k, const char *file, unsigned line,
                           const char *key, const char *value)
{
        int l = log_level_from_string(value);

        if (l < 0)
                return conf_log_error(file, line,
                                      "Unknown LogLevel \"%s\" (expected emerg, alert, crit, err, "
                                      "warning, notice, info or debug).",
                                      value);
        c->log_level = l;
        return 0;
}

/* [DNS] */

static int parse_dns_sources(Config *c, const ConfigKey *k, const char *file, unsigned line,
                             const char *key, const char *value)
{
        _cleanup_strv_free_ char **l = NULL;
        size_t n = 0;

        if (strv_split(value, " \t,", &l) < 0)
                return log_oom();
        STRV_FOREACH (s, l) {
                DnsSource d = dns_source_from_string(*s);
                if (d < 0 || d == DNS_SOURCE_NONE || d == DNS_SOURCE_CONFIG)
                        return conf_log_error(file, line,
                                              "Unknown DNS source \"%s\" (expected resolved, "
                                              "networkmanager, dhcpcd or resolv.conf).",
                                              *s);
                for (size_t i = 0; i < n; i++)
                        if (c->dns_sources[i] == d)
                                return conf_log_error(file, line, "DNS source \"%s\" listed twice.",
                                                      *s);
                c->dns_sources[n++] = d;
        }
        c->n_dns_sources = n;
        return 0;
}

/* [Bearers]: NAME_OR_GLOB=BEARER */
static int parse_bearer(Config *c, const ConfigKey *k, const char *file, unsigned line,
                        const char *key, const char *value)
{
        BearerOverride *n;
        Bearer b;

        if (!valid_ifname_glob(key))
                return conf_log_error(file, line, "Invalid interface name or pattern \"%s\".", key);
        b = bearer_from_string(value);
        if (b < 0)
                return conf_log_error(file, line,
                                      "Unknown bearer \"%s\" for %s (expected ethernet, wifi, "
                                      "cellular, bluetooth, wifi-direct, vpn, lowpan or "
                                      "virtual).",
                                      value, key);
        for (size_t i = 0; i < c->n_bearers; i++)
                if (streq(c->bearers[i].pattern, key))
                        return conf_log_error(file, line, "Bearer for %s set twice.", key);
        n = realloc(c->bearers, sizeof(*n) * (c->n_bearers + 1));
        if (!n)
                return log_oom();
        c->bearers = n;
        n[c->n_bearers].pattern = strdup(key);
        if (!n[c->n_bearers].pattern)
                return log_oom();
        n[c->n_bearers++].bearer = b;
        return 0;
}

/* [LinkDNS]: NAME_OR_GLOB=SERVER... */
static int parse_link_dns(Config *c, const ConfigKey *k, const char *file, unsigned line,
                          const char *key, const char *value)
{
        _cleanup_strv_free_ char **l = NULL;
        _cleanup_free_ IpAddr *servers = NULL;
        size_t n = 0;
        DnsPin *p;

        if (!valid_ifname_glob(key))
                return conf_log_error(file, line, "Invalid interface name or pattern \"%s\".", key);
        if (strv_split(value, " \t,", &l) < 0)
                return log_oom();
        if (strv_length(l) == 0)
                return conf_log_error(file, line, "No DNS servers given for %s.", key);
        if (strv_length(l) > 16)
                return conf_log_error(file, line, "Too many DNS servers for %s (at most 16).", key);
        servers = calloc(strv_length(l), sizeof(IpAddr));
        if (!servers)
                return log_oom();
        STRV_FOREACH (s, l) {
                if (ip_addr_parse(*s, &servers[n]) < 0)
                        return conf_log_error(file, line, "Invalid DNS server address \"%s\".", *s);
                n++;
        }
        for (size_t i = 0; i < c->n_dns_pins; i++)
                if (streq(c->dns_pins[i].pattern, key))
                        return conf_log_error(file, line, "DNS servers for %s set twice.", key);
        p = realloc(c->dns_pins, sizeof(*p) * (c->n_dns_pins + 1));
        if (!p)
                return log_oom();
        c->dns_pins = p;
        p[c->n_dns_pins].pattern = strdup(key);
        if (!p[c->n_dns_pins].pattern)
                return log_oom();
        p[c->n_dns_pins].servers = TAKE_PTR(servers);
        p[c->n_dns_pins++].n_servers = n;
        return 0;
}

/* [Probe] */

static bool valid_url(const char *v, const char *scheme)
{
        size_t n = strlen(scheme);

        if (strncmp(v, scheme, n) != 0 || strncmp(v + n, "://", 3) != 0 || !v[n + 3] ||
            strlen(v) > 2048)
                return false;
        for (; *v; v++)
                if ((unsigned char)*v <= ' ' || *v == 0x7f)
                        return false;
        return true;
}

/* An http:// URL whose only "*" may be the whole first label of its host: a random name per
 * probe, under a domain whose DNS answers every name. */
static bool valid_garden_url(const char *v)
{
        const char *star = strchr(v, '*');

        if (!valid_url(v, "http"))
                return false;
        return !star || (star == v + strlen("http://") && star[1] == '.' && star[2] &&
                         !strchr(star + 1, '*'));
}

/* The expected body may contain \n, \t, \\ escapes (check servers end lines with \n). */
static int unescape(const char *v, char **ret)
{
        char *out = malloc(strlen(v) + 1), *o = out;

        if (!out)
                return -ENOMEM;
        for (; *v; v++) {
                if (*v != '\\') {
                        *o++ = *v;
                        continue;
                }
                v++;
                if (*v == 'n')
                        *o++ = '\n';
                else if (*v == 't')
                        *o++ = '\t';
                else if (*v == '\\')
                        *o++ = '\\';
                else {
                        free(out);
                        return -EINVAL;
                }
        }
        *o = 0;
        *ret = out;
        return 0;
}

/* HttpURL= (k->min 0) and HttpsURL= (k->min 1). */
static int parse_check_url(Config *c, const ConfigKey *k, const char *file, unsigned line,
                           const char *key, const char *value)
{
        const char *scheme = k->min ? "https" : "http";

        if (!valid_url(value, scheme))
                return conf_log_error(file, line, "%s= must be an %s:// URL, got \"%s\".", key,
                                      scheme, value);
        if (free_and_strdup(FIELD(c, k, char *), value) < 0)
                return log_oom();
        return 0;
}

static int parse_garden_url(Config *c, const ConfigKey *k, const char *file, unsigned line,
                            const char *key, const char *value)
{
        if (!*value) {
                free(c->probe.garden_url);
                c->probe.garden_url = NULL;
                return 0;
        }
        if (!valid_garden_url(value))
                return conf_log_error(file, line,
                                      "GardenURL= must be an http:// URL (its host may begin with "
                                      "\"*.\"), got \"%s\".",
                                      value);
        if (free_and_strdup(&c->probe.garden_url, value) < 0)
                return log_oom();
        return 0;
}

static int parse_large_url(Config *c, const ConfigKey *k, const char *file, unsigned line,
                           const char *key, const char *value)
{
        if (!*value) {
                free(c->probe.large_url);
                c->probe.large_url = NULL;
                return 0;
        }
        if (!valid_url(value, "http") && !valid_url(value, "https"))
                return conf_log_error(
                    file, line, "LargeURL= must be an http:// or https:// URL, got \"%s\".", value);
        if (free_and_strdup(&c->probe.large_url, value) < 0)
                return log_oom();
        return 0;
}

static int parse_expect_status(Config *c, const ConfigKey *k, const char *file, unsigned line,
                               const char *key, const char *value)
{
        char *end;
        long v = strtol(value, &end, 10);

        if (end == value || *end || v < 200 || v > 299)
                return conf_log_error(file, line, "ExpectStatus= must be a 2xx status, got \"%s\".",
                                      value);
        c->probe.expect_status = v;
        return 0;
}

static int parse_expect_body(Config *c, const ConfigKey *k, const char *file, unsigned line,
                             const char *key, const char *value)
{
        char *b = NULL;

        if (*value && unescape(value, &b) < 0)
                return conf_log_error(file, line,
                                      "ExpectBody= has an unknown escape (use \\n, \\t or \\\\).");
        free(c->probe.expect_body);
        c->probe.expect_body = b; /* empty: any body */
        return 0;
}

static int parse_expect_addresses(Config *c, const ConfigKey *k, const char *file, unsigned line,
                                  const char *key, const char *value)
{
        _cleanup_strv_free_ char **l = NULL;
        IpAddr *a;
        size_t n = 0;

        if (strv_split(value, " \t,", &l) < 0)
                return log_oom();
        a = calloc(strv_length(l) + 1, sizeof(IpAddr));
        if (!a)
                return log_oom();
        STRV_FOREACH (s, l) {
                if (ip_addr_parse(*s, &a[n]) < 0) {
                        free(a);
                        return conf_log_error(file, line,
                                              "Invalid address \"%s\" in ExpectAddresses=.", *s);
                }
                n++;
        }
        free(c->probe.expect_addrs);
        c->probe.expect_addrs = a;
        c->probe.n_expect_addrs = n;
        return 0;
}

static int parse_max_body_size(Config *c, const ConfigKey *k, const char *file, unsigned line,
                               const char *key, const char *value)
{
        char *end;
        long v = strtol(value, &end, 10);

        if (end == value || *end || v < 1024 || v > 16 * 1024 * 1024)
                return conf_log_error(file, line,
                                      "MaxBodySize= must be between 1024 and 16777216 bytes, got "
                                      "\"%s\".",
                                      value);
        c->probe.max_body = (size_t)v;
        return 0;
}

/* [Apps] */

static int parse_default_follows(Config *c, const ConfigKey *k, const char *file, unsigned line,
                                 const char *key, const char *value)
{
        DefaultFollows v = default_follows_from_string(value);

        if (v < 0)
                return conf_log_error(
                    file, line, "DefaultFollows= must be verdict or kernel, got \"%s\".", value);
        c->apps.default_follows = v;
        return 0;
}

static int parse_system_cgroups(Config *c, const ConfigKey *k, const char *file, unsigned line,
                                const char *key, const char *value)
{
        char **l = NULL;

        if (strv_split(value, " \t", &l) < 0)
                return log_oom();
        for (size_t i = 0; l && l[i]; i++)
                if (l[i][0] != '/' || strstr(l[i], "/../") || strstr(l[i], "//")) {
                        strv_free(l);
                        return conf_log_error(file, line,
                                              "SystemCgroups= takes absolute cgroup paths (e.g. "
                                              "/system.slice/vpn.service), got \"%s\".",
                                              value);
                }
        strv_free(c->apps.system_cgroups);
        c->apps.system_cgroups = l;
        return 0;
}

/* [Routing] */

static int parse_firewall_mask(Config *c, const ConfigKey *k, const char *file, unsigned line,
                               const char *key, const char *value)
{
        uint32_t m;
        int r = parse_u32(file, line, key, value, 1, UINT32_MAX, &m);

        if (r < 0)
                return r;
        if (nft_mark_mask_valid(m) < 0)
                return conf_log_error(
                    file, line, "FirewallMask= must be 3 to 7 contiguous bits, got \"%s\".", value);
        c->apps.mark_mask = m;
        return 0;
}

/* The old spelling of [Apps] DefaultFollows=: yes is verdict, no kernel. */
static int parse_prefer_online(Config *c, const ConfigKey *k, const char *file, unsigned line,
                               const char *key, const char *value)
{
        bool b;

        if (conf_parse_boolean(value, &b) < 0)
                return conf_log_error(file, line, "PreferOnline= must be a boolean, got \"%s\".",
                                      value);
        c->apps.default_follows = b ? DEFAULT_FOLLOWS_VERDICT : DEFAULT_FOLLOWS_KERNEL;
        return 0;
}

/* [Stats] */

static int parse_budget(Config *c, const ConfigKey *k, const char *file, unsigned line,
                        const char *key, const char *value)
{
        const char *why = NULL;
        StatsBudget b, *nb;
        int r = stats_budget_parse(value, &b, &why);

        if (r == -ENOMEM)
                return log_oom();
        if (r < 0)
                return conf_log_error(file, line, "Budget= \"%s\": %s.", value, why);
        for (size_t i = 0; i < c->stats.n_budgets; i++)
                if (streq(c->stats.budgets[i].app_id, b.app_id) &&
                    c->stats.budgets[i].links == b.links) {
                        r = conf_log_error(file, line, "Budget= for %s on %s set twice.", b.app_id,
                                           stats_budget_links_to_string(b.links));
                        stats_budget_done(&b);
                        return r;
                }
        nb = realloc(c->stats.budgets, sizeof(*nb) * (c->stats.n_budgets + 1));
        if (!nb) {
                stats_budget_done(&b);
                return log_oom();
        }
        c->stats.budgets = nb;
        nb[c->stats.n_budgets++] = b;
        return 0;
}

/* A percentage, the % sign optional. */
static int parse_budget_warning(Config *c, const ConfigKey *k, const char *file, unsigned line,
                                const char *key, const char *value)
{
        char buf[16];
        size_t n = strlen(value);

        if (n > 0 && n < sizeof(buf) && value[n - 1] == '%')
                n--;
        if (n == 0 || n >= sizeof(buf))
                return conf_log_error(file, line,
                                      "BudgetWarning= must be a percentage from 1%% to 100%%, got "
                                      "\"%s\".",
                                      value);
        memcpy(buf, value, n);
        buf[n] = 0;
        return parse_u32(file, line, key, buf, 1, 100, &c->stats.budget_warn_percent);
}

/* [Roaming] and [Metered]: NAME_OR_GLOB=yes|no */
static int parse_override(RoamingOverride **list, size_t *n_list, const char *what,
                          const char *file, unsigned line, const char *key, const char *value)
{
        RoamingOverride *n;
        bool b;

        if (!valid_ifname_glob(key))
                return conf_log_error(file, line, "Invalid interface name or pattern \"%s\".", key);
        if (conf_parse_boolean(value, &b) < 0)
                return conf_log_error(file, line, "%s for %s must be a boolean, got \"%s\".", what,
                                      key, value);
        for (size_t i = 0; i < *n_list; i++)
                if (streq((*list)[i].pattern, key))
                        return conf_log_error(file, line, "%s for %s set twice.", what, key);
        n = realloc(*list, sizeof(*n) * (*n_list + 1));
        if (!n)
                return log_oom();
        *list = n;
        n[*n_list] = (RoamingOverride){.pattern = strdup(key), .roaming = b};
        if (!n[*n_list].pattern)
                return log_oom();
        (*n_list)++;
        return 0;
}

static int parse_roaming(Config *c, const ConfigKey *k, const char *file, unsigned line,
                         const char *key, const char *value)
{
        return parse_override(&c->stats.roaming, &c->stats.n_roaming, "Roaming", file, line, key,
                              value);
}

static int parse_metered(Config *c, const ConfigKey *k, const char *file, unsigned line,
                         const char *key, const char *value)
{
        return parse_override(&c->stats.metered, &c->stats.n_metered, "Metered", file, line, key,
                              value);
}

/* [Portal] */

static int parse_login_hosts(Config *c, const ConfigKey *k, const char *file, unsigned line,
                             const char *key, const char *value)
{
        char **l = NULL;

        if (strv_split(value, " \t", &l) < 0)
                return log_oom();
        for (size_t i = 0; l && l[i]; i++) {
                for (char *q = l[i]; *q; q++)
                        *q = (char)tolower((unsigned char)*q);
                if (strpbrk(l[i], "/:@?#") && l[i][0] != '[') {
                        strv_free(l);
                        return conf_log_error(file, line,
                                              "AllowLoginHosts= takes host names or addresses, "
                                              "got \"%s\".",
                                              value);
                }
        }
        strv_free(c->portal.allow_login_hosts);
        c->portal.allow_login_hosts = l;
        return 0;
}

/* [WiFi] */

/* A directory or socket of wpa_supplicant's: a unix socket path holds at most 107 bytes;
 * leave room for the names. */
static int parse_wpa_path(Config *c, const ConfigKey *k, const char *file, unsigned line,
                          const char *key, const char *value)
{
        if (strlen(value) > 80)
                return conf_log_error(file, line,
                                      "%s= is too long for a socket path (at most 80 bytes).", key);
        if (streq(value, "/"))
                return conf_log_error(file, line, "%s= cannot be /.", key);
        return parse_path(file, line, key, value, FIELD(c, k, char *));
}

/* iwd's state directory (its $STATE_DIRECTORY): roamd writes a NAME.8021x there and NAME is
 * up to 64 hex digits, so the directory leaves room for them in a PATH_MAX path. */
static int parse_iwd_state_dir(Config *c, const ConfigKey *k, const char *file, unsigned line,
                               const char *key, const char *value)
{
        if (strlen(value) > 1024)
                return conf_log_error(file, line, "%s= is too long (at most 1024 bytes).", key);
        if (streq(value, "/"))
                return conf_log_error(file, line, "%s= cannot be /.", key);
        return parse_path(file, line, key, value, FIELD(c, k, char *));
}

static int parse_device_name(Config *c, const ConfigKey *k, const char *file, unsigned line,
                             const char *key, const char *value)
{
        size_t n = strlen(value);
        bool ok = n > 0 && n <= 32;

        for (const char *p = value; ok && *p; p++)
                ok = (unsigned char)*p >= ' ' && *p != 0x7f && *p != '\'' && *p != '"';
        if (!ok)
                return conf_log_error(file, line,
                                      "DeviceName= must be 1 to 32 printable characters without "
                                      "quotes, got \"%s\".",
                                      value);
        if (free_and_strdup(&c->wifi.p2p_device_name, value) < 0)
                return log_oom();
        return 0;
}

/* Who roamd joins through: detected (auto), or that owner only. */
static int parse_wifi_backend(Config *c, const ConfigKey *k, const char *file, unsigned line,
                              const char *key, const char *value)
{
        if (!streq(value, "auto") && !streq(value, "networkmanager") && !streq(value, "iwd") &&
            !streq(value, "wpa_supplicant"))
                return conf_log_error(file, line,
                                      "Backend= must be auto, networkmanager, iwd or "
                                      "wpa_supplicant, got \"%s\".",
                                      value);
        if (free_and_strdup(&c->wifi.backend, streq(value, "auto") ? NULL : value) < 0)
                return log_oom();
        return 0;
}

/* [Time] */

static int parse_gpsd_address(Config *c, const ConfigKey *k, const char *file, unsigned line,
                              const char *key, const char *value)
{
        struct sockaddr_storage sa;
        socklen_t len;
        char *v = NULL;

        if (*value) { /* empty: off */
                if (gpsd_address_parse(value, &sa, &len) < 0)
                        return conf_log_error(file, line,
                                              "GpsdAddress= must be a numeric address:port such "
                                              "as 127.0.0.1:2947 or [::1]:2947, got \"%s\".",
                                              value);
                v = strdup(value);
                if (!v)
                        return -ENOMEM;
        }
        free(c->time.gpsd_address);
        c->time.gpsd_address = v;
        return 0;
}

static int parse_set_clock(Config *c, const ConfigKey *k, const char *file, unsigned line,
                           const char *key, const char *value)
{
        TimeSetClock v = time_set_clock_from_string(value);

        if (v < 0)
                return conf_log_error(file, line, "SetClock= must be yes, no or auto, got \"%s\".",
                                      value);
        c->time.set_clock = v;
        return 0;
}

/* [Firewall] */

static int parse_ssh(Config *c, const ConfigKey *k, const char *file, unsigned line,
                     const char *key, const char *value)
{
        FirewallSsh v = firewall_ssh_from_string(value);

        if (v >= 0) {
                c->firewall.ssh = v;
                return 0;
        }
        return conf_log_error(file, line, "SSH= must be always, trusted or never, got \"%s\".",
                              value);
}

/* [Wake] AtOnce.BEARER= */
static int parse_at_once_bearer(Config *c, const ConfigKey *k, const char *file, unsigned line,
                                const char *key, const char *value)
{
        Bearer b = bearer_from_string(key + strlen("AtOnce."));

        if (b < 0)
                return conf_log_error(file, line,
                                      "Unknown bearer in %s= (AtOnce.ethernet=, AtOnce.wifi=, "
                                      "...).",
                                      key);
        return parse_u32(file, line, key, value, 1, 64, &c->wake.at_once_bearer[b]);
}

#define ROW(s, k, fn, ...)                                                                         \
        {                                                                                          \
                .section = s, .key = k, .parse = fn, __VA_ARGS__                                   \
        }
#define BOOL(s, k, f) ROW(s, k, parse_bool_key, .offset = offsetof(Config, f))
#define PATH(s, k, f) ROW(s, k, parse_path_key, .offset = offsetof(Config, f))
#define U32(s, k, f, lo, hi)                                                                       \
        ROW(s, k, parse_u32_key, .offset = offsetof(Config, f), .min = lo, .max = hi)
#define DURATION(s, k, f, lo, hi, words)                                                           \
        ROW(s, k, parse_duration_key, .offset = offsetof(Config, f), .min = lo, .max = hi,         \
            .must = words)
#define INTERVAL(s, k, f, lo, hi, words)                                                           \
        ROW(s, k, parse_interval_key, .offset = offsetof(Config, f), .min = lo, .max = hi,         \
            .must = words)
#define CUSTOM(s, k, fn) ROW(s, k, fn, .offset = 0)
#define POSITIVE         "a positive duration in seconds (\"10\", \"1.5s\", \"500ms\")"
#define ANY_DURATION     "a duration (seconds, or with ms/s)"
#define SEC              USEC_PER_SEC
#define MSEC             USEC_PER_MSEC

/* Every section and key of roamd.conf: the parser reads it, and so do the checks of the man
 * page and the shipped roamd.conf (tests/packaging/check-man.py reads these rows). */
static const ConfigKey config_keys[] = {
    CUSTOM("Daemon", "LogLevel", parse_log_level),
    PATH("Daemon", "SysfsPath", sysfs_path),

    CUSTOM("DNS", "Sources", parse_dns_sources),
    PATH("DNS", "DhcpcdLeaseDir", dhcpcd_lease_dir),
    PATH("DNS", "DhcpcdRADir", dhcpcd_ra_dir),
    PATH("DNS", "ResolvConf", resolv_conf),

    CUSTOM("Bearers", NULL, parse_bearer),
    CUSTOM("LinkDNS", NULL, parse_link_dns),

    ROW("Probe", "HttpURL", parse_check_url, .offset = offsetof(Config, probe.http_url), .min = 0),
    ROW("Probe", "HttpsURL", parse_check_url, .offset = offsetof(Config, probe.https_url),
        .min = 1),
    CUSTOM("Probe", "GardenURL", parse_garden_url),
    CUSTOM("Probe", "LargeURL", parse_large_url),
    CUSTOM("Probe", "ExpectStatus", parse_expect_status),
    CUSTOM("Probe", "ExpectBody", parse_expect_body),
    CUSTOM("Probe", "ExpectAddresses", parse_expect_addresses),
    PATH("Probe", "CAFile", probe.ca_file),
    CUSTOM("Probe", "MaxBodySize", parse_max_body_size),
    /* 0 turns the watch off; more than a minute is no faster than a re-check */
    INTERVAL("Probe", "StallInterval", probe.stall_interval_usec, SEC / 2, 60 * SEC,
             "0 (off) or a duration from 0.5 to 60 seconds"),
    /* 0 turns the look off; under a second would be a query stream, not a look */
    INTERVAL("Probe", "DNSWatchInterval", probe.dns_watch_interval_usec, SEC, 3600 * SEC,
             "0 (off) or a duration from 1 to 3600 seconds"),
    DURATION("Probe", "Timeout", probe.timeout_usec, 1, UINT64_MAX, POSITIVE),
    DURATION("Probe", "DNSTimeout", probe.dns_timeout_usec, 1, UINT64_MAX, POSITIVE),
    DURATION("Probe", "PingTimeout", probe.ping_timeout_usec, 1, UINT64_MAX, POSITIVE),
    DURATION("Probe", "RecheckInterval", probe.recheck_usec, 1, UINT64_MAX, POSITIVE),
    DURATION("Probe", "BackoffMin", probe.backoff_min_usec, 1, UINT64_MAX, POSITIVE),
    DURATION("Probe", "BackoffMax", probe.backoff_max_usec, 1, UINT64_MAX, POSITIVE),
    DURATION("Probe", "HttpsGraceMin", probe.https_grace_min_usec, 1, UINT64_MAX, POSITIVE),
    DURATION("Probe", "HttpsGraceMax", probe.https_grace_max_usec, 1, UINT64_MAX, POSITIVE),
    DURATION("Probe", "StallReprobeMin", probe.stall_reprobe_min_usec, 1, UINT64_MAX, POSITIVE),

    BOOL("Apps", "Enforce", apps.enforce),
    PATH("Apps", "PolicyDirectory", apps.policy_dir),
    PATH("Apps", "StateFile", apps.state_file),
    U32("Apps", "MaxAppsPerUser", apps.max_apps_per_user, 1, 65536),
    CUSTOM("Apps", "DefaultFollows", parse_default_follows),
    CUSTOM("Apps", "SystemCgroups", parse_system_cgroups),

    CUSTOM("Routing", "FirewallMask", parse_firewall_mask),
    U32("Routing", "TableBase", apps.table_base, 1, 0x7fffff00),
    U32("Routing", "RulePriority", apps.rule_priority, 1, 32000),
    CUSTOM("Routing", "PreferOnline", parse_prefer_online),

    BOOL("Stats", "Enable", stats.enable),
    PATH("Stats", "Directory", stats.directory),
    PATH("Stats", "PrometheusFile", stats.prometheus_file),
    U32("Stats", "RetentionDays", stats.retention_days, 1, 3660),
    DURATION("Stats", "FlushInterval", stats.flush_usec, 100 * MSEC, 3600 * SEC,
             "a duration from 0.1s to 3600s"),
    CUSTOM("Stats", "Budget", parse_budget),
    CUSTOM("Stats", "BudgetWarning", parse_budget_warning),

    CUSTOM("Roaming", NULL, parse_roaming),
    CUSTOM("Metered", NULL, parse_metered),

    PATH("Portal", "CredentialsFile", portal.credentials_file),
    BOOL("Portal", "AllowPlainHTTPLogin", portal.allow_http_login),
    CUSTOM("Portal", "AllowLoginHosts", parse_login_hosts),

    BOOL("WiFi", "Enable", wifi.enable),
    ROW("WiFi", "ControlDirectory", parse_wpa_path, .offset = offsetof(Config, wifi.control_dir)),
    ROW("WiFi", "ClientDirectory", parse_wpa_path, .offset = offsetof(Config, wifi.client_dir)),
    ROW("WiFi", "GlobalControl", parse_wpa_path, .offset = offsetof(Config, wifi.global_control)),
    DURATION("WiFi", "RequestTimeout", wifi.timeout_usec, 100 * MSEC, 60 * SEC,
             "a duration from 100ms to 60s"),
    DURATION("WiFi", "SignalInterval", wifi.signal_interval_usec, SEC, 600 * SEC,
             "a duration from 1s to 600s"),
    DURATION("WiFi", "PingInterval", wifi.ping_interval_usec, SEC, 600 * SEC,
             "a duration from 1s to 600s"),
    CUSTOM("WiFi", "DeviceName", parse_device_name),
    CUSTOM("WiFi", "Backend", parse_wifi_backend),
    ROW("WiFi", "IwdStateDirectory", parse_iwd_state_dir,
        .offset = offsetof(Config, wifi.iwd_state_dir)),

    BOOL("Bluetooth", "Enable", bluetooth.enable),
    /* No BlueZ call waits on a tag's offer (neard is answered at once): up to 10 min. */
    DURATION("Bluetooth", "NfcOfferTimeout", bluetooth.nfc_offer_usec, 1, 600 * SEC,
             "a duration between 1ms and 600s"),
    /* BlueZ gives up on an agent after 60 s; a longer wait could never be answered. */
    DURATION("Bluetooth", "QuestionTimeout", bluetooth.question_timeout_usec, 1, 55 * SEC,
             "a duration between 1ms and 55s"),
    DURATION("Bluetooth", "NfcDiscoveryTimeout", bluetooth.nfc_discovery_usec, 1, 55 * SEC,
             "a duration between 1ms and 55s"),

    BOOL("Firewall", "Enable", firewall.enable),
    PATH("Firewall", "NetworksDirectory", firewall.networks_dir),
    PATH("Firewall", "ProfilesDirectory", firewall.profiles_dir),
    PATH("Firewall", "StateFile", firewall.state_file),
    CUSTOM("Firewall", "SSH", parse_ssh),

    DURATION("Time", "GateTimeout", time.gate_timeout_usec, 0, 600 * SEC,
             "a duration from 0 to 600s"),
    PATH("Time", "StateFile", time.state_file),
    ROW("Time", "ChronySocket", parse_path_or_off_key,
        .offset = offsetof(Config, time.chrony_socket), .max = 108,
        .must = "longer than a socket path may be"),
    ROW("Time", "ChronySourceDir", parse_path_or_off_key,
        .offset = offsetof(Config, time.chrony_source_dir)),
    /* the command socket: our own socket's path beside it is ~20 bytes longer */
    ROW("Time", "ChronyCommandSocket", parse_path_or_off_key,
        .offset = offsetof(Config, time.chrony_command_socket), .max = 108 - 24,
        .must = "longer than a socket path beside it may be"),
    CUSTOM("Time", "GpsdAddress", parse_gpsd_address),
    CUSTOM("Time", "SetClock", parse_set_clock),

    U32("Wake", "AtOnce", wake.at_once, 1, 64),
    CUSTOM("Wake", "AtOnce.", parse_at_once_bearer),
    DURATION("Wake", "SettleSec", wake.settle_usec, 0, UINT64_MAX, ANY_DURATION),
    DURATION("Wake", "RestartSec", wake.restart_usec, 0, UINT64_MAX, ANY_DURATION),
    DURATION("Wake", "QuietSec", wake.quiet_usec, 0, UINT64_MAX, ANY_DURATION),
    DURATION("Wake", "MaxDelaySec", wake.max_delay_usec, 0, UINT64_MAX, ANY_DURATION),
    DURATION("Wake", "SlowRTTSec", wake.slow_rtt_usec, 0, UINT64_MAX, ANY_DURATION),
};

#undef ROW
#undef BOOL
#undef PATH
#undef U32
#undef DURATION
#undef INTERVAL
#undef CUSTOM
#undef POSITIVE
#undef ANY_DURATION
#undef SEC
#undef MSEC

static bool config_key_matches(const ConfigKey *k, const char *key)
{
        size_t n;

        if (!k->key)
                return true;
        n = strlen(k->key);
        if (n > 0 && k->key[n - 1] == '.')
                return strncmp(key, k->key, n) == 0;
        return streq(key, k->key);
}

static int config_assign(const char *file, unsigned line, const char *section, const char *key,
                         const char *value, void *userdata)
{
        bool section_known = false;

        for (size_t i = 0; i < ELEMENTSOF(config_keys); i++) {
                const ConfigKey *k = &config_keys[i];

                if (!streq(k->section, section))
                        continue;
                section_known = true;
                if (config_key_matches(k, key))
                        return k->parse(userdata, k, file, line, key, value);
        }
        if (section_known)
                return conf_log_error(file, line, "Unknown key %s= in section [%s].", key, section);
        return conf_log_error(file, line, "Unknown section [%s].", section);
}

int config_parse_string(const char *name, const char *text, size_t size, Config **ret)
{
        _cleanup_(config_freep) Config *c = NULL;
        int r;

        r = config_new(name, &c);
        if (r < 0)
                return r;
        r = conf_parse_string(name, text, size, config_assign, c, NULL);
        if (r < 0)
                return r;
        if (c->probe.backoff_min_usec > c->probe.backoff_max_usec)
                return log_error("%s: [Probe] BackoffMin= is larger than BackoffMax=.", name),
                       -EINVAL;
        if (c->probe.https_grace_min_usec > c->probe.https_grace_max_usec)
                return log_error("%s: [Probe] HttpsGraceMin= is larger than HttpsGraceMax=.", name),
                       -EINVAL;
        *ret = TAKE_PTR(c);
        return 0;
}

int config_load(const char *path, bool missing_ok, Config **ret)
{
        _cleanup_free_ char *text = NULL;
        size_t size = 0;
        int r;

        r = read_full_file(path, 1024 * 1024, &text, &size);
        if (r == -ENOENT && missing_ok) {
                log_info("%s does not exist, using built-in defaults.", path);
                return config_parse_string(path, "", 0, ret);
        }
        if (r < 0)
                return log_error_errno(r, "%s: cannot read configuration: %m", path);
        return config_parse_string(path, text, size, ret);
}

Bearer config_bearer_override(const Config *c, const char *ifname)
{
        for (size_t i = 0; i < c->n_bearers; i++)
                if (fnmatch(c->bearers[i].pattern, ifname, 0) == 0)
                        return c->bearers[i].bearer;
        return _BEARER_INVALID;
}

int config_metered_override(const Config *c, const char *ifname)
{
        for (size_t i = 0; i < c->stats.n_metered; i++)
                if (fnmatch(c->stats.metered[i].pattern, ifname, 0) == 0)
                        return c->stats.metered[i].roaming;
        return -ENOENT;
}

int config_roaming_override(const Config *c, const char *ifname)
{
        for (size_t i = 0; i < c->stats.n_roaming; i++)
                if (fnmatch(c->stats.roaming[i].pattern, ifname, 0) == 0)
                        return c->stats.roaming[i].roaming;
        return -ENOENT;
}

const DnsPin *config_dns_pin(const Config *c, const char *ifname)
{
        for (size_t i = 0; i < c->n_dns_pins; i++)
                if (fnmatch(c->dns_pins[i].pattern, ifname, 0) == 0)
                        return &c->dns_pins[i];
        return NULL;
}
