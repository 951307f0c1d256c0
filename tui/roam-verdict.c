/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "roam-verdict.h"

const char *roam_verdict_word(const char *verdict)
{
        return *verdict ? verdict : "unknown";
}

static const char *link_label(const RoamLink *l)
{
        return *l->name ? l->name : l->path;
}

/* Where to log in: the portal URL roamd found, else the RFC 8908 user portal URL. */
static const char *portal_login_url(const RoamLink *l)
{
        if (*l->portal_url)
                return l->portal_url;
        if (l->capport.user_portal_url && *l->capport.user_portal_url)
                return l->capport.user_portal_url;
        return NULL;
}

char *roam_global_sentence(const RoamModel *m)
{
        const RoamLink *best = roam_model_best_link(m);

        return roam_state_sentence(
            m->state, best ? link_label(best) : NULL, best ? best->bearer : NULL,
            best ? best->connectivity_reason : NULL, best ? portal_login_url(best) : NULL);
}

void roam_format_age(uint64_t usec, uint64_t now, char *buf, size_t size, uint64_t *ret_next)
{
        static const struct {
                uint64_t unit;
                char suffix;
                uint64_t limit; /* in units: the next unit takes over from here */
        } steps[] = {
            {USEC_PER_SEC, 's', 60},
            {60 * USEC_PER_SEC, 'm', 60},
            {3600 * USEC_PER_SEC, 'h', 24},
            {86400 * USEC_PER_SEC, 'd', UINT64_MAX},
        };
        uint64_t age;

        if (ret_next)
                *ret_next = UINT64_MAX;
        if (usec == 0) {
                snprintf(buf, size, "never");
                return;
        }
        if (usec > now) {
                /* A clock step: the probe "happened in the future". Say so rather than lie. */
                snprintf(buf, size, "just now");
                if (ret_next)
                        *ret_next = usec - now + USEC_PER_SEC;
                return;
        }
        age = now - usec;
        for (size_t i = 0; i < ELEMENTSOF(steps); i++) {
                uint64_t n = age / steps[i].unit;

                if (n >= steps[i].limit)
                        continue;
                snprintf(buf, size, "%" PRIu64 "%c ago", n, steps[i].suffix);
                if (ret_next)
                        *ret_next = (n + 1) * steps[i].unit - age;
                return;
        }
}

void roam_format_duration(uint64_t usec, char *buf, size_t size)
{
        if (usec < USEC_PER_SEC)
                snprintf(buf, size, "%" PRIu64 " ms", (usec + USEC_PER_MSEC / 2) / USEC_PER_MSEC);
        else
                snprintf(buf, size, "%" PRIu64 ".%" PRIu64 " s", usec / USEC_PER_SEC,
                         usec % USEC_PER_SEC / (USEC_PER_SEC / 10));
}

void roam_format_clock(uint64_t usec, char *buf, size_t size)
{
        time_t t = (time_t)(usec / USEC_PER_SEC);
        struct tm tm;

        if (!localtime_r(&t, &tm) || strftime(buf, size, "%H:%M:%S", &tm) == 0)
                snprintf(buf, size, "??:??:??");
}

uint64_t roam_now(void)
{
        const char *e = getenv("ROAM_TEST_NOW");
        struct timespec ts;

        if (e && *e) {
                char *end;
                unsigned long long v;

                errno = 0;
                v = strtoull(e, &end, 10);
                if (errno == 0 && end != e && !*end)
                        return v;
        }
        clock_gettime(CLOCK_REALTIME, &ts);
        return (uint64_t)ts.tv_sec * USEC_PER_SEC + (uint64_t)ts.tv_nsec / 1000;
}
