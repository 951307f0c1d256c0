/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-event.h>

#include "roam-log.h"
#include "roam-macro.h"
#include "roamd-core.h"
#include "roamd-wifi-owner.h"

/* The owner detection on the loop: the probes asked one at a time in wifi_owner_order, the
 * decision from roamd-wifi-owner.c. */

struct WifiOwnerDetect {
        Core *core;
        char *ifname;
        WifiOwner forced;
        const WifiOwnerProbes *probes;
        WifiOwnerFn cb;
        void *userdata;
        WifiOwnerAnswer answers[_WIFI_OWNER_MAX];
        size_t next; /* index into wifi_owner_order of the next owner to ask */
        WifiOwner asking;
        WifiOp *op;
        sd_event_source *defer;
};

WifiOwnerDetect *wifi_owner_detect_free(WifiOwnerDetect *d)
{
        if (!d)
                return NULL;
        if (d->op && d->probes->cancel[d->asking])
                d->probes->cancel[d->asking](d->op);
        sd_event_source_disable_unref(d->defer);
        free(d->ifname);
        free(d);
        return NULL;
}

static void detect_step(WifiOwnerDetect *d);

static int on_defer(sd_event_source *s, void *userdata)
{
        WifiOwnerDetect *d = userdata;
        (void)s;

        sd_event_source_set_enabled(d->defer, SD_EVENT_OFF);
        detect_step(d);
        return 0;
}

/* Each step runs from the loop, never inside the caller or a probe's callback, so cb never
 * runs inside wifi_owner_detect() and a probe that answers at once cannot recurse. */
static void schedule(WifiOwnerDetect *d)
{
        sd_event_source_set_enabled(d->defer, SD_EVENT_ONESHOT);
}

static void on_probe(int error, bool manages, const char *why, void *userdata)
{
        WifiOwnerDetect *d = userdata;
        WifiOwnerAnswer *a = &d->answers[d->asking];

        d->op = NULL;
        a->error = error < 0 ? error : 0;
        a->manages = error >= 0 && manages;
        snprintf(a->why, sizeof(a->why), "%s", why ?: "");
        if (a->manages)
                d->next = ELEMENTSOF(wifi_owner_order);
        schedule(d);
}

static void detect_step(WifiOwnerDetect *d)
{
        while (d->next < ELEMENTSOF(wifi_owner_order)) {
                WifiOwner o = wifi_owner_order[d->next++];
                WifiOwnerAnswer *a = &d->answers[o];
                int r;

                if (d->forced >= 0 && o != d->forced)
                        continue;
                a->asked = true;
                if (!d->probes->probe[o]) {
                        snprintf(a->why, sizeof(a->why), "roamd cannot ask %s here",
                                 wifi_owner_to_name(o));
                        continue;
                }
                d->asking = o;
                r = d->probes->probe[o](d->core, d->ifname, on_probe, d, &d->op);
                if (r >= 0)
                        return; /* on_probe goes on */
                a->error = r;
        }

        char why[WIFI_WORDS_MAX * 2];
        WifiOwner owner = wifi_owner_decide(d->forced, d->answers, why, sizeof(why));

        log_info("Wi-Fi on %s: %s (%s)", d->ifname, wifi_owner_to_name(owner), why);
        d->cb(owner, why, d->userdata); /* may free d */
}

int wifi_owner_detect(Core *core, const char *ifname, WifiOwner forced,
                      const WifiOwnerProbes *probes, WifiOwnerFn cb, void *userdata,
                      WifiOwnerDetect **ret)
{
        WifiOwnerDetect *d;
        int r;

        d = calloc(1, sizeof(*d));
        if (!d)
                return -ENOMEM;
        *d = (WifiOwnerDetect){
            .core = core,
            .forced = forced,
            .probes = probes,
            .cb = cb,
            .userdata = userdata,
            .asking = _WIFI_OWNER_INVALID,
        };
        d->ifname = strdup(ifname);
        if (!d->ifname) {
                free(d);
                return -ENOMEM;
        }
        r = sd_event_add_defer(core->event, &d->defer, on_defer, d);
        if (r < 0) {
                wifi_owner_detect_free(d);
                return r;
        }
        *ret = d;
        return 0;
}
