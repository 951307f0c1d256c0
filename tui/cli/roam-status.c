/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roam-client-bus.h"
#include "roam-firewall.h"
#include "roam-format.h"
#include "roam-json.h"
#include "roam-log.h"
#include "roam-enforcement.h"
#include "roam-status.h"
#include "roam-util.h"
#include "roam-verdict.h"

/* Text layout: "  Label:" in a column of LABEL_WIDTH, values from VALUE_COLUMN, lines wrapped
 * at LINE_WIDTH where values can be split (lists), never inside a value. */
#define LINE_WIDTH   80
#define LABEL_WIDTH  15
#define VALUE_COLUMN (2 + LABEL_WIDTH + 1)

static const char *const link_state_description_table[_ROAM_LINK_STATE_MAX] = {
    [ROAM_LINK_STATE_NO_CARRIER] = "down or no carrier",
    [ROAM_LINK_STATE_NO_ADDRESS] = "carrier, but no address",
    [ROAM_LINK_STATE_LINK_LOCAL] = "only link-local addresses, not usable",
    [ROAM_LINK_STATE_ADDRESSED] = "usable address, no default route",
    [ROAM_LINK_STATE_ROUTABLE] = "usable address and default route",
};

static const char *link_state_description(RoamLinkState s)
{
        if (s < 0 || s >= _ROAM_LINK_STATE_MAX)
                return NULL;
        return link_state_description_table[s];
}

static const char *dns_source_description(const char *source)
{
        static const struct {
                const char *source;
                const char *words;
        } table[] = {
            {"config", "the roamd configuration"}, {"resolved", "systemd-resolved"},
            {"networkmanager", "NetworkManager"},  {"dhcpcd", "dhcpcd"},
            {"resolv.conf", "/etc/resolv.conf"},
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++)
                if (streq(table[i].source, source))
                        return table[i].words;
        return source;
}

static const char *scope_description(const char *scope)
{
        if (streq(scope, "link"))
                return "link-local";
        if (streq(scope, "host"))
                return "host only";
        return scope;
}

static void print_label(FILE *f, const char *label)
{
        fprintf(f, "  %-*s ", LABEL_WIDTH, label);
}

static void print_field(FILE *f, const char *label, const char *value)
{
        print_label(f, label);
        fprintf(f, "%s\n", value);
}

/* One item a line, the first next to the label. */
static void print_lines(FILE *f, const char *label, char *const *items)
{
        print_label(f, label);
        if (!items || !items[0]) {
                fputs("none\n", f);
                return;
        }
        for (size_t i = 0; items[i]; i++)
                fprintf(f, "%*s%s\n", i > 0 ? VALUE_COLUMN : 0, "", items[i]);
}

/* Items joined by ", " and then tail (if any) after a space, wrapped at LINE_WIDTH. */
static void print_wrapped(FILE *f, const char *label, char *const *items, const char *tail)
{
        size_t col = VALUE_COLUMN;
        size_t n = strv_length(items);

        print_label(f, label);
        for (size_t i = 0; i <= n; i++) {
                const char *word = i < n ? items[i] : tail;
                bool comma = i + 1 < n;
                size_t len;

                if (!word)
                        break;
                len = strlen(word) + comma;
                if (i > 0) {
                        if (col + 1 + len > LINE_WIDTH) {
                                fprintf(f, "\n%*s", VALUE_COLUMN, "");
                                col = VALUE_COLUMN;
                        } else {
                                fputc(' ', f);
                                col++;
                        }
                }
                fputs(word, f);
                if (comma)
                        fputc(',', f);
                col += len;
        }
        fputc('\n', f);
}

static const char *family_name(int family)
{
        switch (family) {
        case 4:
                return "IPv4";
        case 6:
                return "IPv6";
        }
        return "unknown family";
}

/* words, wrapped at LINE_WIDTH with lines after the first indented by indent. */
static void print_sentence(FILE *f, const char *words, size_t col, size_t indent)
{
        const char *p = words;

        while (*p) {
                size_t len = strcspn(p, " ");

                if (p != words) {
                        if (col + 1 + len > LINE_WIDTH) {
                                fprintf(f, "\n%*s", (int)indent, "");
                                col = indent;
                        } else {
                                fputc(' ', f);
                                col++;
                        }
                }
                fwrite(p, 1, len, f);
                col += len;
                p += len;
                p += strspn(p, " ");
        }
        fputc('\n', f);
}

/* The same sentence as the TUI and plain mode say (shared/roam-words.c), then what keeps
 * app enforcement from being whole. */
static int print_global_state(const RoamModel *m, FILE *f)
{
        _cleanup_free_ char *sentence = roam_global_sentence(m);
        _cleanup_strv_free_ char **notes = NULL;
        int r;

        fprintf(f, "State: %s\n", sentence ? sentence : "unknown");
        r = roam_enforcement_notes(m, &notes);
        if (r < 0)
                return r;
        STRV_FOREACH (n, notes) {
                fputs("Warning: ", f);
                print_sentence(f, *n, strlen("Warning: "), strlen("Warning: "));
        }
        return 0;
}

static int print_link(const RoamModel *m, const RoamLink *l, FILE *f)
{
        _cleanup_strv_free_ char **device = NULL, **addresses = NULL, **gateways = NULL,
                                 **dns = NULL;
        _cleanup_free_ char *dns_tail = NULL;
        const char *description;
        int r;

        /* Heading: the name, and what sets this link apart. */
        fprintf(f, "%s (index %d", *l->name ? l->name : "unnamed link", l->index);
        if (roam_link_is_virtual(l))
                fputs(", virtual: never counts for the global state", f);
        else if (l == roam_model_best_link(m))
                fputs(", best link", f);
        fputs(")\n", f);

        print_label(f, "Bearer:");
        fprintf(f, "%s%s\n", *l->bearer ? l->bearer : "unknown",
                streq(l->bearer_source, "config") ? " (config)" : "");

        description = link_state_description(l->state_enum);
        print_label(f, "State:");
        if (description)
                fprintf(f, "%s (%s)\n", l->state, description);
        else
                fprintf(f, "%s\n", *l->state ? l->state : "unknown");

        /* Which firewall profile is in force, in words (docs/firewall.md); an older roamd sends
         * neither property. */
        if (*l->network_id || *l->location) {
                char where[160];

                roam_fw_location_text(l, where, sizeof(where));
                print_field(f, "Location:", where);
        }

        print_label(f, "Connectivity:");
        fprintf(f, "%s (%s)\n", roam_verdict_word(l->connectivity),
                roam_reason_short(l->connectivity_reason));
        if (streq(l->connectivity, "portal") && *l->portal_url) {
                print_label(f, "Log in at:");
                fprintf(f, "%s\n", l->portal_url);
        }
        if (l->last_probe) {
                char age[32], took[32];

                roam_format_age(l->last_probe, roam_now(), age, sizeof(age), NULL);
                roam_format_duration(l->probe_duration, took, sizeof(took));
                print_label(f, "Last probe:");
                fprintf(f, "%s, took %s\n", age, took);
        }

        print_field(f, "Carrier:", l->carrier ? "yes" : "no");
        {
                char wifi[160];
                roam_link_wifi_text(l, wifi, sizeof(wifi));
                if (*wifi)
                        print_field(f, "WiFi:", wifi);
        }

        print_label(f, "Interface:");
        fprintf(f, "%s (operational state: %s)\n", l->admin_up ? "up" : "down",
                *l->oper_state ? l->oper_state : "unknown");

        if (*l->kind && strv_extend(&device, l->kind) < 0)
                return -ENOMEM;
        if (*l->driver && roam_strv_extendf(&device, "driver %s", l->driver) < 0)
                return -ENOMEM;
        if (*l->hwaddr && roam_strv_extendf(&device, "address %s", l->hwaddr) < 0)
                return -ENOMEM;
        if (roam_strv_extendf(&device, "MTU %" PRIu32, l->mtu) < 0)
                return -ENOMEM;
        print_wrapped(f, "Device:", device, NULL);

        for (size_t i = 0; i < l->n_addresses; i++) {
                const RoamAddress *a = &l->addresses[i];

                r = roam_strv_extendf(&addresses, "%s/%" PRIu32 " (%s)", a->address, a->prefix,
                                      scope_description(a->scope));
                if (r < 0)
                        return r;
        }
        print_lines(f, "Addresses:", addresses);

        for (size_t i = 0; i < l->n_gateways; i++) {
                const RoamServer *g = &l->gateways[i];

                if (*g->address)
                        r = strv_extend(&gateways, g->address);
                else
                        r = roam_strv_extendf(&gateways, "%s default route without a gateway",
                                              family_name(g->family));
                if (r < 0)
                        return r;
        }
        print_lines(f, "Gateways:", gateways);

        for (size_t i = 0; i < l->n_dns; i++) {
                r = strv_extend(&dns, l->dns[i].address);
                if (r < 0)
                        return r;
        }
        if (l->n_dns == 0) {
                r = strv_extend(&dns, "none");
                if (r < 0)
                        return r;
        }
        if (*l->dns_source && !streq(l->dns_source, "none") &&
            asprintf(&dns_tail, "(from %s)", dns_source_description(l->dns_source)) < 0)
                return -ENOMEM;
        print_wrapped(f, "DNS servers:", dns, dns_tail);

        if (l->domains[0])
                print_wrapped(f, "Search domains:", l->domains, NULL);
        if (l->ntp_servers[0])
                print_wrapped(f, "NTP servers:", l->ntp_servers, "(from DHCP)");

        /* RFC 7050: IPv4-only destinations are reached through this prefix (DNS64). */
        if (*l->nat64_prefix) {
                print_label(f, "NAT64 prefix:");
                fprintf(f, "%s (announced by the network's DNS64)\n", l->nat64_prefix);
        }

        /* Behind a path MTU black hole (reason mtu): what still passes. */
        {
                char mtu[80];
                roam_link_working_mtu_text(l, mtu, sizeof(mtu));
                if (*mtu)
                        print_field(f, "Path MTU:", mtu);
        }

        if (*l->captive_portal_url) {
                print_label(f, "Captive portal:");
                fprintf(f, "API at %s\n", l->captive_portal_url);
        }

        return 0;
}

int roam_status_print_text(const RoamModel *m, FILE *f)
{
        int r;

        r = print_global_state(m, f);
        if (r < 0)
                return r;

        if (m->n_links == 0) {
                fputs("\nNo links (loopback is never shown).\n", f);
                return 0;
        }

        for (size_t i = 0; i < m->n_links; i++) {
                fputc('\n', f);
                r = print_link(m, m->links[i], f);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int servers_to_json(const RoamServer *s, size_t n, json_object **ret)
{
        _cleanup_(json_object_putp) json_object *array = NULL;
        int r;

        array = json_object_new_array();
        if (!array)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                _cleanup_(json_object_putp) json_object *o = json_object_new_object();

                if (!o)
                        return -ENOMEM;
                r = json_add_int(o, "family", s[i].family);
                if (r >= 0)
                        r = json_add_string(o, "address", s[i].address);
                if (r >= 0)
                        r = json_append(array, TAKE_PTR(o));
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(array);
        return 0;
}

static int addresses_to_json(const RoamLink *l, json_object **ret)
{
        _cleanup_(json_object_putp) json_object *array = NULL;
        int r;

        array = json_object_new_array();
        if (!array)
                return -ENOMEM;
        for (size_t i = 0; i < l->n_addresses; i++) {
                const RoamAddress *a = &l->addresses[i];
                _cleanup_(json_object_putp) json_object *o = json_object_new_object();

                if (!o)
                        return -ENOMEM;
                r = json_add_int(o, "family", a->family);
                if (r >= 0)
                        r = json_add_string(o, "address", a->address);
                if (r >= 0)
                        r = json_add_int(o, "prefix", a->prefix);
                if (r >= 0)
                        r = json_add_string(o, "scope", a->scope);
                if (r >= 0)
                        r = json_append(array, TAKE_PTR(o));
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(array);
        return 0;
}

static int link_to_json(const RoamLink *l, json_object **ret)
{
        _cleanup_(json_object_putp) json_object *o = NULL;
        json_object *addresses = NULL, *gateways = NULL, *dns = NULL, *domains = NULL, *ntp = NULL;
        int r;

        o = json_object_new_object();
        if (!o)
                return -ENOMEM;

        /* The order of the keys is the documented one. */
        if ((r = json_add_string(o, "name", l->name)) < 0 ||
            (r = json_add_int(o, "index", l->index)) < 0 ||
            (r = json_add_string(o, "bearer", l->bearer)) < 0 ||
            (r = json_add_string(o, "bearer_source", l->bearer_source)) < 0 ||
            (r = json_add_string(o, "kind", l->kind)) < 0 ||
            (r = json_add_string(o, "driver", l->driver)) < 0 ||
            (r = json_add_string(o, "hardware_address", l->hwaddr)) < 0 ||
            (r = json_add_int(o, "mtu", l->mtu)) < 0 ||
            (r = json_add_bool(o, "admin_up", l->admin_up)) < 0 ||
            (r = json_add_bool(o, "carrier", l->carrier)) < 0 ||
            (r = json_add_string(o, "oper_state", l->oper_state)) < 0 ||
            (r = json_add_string(o, "state", l->state)) < 0)
                return r;

        r = addresses_to_json(l, &addresses);
        if (r >= 0)
                r = json_add(o, "addresses", addresses);
        if (r >= 0)
                r = servers_to_json(l->gateways, l->n_gateways, &gateways);
        if (r >= 0)
                r = json_add(o, "gateways", gateways);
        if (r >= 0)
                r = servers_to_json(l->dns, l->n_dns, &dns);
        if (r >= 0)
                r = json_add(o, "dns", dns);
        if (r >= 0)
                r = json_add_string(o, "dns_source", l->dns_source);
        if (r >= 0)
                r = strv_to_json(l->domains, &domains);
        if (r >= 0)
                r = json_add(o, "domains", domains);
        if (r >= 0)
                r = json_add_string(o, "captive_portal_url", l->captive_portal_url);
        /* Connectivity, after the older keys: scripts that index the old ones still work. */
        if (r >= 0)
                r = json_add_string(o, "connectivity", l->connectivity);
        if (r >= 0)
                r = json_add_string(o, "connectivity_reason", l->connectivity_reason);
        if (r >= 0)
                r = json_add_string(o, "connectivity4", l->connectivity4);
        if (r >= 0)
                r = json_add_string(o, "connectivity_reason4", l->connectivity_reason4);
        if (r >= 0)
                r = json_add_string(o, "connectivity6", l->connectivity6);
        if (r >= 0)
                r = json_add_string(o, "connectivity_reason6", l->connectivity_reason6);
        if (r >= 0)
                r = json_add_string(o, "portal_url", l->portal_url);
        if (r >= 0)
                r = json_add_string(o, "nat64_prefix", l->nat64_prefix);
        if (r >= 0)
                r = json_add_int(o, "working_mtu4", l->working_mtu4);
        if (r >= 0)
                r = json_add_int(o, "working_mtu6", l->working_mtu6);
        if (r >= 0)
                r = l->last_probe ? json_add_int(o, "last_probe_usec", (int64_t)l->last_probe)
                                  : json_add_null(o, "last_probe_usec");
        if (r >= 0)
                r = json_add_int(o, "probe_duration_usec", (int64_t)l->probe_duration);
        if (r >= 0)
                r = json_add_string(o, "wifi_state", l->wifi_state);
        if (r >= 0)
                r = json_add_string(o, "wifi_ssid", l->wifi_ssid);
        if (r >= 0)
                r = l->wifi_signal ? json_add_int(o, "wifi_signal_dbm", l->wifi_signal)
                                   : json_add_null(o, "wifi_signal_dbm");
        if (r >= 0)
                r = l->wifi_link_speed ? json_add_int(o, "wifi_link_speed_mbit", l->wifi_link_speed)
                                       : json_add_null(o, "wifi_link_speed_mbit");
        if (r >= 0)
                r = roam_fw_location_json(l, o);
        if (r >= 0) {
                char where[160];

                roam_fw_location_text(l, where, sizeof(where));
                r = json_add_string(o, "location_text", where);
        }
        /* after the older keys: scripts that index them still work */
        if (r >= 0)
                r = strv_to_json(l->ntp_servers, &ntp);
        if (r >= 0)
                r = json_add(o, "ntp_servers", ntp);
        if (r < 0)
                return r;

        *ret = TAKE_PTR(o);
        return 0;
}

int roam_status_to_json(const RoamModel *m, json_object **ret)
{
        _cleanup_(json_object_putp) json_object *root = NULL, *links = NULL;
        const RoamLink *best = roam_model_best_link(m), *dflt = roam_model_default_link(m);
        int r;

        root = json_object_new_object();
        links = json_object_new_array();
        if (!root || !links)
                return -ENOMEM;

        r = json_add_string(root, "state", m->state);
        if (r >= 0)
                r = best ? json_add_string(root, "best_link", best->name)
                         : json_add_null(root, "best_link");
        /* state is this link's verdict: the one the default app's traffic takes */
        if (r >= 0)
                r = dflt ? json_add_string(root, "default_link", dflt->name)
                         : json_add_null(root, "default_link");
        if (r >= 0)
                r = json_add_string(root, "state_reason", strempty(m->state_reason));
        if (r >= 0)
                r = json_add_string(root, "version", m->version);
        if (r >= 0)
                r = json_add_string(root, "degraded", strempty(m->degraded));
        if (r >= 0)
                r = m->degraded_since
                        ? json_add_int(root, "degraded_since_usec", (int64_t)m->degraded_since)
                        : json_add_null(root, "degraded_since_usec");
        if (r >= 0) {
                json_object *conflicts = NULL;

                r = strv_to_json(m->mark_conflicts, &conflicts);
                if (r >= 0)
                        r = json_add(root, "mark_conflicts", conflicts);
        }
        if (r >= 0)
                r = json_add_string(root, "firewall_mask_suggestion", strempty(m->mask_suggestion));
        if (r < 0)
                return r;

        for (size_t i = 0; i < m->n_links; i++) {
                json_object *link = NULL;

                r = link_to_json(m->links[i], &link);
                if (r >= 0)
                        r = json_append(links, link);
                if (r < 0)
                        return r;
        }

        r = json_add(root, "links", TAKE_PTR(links));
        if (r < 0)
                return r;

        *ret = TAKE_PTR(root);
        return 0;
}

int roam_status_print_json(const RoamModel *m, FILE *f)
{
        _cleanup_(json_object_putp) json_object *root = NULL;
        int r;

        r = roam_status_to_json(m, &root);
        if (r < 0)
                return r;

        return json_print(root, f);
}

int roam_status_run(bool json)
{
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(roam_model_freep) RoamModel *m = NULL;
        int r;

        r = roam_bus_connect(&bus);
        if (r < 0)
                return r;

        r = roam_model_load(bus, &m);
        if (r < 0)
                return r;

        r = json ? roam_status_print_json(m, stdout) : roam_status_print_text(m, stdout);
        if (r == -ENOMEM)
                return log_oom();
        if (r < 0)
                return log_error_errno(r, "Failed to show the status: %m");
        return 0;
}
