/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>
#include <stdlib.h>

#include "roam-bus.h"
#include "roam-log.h"
#include "roam-util.h"
#include "roamd-link-bus.h"
#include "roamd-core.h"
#include "roamd-netid.h"

static int property_get_string(sd_bus *bus, const char *path, const char *interface,
                               const char *property, sd_bus_message *reply, void *userdata,
                               sd_bus_error *error)
{
        Link *l = userdata;
        const char *v = NULL;

        if (streq(property, "Name"))
                v = l->info.name;
        else if (streq(property, "Kind"))
                v = l->info.kind;
        else if (streq(property, "Driver"))
                v = l->info.driver;
        else if (streq(property, "HardwareAddress"))
                v = l->info.hwaddr;
        else if (streq(property, "OperState"))
                v = l->info.oper_state;
        else if (streq(property, "CaptivePortalURL"))
                v = link_capport_url_rejected(l) ? NULL : l->info.captive_portal_url;
        else if (streq(property, "CaptivePortalURLRejected"))
                v = link_capport_url_rejected(l) ? l->info.captive_portal_url : NULL;
        else if (streq(property, "Bearer"))
                v = bearer_to_string(l->bearer);
        else if (streq(property, "BearerSource"))
                v = l->bearer_from_config ? "config" : "sysfs";
        else if (streq(property, "State"))
                v = link_state_to_string(l->state);
        else if (streq(property, "DNSSource"))
                v = dns_source_to_string(l->info.dns_source);
        else if (streq(property, "Connectivity"))
                v = verdict_to_string(l->verdict.verdict);
        else if (streq(property, "ConnectivityReason"))
                v = verdict_reason_to_string(l->verdict.reason);
        else if (streq(property, "Connectivity4"))
                v = verdict_to_string(l->verdict4.verdict);
        else if (streq(property, "ConnectivityReason4"))
                v = verdict_reason_to_string(l->verdict4.reason);
        else if (streq(property, "Connectivity6"))
                v = verdict_to_string(l->verdict6.verdict);
        else if (streq(property, "ConnectivityReason6"))
                v = verdict_reason_to_string(l->verdict6.reason);
        else if (streq(property, "PortalURL"))
                v = l->portal_url;
        else if (streq(property, "Nat64Prefix"))
                v = l->nat64_prefix;
        return sd_bus_message_append(reply, "s", strempty(v));
}

static int property_get_bool(sd_bus *bus, const char *path, const char *interface,
                             const char *property, sd_bus_message *reply, void *userdata,
                             sd_bus_error *error)
{
        Link *l = userdata;
        int v = streq(property, "Carrier") ? l->info.carrier : l->info.admin_up;

        return sd_bus_message_append(reply, "b", v);
}

static int property_get_index(sd_bus *bus, const char *path, const char *interface,
                              const char *property, sd_bus_message *reply, void *userdata,
                              sd_bus_error *error)
{
        Link *l = userdata;

        return sd_bus_message_append(reply, "i", (int32_t)l->ifindex);
}

static int property_get_mtu(sd_bus *bus, const char *path, const char *interface,
                            const char *property, sd_bus_message *reply, void *userdata,
                            sd_bus_error *error)
{
        Link *l = userdata;

        return sd_bus_message_append(reply, "u", (uint32_t)l->info.mtu);
}

static int property_get_working_mtu(sd_bus *bus, const char *path, const char *interface,
                                    const char *property, sd_bus_message *reply, void *userdata,
                                    sd_bus_error *error)
{
        Link *l = userdata;

        return sd_bus_message_append(reply, "u", l->working_mtu[streq(property, "WorkingMTU6")]);
}

static int family_number(int family)
{
        return family == AF_INET6 ? 6 : 4;
}

static int property_get_addresses(sd_bus *bus, const char *path, const char *interface,
                                  const char *property, sd_bus_message *reply, void *userdata,
                                  sd_bus_error *error)
{
        Link *l = userdata;
        int r;

        r = sd_bus_message_open_container(reply, 'a', "(isus)");
        if (r < 0)
                return r;
        for (size_t i = 0; i < l->info.n_addrs; i++) {
                const LinkAddress *a = &l->info.addrs[i];
                r = sd_bus_message_append(reply, "(isus)", family_number(a->addr.family),
                                          a->addr.text, (uint32_t)a->prefixlen,
                                          addr_scope_to_string(a->scope));
                if (r < 0)
                        return r;
        }
        return sd_bus_message_close_container(reply);
}

static int property_get_ip_list(sd_bus *bus, const char *path, const char *interface,
                                const char *property, sd_bus_message *reply, void *userdata,
                                sd_bus_error *error)
{
        Link *l = userdata;
        const IpAddr *list = streq(property, "DNS") ? l->info.dns : l->info.gateways;
        size_t n = streq(property, "DNS") ? l->info.n_dns : l->info.n_gateways;
        int r;

        r = sd_bus_message_open_container(reply, 'a', "(is)");
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                r = sd_bus_message_append(reply, "(is)", family_number(list[i].family),
                                          list[i].text);
                if (r < 0)
                        return r;
        }
        return sd_bus_message_close_container(reply);
}

static int property_get_domains(sd_bus *bus, const char *path, const char *interface,
                                const char *property, sd_bus_message *reply, void *userdata,
                                sd_bus_error *error)
{
        Link *l = userdata;
        char *empty[] = {NULL};

        return sd_bus_message_append_strv(reply, l->info.domains ? l->info.domains : empty);
}

static int property_get_ntp_servers(sd_bus *bus, const char *path, const char *interface,
                                    const char *property, sd_bus_message *reply, void *userdata,
                                    sd_bus_error *error)
{
        Link *l = userdata;
        char *empty[] = {NULL};

        return sd_bus_message_append_strv(reply, l->info.ntp_servers ? l->info.ntp_servers : empty);
}

static int property_get_usec(sd_bus *bus, const char *path, const char *interface,
                             const char *property, sd_bus_message *reply, void *userdata,
                             sd_bus_error *error)
{
        Link *l = userdata;

        return sd_bus_message_append(
            reply, "t", streq(property, "LastProbe") ? l->last_probe_usec : l->probe_duration_usec);
}

static int property_get_capport(sd_bus *bus, const char *path, const char *interface,
                                const char *property, sd_bus_message *reply, void *userdata,
                                sd_bus_error *error)
{
        Link *l = userdata;
        const CapportInfo *c = &l->capport;
        int r;

        r = sd_bus_message_open_container(reply, 'a', "{sv}");
        if (r < 0)
                return r;
        if (l->capport_valid) {
                r = sd_bus_message_append(reply, "{sv}", "Captive", "b", (int)c->captive);
                if (r >= 0 && c->user_portal_url)
                        r = sd_bus_message_append(reply, "{sv}", "UserPortalURL", "s",
                                                  c->user_portal_url);
                if (r >= 0 && c->venue_info_url)
                        r = sd_bus_message_append(reply, "{sv}", "VenueInfoURL", "s",
                                                  c->venue_info_url);
                if (r >= 0 && c->has_seconds_remaining)
                        r = sd_bus_message_append(reply, "{sv}", "SecondsRemaining", "t",
                                                  c->seconds_remaining);
                if (r >= 0 && c->has_bytes_remaining)
                        r = sd_bus_message_append(reply, "{sv}", "BytesRemaining", "t",
                                                  c->bytes_remaining);
                if (r >= 0)
                        r = sd_bus_message_append(reply, "{sv}", "CanExtendSession", "b",
                                                  (int)c->can_extend_session);
                if (r < 0)
                        return r;
        }
        if (l->capport_error) {
                r = sd_bus_message_append(reply, "{sv}", "Error", "s", l->capport_error);
                if (r < 0)
                        return r;
        }
        return sd_bus_message_close_container(reply);
}

static int property_get_wifi(sd_bus *bus, const char *path, const char *interface,
                             const char *property, sd_bus_message *reply, void *userdata,
                             sd_bus_error *error)
{
        Link *l = userdata;
        /* the station as the last sync found it (roamd-link-facts.c): what was signalled */
        const WpaStation *st = &l->facts.wifi;
        const char *v = NULL;

        if (streq(property, "WiFiFrequency"))
                return sd_bus_message_append(reply, "u", st->freq);
        if (streq(property, "WiFiSignal"))
                return sd_bus_message_append(reply, "i", st->signal_dbm);
        if (streq(property, "WiFiLinkSpeed"))
                return sd_bus_message_append(reply, "u", st->link_speed);
        if (streq(property, "WiFiState"))
                v = st->wpa_state;
        else if (streq(property, "WiFiSSID"))
                v = st->ssid;
        else if (streq(property, "WiFiBSSID"))
                v = st->bssid;
        else if (streq(property, "WiFiKeyMgmt"))
                v = st->key_mgmt;
        return sd_bus_message_append(reply, "s", strempty(v));
}

#define EC SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE

static int property_get_identity(sd_bus *bus, const char *path, const char *interface,
                                 const char *property, sd_bus_message *reply, void *userdata,
                                 sd_bus_error *error)
{
        Link *l = userdata;
        LinkIdentityView v = {"", "", "", ""};
        const LinkViews *w = l->views;
        int r;

        /* the network is a fact of the link (roamd-link-facts.c); its location the firewall's */
        if (streq(property, "NetworkId"))
                return sd_bus_message_append(reply, "s", l->facts.network_id);
        if (w && w->identity)
                w->identity(l->ifindex, &v, w->identity_userdata);
        if (streq(property, "Location"))
                return sd_bus_message_append(reply, "s", v.location);
        if (streq(property, "LocationSource"))
                return sd_bus_message_append(reply, "s", v.source);
        if (streq(property, "LocationReason"))
                return sd_bus_message_append(reply, "s", v.reason);
        if (streq(property, "LocationWanted"))
                return sd_bus_message_append(reply, "s", strempty(v.wanted));
        r = sd_bus_message_open_container(reply, 'a', "{ss}");
        for (int k = 0; r >= 0 && k < _NETID_FACT_MAX; k++)
                if (l->facts.fact[k] && l->facts.fact[k][0])
                        r = sd_bus_message_append(reply, "{ss}", netid_fact_to_string(k),
                                                  l->facts.fact[k]);
        if (r < 0)
                return r;
        return sd_bus_message_close_container(reply);
}

const sd_bus_vtable link_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_PROPERTY("Index", "i", property_get_index, 0, SD_BUS_VTABLE_PROPERTY_CONST),
    SD_BUS_PROPERTY("Name", "s", property_get_string, 0, EC),
    SD_BUS_PROPERTY("Bearer", "s", property_get_string, 0, EC),
    SD_BUS_PROPERTY("BearerSource", "s", property_get_string, 0, EC),
    SD_BUS_PROPERTY("Kind", "s", property_get_string, 0, EC),
    SD_BUS_PROPERTY("Driver", "s", property_get_string, 0, EC),
    SD_BUS_PROPERTY("HardwareAddress", "s", property_get_string, 0, EC),
    SD_BUS_PROPERTY("MTU", "u", property_get_mtu, 0, EC),
    SD_BUS_PROPERTY("AdminUp", "b", property_get_bool, 0, EC),
    SD_BUS_PROPERTY("Carrier", "b", property_get_bool, 0, EC),
    SD_BUS_PROPERTY("OperState", "s", property_get_string, 0, EC),
    SD_BUS_PROPERTY("State", "s", property_get_string, 0, EC),
    SD_BUS_PROPERTY("Addresses", "a(isus)", property_get_addresses, 0, EC),
    SD_BUS_PROPERTY("Gateways", "a(is)", property_get_ip_list, 0, EC),
    SD_BUS_PROPERTY("DNS", "a(is)", property_get_ip_list, 0, EC),
    SD_BUS_PROPERTY("DNSSource", "s", property_get_string, 0, EC),
    SD_BUS_PROPERTY("Domains", "as", property_get_domains, 0, EC),
    SD_BUS_PROPERTY("NTPServers", "as", property_get_ntp_servers, 0, EC),
    SD_BUS_PROPERTY("CaptivePortalURL", "s", property_get_string, 0, EC),
    SD_BUS_PROPERTY("CaptivePortalURLRejected", "s", property_get_string, 0, EC),
    SD_BUS_PROPERTY("Connectivity", "s", property_get_string, 0, EC),
    SD_BUS_PROPERTY("ConnectivityReason", "s", property_get_string, 0, EC),
    SD_BUS_PROPERTY("Connectivity4", "s", property_get_string, 0, EC),
    SD_BUS_PROPERTY("ConnectivityReason4", "s", property_get_string, 0, EC),
    SD_BUS_PROPERTY("Connectivity6", "s", property_get_string, 0, EC),
    SD_BUS_PROPERTY("ConnectivityReason6", "s", property_get_string, 0, EC),
    SD_BUS_PROPERTY("PortalURL", "s", property_get_string, 0, EC),
    SD_BUS_PROPERTY("Nat64Prefix", "s", property_get_string, 0, EC),
    SD_BUS_PROPERTY("WorkingMTU4", "u", property_get_working_mtu, 0, EC),
    SD_BUS_PROPERTY("WorkingMTU6", "u", property_get_working_mtu, 0, EC),
    SD_BUS_PROPERTY("LastProbe", "t", property_get_usec, 0, EC),
    SD_BUS_PROPERTY("ProbeDuration", "t", property_get_usec, 0, EC),
    SD_BUS_PROPERTY("CaptivePortal", "a{sv}", property_get_capport, 0, EC),
    SD_BUS_PROPERTY("WiFiState", "s", property_get_wifi, 0, EC),
    SD_BUS_PROPERTY("WiFiSSID", "s", property_get_wifi, 0, EC),
    SD_BUS_PROPERTY("WiFiBSSID", "s", property_get_wifi, 0, EC),
    SD_BUS_PROPERTY("WiFiKeyMgmt", "s", property_get_wifi, 0, EC),
    SD_BUS_PROPERTY("WiFiFrequency", "u", property_get_wifi, 0, EC),
    SD_BUS_PROPERTY("WiFiSignal", "i", property_get_wifi, 0, EC),
    SD_BUS_PROPERTY("WiFiLinkSpeed", "u", property_get_wifi, 0, EC),
    SD_BUS_PROPERTY("NetworkId", "s", property_get_identity, 0, EC),
    SD_BUS_PROPERTY("NetworkIdentity", "a{ss}", property_get_identity, 0, EC),
    SD_BUS_PROPERTY("Location", "s", property_get_identity, 0, EC),
    SD_BUS_PROPERTY("LocationSource", "s", property_get_identity, 0, EC),
    SD_BUS_PROPERTY("LocationReason", "s", property_get_identity, 0, EC),
    SD_BUS_PROPERTY("LocationWanted", "s", property_get_identity, 0, EC),
    SD_BUS_VTABLE_END,
};

void link_bus_emit_changed_strv(Link *l, char **names)
{
        int r;

        if (!l->announced || !l->core->bus)
                return;
        if (l->bus_hold > 0) {
                bool oom = false;

                STRV_FOREACH (n, names)
                        if (!strv_contains(l->bus_pending, *n) &&
                            strv_extend(&l->bus_pending, *n) < 0)
                                oom = true;
                if (!oom)
                        return;
                log_oom(); /* better two signals than none */
        }
        r = sd_bus_emit_properties_changed_strv(l->core->bus, l->path, ROAM_LINK_INTERFACE, names);
        if (r < 0)
                log_warning_errno(r, "%s: failed to emit PropertiesChanged: %m",
                                  strempty(l->info.name));
}

void link_bus_emit_changed(Link *l, const char *first, ...)
{
        const char *names[32];
        size_t n = 0;
        va_list ap;

        va_start(ap, first);
        for (const char *p = first; p && n < ELEMENTSOF(names) - 1; p = va_arg(ap, const char *))
                names[n++] = p;
        va_end(ap);
        names[n] = NULL;
        link_bus_emit_changed_strv(l, (char **)names);
}

void link_bus_hold(Link *l)
{
        l->bus_hold++;
}

void link_bus_release(Link *l)
{
        _cleanup_strv_free_ char **names = NULL;

        if (l->bus_hold == 0 || --l->bus_hold > 0)
                return;
        names = TAKE_PTR(l->bus_pending);
        if (names && *names)
                link_bus_emit_changed_strv(l, names);
}

int link_bus_announce(Link *l)
{
        int r;

        if (l->announced)
                return 0;
        l->announced = true;
        if (!l->core->bus)
                return 0;
        r = sd_bus_emit_interfaces_added(l->core->bus, l->path, ROAM_LINK_INTERFACE, NULL);
        if (r < 0)
                return log_warning_errno(r, "%s: failed to emit InterfacesAdded: %m",
                                         strempty(l->info.name));
        return 0;
}

int link_bus_withdraw(Link *l)
{
        int r;

        if (!l->announced)
                return 0;
        l->announced = false;
        if (!l->core->bus)
                return 0;
        r = sd_bus_emit_interfaces_removed(l->core->bus, l->path, ROAM_LINK_INTERFACE, NULL);
        if (r < 0)
                return log_warning_errno(r, "failed to emit InterfacesRemoved for %s: %m", l->path);
        return 0;
}
