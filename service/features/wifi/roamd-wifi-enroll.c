/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A DPP enrollment run as a join (docs/wifi.md "Enroll"): Enroll is answered with the join's
 * id and the URI once the owner listens; the join waits in the step "enrolling" (2 minutes at
 * most), then joins what the configurator sent through the owner's ordinary join (wpa), or
 * takes the owner's own join (iwd); the link's verdict ends it, as for any join. JoinCancel,
 * the timeout and the owner going stop the listening at the owner (wifi_enroll_free()). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roam-bus.h"
#include "roam-log.h"
#include "roam-macro.h"
#include "roamd-core.h"
#include "roamd-wifi.h"

#define ENROLL_WAIT_USEC (120 * USEC_PER_SEC)

bool wifi_enroll_join_end(WifiJoin *j, const char *words)
{
        if (!j->enroll_call)
                return false;
        /* the caller never learnt the id: the call itself says how it ended */
        (void)sd_bus_reply_method_errorf(j->enroll_call, ROAM_ERROR_FAILED, "%s", words);
        j->enroll_call = sd_bus_message_unref(j->enroll_call);
        return true;
}

static int on_enroll_timeout(sd_event_source *s, uint64_t usec, void *userdata)
{
        WifiJoin *j = userdata;

        j->timer = sd_event_source_disable_unref(j->timer);
        wifi_join_finish(j, WIFI_JOIN_TIMEOUT,
                         "No configurator sent a network within 2 minutes (Wi-Fi Easy Connect)");
        return 0;
}

static void on_uri(const char *uri, void *userdata)
{
        WifiJoin *j = userdata;
        WifiIface *i = j->iface;
        int r;

        r = sd_event_add_time_relative(i->service->core->event, &j->timer, CLOCK_MONOTONIC,
                                       ENROLL_WAIT_USEC, 0, on_enroll_timeout, j);
        if (r < 0) {
                wifi_join_finish(j, WIFI_JOIN_REFUSED, "roamd could not set a timer");
                return;
        }
        (void)sd_bus_reply_method_return(j->enroll_call, "us", j->id, uri);
        j->enroll_call = sd_bus_message_unref(j->enroll_call);
        log_info("%s: join %u: DPP enrollment through %s shows its URI", i->ifname, j->id,
                 wifi_owner_to_name(i->owner));
        wifi_join_step(j, WIFI_JOIN_STEP_ENROLLING,
                       "waiting for a phone or another configurator to scan this device's code");
}

static void on_received(const WifiDppCredential *c, void *userdata)
{
        WifiJoin *j = userdata;
        char name[WIFI_SSID_MAX * 4 + 1], words[WIFI_WORDS_MAX];
        WifiJoinRequest q = {
            .ssid_len = c->ssid_len,
            .security = c->security,
            .eap = _WIFI_EAP_INVALID,
            .remember = true,
            .autoconnect = true,
            .passphrase_len = c->passphrase_len,
        };
        int r;

        j->enroll = NULL; /* the owner dropped it */
        j->timer = sd_event_source_disable_unref(j->timer);
        memcpy(q.ssid, c->ssid, c->ssid_len);
        if (wifi_ssid_to_display(c->ssid, c->ssid_len, name, sizeof(name)) < 0)
                snprintf(name, sizeof(name), "(a network)");
        log_info("%s: join %u: a configurator sent %s (%s); joining it", j->iface->ifname, j->id,
                 name, wifi_security_to_string(c->security));
        q.passphrase = strndup(c->passphrase, c->passphrase_len);
        r = q.passphrase ? wifi_join_start_backend(j, &q) : -ENOMEM;
        wifi_join_request_done(&q);
        if (r < 0) {
                snprintf(words, sizeof(words),
                         "roamd could not join %s, which the configurator "
                         "sent (%s)",
                         name, strerror(-r));
                wifi_join_finish(j, WIFI_JOIN_REFUSED, words);
        }
}

static void on_done(WifiJoinResult result, const char *words, void *userdata)
{
        WifiJoin *j = userdata;

        j->enroll = NULL;
        j->timer = sd_event_source_disable_unref(j->timer);
        if (result == WIFI_JOIN_CONNECTED && !j->enroll_call)
                wifi_join_owner_done(j, result, words); /* the owner joined by itself */
        else
                wifi_join_finish(j, result, words);
}

static const WifiEnrollReport enroll_report = {
    .uri = on_uri,
    .received = on_received,
    .done = on_done,
};

int wifi_iface_enroll(WifiIface *i, sd_bus_message *m)
{
        WifiJoin *j;
        int r;

        if (!i->backend)
                return -EOPNOTSUPP;
        if (i->join)
                return -EBUSY;
        j = wifi_join_new(i, sd_bus_message_get_sender(m));
        if (!j)
                return -ENOMEM;
        j->enroll_call = sd_bus_message_ref(m);
        r = i->backend->ops->enroll(i->backend, &enroll_report, j, &j->enroll);
        if (r < 0) {
                wifi_join_free(j);
                return r;
        }
        i->join = j;
        log_info("%s: join %u: DPP enrollment through %s started", i->ifname, j->id,
                 wifi_owner_to_name(i->owner));
        wifi_bus_emit_changed(i, "Join", NULL);
        return 0;
}

int wifi_iface_configure(WifiIface *i, const char *uri, const char *sender, uint32_t *ret)
{
        WifiJoin *j;
        int r;

        if (!i->backend)
                return -EOPNOTSUPP;
        if (i->join)
                return -EBUSY;
        j = wifi_join_new(i, sender);
        if (!j)
                return -ENOMEM;
        /* reported as any join (steps, the passphrase asked, JoinDone shared) */
        r = i->backend->ops->configure(i->backend, uri, &wifi_join_report, j, &j->enroll);
        if (r < 0) {
                wifi_join_free(j);
                return r;
        }
        i->join = j;
        log_info("%s: join %u: DPP configuration of another device through %s started", i->ifname,
                 j->id, wifi_owner_to_name(i->owner));
        wifi_bus_emit_changed(i, "Join", NULL);
        *ret = j->id;
        return 0;
}
