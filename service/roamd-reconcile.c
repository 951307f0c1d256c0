/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "roam-log.h"
#include "roam-macro.h"
#include "roamd-reconcile.h"

#define RETRY_FIRST_USEC (250 * USEC_PER_MSEC)
#define RETRY_MAX_USEC   (4 * USEC_PER_SEC)

struct Reconcile {
        sd_event *event;
        sd_event_source *retry;
        reconcile_run_t run;
        reconcile_changed_t changed;
        void *userdata;
        unsigned attempts; /* failed passes in a row */
        bool failed;       /* in the current pass */
        char *reason;      /* NULL: not degraded */
        char *pass_reason; /* the current pass's first failure */
        uint64_t since;    /* CLOCK_REALTIME µs the reason appeared, 0 while none */
};

int reconcile_new(sd_event *event, reconcile_run_t run, reconcile_changed_t changed, void *userdata,
                  Reconcile **ret)
{
        Reconcile *rc = calloc(1, sizeof(*rc));

        if (!rc)
                return -ENOMEM;
        rc->event = sd_event_ref(event);
        rc->run = run;
        rc->changed = changed;
        rc->userdata = userdata;
        *ret = rc;
        return 0;
}

Reconcile *reconcile_free(Reconcile *rc)
{
        if (!rc)
                return NULL;
        sd_event_source_disable_unref(rc->retry);
        sd_event_unref(rc->event);
        free(rc->reason);
        free(rc->pass_reason);
        free(rc);
        return NULL;
}

static int on_retry(sd_event_source *s, uint64_t usec, void *userdata)
{
        Reconcile *rc = userdata;

        log_info("Reconciler: retrying kernel state (attempt %u)", rc->attempts + 1);
        (void)rc->run(rc->userdata);
        return 0;
}

void reconcile_begin(Reconcile *rc)
{
        rc->failed = false;
        free(rc->pass_reason);
        rc->pass_reason = NULL;
}

void reconcile_failed(Reconcile *rc, const char *what, int error)
{
        if (rc->failed)
                return;
        rc->failed = true;
        free(rc->pass_reason);
        if (asprintf(&rc->pass_reason, "%s: %s; retrying", what, strerror(abs(error))) < 0)
                rc->pass_reason = NULL;
}

static void set_reason(Reconcile *rc, char *reason)
{
        if (streq_ptr(rc->reason, reason)) {
                free(reason);
                return;
        }
        log_full_errno(reason ? LOG_WARNING : LOG_NOTICE, 0, "Degraded: %s -> %s",
                       rc->reason ? rc->reason : "no", reason ? reason : "no");
        if (!reason)
                rc->since = 0;
        else if (!rc->reason) {
                struct timespec ts;
                clock_gettime(CLOCK_REALTIME, &ts);
                rc->since = (uint64_t)ts.tv_sec * USEC_PER_SEC + (uint64_t)ts.tv_nsec / 1000;
        }
        free(rc->reason);
        rc->reason = reason;
        if (rc->changed)
                rc->changed(rc->userdata);
}

void reconcile_end(Reconcile *rc)
{
        uint64_t delay;
        int r;

        if (!rc->failed) {
                rc->attempts = 0;
                rc->retry = sd_event_source_disable_unref(rc->retry);
                set_reason(rc, NULL);
                return;
        }
        set_reason(rc, TAKE_PTR(rc->pass_reason) ?: strdup("kernel state incomplete; retrying"));
        delay = RETRY_FIRST_USEC << MIN(rc->attempts, 5u);
        delay = MIN(delay, (uint64_t)RETRY_MAX_USEC);
        rc->attempts++;
        rc->retry = sd_event_source_disable_unref(rc->retry);
        r = sd_event_add_time_relative(rc->event, &rc->retry, CLOCK_MONOTONIC, delay, 0, on_retry,
                                       rc);
        if (r < 0)
                log_error_errno(r, "Cannot schedule the reconciler's retry: %m");
}

const char *reconcile_degraded(Reconcile *rc)
{
        return rc && rc->reason ? rc->reason : "";
}

uint64_t reconcile_degraded_since(Reconcile *rc)
{
        return rc ? rc->since : 0;
}
