/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "roam-auth-call.h"
#include "roam-bus.h"
#include "roam-client-bus.h"
#include "roam-firewall.h"
#include "roam-format.h"
#include "roam-json.h"
#include "roam-log.h"
#include "roam-util.h"
#include "roam-words.h"

/* FIREWALL-API.md names InvalidArgument; roamd's other methods answer InvalidArguments. */
#define ERROR_INVALID_ARGUMENT "org.roam1.Error.InvalidArgument"

void roam_fw_rules_free(RoamFwRule *rules, size_t n)
{
        for (size_t i = 0; rules && i < n; i++) {
                free(rules[i].link);
                free(rules[i].location);
                free(rules[i].direction);
                free(rules[i].action);
                free(rules[i].match);
                free(rules[i].app);
                free(rules[i].source);
                free(rules[i].id);
        }
        free(rules);
}

int roam_fw_rules_read(sd_bus_message *m, RoamFwRule **ret, size_t *ret_n)
{
        RoamFwRule *rules = NULL;
        size_t n = 0;
        int r;

        r = sd_bus_message_enter_container(m, 'a', "(sssssssstt)");
        if (r < 0)
                return r;
        for (;;) {
                const char *s[8];
                uint64_t packets, bytes;
                RoamFwRule *b;

                r = sd_bus_message_read(m, "(sssssssstt)", &s[0], &s[1], &s[2], &s[3], &s[4], &s[5],
                                        &s[6], &s[7], &packets, &bytes);
                if (r <= 0)
                        break;
                b = reallocarray(rules, n + 1, sizeof(*rules));
                if (!b) {
                        r = -ENOMEM;
                        break;
                }
                rules = b;
                rules[n++] = (RoamFwRule){
                    .link = strdup(s[0]),
                    .location = strdup(s[1]),
                    .direction = strdup(s[2]),
                    .action = strdup(s[3]),
                    .match = strdup(s[4]),
                    .app = strdup(s[5]),
                    .source = strdup(s[6]),
                    .id = strdup(s[7]),
                    .packets = packets,
                    .bytes = bytes,
                };
                b = &rules[n - 1];
                if (!b->link || !b->location || !b->direction || !b->action || !b->match ||
                    !b->app || !b->source || !b->id) {
                        r = -ENOMEM;
                        break;
                }
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(m);
        if (r < 0) {
                roam_fw_rules_free(rules, n);
                return r;
        }
        *ret = rules;
        *ret_n = n;
        return 0;
}

void roam_fw_rule_origin(const RoamFwRule *f, char *buf, size_t size)
{
        size_t ns = strlen(f->source), ni = strlen(f->id);

        if (ni == 0 || (ns >= ni && streq(f->source + ns - ni, f->id)))
                snprintf(buf, size, "%s", f->source);
        else if (ns == 0 || strncmp(f->id, f->source, ns) == 0)
                snprintf(buf, size, "%s", f->id);
        else
                snprintf(buf, size, "%s, rule %s", f->source, f->id);
}

const char *roam_fw_identity_label(const char *key)
{
        static const struct {
                const char *key, *label;
        } table[] = {
            {"interface", "Interface"},
            {"bearer", "Bearer"},
            {"ssid", "SSID"},
            {"bssid", "BSSID"},
            {"gateway-mac", "Gateway MAC"},
            {"dhcp-server", "DHCP server"},
            {"domain", "Domain"},
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++)
                if (streq(table[i].key, key))
                        return table[i].label;
        return key;
}

int roam_fw_identity_text(const RoamLink *l, char *buf, size_t size)
{
        size_t n = 0;

        buf[0] = 0;
        for (char **p = l->network_identity; p[0] && p[1]; p += 2) {
                if (streq(p[0], "interface") || streq(p[0], "bearer"))
                        continue;
                n += (size_t)snprintf(buf + n, n < size ? size - n : 0, "%s%s %s",
                                      n > 0 ? ", " : "", roam_fw_identity_label(p[0]), p[1]);
        }
        return (int)n;
}

bool roam_fw_location_pending(const RoamLink *l)
{
        return *l->location_wanted && !streq(l->location_wanted, l->location);
}

int roam_fw_location_json(const RoamLink *l, json_object *o)
{
        int r = json_add_string(o, "network_id", l->network_id);

        if (r >= 0)
                r = json_add_string(o, "location", l->location);
        if (r >= 0)
                r = json_add_string(o, "location_source", l->location_source);
        if (r >= 0)
                r = json_add_string(o, "location_reason", l->location_reason);
        if (r >= 0)
                r = json_add_string(o, "location_wanted", l->location_wanted);
        return r;
}

void roam_fw_location_text(const RoamLink *l, char *buf, size_t size)
{
        int n;

        if (!*l->network_id && !*l->location)
                n = snprintf(buf, size, "no network");
        else if (!*l->location)
                n = snprintf(buf, size, "no location in force");
        else if (roam_link_needs_location(l))
                n = snprintf(buf, size, "%s until you choose", l->location);
        else if (*l->location_source)
                n = snprintf(buf, size, "%s, %s", l->location,
                             roam_location_source_words(l->location_source));
        else
                n = snprintf(buf, size, "%s", l->location);
        /* the kernel refused the new location's rules: the old ones (above) are in force */
        if (roam_fw_location_pending(l) && n >= 0 && (size_t)n < size)
                (void)snprintf(buf + n, size - (size_t)n, "; %s %s", l->location_wanted,
                               ROAM_LOCATION_NOT_IN_FORCE);
}

bool roam_fw_ssh_note(const RoamModel *m, const char *location, char *buf, size_t size)
{
        if (size > 0)
                *buf = 0;
        if (!*m->ssh || !strv_contains(m->ssh_let_in, location))
                return false;
        (void)snprintf(buf, size, "SSH still let in: SSH=%s", m->ssh);
        return true;
}

bool roam_fw_error_is_denied(const sd_bus_error *e)
{
        return sd_bus_error_has_names(e, ROAM_ERROR_ACCESS_DENIED, SD_BUS_ERROR_ACCESS_DENIED,
                                      SD_BUS_ERROR_INTERACTIVE_AUTHORIZATION_REQUIRED);
}

void roam_fw_call_error_text(const sd_bus_error *e, const char *what, const char *link, char *buf,
                             size_t size)
{
        const char *msg = e->message && *e->message ? e->message : e->name;
        char on[80];

        snprintf(on, sizeof(on), "%s%s", link && *link ? " on " : "", link && *link ? link : "");
        if (roam_fw_error_is_denied(e)) {
                char why[256];

                snprintf(buf, size, "Not allowed to %s%s: %s", what, on,
                         roam_bus_denied_reason(e, why, sizeof(why)));
        } else if (sd_bus_error_has_names(e, SD_BUS_ERROR_SERVICE_UNKNOWN,
                                          SD_BUS_ERROR_NAME_HAS_NO_OWNER))
                snprintf(buf, size, "Cannot %s%s: roamd is not running", what, on);
        else if (sd_bus_error_has_names(e, SD_BUS_ERROR_UNKNOWN_METHOD))
                snprintf(buf, size, "Cannot %s: this roamd has no firewall (an older version)",
                         what);
        else if (sd_bus_error_has_names(e, ROAM_ERROR_NO_SUCH_LINK, ERROR_INVALID_ARGUMENT,
                                        ROAM_ERROR_INVALID_ARGS, ROAM_ERROR_FAILED))
                snprintf(buf, size, "Cannot %s%s: %s", what, on, msg);
        else
                snprintf(buf, size, "Cannot %s%s: roamd answered %s (%s)", what, on, msg, e->name);
}

struct RoamFwCall {
        RoamFwCall **list, *next;
        sd_bus_slot *slot;
        char link[64], location[64];
        bool first_join;
        RoamFwCallDone done;
        void *userdata;
};

static void call_free(RoamFwCall *c)
{
        for (RoamFwCall **p = c->list; *p; p = &(*p)->next)
                if (*p == c) {
                        *p = c->next;
                        break;
                }
        sd_bus_slot_unref(c->slot);
        free(c);
}

static int on_set_location(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        RoamFwCall *c = userdata;

        c->done(c->link, c->location, c->first_join, sd_bus_message_get_error(m), c->userdata);
        call_free(c);
        return 0;
}

int roam_fw_set_location_async(sd_bus *bus, RoamFwCall **list, const char *link,
                               const char *location, bool first_join, RoamFwCallDone done,
                               void *userdata)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        RoamFwCall *c = calloc(1, sizeof(*c));
        int r;

        if (!c)
                return -ENOMEM;
        *c = (RoamFwCall){.list = list,
                          .next = *list,
                          .first_join = first_join,
                          .done = done,
                          .userdata = userdata};
        snprintf(c->link, sizeof(c->link), "%s", link);
        snprintf(c->location, sizeof(c->location), "%s", location);
        *list = c;
        r = sd_bus_message_new_method_call(bus, &m, ROAM_BUS_NAME, ROAM_MANAGER_PATH,
                                           ROAM_MANAGER_INTERFACE, "SetLocation");
        if (r >= 0)
                r = sd_bus_message_append(m, "ss", link, location);
        /* polkit may want a password for it (roam-auth-call.h) */
        if (r >= 0)
                r = roam_auth_call_async(bus, &c->slot, m, on_set_location, c, NULL);
        if (r < 0)
                call_free(c);
        return r;
}

void roam_fw_calls_free(RoamFwCall **list)
{
        while (*list)
                call_free(*list);
}

/* Logs a failed call in words; -EHOSTDOWN when roamd is not running. */
