/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "roam-conf.h"
#include "roam-log.h"
#include "roam-macro.h"
#include "roam-util.h"
#include "roam-app-id.h"
#include "roamd-config.h"
#include "roamd-firewall-conf.h"

#define FW_FILE_MAX (1024 * 1024)

static const char *const action_names[_FW_ACTION_MAX] = {
    [FW_ACTION_ACCEPT] = "accept",
    [FW_ACTION_DROP] = "drop",
    [FW_ACTION_REJECT] = "reject",
};
static const char *const direction_names[_FW_DIRECTION_MAX] = {
    [FW_DIRECTION_IN] = "in",
    [FW_DIRECTION_OUT] = "out",
};
static const char *const proto_names[_FW_PROTO_MAX] = {
    [FW_PROTO_ANY] = "any",   [FW_PROTO_TCP] = "tcp",       [FW_PROTO_UDP] = "udp",
    [FW_PROTO_ICMP] = "icmp", [FW_PROTO_ICMPV6] = "icmpv6",
};
static const char *const source_names[_FW_SOURCE_MAX] = {
    [FW_SOURCE_CONFIG] = "config",
    [FW_SOURCE_USER] = "user",
    [FW_SOURCE_DEFAULT] = "default",
    [FW_SOURCE_TUNNEL] = "tunnel",
};

static int table_lookup(const char *const *t, int n, const char *s)
{
        for (int i = 0; s && i < n; i++)
                if (streq(t[i], s))
                        return i;
        return -EINVAL;
}

const char *fw_action_to_string(FwAction a)
{
        return a >= 0 && a < _FW_ACTION_MAX ? action_names[a] : NULL;
}
FwAction fw_action_from_string(const char *s)
{
        return (FwAction)table_lookup(action_names, _FW_ACTION_MAX, s);
}
const char *fw_direction_to_string(FwDirection d)
{
        return d >= 0 && d < _FW_DIRECTION_MAX ? direction_names[d] : NULL;
}
FwDirection fw_direction_from_string(const char *s)
{
        return (FwDirection)table_lookup(direction_names, _FW_DIRECTION_MAX, s);
}
const char *fw_proto_to_string(FwProto p)
{
        return p >= 0 && p < _FW_PROTO_MAX ? proto_names[p] : NULL;
}
FwProto fw_proto_from_string(const char *s)
{
        return (FwProto)table_lookup(proto_names, _FW_PROTO_MAX, s);
}
const char *fw_source_to_string(FwSource s)
{
        return s >= 0 && s < _FW_SOURCE_MAX ? source_names[s] : NULL;
}
FwSource fw_source_from_string(const char *s)
{
        return (FwSource)table_lookup(source_names, _FW_SOURCE_MAX, s);
}

static const char *const builtin_locations[] = {FW_LOCATION_HOME, FW_LOCATION_WORK,
                                                FW_LOCATION_PUBLIC, FW_LOCATION_UNTRUSTED};

bool fw_location_name_valid(const char *s)
{
        size_t n = s ? strlen(s) : 0;

        if (n == 0 || n > FW_LOCATION_NAME_MAX)
                return false;
        for (size_t i = 0; i < n; i++) {
                char c = s[i];
                if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                      (i > 0 && (c == '-' || c == '_'))))
                        return false;
        }
        return true;
}

bool fw_model_has_location(const FwModel *m, const char *location)
{
        return strv_contains(m->locations, location);
}

static int add_location(FwModel *m, const char *location)
{
        if (fw_model_has_location(m, location))
                return 0;
        return strv_extend(&m->locations, location);
}

int fw_model_init(FwModel *m)
{
        *m = (FwModel){};
        for (size_t i = 0; i < ELEMENTSOF(builtin_locations); i++)
                if (add_location(m, builtin_locations[i]) < 0)
                        return -ENOMEM;
        return 0;
}

static void rule_done(FwRule *r)
{
        free(r->id);
        free(r->source);
        strv_free(r->locations);
        free(r->link);
        free(r->app);
}

void fw_model_done(FwModel *m)
{
        for (size_t i = 0; i < m->n_nets; i++) {
                free(m->nets[i].location);
                free(m->nets[i].source);
                for (int k = 0; k < _NETID_FACT_MAX; k++)
                        free(m->nets[i].match[k]);
        }
        free(m->nets);
        for (size_t i = 0; i < m->n_rules; i++)
                rule_done(&m->rules[i]);
        free(m->rules);
        for (size_t i = 0; i < m->n_policies; i++) {
                free(m->policies[i].location);
                free(m->policies[i].source);
        }
        free(m->policies);
        strv_free(m->locations);
        *m = (FwModel){};
}

/* ---- parsing ---- */

typedef struct ParseCtx {
        FwModel *m;
        char **first_error;
        const char *path;
        const char *base;
        /* the section being filled */
        enum { SEC_NONE, SEC_NETWORK, SEC_PROFILE, SEC_RULE } sec;
        unsigned sec_line;
        bool sec_bad;
        char **profile_locations; /* networks: unused */
        FwAction profile_inbound;
        bool profile_has_inbound;
        unsigned profile_line;
} ParseCtx;

static void on_conf_error(const char *file, unsigned line, const char *message, void *userdata)
{
        char **first = userdata;

        if (*first)
                return;
        if (asprintf(first, "%s:%u: %s", file, line, message) < 0)
                *first = NULL;
}

static char *source_of(const char *path, unsigned line)
{
        char *s;
        return asprintf(&s, "%s:%u", path, line) < 0 ? NULL : s;
}

/* A section ended (next header or end of file): checks it is complete. */
static int network_end(ParseCtx *c)
{
        FwNetwork *n;
        bool any = false;

        if (c->sec != SEC_NETWORK || c->m->n_nets == 0 || c->sec_bad)
                return 0;
        n = &c->m->nets[c->m->n_nets - 1];
        for (int k = 0; k < _NETID_FACT_MAX; k++)
                any = any || n->match[k];
        if (!n->location)
                return conf_log_error(c->path, c->sec_line, "[Network] needs Location=.");
        if (!any)
                return conf_log_error(c->path, c->sec_line,
                                      "[Network] needs at least one of SSID=, BSSID=, "
                                      "GatewayMAC=, DHCPServer=, Domain=, Interface=, Bearer=: "
                                      "without one it would match every network.");
        return 0;
}

static int rule_end(ParseCtx *c)
{
        FwRule *r;

        if (c->sec != SEC_RULE || c->m->n_rules == 0 || c->sec_bad)
                return 0;
        r = &c->m->rules[c->m->n_rules - 1];
        if (r->port_min && r->proto != FW_PROTO_TCP && r->proto != FW_PROTO_UDP)
                return conf_log_error(c->path, c->sec_line,
                                      "Port= needs Protocol=tcp or Protocol=udp.");
        if (r->has_addr && r->family != AF_UNSPEC && r->family != r->addr.family)
                return conf_log_error(c->path, c->sec_line,
                                      "Address= is of another family than Family=.");
        if (r->has_addr)
                r->family = r->addr.family;
        if ((r->proto == FW_PROTO_ICMP && r->family == AF_INET6) ||
            (r->proto == FW_PROTO_ICMPV6 && r->family == AF_INET))
                return conf_log_error(c->path, c->sec_line, "Protocol=%s cannot match Family=%s.",
                                      fw_proto_to_string(r->proto),
                                      r->family == AF_INET ? "ipv4" : "ipv6");
        if (r->proto == FW_PROTO_ICMP)
                r->family = AF_INET;
        if (r->proto == FW_PROTO_ICMPV6)
                r->family = AF_INET6;
        return 0;
}

static int section_end(ParseCtx *c)
{
        return c->sec == SEC_NETWORK ? network_end(c) : c->sec == SEC_RULE ? rule_end(c) : 0;
}

static int on_section(const char *file, unsigned line, const char *section, void *userdata,
                      bool networks)
{
        ParseCtx *c = userdata;
        int r = section_end(c);

        c->sec_line = line;
        c->sec_bad = false;
        if (networks && streq(section, "Network")) {
                FwNetwork *n = realloc(c->m->nets, sizeof(FwNetwork) * (c->m->n_nets + 1));
                if (!n)
                        return log_oom();
                c->m->nets = n;
                n[c->m->n_nets] = (FwNetwork){.source = source_of(file, line)};
                if (!n[c->m->n_nets].source)
                        return log_oom();
                c->m->n_nets++;
                c->sec = SEC_NETWORK;
                return r;
        }
        if (!networks && streq(section, "Profile")) {
                if (c->profile_line)
                        r = conf_log_error(file, line,
                                           "A second [Profile]: one profile per file (the "
                                           "first is at line %u).",
                                           c->profile_line);
                c->profile_line = line;
                c->sec = SEC_PROFILE;
                return r;
        }
        if (!networks && streq(section, "Rule")) {
                FwRule *n;
                char *base_line;

                c->sec = SEC_RULE;
                if (!c->profile_locations) {
                        c->sec_bad = true;
                        return conf_log_error(file, line,
                                              "[Rule] before a [Profile] with Location=: a rule "
                                              "must say where it applies.");
                }
                n = realloc(c->m->rules, sizeof(FwRule) * (c->m->n_rules + 1));
                if (!n)
                        return log_oom();
                c->m->rules = n;
                if (asprintf(&base_line, "%s:%u", c->base, line) < 0)
                        return log_oom();
                n[c->m->n_rules] = (FwRule){
                    .id = base_line,
                    .source = source_of(file, line),
                    .locations = strv_copy(c->profile_locations),
                    .direction = FW_DIRECTION_IN,
                    .action = FW_ACTION_ACCEPT,
                    .proto = FW_PROTO_ANY,
                    .family = AF_UNSPEC,
                    .bearer = _BEARER_INVALID,
                };
                c->m->n_rules++;
                if (!n[c->m->n_rules - 1].source || !n[c->m->n_rules - 1].locations)
                        return log_oom();
                return r;
        }
        c->sec = SEC_NONE;
        c->sec_bad = true;
        return conf_log_error(file, line, "Unknown section [%s]; this file takes %s.", section,
                              networks ? "[Network]" : "[Profile] and [Rule]");
}

static int on_section_networks(const char *file, unsigned line, const char *section, void *userdata)
{
        return on_section(file, line, section, userdata, true);
}

static int on_section_profile(const char *file, unsigned line, const char *section, void *userdata)
{
        return on_section(file, line, section, userdata, false);
}

static bool mac_valid(const char *s)
{
        unsigned b[6];
        char end;

        return strlen(s) == 17 && sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3],
                                         &b[4], &b[5], &end) == 6;
}

static int set_str(char **dst, const char *v)
{
        char *n = strdup(v);
        if (!n)
                return log_oom();
        free(*dst);
        *dst = n;
        return 0;
}

static void lowercase(char *s)
{
        for (; s && *s; s++)
                if (*s >= 'A' && *s <= 'Z')
                        *s = (char)(*s - 'A' + 'a');
}

static int location_value(ParseCtx *c, unsigned line, const char *key, const char *v)
{
        if (!fw_location_name_valid(v))
                return conf_log_error(c->path, line,
                                      "%s=%s: a location is 1 to %d characters of a-z, 0-9, - "
                                      "and _ (home, work, public, untrusted or a name of yours).",
                                      key, v, FW_LOCATION_NAME_MAX);
        return add_location(c->m, v) < 0 ? log_oom() : 0;
}

static int on_assign_networks(const char *file, unsigned line, const char *section, const char *key,
                              const char *value, void *userdata)
{
        static const struct {
                const char *key;
                NetIdFact fact;
        } keys[] = {
            {"SSID", NETID_SSID},
            {"BSSID", NETID_BSSID},
            {"GatewayMAC", NETID_GATEWAY_MAC},
            {"DHCPServer", NETID_DHCP_SERVER},
            {"Domain", NETID_DOMAIN},
            {"Interface", NETID_INTERFACE},
            {"Bearer", NETID_BEARER},
        };
        ParseCtx *c = userdata;
        FwNetwork *n;
        int r;

        if (c->sec != SEC_NETWORK || c->sec_bad)
                return c->sec_bad ? -EINVAL
                                  : conf_log_error(file, line, "%s= outside [Network].", key);
        n = &c->m->nets[c->m->n_nets - 1];
        if (streq(key, "Location")) {
                r = location_value(c, line, key, value);
                return r < 0 ? r : set_str(&n->location, value);
        }
        for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
                NetIdFact f = keys[i].fact;
                if (!streq(key, keys[i].key))
                        continue;
                if (!*value)
                        return conf_log_error(file, line, "%s= is empty.", key);
                if ((f == NETID_BSSID || f == NETID_GATEWAY_MAC) && !mac_valid(value))
                        return conf_log_error(file, line,
                                              "%s=%s is not a MAC address (six hex pairs "
                                              "separated by colons).",
                                              key, value);
                if (f == NETID_DHCP_SERVER) {
                        IpAddr a;
                        if (ip_addr_parse(value, &a) < 0)
                                return conf_log_error(file, line,
                                                      "DHCPServer=%s is not an address.", value);
                }
                if (f == NETID_BEARER && bearer_from_string(value) < 0)
                        return conf_log_error(file, line, "Bearer=%s is not a bearer.", value);
                r = set_str(&n->match[f], value);
                if (r >= 0 && (f == NETID_BSSID || f == NETID_GATEWAY_MAC))
                        lowercase(n->match[f]);
                return r;
        }
        return conf_log_error(file, line, "Unknown key %s= in section [Network].", key);
}

static int parse_port(const char *file, unsigned line, const char *value, FwRule *r)
{
        unsigned long lo, hi;
        char *end;

        errno = 0;
        lo = strtoul(value, &end, 10);
        hi = lo;
        if (end != value && *end == '-') {
                const char *p = end + 1;
                hi = strtoul(p, &end, 10);
                if (end == p)
                        hi = 0;
        }
        if (errno != 0 || end == value || *end || value[0] == '-' || value[0] == '+' || lo < 1 ||
            hi > 65535 || lo > hi)
                return conf_log_error(file, line,
                                      "Port=%s: a port is 1 to 65535, a range LOW-HIGH with LOW "
                                      "<= HIGH.",
                                      value);
        r->port_min = (uint16_t)lo;
        r->port_max = (uint16_t)hi;
        return 0;
}

static int parse_prefix(const char *value, NftPrefix *ret)
{
        char buf[INET6_ADDRSTRLEN + 8], *slash, *end;
        unsigned long len;
        int family;

        if (strlen(value) >= sizeof(buf))
                return -EINVAL;
        strcpy(buf, value);
        slash = strchr(buf, '/');
        if (slash)
                *slash = 0;
        family = strchr(buf, ':') ? AF_INET6 : AF_INET;
        *ret = (NftPrefix){.family = family};
        if (inet_pton(family, buf, &ret->addr) != 1)
                return -EINVAL;
        len = family == AF_INET ? 32 : 128;
        if (slash) {
                errno = 0;
                len = strtoul(slash + 1, &end, 10);
                if (errno || end == slash + 1 || *end || len > (family == AF_INET ? 32u : 128u))
                        return -EINVAL;
        }
        ret->prefixlen = (unsigned)len;
        /* host bits set (192.0.2.1/24) are a mistake worth a word, not a silent mask */
        uint8_t *a = (uint8_t *)&ret->addr;
        for (unsigned bit = ret->prefixlen; bit < (family == AF_INET ? 32u : 128u); bit++)
                if (a[bit / 8] & (0x80 >> (bit % 8)))
                        return -EDOM;
        return 0;
}

static int on_assign_rule(ParseCtx *c, unsigned line, const char *key, const char *value)
{
        FwRule *r = &c->m->rules[c->m->n_rules - 1];
        const char *file = c->path;
        int k;

        if (streq(key, "Direction")) {
                k = fw_direction_from_string(value);
                if (k < 0)
                        return conf_log_error(file, line, "Direction=%s: in or out.", value);
                r->direction = (FwDirection)k;
                return 0;
        }
        if (streq(key, "Action")) {
                k = fw_action_from_string(value);
                if (k < 0)
                        return conf_log_error(file, line, "Action=%s: accept, drop or reject.",
                                              value);
                r->action = (FwAction)k;
                return 0;
        }
        if (streq(key, "Protocol")) {
                k = fw_proto_from_string(value);
                if (k < 0)
                        return conf_log_error(file, line,
                                              "Protocol=%s: tcp, udp, icmp, icmpv6 or any.", value);
                r->proto = (FwProto)k;
                return 0;
        }
        if (streq(key, "Port"))
                return parse_port(file, line, value, r);
        if (streq(key, "Family")) {
                if (streq(value, "ipv4"))
                        r->family = AF_INET;
                else if (streq(value, "ipv6"))
                        r->family = AF_INET6;
                else if (streq(value, "any"))
                        r->family = AF_UNSPEC;
                else
                        return conf_log_error(file, line, "Family=%s: ipv4, ipv6 or any.", value);
                return 0;
        }
        if (streq(key, "Address")) {
                k = parse_prefix(value, &r->addr);
                if (k == -EDOM)
                        return conf_log_error(file, line,
                                              "Address=%s has bits set after the prefix length "
                                              "(write the network address).",
                                              value);
                if (k < 0)
                        return conf_log_error(file, line,
                                              "Address=%s is not an address or ADDRESS/PREFIXLEN.",
                                              value);
                r->has_addr = true;
                return 0;
        }
        if (streq(key, "Link")) {
                if (!*value || strlen(value) >= 16 || strchr(value, '/') || strchr(value, ' '))
                        return conf_log_error(file, line, "Link=%s is not an interface name.",
                                              value);
                return set_str(&r->link, value);
        }
        if (streq(key, "Bearer")) {
                k = bearer_from_string(value);
                if (k < 0)
                        return conf_log_error(file, line, "Bearer=%s is not a bearer.", value);
                r->bearer = (Bearer)k;
                return 0;
        }
        if (streq(key, "App")) {
                if (!app_id_is_valid(value))
                        return conf_log_error(file, line, "App=%s is not an app id.", value);
                return set_str(&r->app, value);
        }
        return conf_log_error(file, line, "Unknown key %s= in section [Rule].", key);
}

static int on_assign_profile(const char *file, unsigned line, const char *section, const char *key,
                             const char *value, void *userdata)
{
        ParseCtx *c = userdata;

        if (c->sec_bad)
                return -EINVAL;
        if (c->sec == SEC_RULE)
                return on_assign_rule(c, line, key, value);
        if (c->sec != SEC_PROFILE)
                return conf_log_error(file, line, "%s= outside [Profile] and [Rule].", key);
        if (streq(key, "Location")) {
                _cleanup_strv_free_ char **l = NULL;
                if (strv_split(value, " \t", &l) < 0)
                        return log_oom();
                if (!l || !l[0])
                        return conf_log_error(file, line, "Location= is empty.");
                STRV_FOREACH (p, l) {
                        int r = location_value(c, line, key, *p);
                        if (r < 0)
                                return r;
                }
                strv_free(c->profile_locations);
                c->profile_locations = TAKE_PTR(l);
                return 0;
        }
        if (streq(key, "Inbound")) {
                int k = fw_action_from_string(value);
                if (k != FW_ACTION_DROP && k != FW_ACTION_REJECT)
                        return conf_log_error(
                            file, line, "Inbound=%s: drop or reject (what is not matched).", value);
                c->profile_inbound = (FwAction)k;
                c->profile_has_inbound = true;
                return 0;
        }
        return conf_log_error(file, line, "Unknown key %s= in section [Profile].", key);
}

static int parse_common(const char *path, const char *text, size_t size, FwModel *m,
                        char **first_error, bool networks)
{
        ParseCtx c = {.m = m, .first_error = first_error, .path = path};
        unsigned errors = 0;
        int r;

        c.base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
        conf_set_error_hook(on_conf_error, first_error);
        r = conf_parse_string_full(path, text, size,
                                   networks ? on_section_networks : on_section_profile,
                                   networks ? on_assign_networks : on_assign_profile, &c, &errors);
        if (section_end(&c) < 0)
                r = -EINVAL;
        if (!networks && c.profile_has_inbound && r >= 0) {
                STRV_FOREACH (p, c.profile_locations) {
                        FwPolicy *n = realloc(m->policies, sizeof(FwPolicy) * (m->n_policies + 1));
                        if (!n) {
                                r = log_oom();
                                break;
                        }
                        m->policies = n;
                        n[m->n_policies] = (FwPolicy){.location = strdup(*p),
                                                      .inbound = c.profile_inbound,
                                                      .source = source_of(path, c.profile_line)};
                        m->n_policies++;
                }
        }
        strv_free(c.profile_locations);
        conf_set_error_hook(NULL, NULL);
        return r < 0 ? r : 0;
}

int fw_networks_parse(const char *path, const char *text, size_t size, FwModel *m,
                      char **first_error)
{
        return parse_common(path, text, size, m, first_error, true);
}

int fw_profile_parse(const char *path, const char *text, size_t size, FwModel *m,
                     char **first_error)
{
        return parse_common(path, text, size, m, first_error, false);
}

/* Two rules with the same match: the first always decides. With the same action the second is
 * only redundant; with another action the file says two things. */
static bool same_match(const FwRule *a, const FwRule *b)
{
        return a->direction == b->direction && a->proto == b->proto && a->port_min == b->port_min &&
               a->port_max == b->port_max && a->family == b->family && a->has_addr == b->has_addr &&
               (!a->has_addr || memcmp(&a->addr, &b->addr, sizeof(a->addr)) == 0) &&
               streq_ptr(a->link, b->link) && a->bearer == b->bearer && streq_ptr(a->app, b->app);
}

int fw_model_check(const FwModel *m, char **first_error)
{
        int r = 0;

        conf_set_error_hook(on_conf_error, first_error);
        for (size_t i = 0; i < m->n_rules; i++)
                for (size_t j = 0; j < i; j++) {
                        const FwRule *a = &m->rules[j], *b = &m->rules[i];
                        const char *shared = NULL;
                        if (a->action == b->action || !same_match(a, b))
                                continue;
                        STRV_FOREACH (p, b->locations)
                                if (strv_contains(a->locations, *p)) {
                                        shared = *p;
                                        break;
                                }
                        if (!shared)
                                continue;
                        const char *colon = strrchr(b->source, ':');
                        _cleanup_free_ char *desc = fw_rule_describe(b);
                        r = conf_log_error(
                            b->source ? strndupa(b->source, (size_t)(colon - b->source)) : "?",
                            (unsigned)atoi(colon + 1),
                            "%s %s contradicts %s (%s) in location %s: the same packets, "
                            "another action; the first rule would always decide.",
                            fw_action_to_string(b->action), desc ? desc : "", a->source,
                            fw_action_to_string(a->action), shared);
                        break;
                }
        conf_set_error_hook(NULL, NULL);
        return r;
}

static int conf_filter(const struct dirent *d)
{
        size_t n = strlen(d->d_name);
        return d->d_name[0] != '.' && n > 5 && streq(d->d_name + n - 5, ".conf");
}

static int load_dir(const char *dir, FwModel *m, char **first_error, bool networks)
{
        struct dirent **names = NULL;
        int n, r = 0;

        if (!dir)
                return 0;
        n = scandir(dir, &names, conf_filter, alphasort);
        if (n < 0)
                return errno == ENOENT ? 0 : -errno;
        for (int i = 0; i < n; i++) {
                _cleanup_free_ char *path = NULL, *text = NULL;
                size_t size;
                int k;

                if (r >= 0 || r == -EINVAL) {
                        if (asprintf(&path, "%s/%s", dir, names[i]->d_name) < 0)
                                k = -ENOMEM;
                        else if ((k = read_full_file(path, FW_FILE_MAX, &text, &size)) < 0) {
                                if (!*first_error && asprintf(first_error, "%s: cannot read: %s",
                                                              path, strerror(-k)) < 0)
                                        *first_error = NULL;
                                log_error_errno(k, "%s: cannot read: %m", path);
                                k = -EINVAL;
                        } else
                                k = networks ? fw_networks_parse(path, text, size, m, first_error)
                                             : fw_profile_parse(path, text, size, m, first_error);
                        if (k < 0 && (r >= 0 || k != -EINVAL))
                                r = k;
                }
                free(names[i]);
        }
        free(names);
        return r;
}

int fw_model_load(const char *networks_dir, const char *profiles_dir, FwModel *ret,
                  char **first_error)
{
        FwModel m;
        int r;

        r = fw_model_init(&m);
        if (r >= 0)
                r = load_dir(networks_dir, &m, first_error, true);
        if (r >= 0 || r == -EINVAL) {
                int k = load_dir(profiles_dir, &m, first_error, false);
                if (k < 0 && r >= 0)
                        r = k;
        }
        if (r >= 0)
                r = fw_model_check(&m, first_error);
        if (r < 0) {
                fw_model_done(&m);
                return r;
        }
        *ret = m;
        return 0;
}

/* ---- evaluation ---- */

const FwNetwork *fw_model_match(const FwModel *m, const NetIdFacts *f, char **ret_reason)
{
        for (size_t i = 0; i < m->n_nets; i++) {
                const FwNetwork *n = &m->nets[i];
                bool ok = true;

                for (int k = 0; k < _NETID_FACT_MAX && ok; k++)
                        if (n->match[k]) {
                                const char *v = f->fact[k];
                                ok = v && (k == NETID_BSSID || k == NETID_GATEWAY_MAC ||
                                                   k == NETID_DOMAIN
                                               ? strcasecmp(v, n->match[k]) == 0
                                               : streq(v, n->match[k]));
                        }
                if (!ok)
                        continue;
                if (ret_reason) {
                        char *buf = NULL;
                        size_t size = 0;
                        FILE *out = open_memstream(&buf, &size);
                        bool first = true;
                        if (!out)
                                return n;
                        for (int k = 0; k < _NETID_FACT_MAX; k++)
                                if (n->match[k]) {
                                        fprintf(out, "%s%s \"%s\"", first ? "" : " and ",
                                                netid_fact_to_string(k), f->fact[k]);
                                        first = false;
                                }
                        fprintf(out, " matched %s", n->source);
                        if (fclose(out) == 0)
                                *ret_reason = buf;
                        else
                                free(buf);
                }
                return n;
        }
        return NULL;
}

FwAction fw_model_inbound_default(const FwModel *m, const char *location)
{
        /* the last profile that says wins, like later drop-ins */
        for (size_t i = m->n_policies; i > 0; i--)
                if (streq(m->policies[i - 1].location, location))
                        return m->policies[i - 1].inbound;
        /* a person at home or work expects "connection refused", not a hang; elsewhere the
         * machine stays silent */
        if (streq(location, FW_LOCATION_HOME) || streq(location, FW_LOCATION_WORK))
                return FW_ACTION_REJECT;
        return FW_ACTION_DROP;
}

bool fw_rule_applies(const FwRule *r, const char *location, const char *ifname, Bearer b)
{
        return strv_contains(r->locations, location) && (!r->link || streq_ptr(r->link, ifname)) &&
               (r->bearer < 0 || r->bearer == b);
}

char *fw_rule_describe(const FwRule *r)
{
        char *buf = NULL, addr[INET6_ADDRSTRLEN] = "";
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        if (!f)
                return NULL;
        fputs(fw_proto_to_string(r->proto), f);
        if (r->port_min == r->port_max && r->port_min)
                fprintf(f, " %u", r->port_min);
        else if (r->port_min)
                fprintf(f, " %u-%u", r->port_min, r->port_max);
        if (r->family != AF_UNSPEC && !r->has_addr)
                fputs(r->family == AF_INET ? " ipv4" : " ipv6", f);
        if (r->has_addr) {
                inet_ntop(r->addr.family, &r->addr.addr, addr, sizeof(addr));
                fprintf(f, " %s %s/%u", r->direction == FW_DIRECTION_IN ? "from" : "to", addr,
                        r->addr.prefixlen);
        }
        if (r->link)
                fprintf(f, " link %s", r->link);
        if (r->bearer >= 0)
                fprintf(f, " bearer %s", bearer_to_string(r->bearer));
        if (r->app)
                fprintf(f, " app %s", r->app);
        if (fclose(f) != 0) {
                free(buf);
                return NULL;
        }
        return buf;
}

/* firewalld's zones (config/zones/{home,work,public}.xml) and services (config/services/
 * {mdns,netbios-ns,samba-client,dhcpv6-client}.xml): home lets in mDNS, Samba's browsing and
 * DHCPv6; work and public DHCPv6 alone; untrusted (and a location of your own) nothing but the
 * built-ins of every link. A profile's rule comes first and may close any of them. */
#define SVC_MDNS  "mdns: udp 5353 to 224.0.0.251, ff02::fb (printers, shares, Avahi, Bonjour)"
#define SVC_SAMBA "samba-client: udp 137, 138 (Windows/Samba network browsing)"
#define SVC_DHCP6 "dhcpv6-client: udp 546 to fe80::/64 (DHCPv6 from any port)"
static const FwService services_home[] = {
    {"built-in:mdns", SVC_MDNS, FW_PROTO_UDP, 5353, AF_INET, "224.0.0.251", 32},
    {"built-in:mdns", SVC_MDNS, FW_PROTO_UDP, 5353, AF_INET6, "ff02::fb", 128},
    {"built-in:samba-client", SVC_SAMBA, FW_PROTO_UDP, 137, AF_UNSPEC, NULL, 0},
    {"built-in:samba-client", SVC_SAMBA, FW_PROTO_UDP, 138, AF_UNSPEC, NULL, 0},
    {"built-in:dhcpv6-client", SVC_DHCP6, FW_PROTO_UDP, 546, AF_INET6, "fe80::", 64},
};
static const FwService services_public[] = {
    {"built-in:dhcpv6-client", SVC_DHCP6, FW_PROTO_UDP, 546, AF_INET6, "fe80::", 64},
};

const FwService *fw_location_service(const char *location, size_t k)
{
        if (streq_ptr(location, FW_LOCATION_HOME))
                return k < ELEMENTSOF(services_home) ? &services_home[k] : NULL;
        if (streq_ptr(location, FW_LOCATION_WORK) || streq_ptr(location, FW_LOCATION_PUBLIC))
                return k < ELEMENTSOF(services_public) ? &services_public[k] : NULL;
        return NULL;
}

int fw_model_check_inbound(const FwModel *m, const char *location, const char *ifname, Bearer b,
                           bool ssh_open, FwProto proto, uint16_t port, const char *app,
                           FwCheck *ret)
{
        if (proto != FW_PROTO_TCP && proto != FW_PROTO_UDP)
                return -EINVAL;
        *ret = (FwCheck){};
        /* the built-in DHCP client rules come before the links' rules */
        if (proto == FW_PROTO_UDP && (port == 68 || port == 546)) {
                *ret = (FwCheck){true, NULL, "built-in:dhcp", FW_ACTION_ACCEPT};
                return 0;
        }
        for (size_t i = 0; location && i < m->n_rules; i++) {
                const FwRule *r = &m->rules[i];
                if (r->direction != FW_DIRECTION_IN || !fw_rule_applies(r, location, ifname, b))
                        continue;
                if (r->proto != FW_PROTO_ANY && r->proto != proto)
                        continue;
                if (r->port_min && (port < r->port_min || port > r->port_max))
                        continue;
                if (r->app && !streq_ptr(r->app, app))
                        continue;
                *ret = (FwCheck){r->action == FW_ACTION_ACCEPT, r, NULL, r->action};
                return 0;
        }
        for (size_t k = 0; location; k++) {
                const FwService *s = fw_location_service(location, k);
                if (!s)
                        break;
                if (s->proto == proto && s->port == port) {
                        *ret = (FwCheck){true, NULL, s->id, FW_ACTION_ACCEPT};
                        return 0;
                }
        }
        if (location && ssh_open && proto == FW_PROTO_TCP && port == 22) {
                *ret = (FwCheck){true, NULL, "built-in:ssh", FW_ACTION_ACCEPT};
                return 0;
        }
        ret->builtin = "built-in:default";
        ret->action = location ? fw_model_inbound_default(m, location) : FW_ACTION_DROP;
        return 0;
}

/* ---- remembered choices ---- */

void fw_choices_free(FwChoice *c, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                free(c[i].location);
                free(c[i].network_id);
        }
        free(c);
}

int fw_choices_parse(const char *text, size_t size, FwChoice **ret, size_t *ret_n)
{
        FwChoice *c = NULL;
        size_t n = 0;
        const char *p = text, *end = text + size;

        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
                _cleanup_free_ char *line = strndup(p, len);
                char *sp;

                p += len + (nl ? 1 : 0);
                if (!line) {
                        fw_choices_free(c, n);
                        return -ENOMEM;
                }
                if (!*line || *line == '#')
                        continue;
                sp = strchr(line, ' ');
                if (!sp || !sp[1] || strlen(sp + 1) >= NETID_MAX || memchr(line, 0, len) ||
                    strpbrk(sp + 1, "\t\r") != NULL) {
                        fw_choices_free(c, n);
                        return -EINVAL;
                }
                *sp = 0;
                if (!fw_location_name_valid(line)) {
                        fw_choices_free(c, n);
                        return -EINVAL;
                }
                FwChoice *nc = realloc(c, sizeof(FwChoice) * (n + 1));
                if (!nc) {
                        fw_choices_free(c, n);
                        return -ENOMEM;
                }
                c = nc;
                c[n] = (FwChoice){strdup(line), strdup(sp + 1)};
                n++;
                if (!c[n - 1].location || !c[n - 1].network_id) {
                        fw_choices_free(c, n);
                        return -ENOMEM;
                }
        }
        *ret = c;
        *ret_n = n;
        return 0;
}

int fw_choices_format(const FwChoice *c, size_t n, char **ret)
{
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        if (!f)
                return -ENOMEM;
        fputs("# roamd: locations chosen with `roam network trust` (LOCATION NETWORK-ID)\n", f);
        for (size_t i = 0; i < n; i++)
                fprintf(f, "%s %s\n", c[i].location, c[i].network_id);
        if (fclose(f) != 0) {
                free(buf);
                return -ENOMEM;
        }
        *ret = buf;
        return 0;
}
