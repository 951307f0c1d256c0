/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>

#include "roam-log.h"
#include "roam-bus.h"
#include "roam-macro.h"
#include "roam-util.h"
#include "roam-text.h"
#include "roamd-core.h"
#include "roamd-wifi-iwd-dpp.h"
#include "roamd-wifi-uri.h"

/* A DPP enrollee through iwd (doc/device-provisioning-api.txt, src/dpp.c; its "busy" is
 * InProgress): the interface's Device object (GetManagedObjects: the Device named ifname, with
 * DeviceProvisioning, which iwd offers on stations only), DeviceProvisioning.StartEnrollee() -> the
 * URI (iwd answers once it disconnected the station and listens; InProgress while DPP runs). iwd
 * itself writes the profile the configurator sent and joins it (dpp_start_connect(): dpp_reset()
 * then network_autoconnect()), so the end is read from the properties: Started goes false, then the
 * station's State says whether iwd joins (connecting, then connected or disconnected). A free
 * before that calls Stop(). */

#define IWD_BUS_NAME   "net.connman.iwd"
#define IWD_DEVICE_IF  "net.connman.iwd.Device"
#define IWD_STATION_IF "net.connman.iwd.Station"
#define IWD_DPP_IF     "net.connman.iwd.DeviceProvisioning"
#define PROPS_IF       "org.freedesktop.DBus.Properties"
#define CALL_TIMEOUT   (60 * USEC_PER_SEC)
#define CONNECT_WAIT   (60 * USEC_PER_SEC)

typedef enum Step {
        STEP_OBJECTS,    /* GetManagedObjects: the Device of ifname */
        STEP_START,      /* StartEnrollee */
        STEP_LISTENING,  /* waiting for a configurator (Started true) */
        STEP_STATE,      /* Started went false: the station's State asked */
        STEP_CONNECTING, /* iwd joins what was sent */
        _STEP_MAX,
        _STEP_INVALID = -EINVAL,
} Step;

typedef struct IwdEnroll {
        WifiEnroll base;
        sd_bus *bus;
        sd_event *event;
        char *ifname;
        char *path; /* the Device (and Station, DeviceProvisioning) object */
        sd_bus_slot *call, *match;
        sd_event_source *timer;
        const WifiEnrollReport *report;
        void *userdata;
        Step step;
        bool saw_connecting; /* the station's State said connecting after DPP ended */
} IwdEnroll;

static void enroll_free(WifiEnroll *base)
{
        IwdEnroll *e = (IwdEnroll *)base;

        if (!e)
                return;
        e->call = sd_bus_slot_unref(e->call);
        if (e->step == STEP_LISTENING || (e->step == STEP_START && e->path))
                /* iwd keeps listening (and the station off autoconnect) until told */
                (void)sd_bus_call_method_async(e->bus, NULL, IWD_BUS_NAME, e->path, IWD_DPP_IF,
                                               "Stop", NULL, NULL, "");
        sd_bus_slot_unref(e->match);
        sd_event_source_disable_unref(e->timer);
        sd_bus_unref(e->bus);
        sd_event_unref(e->event);
        free(e->path);
        free(e->ifname);
        free(e);
}

static void enroll_end(IwdEnroll *e, WifiJoinResult result, const char *fmt, ...) _printf_(3, 4);
static void enroll_end(IwdEnroll *e, WifiJoinResult result, const char *fmt, ...)
{
        const WifiEnrollReport *report = e->report;
        void *ud = e->userdata;
        char words[WIFI_WORDS_MAX];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(words, sizeof(words), fmt, ap);
        va_end(ap);
        log_info("%s: DPP enrollment through iwd ended: %s", e->ifname, words);
        enroll_free(&e->base);
        report->done(result, words, ud);
}

/* iwd's refusal in words, cleaned: its text comes from another daemon. */
static void iwd_words(const sd_bus_error *error, char *out, size_t size)
{
        snprintf(out, size, "%s", error && error->message ? error->message : "no answer");
        roam_text_mark_inplace(out);
}

static int on_connect_timeout(sd_event_source *s, uint64_t usec, void *userdata)
{
        IwdEnroll *e = userdata;

        e->timer = sd_event_source_disable_unref(e->timer);
        enroll_end(e, WIFI_JOIN_TIMEOUT,
                   "iwd did not join the network the configurator sent within 60 s");
        return 0;
}

/* The station's State once DPP ended (or as it changes after). */
static void station_state(IwdEnroll *e, const char *state)
{
        if (streq(state, "connected"))
                enroll_end(e, WIFI_JOIN_CONNECTED, "Joined the network the configurator sent");
        else if (streq(state, "connecting") || streq(state, "roaming")) {
                if (e->step == STEP_CONNECTING)
                        return;
                e->step = STEP_CONNECTING;
                if (sd_event_add_time_relative(e->event, &e->timer, CLOCK_MONOTONIC, CONNECT_WAIT,
                                               0, on_connect_timeout, e) < 0)
                        enroll_end(e, WIFI_JOIN_REFUSED, "roamd could not set a timer");
        } else if (e->step == STEP_CONNECTING || e->saw_connecting)
                enroll_end(e, WIFI_JOIN_REFUSED,
                           "iwd could not join the network the configurator sent");
        else
                enroll_end(e, WIFI_JOIN_REFUSED,
                           "Wi-Fi Easy Connect ended without a network: the configurator "
                           "failed, gave up or sent one iwd cannot use");
}

static int on_state(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        IwdEnroll *e = userdata;
        const sd_bus_error *error = sd_bus_message_get_error(m);
        const char *state;

        e->call = sd_bus_slot_unref(e->call);
        if (error || sd_bus_message_read(m, "v", "s", &state) < 0) {
                enroll_end(e, WIFI_JOIN_REFUSED, "iwd did not say the station's state");
                return 0;
        }
        station_state(e, state);
        return 0;
}

static int on_props(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        IwdEnroll *e = userdata;
        const char *iface, *key, *state;
        int started;

        if (sd_bus_message_read(m, "s", &iface) < 0 ||
            sd_bus_message_enter_container(m, 'a', "{sv}") < 0)
                return 0;
        while (sd_bus_message_enter_container(m, 'e', "sv") > 0) {
                if (sd_bus_message_read(m, "s", &key) < 0)
                        return 0;
                if (streq(iface, IWD_DPP_IF) && streq(key, "Started") &&
                    sd_bus_message_read(m, "v", "b", &started) >= 0) {
                        if (!started && e->step == STEP_LISTENING) {
                                /* what iwd does next is already done when it answers */
                                e->step = STEP_STATE;
                                if (sd_bus_call_method_async(e->bus, &e->call, IWD_BUS_NAME,
                                                             e->path, PROPS_IF, "Get", on_state, e,
                                                             "ss", IWD_STATION_IF, "State") < 0)
                                        enroll_end(e, WIFI_JOIN_REFUSED,
                                                   "iwd could not be asked the station's state");
                        }
                        return 0;
                }
                if (streq(iface, IWD_STATION_IF) && streq(key, "State") &&
                    sd_bus_message_read(m, "v", "s", &state) >= 0) {
                        if (e->step == STEP_CONNECTING)
                                station_state(e, state);
                        else if (e->step == STEP_STATE && streq(state, "connecting"))
                                /* a join that failed before Get's answer */
                                e->saw_connecting = true;
                        return 0;
                }
                if (sd_bus_message_skip(m, "v") < 0 || sd_bus_message_exit_container(m) < 0)
                        return 0;
        }
        return 0;
}

static int on_started(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        IwdEnroll *e = userdata;
        const sd_bus_error *error = sd_bus_message_get_error(m);
        char words[128], err[WIFI_URI_ERROR_MAX];
        const char *uri;
        DppUri d;

        e->call = sd_bus_slot_unref(e->call);
        if (error) {
                iwd_words(error, words, sizeof(words));
                e->step = _STEP_INVALID; /* nothing started: no Stop */
                if (sd_bus_error_has_name(error, "net.connman.iwd.InProgress"))
                        enroll_end(e, WIFI_JOIN_REFUSED,
                                   "iwd runs Wi-Fi Easy Connect on %s already (%s)", e->ifname,
                                   words);
                else
                        enroll_end(e, WIFI_JOIN_REFUSED, "iwd refused Wi-Fi Easy Connect on %s: %s",
                                   e->ifname, words);
                return 0;
        }
        if (sd_bus_message_read(m, "s", &uri) < 0 ||
            dpp_uri_parse(uri, strlen(uri), &d, err, sizeof(err)) < 0) {
                enroll_end(e, WIFI_JOIN_REFUSED, "iwd's enrollee URI is not a DPP: text");
                return 0;
        }
        e->step = STEP_LISTENING;
        log_info("%s: iwd listens for a DPP configurator", e->ifname);
        e->report->uri(uri, e->userdata);
        return 0;
}

/* The Device of ifname among iwd's objects, and whether it offers DeviceProvisioning. */
static int find_device(IwdEnroll *e, sd_bus_message *m, bool *ret_dpp)
{
        const char *path, *iface, *key, *name;
        int r;

        r = sd_bus_message_enter_container(m, 'a', "{oa{sa{sv}}}");
        while (r >= 0 && (r = sd_bus_message_enter_container(m, 'e', "oa{sa{sv}}")) > 0) {
                bool ours = false, dpp = false;

                r = sd_bus_message_read(m, "o", &path);
                if (r >= 0)
                        r = sd_bus_message_enter_container(m, 'a', "{sa{sv}}");
                while (r >= 0 && (r = sd_bus_message_enter_container(m, 'e', "sa{sv}")) > 0) {
                        r = sd_bus_message_read(m, "s", &iface);
                        if (r >= 0 && streq(iface, IWD_DPP_IF))
                                dpp = true;
                        if (r >= 0)
                                r = sd_bus_message_enter_container(m, 'a', "{sv}");
                        while (r >= 0 && (r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                                r = sd_bus_message_read(m, "s", &key);
                                if (r >= 0 && streq(iface, IWD_DEVICE_IF) && streq(key, "Name")) {
                                        r = sd_bus_message_read(m, "v", "s", &name);
                                        if (r >= 0 && streq(name, e->ifname))
                                                ours = true;
                                } else if (r >= 0)
                                        r = sd_bus_message_skip(m, "v");
                                if (r >= 0)
                                        r = sd_bus_message_exit_container(m);
                        }
                        if (r >= 0)
                                r = sd_bus_message_exit_container(m);
                        if (r >= 0)
                                r = sd_bus_message_exit_container(m);
                }
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
                if (r >= 0 && ours) {
                        if (free_and_strdup(&e->path, path) < 0)
                                return -ENOMEM;
                        *ret_dpp = dpp;
                        return 1;
                }
        }
        return r < 0 ? r : 0;
}

static int on_objects(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        IwdEnroll *e = userdata;
        const sd_bus_error *error = sd_bus_message_get_error(m);
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL;
        char words[128];
        bool dpp = false;
        int r;

        e->call = sd_bus_slot_unref(e->call);
        if (error) {
                iwd_words(error, words, sizeof(words));
                enroll_end(e, WIFI_JOIN_REFUSED, "iwd did not list its objects: %s", words);
                return 0;
        }
        r = find_device(e, m, &dpp);
        if (r <= 0) {
                enroll_end(e, WIFI_JOIN_REFUSED, "iwd has no device %s", e->ifname);
                return 0;
        }
        if (!dpp) {
                enroll_end(e, WIFI_JOIN_REFUSED,
                           "iwd offers no Wi-Fi Easy Connect on %s (DeviceProvisioning: on "
                           "stations only)",
                           e->ifname);
                return 0;
        }
        e->step = STEP_START;
        r = sd_bus_match_signal(e->bus, &e->match, IWD_BUS_NAME, e->path, PROPS_IF,
                                "PropertiesChanged", on_props, e);
        if (r >= 0)
                r = sd_bus_message_new_method_call(e->bus, &call, IWD_BUS_NAME, e->path, IWD_DPP_IF,
                                                   "StartEnrollee");
        /* iwd answers once the station is disconnected and it listens */
        if (r >= 0)
                r = sd_bus_call_async(e->bus, &e->call, call, on_started, e, CALL_TIMEOUT);
        if (r < 0) {
                e->step = _STEP_INVALID;
                enroll_end(e, WIFI_JOIN_REFUSED, "iwd could not be asked to enroll");
        }
        return 0;
}

int wifi_iwd_enroll(WifiBackend *b, const WifiEnrollReport *report, void *userdata,
                    WifiEnroll **ret)
{
        IwdEnroll *e;
        int r;

        if (!b->core->bus)
                return -ENOTCONN;
        e = calloc(1, sizeof(*e));
        if (!e)
                return -ENOMEM;
        e->base.free = enroll_free;
        e->bus = sd_bus_ref(b->core->bus);
        e->event = sd_event_ref(b->core->event);
        e->report = report;
        e->userdata = userdata;
        e->step = STEP_OBJECTS;
        e->ifname = strdup(b->ifname);
        r = e->ifname ? sd_bus_call_method_async(e->bus, &e->call, IWD_BUS_NAME, "/",
                                                 "org.freedesktop.DBus.ObjectManager",
                                                 "GetManagedObjects", on_objects, e, "")
                      : -ENOMEM;
        if (r < 0) {
                enroll_free(&e->base);
                return r;
        }
        *ret = &e->base;
        return 0;
}

/* iwd configures the enrollee with the network it is on (ConfigureEnrollee), but its bus says
 * only that DPP stopped (Started false), on success and failure alike: a join roamd cannot
 * end truthfully, so it is not offered (docs/wifi.md). */
int wifi_iwd_configure(WifiBackend *b, const char *uri, const WifiJoinReport *report,
                       void *userdata, WifiEnroll **ret)
{
        return -EOPNOTSUPP;
}
