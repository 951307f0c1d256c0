/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>

#include "roam-bus-map.h"
#include "roam-log.h"
#include "roam-text.h"
#include "roam-util.h"
#include "roamd-dns-client.h"

static void source_clear(DnsBusSource *s)
{
        s->entries = mfree(s->entries);
        s->n_entries = 0;
}

static int source_add(DnsBusSource *s, const DnsBusEntry *e)
{
        DnsBusEntry *n = realloc(s->entries, sizeof(*n) * (s->n_entries + 1));

        if (!n)
                return -ENOMEM;
        s->entries = n;
        s->entries[s->n_entries++] = *e;
        return 0;
}

static bool entries_equal(const DnsBusEntry *a, size_t na, const DnsBusEntry *b, size_t nb)
{
        return na == nb && (na == 0 || memcmp(a, b, na * sizeof(*a)) == 0);
}

/* a(iiay): ifindex, family, raw address. */
static int parse_resolved_dns(sd_bus_message *m, const char *key, void *field)
{
        DnsBusSource *s = field;
        int r, ifindex, family;

        r = sd_bus_message_enter_container(m, 'a', "(iiay)");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_enter_container(m, 'r', "iiay")) > 0) {
                DnsBusEntry e;
                const void *raw;
                size_t len;

                memset(&e, 0, sizeof(e));
                r = sd_bus_message_read(m, "ii", &ifindex, &family);
                if (r < 0)
                        return r;
                r = sd_bus_message_read_array(m, 'y', &raw, &len);
                if (r < 0)
                        return r;
                r = sd_bus_message_exit_container(m);
                if (r < 0)
                        return r;
                if (ifindex <= 0 ||
                    !((family == AF_INET && len == 4) || (family == AF_INET6 && len == 16)))
                        continue;
                e.ifindex = ifindex;
                e.server.family = family;
                if (!inet_ntop(family, raw, e.server.text, sizeof(e.server.text)))
                        continue;
                if (source_add(s, &e) < 0)
                        return -ENOMEM;
        }
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(m);
}

/* a(isb): ifindex, domain, route-only. Route-only domains are not search domains. */
static int parse_resolved_domains(sd_bus_message *m, const char *key, void *field)
{
        DnsBusSource *s = field;
        const char *domain;
        int r, ifindex, route_only;

        r = sd_bus_message_enter_container(m, 'a', "(isb)");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_read(m, "(isb)", &ifindex, &domain, &route_only)) > 0) {
                DnsBusEntry e;

                memset(&e, 0, sizeof(e));
                /* Domains go on our bus and into terminals: exact or not at all. */
                if (ifindex <= 0 || route_only || strlen(domain) >= sizeof(e.domain) ||
                    !roam_text_is_clean(domain, 0))
                        continue;
                e.ifindex = ifindex;
                snprintf(e.domain, sizeof(e.domain), "%s", domain);
                if (source_add(s, &e) < 0)
                        return -ENOMEM;
        }
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(m);
}

/* One interface's entry of NetworkManager's Configuration; a list named twice: the first. */
typedef struct NmEntry {
        char **servers, **domains;
        char ifname[64];
} NmEntry;

static int set_first_strv(sd_bus_message *m, const char *key, void *field)
{
        char ***l = field;

        if (*l)
                return sd_bus_message_skip(m, "as");
        return sd_bus_message_read_strv(m, l);
}

static int set_ifname(sd_bus_message *m, const char *key, void *field)
{
        const char *v;
        int r = sd_bus_message_read_basic(m, 's', &v);

        if (r >= 0)
                snprintf(field, sizeof(((NmEntry *)NULL)->ifname), "%s", v);
        return r;
}

static const BusMapEntry nm_entry_map[] = {
    {"nameservers", "as", set_first_strv, offsetof(NmEntry, servers)},
    {"domains", "as", set_first_strv, offsetof(NmEntry, domains)},
    {"interface", "s", set_ifname, offsetof(NmEntry, ifname)},
    {},
};

/* GetAll reply of DnsManager: Configuration is aa{sv} with nameservers, domains, interface. */
static int parse_nm_config(sd_bus_message *m, const char *key, void *field)
{
        DnsBusSource *s = field;
        int r;

        r = sd_bus_message_enter_container(m, 'a', "a{sv}");
        if (r < 0)
                return r;
        for (;;) {
                _cleanup_strv_free_ char **servers = NULL, **domains = NULL;
                NmEntry ne = {};
                const char *ifname = ne.ifname;

                r = bus_map_read(m, nm_entry_map, &ne);
                servers = ne.servers;
                domains = ne.domains;
                if (r <= 0)
                        break;
                if (!ifname[0])
                        continue;
                STRV_FOREACH (v, servers) {
                        DnsBusEntry e;
                        memset(&e, 0, sizeof(e));
                        snprintf(e.ifname, sizeof(e.ifname), "%s", ifname);
                        if (ip_addr_parse(*v, &e.server) < 0)
                                continue;
                        if (source_add(s, &e) < 0)
                                return -ENOMEM;
                }
                STRV_FOREACH (v, domains) {
                        DnsBusEntry e;
                        memset(&e, 0, sizeof(e));
                        if (strlen(*v) >= sizeof(e.domain) || !roam_text_is_clean(*v, 0))
                                continue;
                        snprintf(e.ifname, sizeof(e.ifname), "%s", ifname);
                        snprintf(e.domain, sizeof(e.domain), "%s", *v);
                        if (source_add(s, &e) < 0)
                                return -ENOMEM;
                }
        }
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(m);
}

/* The members of a GetAll reply that a source reads; the rest are skipped. */
static const BusMapEntry resolved_properties[] = {
    {"DNS", "a(iiay)", parse_resolved_dns, 0},
    {"Domains", "a(isb)", parse_resolved_domains, 0},
    {},
};

static const BusMapEntry nm_properties[] = {
    {"Configuration", "aa{sv}", parse_nm_config, 0},
    {},
};

static void source_refresh(DnsBusSource *s);

static int on_getall_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error)
{
        DnsBusSource *s = userdata;
        DnsBusEntry *old = s->entries;
        size_t n_old = s->n_entries;
        int r = 0;

        s->call_slot = sd_bus_slot_unref(s->call_slot);
        s->entries = NULL;
        s->n_entries = 0;

        if (sd_bus_message_is_method_error(reply, NULL))
                log_debug("%s not available: %s", s->name,
                          sd_bus_message_get_error(reply)->message);
        else {
                r = bus_map_read(
                    reply, s->source == DNS_SOURCE_RESOLVED ? resolved_properties : nm_properties,
                    s);
                if (r < 0) {
                        log_warning_errno(r, "Malformed DNS data from %s, ignoring it: %m",
                                          s->name);
                        source_clear(s);
                }
        }

        if (!entries_equal(old, n_old, s->entries, s->n_entries))
                s->dns->changed(s->dns->userdata);
        free(old);

        if (s->pending_again) {
                s->pending_again = false;
                source_refresh(s);
        }
        return 0;
}

static void source_refresh(DnsBusSource *s)
{
        sd_bus *bus = s->dns->bus;
        int r;

        if (!bus || !bus_name_watch_has_owner(s->owner))
                return;
        if (s->call_slot) {
                s->pending_again = true;
                return;
        }
        r = sd_bus_call_method_async(bus, &s->call_slot, s->name, s->path,
                                     "org.freedesktop.DBus.Properties", "GetAll", on_getall_reply,
                                     s, "s", s->interface);
        if (r < 0)
                log_debug_errno(r, "Failed to ask %s for DNS data: %m", s->name);
}

/* GetNameOwner's first answer and every change: a new owner is read (never activated: a source
 * that does not run has nothing to say), a gone one takes its entries along. */
static int on_owner(BusNameWatch *w, const char *owner, void *userdata)
{
        DnsBusSource *s = userdata;

        if (*owner) {
                source_refresh(s);
                return 0;
        }
        s->call_slot = sd_bus_slot_unref(s->call_slot);
        s->pending_again = false;
        if (s->n_entries > 0) {
                source_clear(s);
                s->dns->changed(s->dns->userdata);
        }
        return 0;
}

static int on_properties_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        source_refresh(userdata);
        return 0;
}

static int source_init(Dns *d, DnsBusSource *s, DnsSource source, const char *name,
                       const char *path, const char *interface)
{
        sd_bus *bus = d->bus;
        int r;

        s->dns = d;
        s->source = source;
        s->name = name;
        s->path = path;
        s->interface = interface;
        if (!bus)
                return 0;

        r = sd_bus_match_signal_async(bus, &s->changed_slot, name, path,
                                      "org.freedesktop.DBus.Properties", "PropertiesChanged",
                                      on_properties_changed, NULL, s);
        if (r < 0)
                return log_error_errno(r, "Failed to watch %s: %m", name);
        r = bus_name_watch_new_full(bus, name, BUS_NAME_WATCH_TELL_FIRST, on_owner, s, &s->owner);
        if (r < 0)
                return log_error_errno(r, "Failed to follow %s: %m", name);
        return 0;
}

static void source_done(DnsBusSource *s)
{
        s->owner = bus_name_watch_free(s->owner);
        s->changed_slot = sd_bus_slot_unref(s->changed_slot);
        s->call_slot = sd_bus_slot_unref(s->call_slot);
        source_clear(s);
}

int dns_client_init(Dns *d)
{
        int r;

        r = source_init(d, &d->resolved, DNS_SOURCE_RESOLVED, "org.freedesktop.resolve1",
                        "/org/freedesktop/resolve1", "org.freedesktop.resolve1.Manager");
        if (r < 0)
                return r;
        return source_init(d, &d->nm, DNS_SOURCE_NETWORKMANAGER, "org.freedesktop.NetworkManager",
                           "/org/freedesktop/NetworkManager/DnsManager",
                           "org.freedesktop.NetworkManager.DnsManager");
}

void dns_client_done(Dns *d)
{
        source_done(&d->resolved);
        source_done(&d->nm);
}

void dns_refresh_bus(Dns *d)
{
        source_refresh(&d->resolved);
        source_refresh(&d->nm);
}

int dns_client_fill(Dns *d, DnsSource source, int ifindex, LinkInfo *info)
{
        DnsBusSource *s = source == DNS_SOURCE_RESOLVED ? &d->resolved : &d->nm;
        IpAddr servers[32];
        size_t n = 0;
        bool known = false;

        for (size_t i = 0; i < s->n_entries; i++) {
                const DnsBusEntry *e = &s->entries[i];

                if (source == DNS_SOURCE_RESOLVED ? e->ifindex != ifindex
                                                  : !streq(e->ifname, info->name))
                        continue;
                known = true;
                if (e->server.family && n < ELEMENTSOF(servers))
                        servers[n++] = e->server;
                else if (!e->server.family && !strv_contains(info->domains, e->domain) &&
                         strv_extend(&info->domains, e->domain) < 0)
                        return -ENOMEM;
        }
        if (!known)
                return 0;
        if (n > 0) {
                info->dns = calloc(n, sizeof(IpAddr));
                if (!info->dns)
                        return -ENOMEM;
                memcpy(info->dns, servers, n * sizeof(IpAddr));
        }
        info->n_dns = n;
        info->dns_source = source;
        return 1;
}
