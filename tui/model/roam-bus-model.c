/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "roam-bus-map.h"
#include "roam-bus-model.h"
#include "roam-words.h"
#include "roam-bus.h"
#include "roam-client-bus.h"
#include "roam-log.h"
#include "roam-util.h"

static const char *const roam_link_state_table[_ROAM_LINK_STATE_MAX] = {
    [ROAM_LINK_STATE_NO_CARRIER] = "no-carrier", [ROAM_LINK_STATE_NO_ADDRESS] = "no-address",
    [ROAM_LINK_STATE_LINK_LOCAL] = "link-local", [ROAM_LINK_STATE_ADDRESSED] = "addressed",
    [ROAM_LINK_STATE_ROUTABLE] = "routable",
};

DEFINE_STRING_TABLE_LOOKUP(roam_link_state, RoamLinkState);

/* The properties' tables for the shared a{sv} reader (roam-bus-map.h); the setters below
 * keep what the model promises: arrays never NULL, the captive portal's data replaced whole. */
static int set_strv(sd_bus_message *m, const char *key, void *field);
static int set_addresses(sd_bus_message *m, const char *key, void *field);
static int set_gateways(sd_bus_message *m, const char *key, void *field);
static int set_dns(sd_bus_message *m, const char *key, void *field);
static int set_capport(sd_bus_message *m, const char *key, void *field);
static int set_strmap(sd_bus_message *m, const char *key, void *field);

#define LINK_STRING(name, field)                                                                   \
        {                                                                                          \
                name, "s", bus_map_string, offsetof(RoamLink, field)                               \
        }
#define APP_STRING(name, field)                                                                    \
        {                                                                                          \
                name, "s", bus_map_string, offsetof(RoamApp, field)                                \
        }
#define MODEL_FIELD(name, sig, set, field)                                                         \
        {                                                                                          \
                name, sig, set, offsetof(RoamModel, field)                                         \
        }

static const BusMapEntry link_properties[] = {
    {"Index", "i", bus_map_i32, offsetof(RoamLink, index)},
    LINK_STRING("Name", name),
    LINK_STRING("Bearer", bearer),
    LINK_STRING("BearerSource", bearer_source),
    LINK_STRING("Kind", kind),
    LINK_STRING("Driver", driver),
    LINK_STRING("HardwareAddress", hwaddr),
    {"MTU", "u", bus_map_u32, offsetof(RoamLink, mtu)},
    {"AdminUp", "b", bus_map_bool, offsetof(RoamLink, admin_up)},
    {"Carrier", "b", bus_map_bool, offsetof(RoamLink, carrier)},
    LINK_STRING("OperState", oper_state),
    LINK_STRING("State", state),
    {"Addresses", "a(isus)", set_addresses, 0},
    {"Gateways", "a(is)", set_gateways, 0},
    {"DNS", "a(is)", set_dns, 0},
    LINK_STRING("DNSSource", dns_source),
    {"Domains", "as", set_strv, offsetof(RoamLink, domains)},
    {"NTPServers", "as", set_strv, offsetof(RoamLink, ntp_servers)},
    LINK_STRING("CaptivePortalURL", captive_portal_url),
    LINK_STRING("Connectivity", connectivity),
    LINK_STRING("ConnectivityReason", connectivity_reason),
    LINK_STRING("Connectivity4", connectivity4),
    LINK_STRING("ConnectivityReason4", connectivity_reason4),
    LINK_STRING("Connectivity6", connectivity6),
    LINK_STRING("ConnectivityReason6", connectivity_reason6),
    LINK_STRING("PortalURL", portal_url),
    LINK_STRING("Nat64Prefix", nat64_prefix),
    {"WorkingMTU4", "u", bus_map_u32, offsetof(RoamLink, working_mtu4)},
    {"WorkingMTU6", "u", bus_map_u32, offsetof(RoamLink, working_mtu6)},
    {"LastProbe", "t", bus_map_u64, offsetof(RoamLink, last_probe)},
    {"ProbeDuration", "t", bus_map_u64, offsetof(RoamLink, probe_duration)},
    {"CaptivePortal", "a{sv}", set_capport, offsetof(RoamLink, capport)},
    LINK_STRING("WiFiState", wifi_state),
    LINK_STRING("WiFiSSID", wifi_ssid),
    {"WiFiSignal", "i", bus_map_i32, offsetof(RoamLink, wifi_signal)},
    {"WiFiLinkSpeed", "u", bus_map_u32, offsetof(RoamLink, wifi_link_speed)},
    LINK_STRING("NetworkId", network_id),
    {"NetworkIdentity", "a{ss}", set_strmap, offsetof(RoamLink, network_identity)},
    LINK_STRING("Location", location),
    LINK_STRING("LocationSource", location_source),
    LINK_STRING("LocationReason", location_reason),
    LINK_STRING("LocationWanted", location_wanted),
    {},
};

static const BusMapEntry app_properties[] = {
    APP_STRING("Id", id),
    APP_STRING("Access", access),
    {"Bearers", "as", set_strv, offsetof(RoamApp, bearers)},
    APP_STRING("VPN", vpn),
    APP_STRING("Handover", handover),
    APP_STRING("Source", source),
    APP_STRING("Route4", route4),
    APP_STRING("Route6", route6),
    APP_STRING("State", state),
    {"OnlineUntil", "t", bus_map_u64, offsetof(RoamApp, online_until)},
    {"Cgroups", "as", set_strv, offsetof(RoamApp, cgroups)},
    {"Wake", "i", bus_map_i32, offsetof(RoamApp, wake)},
    {"WakeSlice", "t", bus_map_u64, offsetof(RoamApp, wake_slice)},
    {"WakeBytes", "t", bus_map_u64, offsetof(RoamApp, wake_bytes)},
    APP_STRING("WakeState", wake_state),
    APP_STRING("WakeReason", wake_reason),
    {"WakeSince", "t", bus_map_u64, offsetof(RoamApp, wake_since)},
    {},
};

/* TimeGate, and that roamd has one (has_time_gate just after it in RoamModel). */
static int set_time_gate(sd_bus_message *m, const char *key, void *field)
{
        RoamModel *model = (RoamModel *)((char *)field - offsetof(RoamModel, time_gate));

        model->has_time_gate = true;
        return bus_map_bool(m, key, field);
}

static const BusMapEntry manager_properties[] = {
    MODEL_FIELD("Version", "s", bus_map_string, version),
    MODEL_FIELD("State", "s", bus_map_string, state),
    MODEL_FIELD("BestLink", "o", bus_map_string, best_link_path),
    MODEL_FIELD("DefaultLink", "o", bus_map_string, default_link_path),
    MODEL_FIELD("StateReason", "s", bus_map_string, state_reason),
    MODEL_FIELD("ConfigFile", "s", bus_map_string, config_file),
    MODEL_FIELD("FirewallError", "s", bus_map_string, firewall_error),
    MODEL_FIELD("Locations", "as", set_strv, locations),
    MODEL_FIELD("SSH", "s", bus_map_string, ssh),
    MODEL_FIELD("SSHLetIn", "as", set_strv, ssh_let_in),
    MODEL_FIELD("Degraded", "s", bus_map_string, degraded),
    MODEL_FIELD("DegradedSince", "t", bus_map_u64, degraded_since),
    MODEL_FIELD("MarkConflicts", "as", set_strv, mark_conflicts),
    MODEL_FIELD("FirewallMaskSuggestion", "s", bus_map_string, mask_suggestion),
    MODEL_FIELD("WakeQueue", "s", bus_map_string, wake_queue),
    MODEL_FIELD("WakePeriod", "t", bus_map_u64, wake_period),
    MODEL_FIELD("TimeGate", "b", set_time_gate, time_gate),
    MODEL_FIELD("TimeGateReason", "s", bus_map_string, time_gate_reason),
    MODEL_FIELD("P2PState", "s", bus_map_string, p2p_state),
    {},
};

static void addresses_free(RoamAddress *a, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                free(a[i].address);
                free(a[i].scope);
        }
        free(a);
}

static void capport_clear(RoamCapport *c)
{
        free(c->user_portal_url);
        free(c->venue_info_url);
        free(c->error);
        *c = (RoamCapport){};
}

static void servers_free(RoamServer *s, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(s[i].address);
        free(s);
}

/* Sets every listed string field that is still NULL to "". */
static int fill_empty_strings(char **const *fields, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                if (*fields[i])
                        continue;
                *fields[i] = strdup("");
                if (!*fields[i])
                        return -ENOMEM;
        }
        return 0;
}

int roam_link_new(const char *path, RoamLink **ret)
{
        _cleanup_(roam_link_freep) RoamLink *l = NULL;
        int r;

        l = calloc(1, sizeof(*l));
        if (!l)
                return -ENOMEM;
        l->state_enum = _ROAM_LINK_STATE_INVALID;
        l->path = strdup(path);
        l->domains = calloc(1, sizeof(char *));
        l->ntp_servers = calloc(1, sizeof(char *));
        l->network_identity = calloc(1, sizeof(char *));
        if (!l->path || !l->domains || !l->ntp_servers || !l->network_identity)
                return -ENOMEM;

        char **const strings[] = {
            &l->name,          &l->bearer,
            &l->bearer_source, &l->kind,
            &l->driver,        &l->hwaddr,
            &l->oper_state,    &l->state,
            &l->dns_source,    &l->captive_portal_url,
            &l->connectivity,  &l->connectivity_reason,
            &l->connectivity4, &l->connectivity_reason4,
            &l->connectivity6, &l->connectivity_reason6,
            &l->portal_url,    &l->wifi_state,
            &l->wifi_ssid,     &l->nat64_prefix,
        };
        char **const firewall_strings[] = {&l->network_id, &l->location, &l->location_source,
                                           &l->location_reason, &l->location_wanted};
        r = fill_empty_strings(firewall_strings, ELEMENTSOF(firewall_strings));
        if (r < 0)
                return r;
        r = fill_empty_strings(strings, ELEMENTSOF(strings));
        if (r < 0)
                return r;

        *ret = TAKE_PTR(l);
        return 0;
}

RoamLink *roam_link_free(RoamLink *l)
{
        if (!l)
                return NULL;
        free(l->path);
        free(l->name);
        free(l->bearer);
        free(l->bearer_source);
        free(l->kind);
        free(l->driver);
        free(l->hwaddr);
        free(l->oper_state);
        free(l->state);
        addresses_free(l->addresses, l->n_addresses);
        servers_free(l->gateways, l->n_gateways);
        servers_free(l->dns, l->n_dns);
        free(l->dns_source);
        strv_free(l->domains);
        strv_free(l->ntp_servers);
        free(l->captive_portal_url);
        free(l->wifi_state);
        free(l->wifi_ssid);
        free(l->connectivity);
        free(l->connectivity_reason);
        free(l->connectivity4);
        free(l->connectivity_reason4);
        free(l->connectivity6);
        free(l->connectivity_reason6);
        free(l->portal_url);
        free(l->nat64_prefix);
        capport_clear(&l->capport);
        free(l->network_id);
        strv_free(l->network_identity);
        free(l->location);
        free(l->location_source);
        free(l->location_reason);
        free(l->location_wanted);
        free(l);
        return NULL;
}

const char *roam_link_identity(const RoamLink *l, const char *key)
{
        for (char **p = l->network_identity; p[0] && p[1]; p += 2)
                if (streq(p[0], key))
                        return p[1];
        return NULL;
}

bool roam_link_needs_location(const RoamLink *l)
{
        return *l->network_id && streq(l->location_source, "default");
}

const char *roam_link_portal_url(const RoamLink *l)
{
        if (!streq(l->connectivity, "portal"))
                return NULL;
        if (*l->portal_url)
                return l->portal_url;
        if (l->capport.user_portal_url && *l->capport.user_portal_url)
                return l->capport.user_portal_url;
        return NULL;
}

bool roam_link_is_virtual(const RoamLink *l)
{
        return streq(l->bearer, "virtual");
}

void roam_link_wifi_text(const RoamLink *l, char *buf, size_t size)
{
        char signal[64];

        if (!*l->wifi_state) {
                snprintf(buf, size, "%s", "");
                return;
        }
        if (!streq(l->wifi_state, "COMPLETED")) {
                snprintf(buf, size, "not associated (%s)", l->wifi_state);
                return;
        }
        roam_signal_text(l->wifi_signal, l->wifi_link_speed, signal, sizeof(signal));
        snprintf(buf, size, "%s, signal %s", *l->wifi_ssid ? l->wifi_ssid : "hidden network",
                 *signal ? signal : "not reported");
}

void roam_link_working_mtu_text(const RoamLink *l, char *buf, size_t size)
{
        const uint32_t mtu[2] = {l->working_mtu4, l->working_mtu6};
        const char *reason[2] = {l->connectivity_reason4, l->connectivity_reason6};
        size_t n = 0;

        snprintf(buf, size, "%s", "");
        for (size_t i = 0; i < 2 && n < size; i++) {
                bool hole = streq(reason[i], "mtu");
                int k;

                if (!mtu[i] && !hole)
                        continue;
                k = mtu[i] ? snprintf(buf + n, size - n, "%sIPv%c %" PRIu32 " bytes", n ? ", " : "",
                                      i ? '6' : '4', mtu[i])
                           : snprintf(buf + n, size - n, "%sIPv%c not known", n ? ", " : "",
                                      i ? '6' : '4');
                n += k > 0 ? (size_t)k : 0;
        }
}

const RoamHistoryEntry *roam_link_history_get(const RoamLink *l, size_t i)
{
        if (i >= l->n_history)
                return NULL;
        return &l->history[(l->history_next + ROAM_HISTORY_MAX - 1 - i) % ROAM_HISTORY_MAX];
}

void roam_link_history_record(RoamLink *l, uint64_t now, bool verdict_changed, bool probe_ended)
{
        RoamHistoryEntry *e;

        if (!verdict_changed && !probe_ended)
                return;
        if (l->n_history > 0) {
                e = &l->history[(l->history_next + ROAM_HISTORY_MAX - 1) % ROAM_HISTORY_MAX];
                if (!verdict_changed && e->last_probe == 0) {
                        e->last_probe = l->last_probe;
                        e->probe_duration = l->probe_duration;
                        return;
                }
                /* The same words again: a recheck, folded into the entry with a count. */
                if (strncmp(e->verdict, l->connectivity, sizeof(e->verdict) - 1) == 0 &&
                    strncmp(e->reason, l->connectivity_reason, sizeof(e->reason) - 1) == 0) {
                        if (probe_ended) {
                                e->count++;
                                e->last_seen = now;
                                e->last_probe = l->last_probe;
                                e->probe_duration = l->probe_duration;
                        }
                        return;
                }
        }

        e = &l->history[l->history_next];
        l->history_next = (l->history_next + 1) % ROAM_HISTORY_MAX;
        if (l->n_history < ROAM_HISTORY_MAX)
                l->n_history++;
        *e = (RoamHistoryEntry){
            .seen = now,
            .last_probe = probe_ended ? l->last_probe : 0,
            .probe_duration = probe_ended ? l->probe_duration : 0,
            .count = 1,
            .last_seen = now,
        };
        snprintf(e->verdict, sizeof(e->verdict), "%s", l->connectivity);
        snprintf(e->reason, sizeof(e->reason), "%s", l->connectivity_reason);
}

int roam_app_new(const char *path, RoamApp **ret)
{
        _cleanup_(roam_app_freep) RoamApp *a = NULL;
        int r;

        a = calloc(1, sizeof(*a));
        if (!a)
                return -ENOMEM;
        a->path = strdup(path);
        a->bearers = calloc(1, sizeof(char *));
        a->cgroups = calloc(1, sizeof(char *));
        if (!a->path || !a->bearers || !a->cgroups)
                return -ENOMEM;

        char **const strings[] = {
            &a->id,     &a->access, &a->vpn,   &a->handover,   &a->source,
            &a->route4, &a->route6, &a->state, &a->wake_state, &a->wake_reason,
        };
        a->wake = -1;
        r = fill_empty_strings(strings, ELEMENTSOF(strings));
        if (r < 0)
                return r;

        *ret = TAKE_PTR(a);
        return 0;
}

RoamApp *roam_app_free(RoamApp *a)
{
        if (!a)
                return NULL;
        free(a->path);
        free(a->id);
        free(a->access);
        strv_free(a->bearers);
        free(a->vpn);
        free(a->handover);
        free(a->source);
        free(a->route4);
        free(a->route6);
        free(a->state);
        strv_free(a->cgroups);
        free(a->wake_state);
        free(a->wake_reason);
        free(a);
        return NULL;
}

bool roam_app_is_special(const RoamApp *a)
{
        return streq(a->id, "default") || streq(a->id, "system");
}

static void model_clear_links(RoamModel *m);
static void model_clear_apps(RoamModel *m);

int roam_model_new(RoamModel **ret)
{
        _cleanup_(roam_model_freep) RoamModel *m = NULL;
        int r;

        m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;
        m->best_link_path = strdup("/");
        m->locations = calloc(1, sizeof(char *));
        m->ssh_let_in = calloc(1, sizeof(char *));
        if (!m->best_link_path || !m->locations || !m->ssh_let_in)
                return -ENOMEM;

        char **const strings[] = {
            &m->version,      &m->state,           &m->config_file, &m->firewall_error,
            &m->degraded,     &m->mask_suggestion, &m->wake_queue,  &m->time_gate_reason,
            &m->state_reason, &m->p2p_state,       &m->ssh};
        r = fill_empty_strings(strings, ELEMENTSOF(strings));
        if (r < 0)
                return r;

        *ret = TAKE_PTR(m);
        return 0;
}

RoamModel *roam_model_free(RoamModel *m)
{
        if (!m)
                return NULL;
        free(m->version);
        free(m->state);
        free(m->best_link_path);
        free(m->default_link_path);
        free(m->state_reason);
        free(m->config_file);
        free(m->firewall_error);
        strv_free(m->locations);
        free(m->ssh);
        strv_free(m->ssh_let_in);
        free(m->degraded);
        strv_free(m->mark_conflicts);
        free(m->mask_suggestion);
        free(m->wake_queue);
        free(m->time_gate_reason);
        free(m->p2p_state);
        model_clear_links(m);
        model_clear_apps(m);
        free(m);
        return NULL;
}

static int read_addresses(sd_bus_message *m, RoamAddress **array, size_t *n_array)
{
        RoamAddress *a = NULL;
        size_t n = 0;
        int r;

        r = sd_bus_message_enter_container(m, 'a', "(isus)");
        if (r < 0)
                return r;
        for (;;) {
                const char *address, *scope;
                uint32_t prefix;
                int32_t family;
                RoamAddress *b;

                r = sd_bus_message_read(m, "(isus)", &family, &address, &prefix, &scope);
                if (r <= 0)
                        break;
                b = reallocarray(a, n + 1, sizeof(*a));
                if (!b) {
                        r = -ENOMEM;
                        break;
                }
                a = b;
                a[n] = (RoamAddress){
                    .family = family,
                    .address = strdup(address),
                    .prefix = prefix,
                    .scope = strdup(scope),
                };
                n++;
                if (!a[n - 1].address || !a[n - 1].scope) {
                        r = -ENOMEM;
                        break;
                }
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(m);
        if (r < 0) {
                addresses_free(a, n);
                return r;
        }

        addresses_free(*array, *n_array);
        *array = a;
        *n_array = n;
        return 0;
}

static int read_servers(sd_bus_message *m, RoamServer **array, size_t *n_array)
{
        RoamServer *s = NULL;
        size_t n = 0;
        int r;

        r = sd_bus_message_enter_container(m, 'a', "(is)");
        if (r < 0)
                return r;
        for (;;) {
                const char *address;
                int32_t family;
                RoamServer *b;

                r = sd_bus_message_read(m, "(is)", &family, &address);
                if (r <= 0)
                        break;
                b = reallocarray(s, n + 1, sizeof(*s));
                if (!b) {
                        r = -ENOMEM;
                        break;
                }
                s = b;
                s[n] = (RoamServer){.family = family, .address = strdup(address)};
                n++;
                if (!s[n - 1].address) {
                        r = -ENOMEM;
                        break;
                }
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(m);
        if (r < 0) {
                servers_free(s, n);
                return r;
        }

        servers_free(*array, *n_array);
        *array = s;
        *n_array = n;
        return 0;
}

static int set_strv(sd_bus_message *m, const char *key, void *ret)
{
        char ***field = ret;
        _cleanup_strv_free_ char **l = NULL;
        int r;

        r = sd_bus_message_read_strv(m, &l);
        if (r < 0)
                return r;
        if (!l) {
                /* sd-bus returns NULL for an empty array; the model never holds NULL. */
                l = calloc(1, sizeof(char *));
                if (!l)
                        return -ENOMEM;
        }
        strv_free(*field);
        *field = TAKE_PTR(l);
        return 0;
}

/* Reads an a{ss} into a vector of key, value pairs. */
static int set_strmap(sd_bus_message *m, const char *key, void *ret)
{
        char ***field = ret;
        _cleanup_strv_free_ char **l = calloc(1, sizeof(char *));
        const char *k, *v;
        int r;

        if (!l)
                return -ENOMEM;
        r = sd_bus_message_enter_container(m, SD_BUS_TYPE_ARRAY, "{ss}");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_read(m, "{ss}", &k, &v)) > 0) {
                r = strv_extend(&l, k);
                if (r >= 0)
                        r = strv_extend(&l, v);
                if (r < 0)
                        return r;
        }
        if (r < 0)
                return r;
        r = sd_bus_message_exit_container(m);
        if (r < 0)
                return r;
        strv_free(*field);
        *field = TAKE_PTR(l);
        return 0;
}

static int set_flag(sd_bus_message *m, bool *value, bool *has)
{
        int r = bus_map_bool(m, NULL, value);

        if (r >= 0)
                *has = true;
        return r;
}

static int set_number(sd_bus_message *m, uint64_t *value, bool *has)
{
        int r = bus_map_u64(m, NULL, value);

        if (r >= 0)
                *has = true;
        return r;
}

static int set_captive(sd_bus_message *m, const char *key, void *field)
{
        RoamCapport *c = field;
        return set_flag(m, &c->captive, &c->has_captive);
}

static int set_can_extend(sd_bus_message *m, const char *key, void *field)
{
        RoamCapport *c = field;
        return set_flag(m, &c->can_extend_session, &c->has_can_extend_session);
}

static int set_seconds(sd_bus_message *m, const char *key, void *field)
{
        RoamCapport *c = field;
        return set_number(m, &c->seconds_remaining, &c->has_seconds_remaining);
}

static int set_bytes(sd_bus_message *m, const char *key, void *field)
{
        RoamCapport *c = field;
        return set_number(m, &c->bytes_remaining, &c->has_bytes_remaining);
}

/* Link.CaptivePortal's members are typed by the API; a member with another type is refused
 * like a wrong property type, unknown members are skipped (a newer roamd). */
static const BusMapEntry capport_members[] = {
    {"Captive", "b", set_captive, 0},
    {"CanExtendSession", "b", set_can_extend, 0},
    {"SecondsRemaining", "t", set_seconds, 0},
    {"BytesRemaining", "t", set_bytes, 0},
    {"UserPortalURL", "s", bus_map_string, offsetof(RoamCapport, user_portal_url)},
    {"VenueInfoURL", "s", bus_map_string, offsetof(RoamCapport, venue_info_url)},
    {"Error", "s", bus_map_string, offsetof(RoamCapport, error)},
    {},
};

/* The whole of it replaces what the link had: a member roamd no longer sends goes. */
static int set_capport(sd_bus_message *m, const char *key, void *field)
{
        RoamCapport c = {}, *ret = field;
        BusMapMismatch mm;
        int r;

        r = bus_map_read_full(m, capport_members, &c, &mm);
        if (r < 0) {
                capport_clear(&c);
                if (mm.key)
                        return log_error_errno(EBADMSG,
                                               "roamd sent CaptivePortal member %s of type '%s', "
                                               "not '%s'.",
                                               mm.key, strempty(mm.contents), mm.signature);
                return r;
        }
        capport_clear(ret);
        *ret = c;
        return 0;
}

static int set_addresses(sd_bus_message *m, const char *key, void *field)
{
        RoamLink *l = field;
        return read_addresses(m, &l->addresses, &l->n_addresses);
}

static int set_gateways(sd_bus_message *m, const char *key, void *field)
{
        RoamLink *l = field;
        return read_servers(m, &l->gateways, &l->n_gateways);
}

static int set_dns(sd_bus_message *m, const char *key, void *field)
{
        RoamLink *l = field;
        return read_servers(m, &l->dns, &l->n_dns);
}

/* Reads an a{sv} of properties through table into base; a property of another type than the
 * API's is refused (the values before it taken), one this roam does not know is skipped (a
 * newer roamd). */
static int read_properties(sd_bus_message *m, const BusMapEntry *table, void *base)
{
        BusMapMismatch mm;
        int r;

        r = bus_map_read_full(m, table, base, &mm);
        if (r < 0 && mm.key)
                return log_error_errno(EBADMSG, "roamd sent property %s of type '%s', not '%s'.",
                                       mm.key, strempty(mm.contents), mm.signature);
        return r < 0 ? r : 0;
}

int roam_link_update_properties(RoamLink *l, sd_bus_message *m)
{
        int r;

        r = read_properties(m, link_properties, l);
        if (r < 0)
                return r;
        l->state_enum = roam_link_state_from_string(l->state);
        return 0;
}

int roam_app_update_properties(RoamApp *a, sd_bus_message *m)
{
        return read_properties(m, app_properties, a);
}

int roam_model_update_manager_properties(RoamModel *m, sd_bus_message *msg)
{
        return read_properties(msg, manager_properties, m);
}

int roam_model_read_manager(sd_bus_message *props, void *model)
{
        return roam_model_update_manager_properties(model, props);
}

int roam_app_read(sd_bus_message *props, void *app)
{
        return roam_app_update_properties(app, props);
}

int roam_link_read(sd_bus_message *props, void *link)
{
        return roam_link_update_properties(link, props);
}

static int link_compare(const void *a, const void *b)
{
        const RoamLink *x = *(RoamLink *const *)a, *y = *(RoamLink *const *)b;

        if (x->index != y->index)
                return x->index < y->index ? -1 : 1;
        return strcmp(x->path, y->path);
}

RoamLink *roam_model_default_link(const RoamModel *m)
{
        if (!m->default_link_path)
                return roam_model_best_link(m); /* a roamd older than DefaultLink */
        if (streq(m->default_link_path, "/"))
                return NULL;
        return roam_model_find_link(m, m->default_link_path);
}

RoamLink *roam_model_best_link(const RoamModel *m)
{
        if (streq(m->best_link_path, "/"))
                return NULL;
        return roam_model_find_link(m, m->best_link_path);
}

/* "default" and "system" go last, in that order; apps by ID before them. */
static int app_rank(const RoamApp *a)
{
        return streq(a->id, "default") ? 1 : streq(a->id, "system") ? 2 : 0;
}

static int app_compare(const void *a, const void *b)
{
        const RoamApp *x = *(RoamApp *const *)a, *y = *(RoamApp *const *)b;
        int c;

        if (app_rank(x) != app_rank(y))
                return app_rank(x) < app_rank(y) ? -1 : 1;
        c = strcmp(x->id, y->id);
        return c != 0 ? c : strcmp(x->path, y->path);
}

RoamApp *roam_model_find_app_by_id(const RoamModel *m, const char *id)
{
        for (size_t i = 0; i < m->n_apps; i++)
                if (streq(m->apps[i]->id, id))
                        return m->apps[i];
        return NULL;
}

/* The link list and the app list: objects owned by the model, found by object path, kept in
 * their order (compare) as they come and go. */
#define DEFINE_MODEL_LIST(name, type, items, n_items, free_fn, compare)                            \
        static void model_clear_##items(RoamModel *m)                                              \
        {                                                                                          \
                for (size_t i = 0; i < m->n_items; i++)                                            \
                        free_fn(m->items[i]);                                                      \
                free(m->items);                                                                    \
                m->items = NULL;                                                                   \
                m->n_items = 0;                                                                    \
        }                                                                                          \
                                                                                                   \
        void roam_model_sort_##items(RoamModel *m)                                                 \
        {                                                                                          \
                if (m->n_items > 1)                                                                \
                        qsort(m->items, m->n_items, sizeof(type *), compare);                      \
        }                                                                                          \
                                                                                                   \
        type *roam_model_find_##name(const RoamModel *m, const char *path)                         \
        {                                                                                          \
                for (size_t i = 0; i < m->n_items; i++)                                            \
                        if (streq(m->items[i]->path, path))                                        \
                                return m->items[i];                                                \
                return NULL;                                                                       \
        }                                                                                          \
                                                                                                   \
        int roam_model_remove_##name(RoamModel *m, const char *path)                               \
        {                                                                                          \
                for (size_t i = 0; i < m->n_items; i++) {                                          \
                        if (!streq(m->items[i]->path, path))                                       \
                                continue;                                                          \
                        free_fn(m->items[i]);                                                      \
                        memmove(m->items + i, m->items + i + 1,                                    \
                                (m->n_items - i - 1) * sizeof(type *));                            \
                        m->n_items--;                                                              \
                        return 1;                                                                  \
                }                                                                                  \
                return 0;                                                                          \
        }                                                                                          \
                                                                                                   \
        int roam_model_add_##name(RoamModel *m, type *x)                                           \
        {                                                                                          \
                type **v;                                                                          \
                                                                                                   \
                (void)roam_model_remove_##name(m, x->path);                                        \
                v = reallocarray(m->items, m->n_items + 1, sizeof(type *));                        \
                if (!v)                                                                            \
                        return -ENOMEM;                                                            \
                m->items = v;                                                                      \
                m->items[m->n_items++] = x;                                                        \
                roam_model_sort_##items(m);                                                        \
                return 0;                                                                          \
        }

DEFINE_MODEL_LIST(link, RoamLink, links, n_links, roam_link_free, link_compare)
DEFINE_MODEL_LIST(app, RoamApp, apps, n_apps, roam_app_free, app_compare)

const char *roam_model_route_name(const RoamModel *m, const char *route)
{
        const RoamLink *l;

        if (route[0] != '/')
                return route;
        l = roam_model_find_link(m, route);
        return l && *l->name ? l->name : route;
}

typedef struct ObjectRead {
        RoamModel *manager;
        RoamLink *link;
        RoamApp *app;
        const char *refused;
} ObjectRead;

static int read_interface(sd_bus_message *m, const char *path, const char *interface,
                          void *userdata)
{
        ObjectRead *o = userdata;
        const char *kind = NULL;
        int r;

        if (o->manager && streq(interface, ROAM_MANAGER_INTERFACE) &&
            streq(path, ROAM_MANAGER_PATH)) {
                kind = "manager";
                r = roam_model_update_manager_properties(o->manager, m);
        } else if (streq(interface, ROAM_LINK_INTERFACE)) {
                if (!o->link) {
                        r = roam_link_new(path, &o->link);
                        if (r < 0)
                                return r;
                }
                kind = "link";
                r = roam_link_update_properties(o->link, m);
        } else if (streq(interface, ROAM_APP_INTERFACE)) {
                if (!o->app) {
                        r = roam_app_new(path, &o->app);
                        if (r < 0)
                                return r;
                }
                kind = "app";
                r = roam_app_update_properties(o->app, m);
        } else
                r = sd_bus_message_skip(m, "a{sv}");
        if (r < 0)
                o->refused = kind;
        return r;
}

int roam_model_read_object(sd_bus_message *m, const char *path, RoamModel *manager,
                           RoamLink **ret_link, RoamApp **ret_app, const char **ret_refused)
{
        ObjectRead o = {.manager = manager};
        int r;

        r = bus_map_read_interfaces(m, path, read_interface, &o);
        *ret_refused = o.refused;
        if (r < 0) {
                roam_link_free(o.link);
                roam_app_free(o.app);
                return r;
        }
        *ret_link = o.link;
        *ret_app = o.app;
        return 0;
}

int roam_model_read_managed_objects(RoamModel *m, sd_bus_message *reply)
{
        int r;

        model_clear_links(m);
        model_clear_apps(m);

        r = sd_bus_message_enter_container(reply, SD_BUS_TYPE_ARRAY, "{oa{sa{sv}}}");
        if (r < 0)
                return r;

        while ((r = sd_bus_message_enter_container(reply, SD_BUS_TYPE_DICT_ENTRY, "oa{sa{sv}}")) >
               0) {
                const char *path, *refused;
                RoamLink *link = NULL;
                RoamApp *app = NULL;

                r = sd_bus_message_read_basic(reply, 'o', &path);
                if (r < 0)
                        return r;

                r = roam_model_read_object(reply, path, m, &link, &app, &refused);
                if (r < 0)
                        return r;
                if (link) {
                        r = roam_model_add_link(m, link);
                        if (r < 0) {
                                roam_link_free(link);
                                roam_app_free(app);
                                return r;
                        }
                }
                if (app) {
                        r = roam_model_add_app(m, app);
                        if (r < 0) {
                                roam_app_free(app);
                                return r;
                        }
                }

                r = sd_bus_message_exit_container(reply);
                if (r < 0)
                        return r;
        }
        if (r < 0)
                return r;

        return sd_bus_message_exit_container(reply);
}

int roam_model_load(sd_bus *bus, RoamModel **ret)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *manager = NULL, *objects = NULL;
        _cleanup_(roam_model_freep) RoamModel *m = NULL;
        int r;

        /* GetManagedObjects returns only the objects below /org/roam1 (the links), never the
         * manager object itself (D-Bus spec; sd-bus does so): its properties take a GetAll. The
         * links and the apps come in the one reply. */
        r = sd_bus_call_method(bus, ROAM_BUS_NAME, ROAM_MANAGER_PATH,
                               "org.freedesktop.DBus.Properties", "GetAll", &error, &manager, "s",
                               ROAM_MANAGER_INTERFACE);
        if (r < 0)
                return roam_bus_log_call_error(&error, r, "read roamd's state");

        r = sd_bus_call_method(bus, ROAM_BUS_NAME, ROAM_MANAGER_PATH,
                               "org.freedesktop.DBus.ObjectManager", "GetManagedObjects", &error,
                               &objects, NULL);
        if (r < 0)
                return roam_bus_log_call_error(&error, r, "read roamd's links");

        r = roam_model_new(&m);
        if (r < 0)
                return log_oom();

        r = roam_model_update_manager_properties(m, manager);
        if (r >= 0)
                r = roam_model_read_managed_objects(m, objects);
        if (r == -ENOMEM)
                return log_oom();
        if (r < 0)
                return log_error_errno(r, "Failed to parse roamd's answer: %m");

        *ret = TAKE_PTR(m);
        return 0;
}

static int compare_turn(const void *a, const void *b)
{
        const RoamApp *x = *(const RoamApp *const *)a, *y = *(const RoamApp *const *)b;

        /* Higher first; roamd breaks ties by the order the apps were listed, which the bus
         * does not say: by ID here (the model's order), so the list is stable. */
        if (x->wake != y->wake)
                return x->wake > y->wake ? -1 : 1;
        return strcmp(x->id, y->id);
}

const RoamApp **roam_model_wake_order(const RoamModel *m, size_t *ret_n)
{
        const RoamApp **v = calloc(m->n_apps + 1, sizeof(*v));
        size_t n = 0;

        *ret_n = 0;
        if (!v)
                return NULL;
        for (size_t i = 0; i < m->n_apps; i++)
                if (m->apps[i]->wake >= 0 && *m->apps[i]->wake_state)
                        v[n++] = m->apps[i];
        qsort(v, n, sizeof(*v), compare_turn);
        *ret_n = n;
        return v;
}
