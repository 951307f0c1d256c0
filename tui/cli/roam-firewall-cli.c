/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "roam-auth-call.h"
#include "roam-bus.h"
#include "roam-cli.h"
#include "roam-client-bus.h"
#include "roam-firewall-cli.h"
#include "roam-firewall.h"
#include "roam-format.h"
#include "roam-json.h"
#include "roam-log.h"
#include "roam-output.h"
#include "roam-util.h"
#include "roam-words.h"

#define LABEL_WIDTH 13
static int log_call_error(const sd_bus_error *e, int r, const char *what, const char *link)
{
        char buf[512];

        if (!sd_bus_error_is_set(e) ||
            sd_bus_error_has_names(e, SD_BUS_ERROR_SERVICE_UNKNOWN, SD_BUS_ERROR_NAME_HAS_NO_OWNER,
                                   SD_BUS_ERROR_NO_REPLY, SD_BUS_ERROR_TIMEOUT))
                return roam_bus_log_call_error(e, r, what);
        roam_fw_call_error_text(e, what, link, buf, sizeof(buf));
        /* roamd's messages may end in a full stop of their own. */
        log_error("%s%s", buf, *buf && buf[strlen(buf) - 1] == '.' ? "" : ".");
        return roam_fw_error_is_denied(e) ? -EACCES : r;
}

/* roam network */

static void field(const char *label, const char *value)
{
        char l[LABEL_WIDTH + 2];

        if (!value || !*value)
                return;
        snprintf(l, sizeof(l), "%s:", label);
        printf("  %-*s %s\n", LABEL_WIDTH, l, value);
}

static int print_network_text(const RoamModel *m)
{
        char buf[256];

        if (*m->firewall_error)
                printf("Firewall files refused: %s\n\n", m->firewall_error);
        if (m->n_links == 0) {
                puts("No links (loopback is never shown).");
                return 0;
        }
        for (size_t i = 0; i < m->n_links; i++) {
                const RoamLink *l = m->links[i];

                if (i > 0)
                        putchar('\n');
                roam_fw_location_text(l, buf, sizeof(buf));
                printf("%s (%s): %s\n", l->name, l->bearer, buf);
                if (!*l->network_id) {
                        field("Why", *l->location_reason
                                         ? l->location_reason
                                         : "no carrier or no address: no rules of a location");
                        continue;
                }
                field("Network", l->network_id);
                field("Location", l->location);
                field("Means", roam_location_words(l->location));
                /* SSH is roamd.conf's choice: as roamd publishes it (said as such by one
                 * that does not) */
                if (!*m->ssh)
                        snprintf(buf, sizeof(buf), "%s; SSH (tcp 22) as [Firewall] SSH= says",
                                 roam_location_lets_in(l->location));
                else
                        snprintf(buf, sizeof(buf), "%s; %s (tcp 22, SSH=%s)",
                                 roam_location_lets_in(l->location),
                                 strv_contains(m->ssh_let_in, l->location) ? "SSH" : "not SSH",
                                 m->ssh);
                field("Lets in", buf);
                field("Why", l->location_reason);
                for (char **p = l->network_identity; p[0] && p[1]; p += 2)
                        field(roam_fw_identity_label(p[0]), p[1]);
                if (roam_link_needs_location(l)) {
                        snprintf(buf, sizeof(buf), "roam network trust home|work|public %s",
                                 l->name);
                        field("Choose", buf);
                }
        }
        return 0;
}

static int strmap_to_json(char *const *l, json_object **ret)
{
        json_object *o = json_object_new_object();
        int r = o ? 0 : -ENOMEM;

        for (char *const *p = l; r >= 0 && p[0] && p[1]; p += 2)
                r = json_add_string(o, p[0], p[1]);
        if (r < 0) {
                json_object_put(o);
                return r;
        }
        *ret = o;
        return 0;
}

static int print_network_json(const RoamModel *m)
{
        _cleanup_(json_object_putp) json_object *doc = json_object_new_object();
        json_object *links = json_object_new_array(), *v = NULL;
        int r;

        if (!doc || !links) {
                json_object_put(links);
                return log_oom();
        }
        r = json_add(doc, "links", links);
        if (r >= 0)
                r = json_add_string(doc, "firewall_error", m->firewall_error);
        if (r >= 0)
                r = strv_to_json(m->locations, &v);
        if (r >= 0)
                r = json_add(doc, "locations", v);
        for (size_t i = 0; r >= 0 && i < m->n_links; i++) {
                const RoamLink *l = m->links[i];
                json_object *o = json_object_new_object();

                r = json_append(links, o);
                if (r >= 0)
                        r = json_add_string(o, "name", l->name);
                if (r >= 0)
                        r = json_add_string(o, "bearer", l->bearer);
                if (r >= 0)
                        r = roam_fw_location_json(l, o);
                if (r >= 0)
                        r = strmap_to_json(l->network_identity, &v);
                if (r >= 0)
                        r = json_add(o, "identity", v);
                if (r >= 0)
                        r = json_add_bool(o, "needs_choice", roam_link_needs_location(l));
        }
        if (r < 0)
                return log_oom();
        return json_print(doc, stdout);
}

static int network_trust(sd_bus *bus, const char *location, const char *link)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL, *reply = NULL;
        _cleanup_(roam_model_freep) RoamModel *m = NULL;
        const RoamLink *l = NULL;
        char what[96];
        int r;

        snprintf(what, sizeof(what), "make this network %s", location);
        r = sd_bus_message_new_method_call(bus, &call, ROAM_BUS_NAME, ROAM_MANAGER_PATH,
                                           ROAM_MANAGER_INTERFACE, "SetLocation");
        if (r >= 0)
                r = sd_bus_message_append(call, "ss", link, location);
        if (r < 0)
                return log_oom();
        r = sd_bus_call(bus, call, 0, &error, &reply);
        if (r < 0)
                return log_call_error(&error, r, what, link);

        /* Says what roamd now shows, not what was asked. */
        r = roam_model_load(bus, &m);
        if (r < 0)
                return r;
        for (size_t i = 0; i < m->n_links && !l; i++)
                if (*link ? streq(m->links[i]->name, link)
                          : streq(m->links[i]->path, m->best_link_path))
                        l = m->links[i];
        if (!l) {
                printf("This network is now %s.\n", location);
                return 0;
        }
        printf("%s: network %s is now %s (%s); its rules are in force.\n", l->name, l->network_id,
               l->location, roam_location_source_words(l->location_source));
        return 0;
}

int roam_network_run(char **args, bool json)
{
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(roam_model_freep) RoamModel *m = NULL;
        size_t n = strv_length(args);
        int r;

        if (n > 0 && !streq(args[0], "trust"))
                return roam_usage_error("network", "unknown action '%s' for 'roam network': trust.",
                                        args[0]);
        if (n > 0 && (n < 2 || n > 3))
                return roam_usage_error("network",
                                        "'roam network trust' needs a location (home, work, "
                                        "public, untrusted or one networks.d defines) and at most "
                                        "one link.");
        if (n > 0 && json)
                return roam_usage_error("network", "--json goes with 'roam network' alone.");

        r = roam_output_clean_stdout();
        if (r < 0)
                return r;
        r = roam_bus_connect(&bus);
        if (r >= 0 && n > 0)
                r = roam_bus_may_ask(bus);
        if (r < 0)
                return r;
        if (n > 0)
                return network_trust(bus, args[1], n == 3 ? args[2] : "");

        r = roam_model_load(bus, &m);
        if (r < 0)
                return r;
        return json ? print_network_json(m) : print_network_text(m);
}

/* roam firewall */

static int get_rules(sd_bus *bus, RoamFwRule **ret, size_t *ret_n)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = sd_bus_call_method(bus, ROAM_BUS_NAME, ROAM_MANAGER_PATH, ROAM_MANAGER_INTERFACE,
                               "GetFirewallRules", &error, &reply, NULL);
        if (r < 0)
                return log_call_error(&error, r, "read the firewall rules", NULL);
        r = roam_fw_rules_read(reply, ret, ret_n);
        if (r < 0)
                return log_error_errno(r, "Failed to read roamd's answer: %m");
        return 0;
}

static const RoamLink *link_by_name(const RoamModel *m, const char *name)
{
        for (size_t i = 0; i < m->n_links; i++)
                if (streq(m->links[i]->name, name))
                        return m->links[i];
        return NULL;
}

/* Columns as wide as their widest cell (at least the header's old widths): roamd's own words
 * for a match ("icmpv6 essentials (errors, echo request, ND, RA, MLD)") are longer than 34. */
static size_t text_columns(const char *s)
{
        size_t n = 0;

        for (; *s; s++)
                n += ((unsigned char)*s & 0xc0) != 0x80; /* a UTF-8 lead byte or ASCII */
        return n;
}

static void print_padded(const char *s, size_t width)
{
        size_t n = text_columns(s);

        fputs(s, stdout);
        for (; n < width; n++)
                putchar(' ');
}

static int print_rules_text(const RoamModel *m, const RoamFwRule *rules, size_t n)
{
        char bytes[32], where[256], origin[512];
        size_t match_w = 34, packets_w = 9, bytes_w = 11;

        if (*m->firewall_error)
                printf("Firewall files refused: %s\n\n", m->firewall_error);
        if (n == 0) {
                puts("No firewall rules in force.");
                return 0;
        }
        for (size_t i = 0; i < n; i++) {
                char num[32];

                match_w = MAX(match_w, text_columns(rules[i].match) + 1);
                packets_w = MAX(packets_w,
                                (size_t)snprintf(num, sizeof(num), "%" PRIu64, rules[i].packets));
                roam_format_bytes(rules[i].bytes, bytes, sizeof(bytes));
                bytes_w = MAX(bytes_w, strlen(bytes) + 2);
        }
        puts("Rules in force, in the order they are evaluated; counters since they were "
             "loaded.");
        for (size_t i = 0; i < n; i++) {
                const RoamFwRule *f = &rules[i];

                if (i == 0 || !streq(f->link, rules[i - 1].link) ||
                    !streq(f->location, rules[i - 1].location)) {
                        const RoamLink *l = link_by_name(m, f->link);

                        if (l && streq(l->location, f->location))
                                roam_fw_location_text(l, where, sizeof(where));
                        else
                                snprintf(where, sizeof(where), "%s", f->location);
                        printf("\n%s: %s\n", *f->link ? f->link : "every link",
                               *where ? where : "no location");
                        printf("  %-4s%-8s", "Dir", "Action");
                        print_padded("Match", match_w);
                        printf("%*s%*s  %s\n", (int)packets_w, "Packets", (int)bytes_w, "Bytes",
                               "From");
                }
                roam_format_bytes(f->bytes, bytes, sizeof(bytes));
                roam_fw_rule_origin(f, origin, sizeof(origin));
                printf("  %-4s%-8s", f->direction, f->action);
                print_padded(f->match, match_w);
                printf("%*" PRIu64 "%*s  %s\n", (int)packets_w, f->packets, (int)bytes_w, bytes,
                       origin);
        }
        return 0;
}

static int print_rules_json(const RoamModel *m, const RoamFwRule *rules, size_t n)
{
        _cleanup_(json_object_putp) json_object *doc = json_object_new_object();
        json_object *a = json_object_new_array();
        int r;

        if (!doc || !a) {
                json_object_put(a);
                return log_oom();
        }
        r = json_add_string(doc, "firewall_error", m->firewall_error);
        if (r >= 0)
                r = json_add(doc, "rules", a);
        for (size_t i = 0; r >= 0 && i < n; i++) {
                const RoamFwRule *f = &rules[i];
                json_object *o = json_object_new_object();

                r = json_append(a, o);
                if (r >= 0)
                        r = json_add_string(o, "link", f->link);
                if (r >= 0)
                        r = json_add_string(o, "location", f->location);
                if (r >= 0)
                        r = json_add_string(o, "direction", f->direction);
                if (r >= 0)
                        r = json_add_string(o, "action", f->action);
                if (r >= 0)
                        r = json_add_string(o, "match", f->match);
                if (r >= 0)
                        r = json_add_string(o, "app", f->app);
                if (r >= 0)
                        r = json_add_string(o, "source", f->source);
                if (r >= 0)
                        r = json_add_string(o, "id", f->id);
                if (r >= 0)
                        r = json_add_uint(o, "packets", f->packets);
                if (r >= 0)
                        r = json_add_uint(o, "bytes", f->bytes);
        }
        if (r < 0)
                return log_oom();
        return json_print(doc, stdout);
}

static int parse_port(const char *s, uint16_t *ret)
{
        char *end;
        unsigned long v;

        errno = 0;
        v = strtoul(s, &end, 10);
        if (errno || end == s || *end || v < 1 || v > 65535 || *s == '-' || *s == '+')
                return -EINVAL;
        *ret = (uint16_t)v;
        return 0;
}

static int firewall_check(sd_bus *bus, const char *proto, uint16_t port, const char *app,
                          const char *link, bool json)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const char *on, *location, *rule, *reason;
        char what[64];
        int accepted, r;

        snprintf(what, sizeof(what), "check %s %u", proto, port);
        r = sd_bus_call_method(bus, ROAM_BUS_NAME, ROAM_MANAGER_PATH, ROAM_MANAGER_INTERFACE,
                               "CheckInbound", &error, &reply, "sqss", proto, port, app, link);
        if (r < 0)
                return log_call_error(&error, r, what, link);
        r = sd_bus_message_read(reply, "bssss", &accepted, &on, &location, &rule, &reason);
        if (r < 0)
                return log_error_errno(r, "Failed to read roamd's answer: %m");

        if (json) {
                _cleanup_(json_object_putp) json_object *o = json_object_new_object();

                if (!o || json_add_string(o, "protocol", proto) < 0 ||
                    json_add_uint(o, "port", port) < 0 || json_add_string(o, "app", app) < 0 ||
                    json_add_string(o, "link", on) < 0 ||
                    json_add_string(o, "location", location) < 0 ||
                    json_add_bool(o, "accepted", accepted) < 0 ||
                    json_add_string(o, "rule", rule) < 0 ||
                    json_add_string(o, "reason", reason) < 0)
                        return log_oom();
                return json_print(o, stdout);
        }
        printf("%s %u%s%s on %s (%s): %s\n", proto, port, *app ? " to app " : "", app, on,
               *location ? location : "no location", accepted ? "let in" : "not let in");
        field("Rule", *rule ? rule : "none: the default policy");
        field("Why", reason);
        return 0;
}

/* The app of `firewall check --app`: one roamd has, or one a rule in force names (a rule may
 * name an app that was never started); anything else is a typo that would read as "not let
 * in" or, worse, as a rule's answer for a different socket. */
static int check_app(sd_bus *bus, const char *app)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        RoamFwRule *rules = NULL;
        size_t n = 0;
        bool named = false;
        int r;

        r = sd_bus_call_method(bus, ROAM_BUS_NAME, ROAM_MANAGER_PATH, ROAM_MANAGER_INTERFACE,
                               "GetApp", &error, NULL, "s", app);
        if (r >= 0)
                return 0;
        if (!sd_bus_error_has_name(&error, ROAM_ERROR_NO_SUCH_APP))
                return roam_bus_check_app(bus, app, NULL); /* says why, as for other commands */
        r = get_rules(bus, &rules, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n && !named; i++)
                named = streq_ptr(rules[i].app, app);
        roam_fw_rules_free(rules, n);
        if (named)
                return 0;
        log_error("no app '%s' (roam apps lists them; no rule in force names it either)", app);
        return -ENOENT;
}

int roam_firewall_run(char **args, const char *app, bool json)
{
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(roam_model_freep) RoamModel *m = NULL;
        RoamFwRule *rules = NULL;
        size_t n = strv_length(args), n_rules = 0;
        uint16_t port = 0;
        int r;

        if (n > 0 && !streq(args[0], "check"))
                return roam_usage_error("firewall",
                                        "unknown action '%s' for 'roam firewall': check.", args[0]);
        if (n == 0 && app)
                return roam_usage_error("firewall", "--app goes with 'roam firewall check'.");
        if (n > 0) {
                if (n < 3 || n > 4)
                        return roam_usage_error("firewall",
                                                "'roam firewall check' needs PROTO PORT [LINK]: "
                                                "tcp 22000, udp 53 wlan0.");
                if (!streq(args[1], "tcp") && !streq(args[1], "udp"))
                        return roam_usage_error(
                            "firewall", "'%s' is not a protocol roam checks: tcp or udp.", args[1]);
                if (parse_port(args[2], &port) < 0)
                        return roam_usage_error("firewall", "'%s' is not a port: 1 to 65535.",
                                                args[2]);
        }

        r = roam_output_clean_stdout();
        if (r < 0)
                return r;
        r = roam_bus_connect(&bus);
        if (r < 0)
                return r;
        if (n > 0) {
                if (app) {
                        r = check_app(bus, app);
                        if (r < 0)
                                return r;
                }
                return firewall_check(bus, args[1], port, app ? app : "", n == 4 ? args[3] : "",
                                      json);
        }

        r = roam_model_load(bus, &m);
        if (r < 0)
                return r;
        r = get_rules(bus, &rules, &n_rules);
        if (r < 0)
                return r;
        r = json ? print_rules_json(m, rules, n_rules) : print_rules_text(m, rules, n_rules);
        roam_fw_rules_free(rules, n_rules);
        return r;
}
