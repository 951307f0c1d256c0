/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <limits.h>
#include <stdio.h>

#include "roam-bus-map.h"
#include "roam-bus-name.h"
#include "roam-log.h"
#include "roam-macro.h"
#include "roam-util.h"
#include "roamd-client-mm.h"
#include "roamd-nitz.h"

#define MM_PATH          "/org/freedesktop/ModemManager1"
#define MM_MODEM_IFACE   "org.freedesktop.ModemManager1.Modem"
#define MM_3GPP_IFACE    "org.freedesktop.ModemManager1.Modem.Modem3gpp"
#define MM_BEARER_IFACE  "org.freedesktop.ModemManager1.Bearer"
#define MM_TIME_IFACE    "org.freedesktop.ModemManager1.Modem.Time"
#define OM_IFACE         "org.freedesktop.DBus.ObjectManager"
#define PROPERTIES_IFACE "org.freedesktop.DBus.Properties"

typedef struct MMModem {
        char *path;
        uint32_t reg;
        char **bearers;
        /* Modem.Time and what a zone hint needs */
        bool has_time;
        bool tz_has_offset, tz_has_dst;
        int32_t tz_offset, tz_dst; /* NetworkTimezone "offset", "dst-offset" (minutes) */
        char operator_code[8];     /* Modem3gpp.OperatorCode: MCC + MNC */
} MMModem;

/* A modem's network time, kept across GetManagedObjects refreshes (which rebuild the modem
 * table): its GetNetworkTime in flight and its answers so far. */
typedef struct MMTime {
        char *path;
        sd_bus_slot *get;
        NitzTracker tracker;
} MMTime;

typedef struct MMBearer {
        char *path;
        char *iface;
        sd_bus_slot *slot; /* GetAll in flight */
} MMBearer;

struct MMClient {
        sd_bus *bus;
        WatchList change_watches; /* told before a change applies */
        sd_bus_slot *match_added, *match_removed, *match_props, *match_time;
        BusNameWatch *owner;
        sd_bus_slot *refresh;
        MMModem *modems;
        size_t n_modems;
        MMBearer *bearers;
        size_t n_bearers;
        MMTime *times;
        size_t n_times;
        WatchList time_watches;
};

static void before_change(MMClient *c);

/* MM_MODEM_3GPP_REGISTRATION_STATE_*: HOME 1, ROAMING 5, HOME_SMS_ONLY 6, ROAMING_SMS_ONLY 7,
 * HOME_CSFB_NOT_PREFERRED 9, ROAMING_CSFB_NOT_PREFERRED 10; the rest is not registered. */
int mm_registration_roaming(uint32_t state)
{
        switch (state) {
        case 1:
        case 6:
        case 9:
                return 0;
        case 5:
        case 7:
        case 10:
                return 1;
        default:
                return -ENOENT;
        }
}

static void modems_clear(MMClient *c)
{
        for (size_t i = 0; i < c->n_modems; i++) {
                free(c->modems[i].path);
                strv_free(c->modems[i].bearers);
        }
        free(c->modems);
        c->modems = NULL;
        c->n_modems = 0;
}

static void bearers_clear(MMClient *c)
{
        for (size_t i = 0; i < c->n_bearers; i++) {
                free(c->bearers[i].path);
                free(c->bearers[i].iface);
                sd_bus_slot_unref(c->bearers[i].slot);
        }
        free(c->bearers);
        c->bearers = NULL;
        c->n_bearers = 0;
}

static void time_free(MMTime *t)
{
        free(t->path);
        sd_bus_slot_unref(t->get);
}

MMClient *mm_client_free(MMClient *c)
{
        if (!c)
                return NULL;
        watch_list_clear(&c->time_watches);
        watch_list_clear(&c->change_watches);
        for (size_t i = 0; i < c->n_times; i++)
                time_free(&c->times[i]);
        free(c->times);
        sd_bus_slot_unref(c->match_time);
        sd_bus_slot_unref(c->match_added);
        sd_bus_slot_unref(c->match_removed);
        sd_bus_slot_unref(c->match_props);
        bus_name_watch_free(c->owner);
        sd_bus_slot_unref(c->refresh);
        modems_clear(c);
        bearers_clear(c);
        sd_bus_unref(c->bus);
        free(c);
        return NULL;
}

static MMModem *modem_find(MMClient *c, const char *path)
{
        for (size_t i = 0; i < c->n_modems; i++)
                if (streq(c->modems[i].path, path))
                        return &c->modems[i];
        return NULL;
}

static MMBearer *bearer_find(MMClient *c, const char *path)
{
        for (size_t i = 0; i < c->n_bearers; i++)
                if (streq(c->bearers[i].path, path))
                        return &c->bearers[i];
        return NULL;
}

int mm_client_roaming(MMClient *c, const char *ifname)
{
        if (!c)
                return -ENOENT;
        for (size_t i = 0; i < c->n_modems; i++)
                for (size_t j = 0; c->modems[i].bearers && c->modems[i].bearers[j]; j++) {
                        MMBearer *b = bearer_find(c, c->modems[i].bearers[j]);
                        if (b && b->iface && streq(b->iface, ifname))
                                return mm_registration_roaming(c->modems[i].reg);
                }
        return -ENOENT;
}

static int set_bearer_iface(sd_bus_message *m, const char *key, void *field)
{
        MMBearer *b = field;
        const char *s;
        int r = sd_bus_message_read_basic(m, 's', &s);

        if (r < 0)
                return r;
        free(b->iface);
        b->iface = *s ? strdup(s) : NULL;
        return 0;
}

static const BusMapEntry bearer_map[] = {
    {"Interface", "s", set_bearer_iface, 0},
    {},
};

/* Reads the bearer properties it knows from an a{sv}; the message is left after it. */
static int read_bearer_props(MMBearer *b, sd_bus_message *m)
{
        return bus_map_read(m, bearer_map, b);
}

static int on_bearer_props(sd_bus_message *m, void *userdata, sd_bus_error *err)
{
        MMClient *c = userdata;
        const char *path = sd_bus_message_get_path(m);
        MMBearer *b = NULL;

        /* the reply's path is not the bearer's: find it by its slot */
        for (size_t i = 0; i < c->n_bearers; i++)
                if (c->bearers[i].slot == sd_bus_get_current_slot(c->bus))
                        b = &c->bearers[i];
        (void)path;
        if (!b)
                return 0;
        b->slot = sd_bus_slot_unref(b->slot);
        if (sd_bus_message_is_method_error(m, NULL)) {
                log_debug("ModemManager: bearer %s: %s", b->path,
                          sd_bus_message_get_error(m)->message);
                return 0;
        }
        before_change(c);
        if (read_bearer_props(b, m) < 0)
                log_warning("ModemManager: bearer %s: malformed properties ignored", b->path);
        else if (b->iface)
                log_info("ModemManager: bearer %s on %s", b->path, b->iface);
        return 0;
}

static int bearer_track(MMClient *c, const char *path)
{
        MMBearer *nb;
        int r;

        if (bearer_find(c, path))
                return 0;
        nb = realloc(c->bearers, sizeof(MMBearer) * (c->n_bearers + 1));
        if (!nb)
                return -ENOMEM;
        c->bearers = nb;
        nb[c->n_bearers] = (MMBearer){.path = strdup(path)};
        if (!nb[c->n_bearers].path)
                return -ENOMEM;
        r = sd_bus_call_method_async(c->bus, &nb[c->n_bearers].slot, MM_BUS_NAME, path,
                                     PROPERTIES_IFACE, "GetAll", on_bearer_props, c, "s",
                                     MM_BEARER_IFACE);
        c->n_bearers++;
        return r;
}

/* What a modem's property maps are read into. A change (PropertiesChanged) is logged, its
 * new bearers are followed at once, and a changed zone is handed on again. */
typedef struct ModemRead {
        MMClient *c;
        MMModem *md;
        bool change;
        bool zone_changed; /* NetworkTimezone or OperatorCode read */
} ModemRead;

static int set_registration(sd_bus_message *m, const char *key, void *field)
{
        ModemRead *rd = field;
        uint32_t reg;
        int r = sd_bus_message_read_basic(m, 'u', &reg);

        if (r < 0)
                return r;
        if (rd->change && mm_registration_roaming(reg) != mm_registration_roaming(rd->md->reg))
                log_info("ModemManager: %s registration %u -> %u", rd->md->path, rd->md->reg, reg);
        rd->md->reg = reg;
        return 0;
}

static int set_operator_code(sd_bus_message *m, const char *key, void *field)
{
        ModemRead *rd = field;
        const char *code;
        int r = sd_bus_message_read_basic(m, 's', &code);

        if (r < 0)
                return r;
        snprintf(rd->md->operator_code, sizeof(rd->md->operator_code), "%s", code);
        rd->zone_changed = true;
        return 0;
}

static int set_bearers(sd_bus_message *m, const char *key, void *field)
{
        ModemRead *rd = field;
        int r = bus_map_strv(m, key, &rd->md->bearers);

        for (size_t i = 0; r >= 0 && rd->change && rd->md->bearers && rd->md->bearers[i]; i++)
                (void)bearer_track(rd->c, rd->md->bearers[i]);
        return r;
}

static int set_tz_offset(sd_bus_message *m, const char *key, void *field)
{
        MMModem *md = field;
        int r = bus_map_i32(m, key, &md->tz_offset);

        md->tz_has_offset = r >= 0;
        return r;
}

static int set_tz_dst(sd_bus_message *m, const char *key, void *field)
{
        MMModem *md = field;
        int r = bus_map_i32(m, key, &md->tz_dst);

        md->tz_has_dst = r >= 0;
        return r;
}

static const BusMapEntry timezone_map[] = {
    {"offset", "i", set_tz_offset, 0},
    {"dst-offset", "i", set_tz_dst, 0},
    {},
};

/* Modem.Time.NetworkTimezone: a map of its own; what it lacks is not known any more. */
static int set_network_timezone(sd_bus_message *m, const char *key, void *field)
{
        ModemRead *rd = field;
        int r;

        rd->md->tz_has_offset = rd->md->tz_has_dst = false;
        r = bus_map_read(m, timezone_map, rd->md);
        if (r >= 0)
                rd->zone_changed = true;
        return r;
}

static const BusMapEntry modem_map[] = {
    {"Bearers", "ao", set_bearers, 0},
    {},
};

static const BusMapEntry modem_3gpp_map[] = {
    {"RegistrationState", "u", set_registration, 0},
    {"OperatorCode", "s", set_operator_code, 0},
    {},
};

static const BusMapEntry modem_time_map[] = {
    {"NetworkTimezone", "a{sv}", set_network_timezone, 0},
    {},
};

/* The properties read of a modem's interface; NULL: none. */
static const BusMapEntry *modem_iface_map(const char *iface)
{
        if (streq(iface, MM_MODEM_IFACE))
                return modem_map;
        if (streq(iface, MM_3GPP_IFACE))
                return modem_3gpp_map;
        if (streq(iface, MM_TIME_IFACE))
                return modem_time_map;
        return NULL;
}

static int add_modem(MMClient *c, const char *path, MMModem **ret)
{
        MMModem *nm = realloc(c->modems, sizeof(MMModem) * (c->n_modems + 1));

        if (!nm)
                return -ENOMEM;
        c->modems = nm;
        nm[c->n_modems] = (MMModem){.path = strdup(path)};
        if (!nm[c->n_modems].path)
                return -ENOMEM;
        *ret = &nm[c->n_modems++];
        return 0;
}

/* One interface of a modem in GetManagedObjects' answer: registration state, bearer list,
 * network time. */
static int on_modem_interface(sd_bus_message *m, const char *path, const char *iface,
                              void *userdata)
{
        MMClient *c = userdata;
        const BusMapEntry *map = modem_iface_map(iface);
        MMModem *md = modem_find(c, path);
        int r;

        if (!md) {
                r = add_modem(c, path, &md);
                if (r < 0)
                        return r;
        }
        if (streq(iface, MM_TIME_IFACE))
                md->has_time = true;
        if (!map)
                return sd_bus_message_skip(m, "a{sv}");
        return bus_map_read(m, map, &(ModemRead){.c = c, .md = md});
}

static void change_dispatch(void *callback, void *userdata, void *ctx)
{
        ((MMClientChangeFn)callback)(ctx, userdata);
}

/* Each watcher hears of a change before it applies (the usage counted so far goes under the
 * old state). */
static void before_change(MMClient *c)
{
        watch_list_notify(&c->change_watches, change_dispatch, c);
}

unsigned mm_client_change_watch_add(MMClient *c, MMClientChangeFn fn, void *userdata)
{
        return c ? watch_list_add(&c->change_watches, (void *)fn, userdata, NULL) : 0;
}

void mm_client_change_watch_remove(MMClient *c, unsigned id)
{
        if (c)
                (void)watch_list_remove(&c->change_watches, id);
}

unsigned mm_client_time_watch_add(MMClient *c, TimeEventFn fn, void *userdata,
                                  WatchDestroyFn destroy)
{
        return watch_list_add(&c->time_watches, (void *)fn, userdata, destroy);
}

void mm_client_time_watch_remove(MMClient *c, unsigned id)
{
        if (c)
                (void)watch_list_remove(&c->time_watches, id);
}

static void time_notify(MMClient *c, const TimeEvent *ev)
{
        time_event_notify(&c->time_watches, ev);
}

static MMTime *time_find(MMClient *c, const char *path)
{
        for (size_t i = 0; i < c->n_times; i++)
                if (streq(c->times[i].path, path))
                        return &c->times[i];
        return NULL;
}

/* The serving network's MCC from OperatorCode ("26201"): "" when it is not MCC + MNC. */
static void modem_mcc(const MMModem *md, char mcc[static 4])
{
        size_t n = strlen(md->operator_code);

        mcc[0] = 0;
        if (n < 5 || n > 6)
                return;
        for (size_t i = 0; i < n; i++)
                if (md->operator_code[i] < '0' || md->operator_code[i] > '9')
                        return;
        memcpy(mcc, md->operator_code, 3);
        mcc[3] = 0;
        if (nitz_check_mcc(mcc, NULL) < 0)
                mcc[0] = 0;
}

/* The zone hint from NetworkTimezone (or, without it, the offset of the last time string). */
static void modem_hint(MMClient *c, MMModem *md, const NitzTime *from_time)
{
        char witness[64], origin[128];
        const char *reason = NULL;
        TimeZoneHint h;
        NitzTime n;
        int r;

        r = nitz_parse_mm_zone(md->tz_has_offset, md->tz_offset, md->tz_has_dst, md->tz_dst, &n,
                               &reason);
        if (r == -ENODATA && from_time)
                n = *from_time, r = 0;
        if (r < 0) {
                if (r != -ENODATA)
                        log_info("ModemManager: %s: time zone refused (%s)", md->path, reason);
                return;
        }
        modem_mcc(md, n.mcc);
        time_event_modem_witness(md->path, witness, sizeof(witness));
        snprintf(origin, sizeof(origin), "NITZ from modem %s", md->path);
        if (nitz_to_hint(&n, witness, origin, clock_now_usec(CLOCK_BOOTTIME), &h) < 0)
                return;
        time_notify(c, &(TimeEvent){.type = TIME_EVENT_HINT, .hint = &h, .witness = witness});
}

/* One answer of GetNetworkTime or NetworkTimeChanged. */
static void modem_time(MMClient *c, const char *path, const char *s)
{
        MMModem *md = modem_find(c, path);
        MMTime *t = time_find(c, path);
        char witness[64], origin[128];
        const char *reason = NULL;
        usec_t boot = clock_now_usec(CLOCK_BOOTTIME);
        NitzTime n;
        TimeSample sample;
        int r;

        if (!md || !t)
                return;
        r = nitz_parse_mm_time(s, md->tz_has_offset ? md->tz_offset : INT_MIN, &n, &reason);
        if (r == -ENODATA)
                return; /* the modem does not know the time: nothing to say */
        if (r < 0) {
                log_info("ModemManager: %s: network time refused (%s)", path, reason);
                return;
        }
        switch (nitz_track_feed(&t->tracker, n.utc, boot)) {
        case NITZ_TRACK_OK:
                break;
        case NITZ_TRACK_JUMP:
                log_info("ModemManager: %s: network time jumped against the elapsed time", path);
                break;
        case NITZ_TRACK_FLAPPING:
                log_info("ModemManager: %s: network time refused (flapping)", path);
                return;
        case _NITZ_TRACK_VERDICT_MAX:
        case _NITZ_TRACK_VERDICT_INVALID:
                return;
        }
        time_event_modem_witness(path, witness, sizeof(witness));
        snprintf(origin, sizeof(origin), "NITZ from modem %s", path);
        if (nitz_to_sample(&n, witness, origin, boot, &sample) >= 0)
                time_notify(
                    c,
                    &(TimeEvent){.type = TIME_EVENT_SAMPLE, .sample = &sample, .witness = witness});
        if (!md->tz_has_offset)
                modem_hint(c, md, &n);
}

static int on_network_time(sd_bus_message *m, void *userdata, sd_bus_error *err)
{
        MMClient *c = userdata;
        MMTime *t = NULL;
        const char *s;

        for (size_t i = 0; i < c->n_times; i++)
                if (c->times[i].get == sd_bus_get_current_slot(c->bus))
                        t = &c->times[i];
        if (!t)
                return 0;
        t->get = sd_bus_slot_unref(t->get);
        if (sd_bus_message_is_method_error(m, NULL)) {
                log_debug("ModemManager: %s: GetNetworkTime: %s", t->path,
                          sd_bus_message_get_error(m)->message);
                return 0;
        }
        if (sd_bus_message_read(m, "s", &s) < 0) {
                log_info("ModemManager: %s: network time refused (garbage)", t->path);
                return 0;
        }
        _cleanup_free_ char *path = strdup(t->path);
        if (path)
                modem_time(c, path, s);
        return 0;
}

static int on_network_time_changed(sd_bus_message *m, void *userdata, sd_bus_error *err)
{
        MMClient *c = userdata;
        const char *s;

        if (sd_bus_message_read(m, "s", &s) < 0)
                return 0;
        modem_time(c, sd_bus_message_get_path(m), s);
        return 0;
}

static void time_remove(MMClient *c, size_t i)
{
        char witness[64];

        time_event_modem_witness(c->times[i].path, witness, sizeof(witness));
        time_free(&c->times[i]);
        memmove(&c->times[i], &c->times[i + 1], (c->n_times - i - 1) * sizeof(MMTime));
        c->n_times--;
        time_notify(c, &(TimeEvent){.type = TIME_EVENT_GONE, .witness = witness});
}

/* After the modem table was rebuilt: modems with Modem.Time are asked for the time (when they
 * are new), their zone is handed on; those gone are said to be gone. */
static void time_sync(MMClient *c)
{
        for (size_t i = c->n_times; i > 0; i--) {
                MMModem *md = modem_find(c, c->times[i - 1].path);
                if (!md || !md->has_time)
                        time_remove(c, i - 1);
        }
        for (size_t i = 0; i < c->n_modems; i++) {
                MMModem *md = &c->modems[i];
                MMTime *t;
                if (!md->has_time)
                        continue;
                t = time_find(c, md->path);
                if (!t) {
                        MMTime *n = realloc(c->times, (c->n_times + 1) * sizeof(MMTime));
                        if (!n) {
                                log_oom();
                                return;
                        }
                        c->times = n;
                        t = &c->times[c->n_times];
                        *t = (MMTime){.path = strdup(md->path)};
                        if (!t->path) {
                                log_oom();
                                return;
                        }
                        c->n_times++;
                        if (sd_bus_call_method_async(c->bus, &t->get, MM_BUS_NAME, md->path,
                                                     MM_TIME_IFACE, "GetNetworkTime",
                                                     on_network_time, c, NULL) < 0)
                                log_warning("ModemManager: %s: cannot ask the network time",
                                            md->path);
                }
                modem_hint(c, md, NULL);
        }
}

static int on_managed_objects(sd_bus_message *m, void *userdata, sd_bus_error *err)
{
        MMClient *c = userdata;
        int r;

        c->refresh = sd_bus_slot_unref(c->refresh);
        if (sd_bus_message_is_method_error(m, NULL)) {
                log_debug("ModemManager not available: %s", sd_bus_message_get_error(m)->message);
                return 0;
        }
        before_change(c);
        modems_clear(c);
        bearers_clear(c);
        r = bus_map_read_objects(m, on_modem_interface, c);
        if (r < 0)
                log_warning_errno(r, "ModemManager: malformed GetManagedObjects answer: %m");
        /* the bearers of the modems read (before a malformed part too) */
        for (size_t i = 0; i < c->n_modems; i++)
                for (size_t j = 0; c->modems[i].bearers && c->modems[i].bearers[j]; j++) {
                        r = bearer_track(c, c->modems[i].bearers[j]);
                        if (r < 0)
                                log_warning_errno(r, "ModemManager: bearer %s not followed: %m",
                                                  c->modems[i].bearers[j]);
                }
        time_sync(c);
        return 0;
}

static int refresh(MMClient *c)
{
        c->refresh = sd_bus_slot_unref(c->refresh);
        return sd_bus_call_method_async(c->bus, &c->refresh, MM_BUS_NAME, MM_PATH, OM_IFACE,
                                        "GetManagedObjects", on_managed_objects, c, NULL);
}

static int on_objects_changed(sd_bus_message *m, void *userdata, sd_bus_error *err)
{
        (void)refresh(userdata);
        return 0;
}

static int on_owner(BusNameWatch *w, const char *new, void *userdata)
{
        MMClient *c = userdata;
        if (new &&*new)
                return refresh(c);
        /* gone: nothing is known about its modems any more */
        before_change(c);
        modems_clear(c);
        bearers_clear(c);
        time_sync(c);
        return 0;
}

/* PropertiesChanged of a modem or a bearer: applied at once, after the owner's callback. */
static int on_props(sd_bus_message *m, void *userdata, sd_bus_error *err)
{
        MMClient *c = userdata;
        const char *path = sd_bus_message_get_path(m), *iface;
        MMModem *md = modem_find(c, path);
        MMBearer *b = bearer_find(c, path);
        const BusMapEntry *map;
        ModemRead rd;

        if ((!md && !b) || sd_bus_message_read(m, "s", &iface) < 0)
                return 0;
        if (b && streq(iface, MM_BEARER_IFACE)) {
                before_change(c);
                if (read_bearer_props(b, m) < 0)
                        log_warning("ModemManager: bearer %s: malformed change ignored", path);
                return 0;
        }
        map = md ? modem_iface_map(iface) : NULL;
        if (!map)
                return 0;
        before_change(c);
        rd = (ModemRead){.c = c, .md = md, .change = true};
        if (bus_map_read(m, map, &rd) < 0)
                log_debug("ModemManager: %s: malformed change, the rest ignored", path);
        if (rd.zone_changed && md->has_time)
                modem_hint(c, md, NULL);
        return 0;
}

int mm_client_new(sd_bus *bus, MMClient **ret)
{
        MMClient *c = calloc(1, sizeof(*c));
        int r;

        if (!c)
                return -ENOMEM;
        c->bus = sd_bus_ref(bus);
        r = sd_bus_match_signal_async(bus, &c->match_added, MM_BUS_NAME, MM_PATH, OM_IFACE,
                                      "InterfacesAdded", on_objects_changed, NULL, c);
        if (r >= 0)
                r = sd_bus_match_signal_async(bus, &c->match_removed, MM_BUS_NAME, MM_PATH,
                                              OM_IFACE, "InterfacesRemoved", on_objects_changed,
                                              NULL, c);
        if (r >= 0)
                r = sd_bus_add_match_async(
                    bus, &c->match_props,
                    "type='signal',sender='" MM_BUS_NAME "',interface='" PROPERTIES_IFACE
                    "',member='PropertiesChanged',path_namespace='" MM_PATH "'",
                    on_props, NULL, c);
        if (r >= 0)
                r = bus_name_watch_new(bus, MM_BUS_NAME, on_owner, c, &c->owner);
        if (r >= 0)
                r = sd_bus_add_match_async(
                    bus, &c->match_time,
                    "type='signal',sender='" MM_BUS_NAME "',interface='" MM_TIME_IFACE
                    "',member='NetworkTimeChanged',path_namespace='" MM_PATH "'",
                    on_network_time_changed, NULL, c);
        if (r >= 0)
                r = refresh(c);
        if (r < 0) {
                mm_client_free(c);
                return r;
        }
        *ret = c;
        return 0;
}
