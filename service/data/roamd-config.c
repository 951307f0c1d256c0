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
        c->wifi.timeout_usec = 10 * USEC_PER_SEC;
        c->wifi.signal_interval_usec = 10 * USEC_PER_SEC;
        c->wifi.ping_interval_usec = 30 * USEC_PER_SEC;
        if (!c->wifi.control_dir || !c->wifi.client_dir)
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

static int parse_daemon(Config *c, const char *file, unsigned line, const char *key,
                        const char *value)
{
        if (streq(key, "LogLevel")) {
                int l = log_level_from_string(value);
                if (l < 0)
                        return conf_log_error(file, line,
                                              "Unknown LogLevel \"%s\" (expected emerg, alert, "
                                              "crit, err, warning, notice, info or debug).",
                                              value);
                c->log_level = l;
                return 0;
        }
        if (streq(key, "SysfsPath"))
                return parse_path(file, line, key, value, &c->sysfs_path);
        return conf_log_error(file, line, "Unknown key %s= in section [Daemon].", key);
}

static int parse_dns(Config *c, const char *file, unsigned line, const char *key, const char *value)
{
        if (streq(key, "Sources")) {
                _cleanup_strv_free_ char **l = NULL;
                size_t n = 0;

                if (strv_split(value, " \t,", &l) < 0)
                        return log_oom();
                STRV_FOREACH (s, l) {
                        DnsSource d = dns_source_from_string(*s);
                        if (d < 0 || d == DNS_SOURCE_NONE || d == DNS_SOURCE_CONFIG)
                                return conf_log_error(file, line,
                                                      "Unknown DNS source \"%s\" (expected "
                                                      "resolved, networkmanager, dhcpcd or "
                                                      "resolv.conf).",
                                                      *s);
                        for (size_t i = 0; i < n; i++)
                                if (c->dns_sources[i] == d)
                                        return conf_log_error(
                                            file, line, "DNS source \"%s\" listed twice.", *s);
                        c->dns_sources[n++] = d;
                }
                c->n_dns_sources = n;
                return 0;
        }
        if (streq(key, "DhcpcdLeaseDir"))
                return parse_path(file, line, key, value, &c->dhcpcd_lease_dir);
        if (streq(key, "DhcpcdRADir"))
                return parse_path(file, line, key, value, &c->dhcpcd_ra_dir);
        if (streq(key, "ResolvConf"))
                return parse_path(file, line, key, value, &c->resolv_conf);
        return conf_log_error(file, line, "Unknown key %s= in section [DNS].", key);
}

static int parse_bearers(Config *c, const char *file, unsigned line, const char *key,
                         const char *value)
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

static int parse_link_dns(Config *c, const char *file, unsigned line, const char *key,
                          const char *value)
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

static int parse_probe(Config *c, const char *file, unsigned line, const char *key,
                       const char *value)
{
        ProbeConfig *p = &c->probe;
        uint64_t *dur = NULL;

        if (streq(key, "HttpURL") || streq(key, "HttpsURL")) {
                bool https = streq(key, "HttpsURL");
                if (!valid_url(value, https ? "https" : "http"))
                        return conf_log_error(file, line, "%s= must be an %s:// URL, got \"%s\".",
                                              key, https ? "https" : "http", value);
                if (free_and_strdup(https ? &p->https_url : &p->http_url, value) < 0)
                        return log_oom();
                return 0;
        }
        if (streq(key, "GardenURL")) {
                if (!*value) {
                        free(p->garden_url);
                        p->garden_url = NULL;
                        return 0;
                }
                if (!valid_garden_url(value))
                        return conf_log_error(file, line,
                                              "GardenURL= must be an http:// URL (its host may "
                                              "begin with \"*.\"), got \"%s\".",
                                              value);
                if (free_and_strdup(&p->garden_url, value) < 0)
                        return log_oom();
                return 0;
        }
        if (streq(key, "LargeURL")) {
                if (!*value) {
                        free(p->large_url);
                        p->large_url = NULL;
                        return 0;
                }
                if (!valid_url(value, "http") && !valid_url(value, "https"))
                        return conf_log_error(file, line,
                                              "LargeURL= must be an http:// or https:// URL, "
                                              "got \"%s\".",
                                              value);
                if (free_and_strdup(&p->large_url, value) < 0)
                        return log_oom();
                return 0;
        }
        if (streq(key, "ExpectStatus")) {
                char *end;
                long v = strtol(value, &end, 10);
                if (end == value || *end || v < 200 || v > 299)
                        return conf_log_error(
                            file, line, "ExpectStatus= must be a 2xx status, got \"%s\".", value);
                p->expect_status = v;
                return 0;
        }
        if (streq(key, "ExpectBody")) {
                char *b = NULL;
                if (*value && unescape(value, &b) < 0)
                        return conf_log_error(file, line,
                                              "ExpectBody= has an unknown escape (use \\n, "
                                              "\\t or \\\\).");
                free(p->expect_body);
                p->expect_body = b; /* empty: any body */
                return 0;
        }
        if (streq(key, "ExpectAddresses")) {
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
                                                      "Invalid address \"%s\" in "
                                                      "ExpectAddresses=.",
                                                      *s);
                        }
                        n++;
                }
                free(p->expect_addrs);
                p->expect_addrs = a;
                p->n_expect_addrs = n;
                return 0;
        }
        if (streq(key, "CAFile"))
                return parse_path(file, line, key, value, &p->ca_file);
        if (streq(key, "MaxBodySize")) {
                char *end;
                long v = strtol(value, &end, 10);
                if (end == value || *end || v < 1024 || v > 16 * 1024 * 1024)
                        return conf_log_error(file, line,
                                              "MaxBodySize= must be between 1024 and 16777216 "
                                              "bytes, got \"%s\".",
                                              value);
                p->max_body = (size_t)v;
                return 0;
        }
        if (streq(key, "StallInterval")) {
                uint64_t v;
                /* 0 turns the watch off; more than a minute is no faster than a re-check */
                if (parse_duration(value, &v) < 0 || (v > 0 && v < USEC_PER_SEC / 2) ||
                    v > 60 * USEC_PER_SEC)
                        return conf_log_error(file, line,
                                              "StallInterval= must be 0 (off) or a duration from "
                                              "0.5 to 60 seconds, got \"%s\".",
                                              value);
                p->stall_interval_usec = v;
                return 0;
        }
        if (streq(key, "DNSWatchInterval")) {
                uint64_t v;
                /* 0 turns the look off; under a second would be a query stream, not a look */
                if (parse_duration(value, &v) < 0 || (v > 0 && v < USEC_PER_SEC) ||
                    v > 3600 * USEC_PER_SEC)
                        return conf_log_error(file, line,
                                              "DNSWatchInterval= must be 0 (off) or a duration "
                                              "from 1 to 3600 seconds, got \"%s\".",
                                              value);
                p->dns_watch_interval_usec = v;
                return 0;
        }
        if (streq(key, "Timeout"))
                dur = &p->timeout_usec;
        else if (streq(key, "DNSTimeout"))
                dur = &p->dns_timeout_usec;
        else if (streq(key, "PingTimeout"))
                dur = &p->ping_timeout_usec;
        else if (streq(key, "RecheckInterval"))
                dur = &p->recheck_usec;
        else if (streq(key, "BackoffMin"))
                dur = &p->backoff_min_usec;
        else if (streq(key, "BackoffMax"))
                dur = &p->backoff_max_usec;
        else if (streq(key, "HttpsGraceMin"))
                dur = &p->https_grace_min_usec;
        else if (streq(key, "HttpsGraceMax"))
                dur = &p->https_grace_max_usec;
        else if (streq(key, "StallReprobeMin"))
                dur = &p->stall_reprobe_min_usec;
        if (dur) {
                uint64_t v;
                if (parse_duration(value, &v) < 0 || v == 0)
                        return conf_log_error(file, line,
                                              "%s= must be a positive duration in seconds "
                                              "(\"10\", \"1.5s\", \"500ms\"), got \"%s\".",
                                              key, value);
                *dur = v;
                return 0;
        }
        return conf_log_error(file, line, "Unknown key %s= in section [Probe].", key);
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

static int parse_apps(Config *c, const char *file, unsigned line, const char *key,
                      const char *value)
{
        if (streq(key, "Enforce"))
                return conf_parse_boolean(value, &c->apps.enforce) < 0
                           ? conf_log_error(file, line, "Enforce= must be a boolean, got \"%s\".",
                                            value)
                           : 0;
        if (streq(key, "PolicyDirectory"))
                return parse_path(file, line, key, value, &c->apps.policy_dir);
        if (streq(key, "StateFile"))
                return parse_path(file, line, key, value, &c->apps.state_file);
        if (streq(key, "MaxAppsPerUser"))
                return parse_u32(file, line, key, value, 1, 65536, &c->apps.max_apps_per_user);
        if (streq(key, "DefaultFollows")) {
                DefaultFollows v = default_follows_from_string(value);
                if (v < 0)
                        return conf_log_error(file, line,
                                              "DefaultFollows= must be verdict or kernel, got "
                                              "\"%s\".",
                                              value);
                c->apps.default_follows = v;
                return 0;
        }
        if (streq(key, "SystemCgroups")) {
                char **l = NULL;
                if (strv_split(value, " \t", &l) < 0)
                        return log_oom();
                for (size_t i = 0; l && l[i]; i++)
                        if (l[i][0] != '/' || strstr(l[i], "/../") || strstr(l[i], "//")) {
                                strv_free(l);
                                return conf_log_error(
                                    file, line,
                                    "SystemCgroups= takes absolute cgroup paths "
                                    "(e.g. /system.slice/vpn.service), got \"%s\".",
                                    value);
                        }
                strv_free(c->apps.system_cgroups);
                c->apps.system_cgroups = l;
                return 0;
        }
        return conf_log_error(file, line, "Unknown key %s= in section [Apps].", key);
}

static int parse_wake(Config *c, const char *file, unsigned line, const char *key,
                      const char *value)
{
        uint64_t *dur = NULL;

        if (streq(key, "AtOnce"))
                return parse_u32(file, line, key, value, 1, 64, &c->wake.at_once);
        if (strncmp(key, "AtOnce.", strlen("AtOnce.")) == 0) {
                Bearer b = bearer_from_string(key + strlen("AtOnce."));

                if (b < 0)
                        return conf_log_error(file, line,
                                              "Unknown bearer in %s= (AtOnce.ethernet=, "
                                              "AtOnce.wifi=, ...).",
                                              key);
                return parse_u32(file, line, key, value, 1, 64, &c->wake.at_once_bearer[b]);
        }
        if (streq(key, "SettleSec"))
                dur = &c->wake.settle_usec;
        else if (streq(key, "RestartSec"))
                dur = &c->wake.restart_usec;
        else if (streq(key, "QuietSec"))
                dur = &c->wake.quiet_usec;
        else if (streq(key, "MaxDelaySec"))
                dur = &c->wake.max_delay_usec;
        else if (streq(key, "SlowRTTSec"))
                dur = &c->wake.slow_rtt_usec;
        else
                return conf_log_error(file, line, "Unknown key %s= in section [Wake].", key);
        if (parse_duration(value, dur) < 0)
                return conf_log_error(file, line,
                                      "%s= must be a duration (seconds, or with ms/s), got \"%s\".",
                                      key, value);
        return 0;
}

static int parse_routing(Config *c, const char *file, unsigned line, const char *key,
                         const char *value)
{
        if (streq(key, "FirewallMask")) {
                uint32_t m;
                int r = parse_u32(file, line, key, value, 1, UINT32_MAX, &m);
                if (r < 0)
                        return r;
                if (nft_mark_mask_valid(m) < 0)
                        return conf_log_error(file, line,
                                              "FirewallMask= must be 3 to 7 contiguous bits, got "
                                              "\"%s\".",
                                              value);
                c->apps.mark_mask = m;
                return 0;
        }
        if (streq(key, "TableBase"))
                return parse_u32(file, line, key, value, 1, 0x7fffff00, &c->apps.table_base);
        if (streq(key, "RulePriority"))
                return parse_u32(file, line, key, value, 1, 32000, &c->apps.rule_priority);
        if (streq(key, "PreferOnline")) {
                /* the old spelling of [Apps] DefaultFollows=: yes is verdict, no kernel */
                bool b;
                if (conf_parse_boolean(value, &b) < 0)
                        return conf_log_error(
                            file, line, "PreferOnline= must be a boolean, got \"%s\".", value);
                c->apps.default_follows = b ? DEFAULT_FOLLOWS_VERDICT : DEFAULT_FOLLOWS_KERNEL;
                return 0;
        }
        return conf_log_error(file, line, "Unknown key %s= in section [Routing].", key);
}

static int parse_stats(Config *c, const char *file, unsigned line, const char *key,
                       const char *value)
{
        if (streq(key, "Enable"))
                return conf_parse_boolean(value, &c->stats.enable) < 0
                           ? conf_log_error(file, line, "Enable= must be a boolean, got \"%s\".",
                                            value)
                           : 0;
        if (streq(key, "Directory"))
                return parse_path(file, line, key, value, &c->stats.directory);
        if (streq(key, "PrometheusFile"))
                return parse_path(file, line, key, value, &c->stats.prometheus_file);
        if (streq(key, "RetentionDays"))
                return parse_u32(file, line, key, value, 1, 3660, &c->stats.retention_days);
        if (streq(key, "FlushInterval")) {
                uint64_t v;
                if (parse_duration(value, &v) < 0 || v < 100 * USEC_PER_MSEC ||
                    v > 3600 * USEC_PER_SEC)
                        return conf_log_error(
                            file, line,
                            "FlushInterval= must be a duration from 0.1s to 3600s, "
                            "got \"%s\".",
                            value);
                c->stats.flush_usec = v;
                return 0;
        }
        if (streq(key, "Budget")) {
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
                                r = conf_log_error(file, line, "Budget= for %s on %s set twice.",
                                                   b.app_id, stats_budget_links_to_string(b.links));
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
        if (streq(key, "BudgetWarning")) {
                char buf[16];
                size_t n = strlen(value);
                /* a percentage, the % sign optional */
                if (n > 0 && n < sizeof(buf) && value[n - 1] == '%')
                        n--;
                if (n == 0 || n >= sizeof(buf))
                        return conf_log_error(file, line,
                                              "BudgetWarning= must be a percentage from 1%% to "
                                              "100%%, got \"%s\".",
                                              value);
                memcpy(buf, value, n);
                buf[n] = 0;
                return parse_u32(file, line, key, buf, 1, 100, &c->stats.budget_warn_percent);
        }
        return conf_log_error(file, line, "Unknown key %s= in section [Stats].", key);
}

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

static int parse_roaming(Config *c, const char *file, unsigned line, const char *key,
                         const char *value)
{
        RoamingOverride *n;
        bool b;

        if (!valid_ifname_glob(key))
                return conf_log_error(file, line, "Invalid interface name or pattern \"%s\".", key);
        if (conf_parse_boolean(value, &b) < 0)
                return conf_log_error(file, line, "Roaming for %s must be a boolean, got \"%s\".",
                                      key, value);
        for (size_t i = 0; i < c->stats.n_roaming; i++)
                if (streq(c->stats.roaming[i].pattern, key))
                        return conf_log_error(file, line, "Roaming for %s set twice.", key);
        n = realloc(c->stats.roaming, sizeof(*n) * (c->stats.n_roaming + 1));
        if (!n)
                return log_oom();
        c->stats.roaming = n;
        n[c->stats.n_roaming] = (RoamingOverride){.pattern = strdup(key), .roaming = b};
        if (!n[c->stats.n_roaming].pattern)
                return log_oom();
        c->stats.n_roaming++;
        return 0;
}

static int parse_portal(Config *c, const char *file, unsigned line, const char *key,
                        const char *value)
{
        if (streq(key, "CredentialsFile"))
                return parse_path(file, line, key, value, &c->portal.credentials_file);
        if (streq(key, "AllowPlainHTTPLogin"))
                return conf_parse_boolean(value, &c->portal.allow_http_login) < 0
                           ? conf_log_error(file, line,
                                            "AllowPlainHTTPLogin= must be a boolean, got \"%s\".",
                                            value)
                           : 0;
        if (streq(key, "AllowLoginHosts")) {
                char **l = NULL;
                if (strv_split(value, " \t", &l) < 0)
                        return log_oom();
                for (size_t i = 0; l && l[i]; i++) {
                        for (char *q = l[i]; *q; q++)
                                *q = (char)tolower((unsigned char)*q);
                        if (strpbrk(l[i], "/:@?#") && l[i][0] != '[') {
                                strv_free(l);
                                return conf_log_error(file, line,
                                                      "AllowLoginHosts= takes host names or "
                                                      "addresses, got \"%s\".",
                                                      value);
                        }
                }
                strv_free(c->portal.allow_login_hosts);
                c->portal.allow_login_hosts = l;
                return 0;
        }
        return conf_log_error(file, line, "Unknown key %s= in section [Portal].", key);
}

static int parse_wifi(Config *c, const char *file, unsigned line, const char *key,
                      const char *value)
{
        if (streq(key, "Enable"))
                return conf_parse_boolean(value, &c->wifi.enable) < 0
                           ? conf_log_error(file, line, "Enable= must be a boolean, got \"%s\".",
                                            value)
                           : 0;
        if (streq(key, "ControlDirectory") || streq(key, "ClientDirectory") ||
            streq(key, "GlobalControl")) {
                char **dst = streq(key, "ControlDirectory")  ? &c->wifi.control_dir
                             : streq(key, "ClientDirectory") ? &c->wifi.client_dir
                                                             : &c->wifi.global_control;
                /* A unix socket path holds at most 107 bytes; leave room for the names. */
                if (strlen(value) > 80)
                        return conf_log_error(file, line,
                                              "%s= is too long for a socket path (at most 80 "
                                              "bytes).",
                                              key);
                if (streq(value, "/"))
                        return conf_log_error(file, line, "%s= cannot be /.", key);
                return parse_path(file, line, key, value, dst);
        }
        if (streq(key, "RequestTimeout")) {
                uint64_t v;
                if (parse_duration(value, &v) < 0 || v < 100 * USEC_PER_MSEC ||
                    v > 60 * USEC_PER_SEC)
                        return conf_log_error(file, line,
                                              "RequestTimeout= must be a duration from 100ms to "
                                              "60s, got \"%s\".",
                                              value);
                c->wifi.timeout_usec = v;
                return 0;
        }
        if (streq(key, "SignalInterval")) {
                uint64_t v;
                if (parse_duration(value, &v) < 0 || v < USEC_PER_SEC || v > 600 * USEC_PER_SEC)
                        return conf_log_error(file, line,
                                              "SignalInterval= must be a duration from 1s to "
                                              "600s, got \"%s\".",
                                              value);
                c->wifi.signal_interval_usec = v;
                return 0;
        }
        if (streq(key, "PingInterval")) {
                uint64_t v;
                if (parse_duration(value, &v) < 0 || v < USEC_PER_SEC || v > 600 * USEC_PER_SEC)
                        return conf_log_error(file, line,
                                              "PingInterval= must be a duration from 1s to "
                                              "600s, got \"%s\".",
                                              value);
                c->wifi.ping_interval_usec = v;
                return 0;
        }
        if (streq(key, "DeviceName")) {
                size_t n = strlen(value);
                bool ok = n > 0 && n <= 32;
                for (const char *p = value; ok && *p; p++)
                        ok = (unsigned char)*p >= ' ' && *p != 0x7f && *p != '\'' && *p != '"';
                if (!ok)
                        return conf_log_error(file, line,
                                              "DeviceName= must be 1 to 32 printable characters "
                                              "without quotes, got \"%s\".",
                                              value);
                if (free_and_strdup(&c->wifi.p2p_device_name, value) < 0)
                        return log_oom();
                return 0;
        }
        if (streq(key, "Backend")) {
                /* who roamd joins through: detected (auto), or that owner only */
                if (!streq(value, "auto") && !streq(value, "networkmanager") &&
                    !streq(value, "iwd") && !streq(value, "wpa_supplicant"))
                        return conf_log_error(file, line,
                                              "Backend= must be auto, networkmanager, iwd or "
                                              "wpa_supplicant, got \"%s\".",
                                              value);
                if (free_and_strdup(&c->wifi.backend, streq(value, "auto") ? NULL : value) < 0)
                        return log_oom();
                return 0;
        }
        return conf_log_error(file, line, "Unknown key %s= in section [WiFi].", key);
}

static int parse_bluetooth(Config *c, const char *file, unsigned line, const char *key,
                           const char *value)
{
        uint64_t *dur = NULL, v;

        if (streq(key, "Enable"))
                return conf_parse_boolean(value, &c->bluetooth.enable) < 0
                           ? conf_log_error(file, line, "Enable= must be a boolean, got \"%s\".",
                                            value)
                           : 0;
        /* No BlueZ call waits on a tag's offer (neard is answered at once): up to 10 min. */
        if (streq(key, "NfcOfferTimeout")) {
                if (parse_duration(value, &v) < 0 || v == 0 || v > 600 * USEC_PER_SEC)
                        return conf_log_error(file, line,
                                              "NfcOfferTimeout= must be a duration between 1ms and "
                                              "600s, got \"%s\".",
                                              value);
                c->bluetooth.nfc_offer_usec = v;
                return 0;
        }
        if (streq(key, "QuestionTimeout"))
                dur = &c->bluetooth.question_timeout_usec;
        else if (streq(key, "NfcDiscoveryTimeout"))
                dur = &c->bluetooth.nfc_discovery_usec;
        if (!dur)
                return conf_log_error(file, line, "Unknown key %s= in section [Bluetooth].", key);
        /* BlueZ gives up on an agent after 60 s; a longer wait could never be answered. */
        if (parse_duration(value, &v) < 0 || v == 0 || v > 55 * USEC_PER_SEC)
                return conf_log_error(file, line,
                                      "%s= must be a duration between 1ms and 55s, got \"%s\".",
                                      key, value);
        *dur = v;
        return 0;
}

static int parse_time(Config *c, const char *file, unsigned line, const char *key,
                      const char *value)
{
        if (streq(key, "GateTimeout")) {
                uint64_t v;
                if (parse_duration(value, &v) < 0 || v > 600 * USEC_PER_SEC)
                        return conf_log_error(file, line,
                                              "GateTimeout= must be a duration from 0 to 600s, "
                                              "got \"%s\".",
                                              value);
                c->time.gate_timeout_usec = v;
                return 0;
        }
        if (streq(key, "StateFile"))
                return parse_path(file, line, key, value, &c->time.state_file);
        if (streq(key, "ChronySocket")) {
                if (!*value) { /* off */
                        free(c->time.chrony_socket);
                        c->time.chrony_socket = NULL;
                        return 0;
                }
                if (strlen(value) >= 108) /* sun_path */
                        return conf_log_error(file, line,
                                              "ChronySocket= is longer than a socket path may be.");
                return parse_path(file, line, key, value, &c->time.chrony_socket);
        }
        if (streq(key, "ChronySourceDir") || streq(key, "ChronyCommandSocket")) {
                char **v = streq(key, "ChronySourceDir") ? &c->time.chrony_source_dir
                                                         : &c->time.chrony_command_socket;
                if (!*value) { /* off */
                        free(*v);
                        *v = NULL;
                        return 0;
                }
                /* the command socket: our own socket's path beside it is ~20 bytes longer */
                if (v == &c->time.chrony_command_socket && strlen(value) >= 108 - 24)
                        return conf_log_error(file, line,
                                              "ChronyCommandSocket= is longer than a socket path "
                                              "beside it may be.");
                return parse_path(file, line, key, value, v);
        }
        if (streq(key, "GpsdAddress")) {
                struct sockaddr_storage sa;
                socklen_t len;
                char *v = NULL;

                if (*value) { /* empty: off */
                        if (gpsd_address_parse(value, &sa, &len) < 0)
                                return conf_log_error(file, line,
                                                      "GpsdAddress= must be a numeric "
                                                      "address:port such as 127.0.0.1:2947 or "
                                                      "[::1]:2947, got \"%s\".",
                                                      value);
                        v = strdup(value);
                        if (!v)
                                return -ENOMEM;
                }
                free(c->time.gpsd_address);
                c->time.gpsd_address = v;
                return 0;
        }
        if (streq(key, "SetClock")) {
                TimeSetClock v = time_set_clock_from_string(value);
                if (v < 0)
                        return conf_log_error(
                            file, line, "SetClock= must be yes, no or auto, got \"%s\".", value);
                c->time.set_clock = v;
                return 0;
        }
        return conf_log_error(file, line, "Unknown key %s= in section [Time].", key);
}

static int parse_firewall(Config *c, const char *file, unsigned line, const char *key,
                          const char *value)
{
        if (streq(key, "Enable"))
                return conf_parse_boolean(value, &c->firewall.enable) < 0
                           ? conf_log_error(file, line, "Enable= must be a boolean, got \"%s\".",
                                            value)
                           : 0;
        if (streq(key, "NetworksDirectory"))
                return parse_path(file, line, key, value, &c->firewall.networks_dir);
        if (streq(key, "ProfilesDirectory"))
                return parse_path(file, line, key, value, &c->firewall.profiles_dir);
        if (streq(key, "StateFile"))
                return parse_path(file, line, key, value, &c->firewall.state_file);
        if (streq(key, "SSH")) {
                static const char *const words[_FIREWALL_SSH_MAX] = {"always", "trusted", "never"};
                for (int i = 0; i < _FIREWALL_SSH_MAX; i++)
                        if (streq(value, words[i])) {
                                c->firewall.ssh = (FirewallSsh)i;
                                return 0;
                        }
                return conf_log_error(file, line,
                                      "SSH= must be always, trusted or never, got \"%s\".", value);
        }
        return conf_log_error(file, line, "Unknown key %s= in section [Firewall].", key);
}

static int config_assign(const char *file, unsigned line, const char *section, const char *key,
                         const char *value, void *userdata)
{
        Config *c = userdata;

        if (streq(section, "Daemon"))
                return parse_daemon(c, file, line, key, value);
        if (streq(section, "DNS"))
                return parse_dns(c, file, line, key, value);
        if (streq(section, "Bearers"))
                return parse_bearers(c, file, line, key, value);
        if (streq(section, "LinkDNS"))
                return parse_link_dns(c, file, line, key, value);
        if (streq(section, "Probe"))
                return parse_probe(c, file, line, key, value);
        if (streq(section, "Apps"))
                return parse_apps(c, file, line, key, value);
        if (streq(section, "Routing"))
                return parse_routing(c, file, line, key, value);
        if (streq(section, "Stats"))
                return parse_stats(c, file, line, key, value);
        if (streq(section, "Roaming"))
                return parse_roaming(c, file, line, key, value);
        if (streq(section, "Metered"))
                return parse_override(&c->stats.metered, &c->stats.n_metered, "Metered", file, line,
                                      key, value);
        if (streq(section, "Portal"))
                return parse_portal(c, file, line, key, value);
        if (streq(section, "WiFi"))
                return parse_wifi(c, file, line, key, value);
        if (streq(section, "Bluetooth"))
                return parse_bluetooth(c, file, line, key, value);
        if (streq(section, "Firewall"))
                return parse_firewall(c, file, line, key, value);
        if (streq(section, "Time"))
                return parse_time(c, file, line, key, value);
        if (streq(section, "Wake"))
                return parse_wake(c, file, line, key, value);
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
