/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <stdio.h>

#include "roam-bus-map.h"
#include "roam-bus-name.h"
#include "roam-log.h"
#include "roam-macro.h"
#include "roam-util.h"
#include "roamd-client-ofono.h"
#include "roamd-nitz.h"

#define MANAGER_IFACE "org.ofono.Manager"
#define NETREG_IFACE  "org.ofono.NetworkRegistration"
#define CONNMAN_IFACE "org.ofono.ConnectionManager"
#define CONTEXT_IFACE "org.ofono.ConnectionContext"
#define NETTIME_IFACE "org.ofono.NetworkTime"

typedef struct OfonoModem {
        OfonoClient *client;
        char *path;
        char *status;  /* NetworkRegistration Status */
        char **ifaces; /* Settings.Interface of its contexts */
        sd_bus_slot *netreg_slot, *contexts_slot, *nettime_slot;
        /* its answers so far (a GetModems refresh starts afresh); a witness once it spoke */
        NitzTracker tracker;
        bool witness;
} OfonoModem;

struct OfonoClient {
        sd_bus *bus;
        WatchList change_watches; /* told before a change applies */
        sd_bus_slot *match_manager, *match_props, *match_contexts, *match_context_props,
            *match_nettime;
        BusNameWatch *owner;
        sd_bus_slot *refresh;
        WatchList time_watches;
        OfonoModem **modems;
        size_t n_modems;
};

static OfonoModem *modem_free(OfonoModem *md)
{
        if (!md)
                return NULL;
        sd_bus_slot_unref(md->netreg_slot);
        sd_bus_slot_unref(md->contexts_slot);
        sd_bus_slot_unref(md->nettime_slot);
        free(md->path);
        free(md->status);
        strv_free(md->ifaces);
        free(md);
        return NULL;
}

static void time_notify(OfonoClient *c, const TimeEvent *ev)
{
        time_event_notify(&c->time_watches, ev);
}

static void change_dispatch(void *callback, void *userdata, void *ctx)
{
        ((OfonoClientChangeFn)callback)(ctx, userdata);
}

/* Each watcher hears of a change before it applies (the usage counted so far goes under the
 * old state). */
static void before_change(OfonoClient *c)
{
        watch_list_notify(&c->change_watches, change_dispatch, c);
}

unsigned ofono_client_change_watch_add(OfonoClient *c, OfonoClientChangeFn fn, void *userdata)
{
        return c ? watch_list_add(&c->change_watches, (void *)fn, userdata, NULL) : 0;
}

void ofono_client_change_watch_remove(OfonoClient *c, unsigned id)
{
        if (c)
                (void)watch_list_remove(&c->change_watches, id);
}

unsigned ofono_client_time_watch_add(OfonoClient *c, TimeEventFn fn, void *userdata,
                                     WatchDestroyFn destroy)
{
        return watch_list_add(&c->time_watches, (void *)fn, userdata, destroy);
}

void ofono_client_time_watch_remove(OfonoClient *c, unsigned id)
{
        if (c)
                (void)watch_list_remove(&c->time_watches, id);
}

static void modems_clear(OfonoClient *c)
{
        for (size_t i = 0; i < c->n_modems; i++) {
                if (c->modems[i]->witness) {
                        char witness[64];
                        time_event_modem_witness(c->modems[i]->path, witness, sizeof(witness));
                        time_notify(c, &(TimeEvent){.type = TIME_EVENT_GONE, .witness = witness});
                }
                modem_free(c->modems[i]);
        }
        free(c->modems);
        c->modems = NULL;
        c->n_modems = 0;
}

OfonoClient *ofono_client_free(OfonoClient *c)
{
        if (!c)
                return NULL;
        watch_list_clear(&c->time_watches);
        watch_list_clear(&c->change_watches);
        sd_bus_slot_unref(c->match_nettime);
        sd_bus_slot_unref(c->match_manager);
        sd_bus_slot_unref(c->match_props);
        sd_bus_slot_unref(c->match_contexts);
        sd_bus_slot_unref(c->match_context_props);
        bus_name_watch_free(c->owner);
        sd_bus_slot_unref(c->refresh);
        modems_clear(c);
        sd_bus_unref(c->bus);
        free(c);
        return NULL;
}

static OfonoModem *modem_find(OfonoClient *c, const char *path)
{
        for (size_t i = 0; path && i < c->n_modems; i++)
                if (streq(c->modems[i]->path, path))
                        return c->modems[i];
        return NULL;
}

int ofono_client_roaming(OfonoClient *c, const char *ifname)
{
        if (!c)
                return -ENOENT;
        for (size_t i = 0; i < c->n_modems; i++) {
                OfonoModem *md = c->modems[i];
                for (size_t j = 0; md->ifaces && md->ifaces[j]; j++)
                        if (streq(md->ifaces[j], ifname) && md->status) {
                                if (streq(md->status, "roaming"))
                                        return 1;
                                if (streq(md->status, "registered"))
                                        return 0;
                        }
        }
        return -ENOENT;
}

static int set_status(OfonoModem *md, const char *status)
{
        char *s = strdup(status);

        if (!s)
                return -ENOMEM;
        if (md->status && !streq(md->status, s))
                log_info("oFono: %s registration %s -> %s", md->path, md->status, s);
        free(md->status);
        md->status = s;
        return 0;
}

static int set_netreg_status(sd_bus_message *m, const char *key, void *field)
{
        const char *s;
        int r = sd_bus_message_read_basic(m, 's', &s);

        return r < 0 ? r : set_status(field, s);
}

static const BusMapEntry netreg_map[] = {
    {"Status", "s", set_netreg_status, 0},
    {},
};

/* NetworkRegistration.GetProperties: a{sv} */
static int on_netreg(sd_bus_message *m, void *userdata, sd_bus_error *err)
{
        OfonoModem *md = userdata;
        OfonoClient *c = md->client;
        int r;

        md->netreg_slot = sd_bus_slot_unref(md->netreg_slot);
        if (sd_bus_message_is_method_error(m, NULL))
                return 0;
        before_change(c);
        r = bus_map_read(m, netreg_map, md);
        if (r < 0)
                log_warning_errno(r, "oFono: %s: malformed registration properties: %m", md->path);
        return 0;
}

/* A context's Settings.Interface: the first one that is not empty. */
static int set_context_iface(sd_bus_message *m, const char *key, void *field)
{
        char **iface = field;
        const char *s;
        int r = sd_bus_message_read_basic(m, 's', &s);

        if (r < 0 || !*s || *iface)
                return r < 0 ? r : 0;
        *iface = strdup(s);
        return *iface ? 0 : -ENOMEM;
}

static const BusMapEntry context_settings_map[] = {
    {"Interface", "s", set_context_iface, 0},
    {},
};

static int set_context_settings(sd_bus_message *m, const char *key, void *field)
{
        return bus_map_read(m, context_settings_map, field);
}

static const BusMapEntry context_map[] = {
    {"Settings", "a{sv}", set_context_settings, 0},
    {},
};

/* The Interface inside a context's Settings (a{sv}); the message is left after them. */
static int read_context(sd_bus_message *m, char **ret_iface)
{
        return bus_map_read(m, context_map, ret_iface);
}

/* ConnectionManager.GetContexts: a(oa{sv}) */
static int on_contexts(sd_bus_message *m, void *userdata, sd_bus_error *err)
{
        OfonoModem *md = userdata;
        OfonoClient *c = md->client;
        char **l = NULL;
        size_t n = 0;
        int r;

        md->contexts_slot = sd_bus_slot_unref(md->contexts_slot);
        if (sd_bus_message_is_method_error(m, NULL))
                return 0;
        r = sd_bus_message_enter_container(m, 'a', "(oa{sv})");
        while (r >= 0 && (r = sd_bus_message_enter_container(m, 'r', "oa{sv}")) > 0) {
                const char *path;
                char *iface = NULL;
                r = sd_bus_message_read(m, "o", &path);
                if (r >= 0)
                        r = read_context(m, &iface);
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
                if (r >= 0 && iface) {
                        char **nl = realloc(l, sizeof(char *) * (n + 2));
                        if (!nl) {
                                free(iface);
                                r = -ENOMEM;
                                break;
                        }
                        l = nl;
                        l[n++] = iface;
                        l[n] = NULL;
                } else
                        free(iface);
        }
        if (r < 0) {
                strv_free(l);
                log_warning_errno(r, "oFono: %s: malformed contexts: %m", md->path);
                return 0;
        }
        before_change(c);
        strv_free(md->ifaces);
        md->ifaces = l;
        for (size_t i = 0; l && l[i]; i++)
                log_info("oFono: %s has a context on %s", md->path, l[i]);
        return 0;
}

static int set_utc(sd_bus_message *m, const char *key, void *field)
{
        OfonoNetworkTime *t = field;

        t->has_utc = true;
        return sd_bus_message_read_basic(m, 'x', &t->utc);
}

static int set_timezone(sd_bus_message *m, const char *key, void *field)
{
        OfonoNetworkTime *t = field;

        t->has_timezone = true;
        return sd_bus_message_read_basic(m, 'i', &t->timezone);
}

static int set_dst(sd_bus_message *m, const char *key, void *field)
{
        OfonoNetworkTime *t = field;

        t->has_dst = true;
        return sd_bus_message_read_basic(m, 'u', &t->dst);
}

static int set_received(sd_bus_message *m, const char *key, void *field)
{
        OfonoNetworkTime *t = field;

        t->has_received = true;
        return sd_bus_message_read_basic(m, 'x', &t->received);
}

/* (the string stays the message's) */
static int set_code(sd_bus_message *m, const char *key, void *field)
{
        return sd_bus_message_read_basic(m, 's', field);
}

static const BusMapEntry nettime_map[] = {
    {"UTC", "x", set_utc, 0},
    {"Timezone", "i", set_timezone, 0},
    {"DST", "u", set_dst, 0},
    {"Received", "x", set_received, 0},
    {"MobileCountryCode", "s", set_code, offsetof(OfonoNetworkTime, mcc)},
    {"MobileNetworkCode", "s", set_code, offsetof(OfonoNetworkTime, mnc)},
    {},
};

/* The NetworkTime dict; the message is left after it. Wrong types are garbage. */
static int read_nettime(sd_bus_message *m, OfonoNetworkTime *t)
{
        *t = (OfonoNetworkTime){};
        return bus_map_read(m, nettime_map, t);
}

/* One NetworkTime dict of a modem: a sample and a zone hint, or a refusal with its reason. */
static void modem_time(OfonoModem *md, sd_bus_message *m)
{
        OfonoClient *c = md->client;
        usec_t boot = clock_now_usec(CLOCK_BOOTTIME);
        const char *reason = NULL;
        char witness[64], origin[128];
        OfonoNetworkTime t;
        TimeZoneHint hint;
        TimeSample sample;
        NitzTime n;
        int r;

        if (read_nettime(m, &t) < 0) {
                log_info("oFono: %s: network time refused (garbage)", md->path);
                return;
        }
        r = nitz_parse_ofono(&t, &n, &reason);
        if (r == -ENODATA)
                return;
        if (r < 0) {
                log_info("oFono: %s: network time refused (%s)", md->path, reason);
                return;
        }
        /* UTC is the network's time when it was received (CLOCK_MONOTONIC seconds): aged to
         * now, so the sample is taken now */
        if (n.utc && t.has_received) {
                int64_t age =
                    (int64_t)(clock_now_usec(CLOCK_MONOTONIC) / USEC_PER_SEC) - t.received;
                if (age < 0 || age > 86400) {
                        log_info("oFono: %s: network time refused (bad-received)", md->path);
                        return;
                }
                n.utc += (usec_t)age * USEC_PER_SEC;
        }
        time_event_modem_witness(md->path, witness, sizeof(witness));
        snprintf(origin, sizeof(origin), "NITZ from oFono modem %s", md->path);
        if (n.utc) {
                switch (nitz_track_feed(&md->tracker, n.utc, boot)) {
                case NITZ_TRACK_OK:
                        break;
                case NITZ_TRACK_JUMP:
                        log_info("oFono: %s: network time jumped against the elapsed time",
                                 md->path);
                        break;
                case NITZ_TRACK_FLAPPING:
                        log_info("oFono: %s: network time refused (flapping)", md->path);
                        n.utc = 0;
                        break;
                case _NITZ_TRACK_VERDICT_MAX:
                case _NITZ_TRACK_VERDICT_INVALID:
                        return;
                }
        }
        md->witness = true;
        if (nitz_to_sample(&n, witness, origin, boot, &sample) >= 0)
                time_notify(
                    c,
                    &(TimeEvent){.type = TIME_EVENT_SAMPLE, .sample = &sample, .witness = witness});
        if (nitz_to_hint(&n, witness, origin, boot, &hint) >= 0)
                time_notify(
                    c, &(TimeEvent){.type = TIME_EVENT_HINT, .hint = &hint, .witness = witness});
}

static int on_nettime(sd_bus_message *m, void *userdata, sd_bus_error *err)
{
        OfonoModem *md = userdata;

        md->nettime_slot = sd_bus_slot_unref(md->nettime_slot);
        if (sd_bus_message_is_method_error(m, NULL)) {
                /* no NetworkTime on this modem (or no time yet): no witness */
                log_debug("oFono: %s: GetNetworkTime: %s", md->path,
                          sd_bus_message_get_error(m)->message);
                return 0;
        }
        modem_time(md, m);
        return 0;
}

static int on_nettime_changed(sd_bus_message *m, void *userdata, sd_bus_error *err)
{
        OfonoClient *c = userdata;
        OfonoModem *md = modem_find(c, sd_bus_message_get_path(m));

        if (md)
                modem_time(md, m);
        return 0;
}

static int modem_load(OfonoModem *md)
{
        OfonoClient *c = md->client;
        int r;

        md->netreg_slot = sd_bus_slot_unref(md->netreg_slot);
        md->contexts_slot = sd_bus_slot_unref(md->contexts_slot);
        r = sd_bus_call_method_async(c->bus, &md->netreg_slot, OFONO_BUS_NAME, md->path,
                                     NETREG_IFACE, "GetProperties", on_netreg, md, NULL);
        if (r >= 0)
                r = sd_bus_call_method_async(c->bus, &md->contexts_slot, OFONO_BUS_NAME, md->path,
                                             CONNMAN_IFACE, "GetContexts", on_contexts, md, NULL);
        if (r >= 0 && !md->nettime_slot)
                r = sd_bus_call_method_async(c->bus, &md->nettime_slot, OFONO_BUS_NAME, md->path,
                                             NETTIME_IFACE, "GetNetworkTime", on_nettime, md, NULL);
        return r;
}

static int modem_add(OfonoClient *c, const char *path)
{
        OfonoModem **nm, *md;

        if (modem_find(c, path))
                return 0;
        nm = realloc(c->modems, sizeof(OfonoModem *) * (c->n_modems + 1));
        if (!nm)
                return -ENOMEM;
        c->modems = nm;
        md = calloc(1, sizeof(*md));
        if (!md)
                return -ENOMEM;
        md->client = c;
        md->path = strdup(path);
        if (!md->path) {
                free(md);
                return -ENOMEM;
        }
        c->modems[c->n_modems++] = md;
        return modem_load(md);
}

static int on_modems(sd_bus_message *m, void *userdata, sd_bus_error *err)
{
        OfonoClient *c = userdata;
        int r;

        c->refresh = sd_bus_slot_unref(c->refresh);
        if (sd_bus_message_is_method_error(m, NULL)) {
                log_debug("oFono not available: %s", sd_bus_message_get_error(m)->message);
                return 0;
        }
        before_change(c);
        modems_clear(c);
        r = sd_bus_message_enter_container(m, 'a', "(oa{sv})");
        while (r >= 0 && (r = sd_bus_message_enter_container(m, 'r', "oa{sv}")) > 0) {
                const char *path;
                r = sd_bus_message_read(m, "o", &path);
                if (r >= 0)
                        r = sd_bus_message_skip(m, "a{sv}");
                if (r >= 0)
                        r = modem_add(c, path);
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
        }
        if (r < 0)
                log_warning_errno(r, "oFono: malformed GetModems answer: %m");
        return 0;
}

static int refresh(OfonoClient *c)
{
        c->refresh = sd_bus_slot_unref(c->refresh);
        return sd_bus_call_method_async(c->bus, &c->refresh, OFONO_BUS_NAME, "/", MANAGER_IFACE,
                                        "GetModems", on_modems, c, NULL);
}

static int on_manager(sd_bus_message *m, void *userdata, sd_bus_error *err)
{
        (void)refresh(userdata);
        return 0;
}

/* ContextAdded/Removed on a modem, or a context's PropertyChanged: its contexts again */
static int on_contexts_changed(sd_bus_message *m, void *userdata, sd_bus_error *err)
{
        OfonoClient *c = userdata;
        const char *path = sd_bus_message_get_path(m);

        for (size_t i = 0; path && i < c->n_modems; i++) {
                size_t n = strlen(c->modems[i]->path);
                if (strncmp(path, c->modems[i]->path, n) == 0 && (!path[n] || path[n] == '/'))
                        (void)modem_load(c->modems[i]);
        }
        return 0;
}

/* NetworkRegistration PropertyChanged(s, v): applied at once, after the owner's callback */
static int on_netreg_changed(sd_bus_message *m, void *userdata, sd_bus_error *err)
{
        OfonoClient *c = userdata;
        OfonoModem *md = modem_find(c, sd_bus_message_get_path(m));
        const char *name, *s;

        if (!md || sd_bus_message_read(m, "s", &name) < 0 || !streq(name, "Status"))
                return 0;
        if (sd_bus_message_read(m, "v", "s", &s) < 0) {
                log_warning("oFono: %s: malformed Status change ignored", md->path);
                return 0;
        }
        before_change(c);
        (void)set_status(md, s);
        return 0;
}

static int on_owner(BusNameWatch *w, const char *new, void *userdata)
{
        OfonoClient *c = userdata;
        if (new &&*new)
                return refresh(c);
        before_change(c);
        modems_clear(c);
        return 0;
}

int ofono_client_new(sd_bus *bus, OfonoClient **ret)
{
        OfonoClient *c = calloc(1, sizeof(*c));
        int r;

        if (!c)
                return -ENOMEM;
        c->bus = sd_bus_ref(bus);
        r = sd_bus_add_match_async(bus, &c->match_manager,
                                   "type='signal',sender='" OFONO_BUS_NAME
                                   "',interface='" MANAGER_IFACE "'",
                                   on_manager, NULL, c);
        if (r >= 0)
                r = sd_bus_add_match_async(bus, &c->match_props,
                                           "type='signal',sender='" OFONO_BUS_NAME
                                           "',interface='" NETREG_IFACE
                                           "',member='PropertyChanged'",
                                           on_netreg_changed, NULL, c);
        if (r >= 0)
                r = sd_bus_add_match_async(bus, &c->match_contexts,
                                           "type='signal',sender='" OFONO_BUS_NAME
                                           "',interface='" CONNMAN_IFACE "'",
                                           on_contexts_changed, NULL, c);
        if (r >= 0)
                r = sd_bus_add_match_async(bus, &c->match_context_props,
                                           "type='signal',sender='" OFONO_BUS_NAME
                                           "',interface='" CONTEXT_IFACE
                                           "',member='PropertyChanged'",
                                           on_contexts_changed, NULL, c);
        if (r >= 0)
                r = bus_name_watch_new(bus, OFONO_BUS_NAME, on_owner, c, &c->owner);
        if (r >= 0)
                r = sd_bus_add_match_async(bus, &c->match_nettime,
                                           "type='signal',sender='" OFONO_BUS_NAME
                                           "',interface='" NETTIME_IFACE
                                           "',member='NetworkTimeChanged'",
                                           on_nettime_changed, NULL, c);
        if (r >= 0)
                r = refresh(c);
        if (r < 0) {
                ofono_client_free(c);
                return r;
        }
        *ret = c;
        return 0;
}
