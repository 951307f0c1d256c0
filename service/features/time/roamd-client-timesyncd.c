/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roam-bus-map.h"
#include "roam-bus-name.h"
#include "roam-log.h"
#include "roam-macro.h"
#include "roam-util.h"
#include "roamd-client-timesyncd.h"
#include "roamd-ntp-message.h"

#define TIMESYNCD_PATH   "/org/freedesktop/timesync1"
#define TIMESYNCD_IFACE  "org.freedesktop.timesync1.Manager"
#define PROPERTIES_IFACE "org.freedesktop.DBus.Properties"
#define WITNESS          "ntp"

struct TimesyncdClient {
        sd_bus *bus;
        TimeEventFn on_time;
        void *userdata;
        sd_bus_slot *match_props, *get;
        BusNameWatch *owner;
        char server[64];          /* ServerName, when it is plain text */
        usec_t root_distance_max; /* RootDistanceMaxUSec: timesyncd's own limit */
        bool have_sample;
        char refused[160]; /* the last refusal, said once */
};

TimesyncdClient *timesyncd_client_free(TimesyncdClient *c)
{
        if (!c)
                return NULL;
        sd_bus_slot_unref(c->match_props);
        bus_name_watch_free(c->owner);
        sd_bus_slot_unref(c->get);
        sd_bus_unref(c->bus);
        free(c);
        return NULL;
}

static void gone(TimesyncdClient *c)
{
        TimeEvent ev = {.type = TIME_EVENT_GONE, .witness = WITNESS};

        if (!c->have_sample)
                return;
        c->have_sample = false;
        c->on_time(&ev, c->userdata);
}

/* A server name is said to the user: printable ASCII only (a name or an address). */
static void server_update(TimesyncdClient *c, const char *name)
{
        size_t n = strlen(name);

        c->server[0] = 0;
        if (n >= sizeof(c->server))
                return;
        for (size_t i = 0; i < n; i++)
                if (name[i] < 0x21 || name[i] > 0x7e)
                        return;
        memcpy(c->server, name, n + 1);
}

static int read_message(sd_bus_message *m, NtpMessage *ret)
{
        const void *refid;
        size_t n;
        int spike, r;

        r = sd_bus_message_enter_container(m, 'v', "(uuuuittayttttbtt)");
        if (r < 0)
                return r;
        r = sd_bus_message_enter_container(m, 'r', "uuuuittayttttbtt");
        if (r < 0)
                return r;
        r = sd_bus_message_read(m, "uuuuitt", &ret->leap, &ret->version, &ret->mode, &ret->stratum,
                                &ret->precision, &ret->root_delay, &ret->root_dispersion);
        if (r >= 0)
                r = sd_bus_message_read_array(m, 'y', &refid, &n);
        if (r >= 0)
                r = sd_bus_message_read(m, "ttttbtt", &ret->origin, &ret->receive, &ret->transmit,
                                        &ret->destination, &spike, &ret->packet_count,
                                        &ret->jitter);
        if (r < 0)
                return r;
        ret->spike = spike;
        r = sd_bus_message_exit_container(m);
        if (r >= 0)
                r = sd_bus_message_exit_container(m);
        return r;
}

static void message_update(TimesyncdClient *c, const NtpMessage *msg)
{
        TimeSample s;
        char reason[160];
        TimeEvent ev = {.type = TIME_EVENT_SAMPLE, .sample = &s, .witness = WITNESS};
        int r;

        r = ntp_message_to_sample(msg, c->root_distance_max, clock_now_usec(CLOCK_REALTIME),
                                  clock_now_usec(CLOCK_BOOTTIME), &s, reason, sizeof(reason));
        if (r == -ENODATA)
                return;
        if (r < 0) {
                if (!streq(reason, c->refused))
                        log_info("timesyncd: its last NTP packet is refused: %s", reason);
                snprintf(c->refused, sizeof(c->refused), "%s", reason);
                return;
        }
        c->refused[0] = 0;
        snprintf(s.origin, sizeof(s.origin), "systemd-timesyncd%s%s",
                 c->server[0] ? ", server " : "", c->server);
        c->have_sample = true;
        c->on_time(&ev, c->userdata);
}

typedef struct PropsRead {
        TimesyncdClient *client;
        NtpMessage msg;
        bool have_msg;
} PropsRead;

static int set_message(sd_bus_message *m, const char *key, void *field)
{
        PropsRead *p = field;
        int r = read_message(m, &p->msg);

        p->have_msg = r >= 0;
        return r;
}

static int set_server(sd_bus_message *m, const char *key, void *field)
{
        PropsRead *p = field;
        const char *s;
        int r = sd_bus_message_read_basic(m, 's', &s);

        if (r >= 0)
                server_update(p->client, s);
        return r;
}

static int set_root_distance_max(sd_bus_message *m, const char *key, void *field)
{
        PropsRead *p = field;

        return sd_bus_message_read_basic(m, 't', &p->client->root_distance_max);
}

static const BusMapEntry props_map[] = {
    {"NTPMessage", NULL, set_message, 0}, /* read_message() checks the variant itself */
    {"ServerName", "s", set_server, 0},
    {"RootDistanceMaxUSec", "t", set_root_distance_max, 0},
    {},
};

/* The properties of a GetAll answer or a PropertiesChanged signal (a{sv}). */
static int read_props(TimesyncdClient *c, sd_bus_message *m)
{
        PropsRead p = {.client = c};
        int r = bus_map_read(m, props_map, &p);

        if (r < 0)
                return r;
        if (p.have_msg)
                message_update(c, &p.msg);
        return 0;
}

static int on_get(sd_bus_message *m, void *userdata, sd_bus_error *err)
{
        TimesyncdClient *c = userdata;

        (void)err;
        c->get = sd_bus_slot_unref(c->get);
        if (sd_bus_message_is_method_error(m, NULL)) {
                log_debug("timesyncd: %s", sd_bus_message_get_error(m)->message);
                return 0;
        }
        if (read_props(c, m) < 0)
                log_warning("timesyncd: malformed properties ignored");
        return 0;
}

static int get_all(TimesyncdClient *c)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        c->get = sd_bus_slot_unref(c->get);
        r = sd_bus_message_new_method_call(c->bus, &m, TIMESYNCD_BUS_NAME, TIMESYNCD_PATH,
                                           PROPERTIES_IFACE, "GetAll");
        if (r >= 0)
                r = sd_bus_message_append(m, "s", TIMESYNCD_IFACE);
        /* asking never starts timesyncd: roamd follows the clock daemon that runs */
        if (r >= 0)
                r = sd_bus_message_set_auto_start(m, false);
        if (r >= 0)
                r = sd_bus_call_async(c->bus, &c->get, m, on_get, c, 0);
        return r;
}

static int on_props(sd_bus_message *m, void *userdata, sd_bus_error *err)
{
        TimesyncdClient *c = userdata;
        const char *iface;

        (void)err;
        if (sd_bus_message_read(m, "s", &iface) < 0 || !streq(iface, TIMESYNCD_IFACE))
                return 0;
        /* ServerName does not emit changes: all is read again, the packet with its server */
        (void)get_all(c);
        return 0;
}

static int on_owner(BusNameWatch *w, const char *new, void *userdata)
{
        TimesyncdClient *c = userdata;
        if (*new)
                (void)get_all(c);
        else {
                c->get = sd_bus_slot_unref(c->get);
                gone(c);
        }
        return 0;
}

int timesyncd_client_new(sd_bus *bus, TimeEventFn on_time, void *userdata, TimesyncdClient **ret)
{
        TimesyncdClient *c = calloc(1, sizeof(*c));
        int r;

        if (!c)
                return -ENOMEM;
        c->bus = sd_bus_ref(bus);
        c->on_time = on_time;
        c->userdata = userdata;
        r = sd_bus_match_signal_async(bus, &c->match_props, TIMESYNCD_BUS_NAME, TIMESYNCD_PATH,
                                      PROPERTIES_IFACE, "PropertiesChanged", on_props, NULL, c);
        if (r >= 0)
                r = bus_name_watch_new(bus, TIMESYNCD_BUS_NAME, on_owner, c, &c->owner);
        if (r >= 0)
                r = get_all(c);
        if (r < 0) {
                timesyncd_client_free(c);
                return log_error_errno(r, "Cannot watch timesyncd: %m");
        }
        *ret = c;
        return 0;
}
