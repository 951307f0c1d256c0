/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/socket.h>

#include "roamd-chrony-tracking.h"

#define USEC_PER_SEC_CHRONY 1000000.0
/* 2200-01-01: far beyond what a sane clock says, far below what overflows */
#define CHRONY_MAX_TIME_USEC (7258118400ULL * 1000000ULL)
/* a correction beyond a day is no slew and no sane step: refused */
#define CHRONY_MAX_CORRECTION_SEC 86400.0

/* seconds to µs, rounded (in range: checked by the caller; no libm) */
static int64_t to_usec(double sec)
{
        double us = sec * USEC_PER_SEC_CHRONY;

        return (int64_t)(us >= 0 ? us + 0.5 : us - 0.5);
}

static int refuse(char *reason, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int refuse(char *reason, size_t size, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(reason, size, fmt, ap);
        va_end(ap);
        return -EINVAL;
}

const char *chrony_tracking_reference(const ChronyTracking *t, char *buf, size_t size)
{
        char name[INET6_ADDRSTRLEN] = "";
        uint32_t id = t->ref_id;

        if (t->family == AF_INET || t->family == AF_INET6)
                (void)inet_ntop(t->family, t->addr, name, sizeof(name));
        else {
                /* a reference clock's refid: up to 4 printable characters, as chronyc shows */
                size_t n = 0;
                for (int i = 24; i >= 0; i -= 8) {
                        char c = (char)(id >> i);
                        if (c == 0)
                                break;
                        name[n++] = c >= 0x21 && c <= 0x7e ? c : '?';
                }
                name[n] = 0;
                if (n == 0)
                        snprintf(name, sizeof(name), "%08X", (unsigned)id);
        }
        snprintf(buf, size, "%s, stratum %u", name, (unsigned)t->stratum);
        return buf;
}

int chrony_tracking_to_sample(const ChronyTracking *t, usec_t sent_realtime, usec_t realtime_now,
                              usec_t boottime_now, TimeSample *ret, char *reason, size_t size)
{
        double corr = t->current_correction, distance;
        int64_t corr_usec;
        usec_t rtt;

        if (t->leap_status == 3)
                return refuse(reason, size, "chronyd is not synchronised (leap status %u)",
                              t->leap_status);
        /* Feedback: chronyd following roamd's own reference clock says back what roamd told
         * it; taken as a witness it would vouch for the consensus that made it, and keep a
         * wrong agreed time settled on its own echo. */
        if (t->ref_id == CHRONY_REFID_ROAM)
                return refuse(reason, size,
                              "chronyd follows roamd's own reference clock (refid ROAM): "
                              "it would echo roamd's time");
        /* chronyd serving its own clock knows nothing beyond it */
        if (t->ref_id == CHRONY_REFID_LOCAL)
                return refuse(reason, size,
                              "chronyd serves its own clock (local stratum %u): no reference",
                              t->stratum);
        if (t->stratum == 0 || t->stratum > 15)
                return refuse(reason, size, "chronyd's stratum %u is not 1 to 15", t->stratum);
        /* outside input: every value in range before any arithmetic */
        if (!isfinite(corr) || fabs(corr) > CHRONY_MAX_CORRECTION_SEC || !isfinite(t->root_delay) ||
            !isfinite(t->root_dispersion) || t->root_delay < 0 || t->root_dispersion < 0)
                return refuse(reason, size, "its values are out of range");
        distance = t->root_delay / 2 + t->root_dispersion;
        if (distance * USEC_PER_SEC_CHRONY > (double)CHRONY_MAX_DISTANCE_USEC)
                return refuse(reason, size, "its root distance is beyond %u s",
                              (unsigned)(CHRONY_MAX_DISTANCE_USEC / 1000000));
        if (realtime_now < sent_realtime || realtime_now > CHRONY_MAX_TIME_USEC ||
            realtime_now - sent_realtime > (usec_t)CHRONY_MAX_CORRECTION_SEC * 1000000)
                return refuse(reason, size, "the clock jumped during the exchange");
        corr_usec = to_usec(corr);
        if (corr_usec < 0 && (usec_t)-corr_usec >= realtime_now)
                return refuse(reason, size, "its values are out of range");
        /* chronyd read its clock somewhere in the exchange: the reading at its end, wider by
         * the round trip (which also covers the little chronyd slewed in meanwhile, at most
         * its maxslewrate of 8.3 %). chronyd's correction is exact for its clock, whether
         * slewed in yet or not (with -x it never is): the system clock plus it is chronyd's
         * time. */
        rtt = realtime_now - sent_realtime;
        *ret = (TimeSample){
            .kind = TIME_SOURCE_CHRONY,
            .realtime = (usec_t)((int64_t)realtime_now + corr_usec),
            .error = (usec_t)to_usec(distance) + rtt,
            .taken = boottime_now,
        };
        snprintf(ret->witness, sizeof(ret->witness), "ntp");
        return 0;
}

void chrony_sources_add(ChronySources *s, const ChronySource *src)
{
        switch (src->mode) {
        case CHRONY_SOURCE_CLIENT:
        case CHRONY_SOURCE_PEER:
                s->ntp++;
                if (src->state == CHRONY_SOURCE_SELECTED || src->state == CHRONY_SOURCE_COMBINED)
                        s->ntp_used++;
                break;
        case CHRONY_SOURCE_REFCLOCK:
                /* a refclock's address is its refid; two ROAM refclocks: the one used counts */
                if (src->family == AF_INET && src->ref_id == CHRONY_REFID_ROAM &&
                    (s->roam < 0 || src->state == CHRONY_SOURCE_SELECTED ||
                     src->state == CHRONY_SOURCE_COMBINED))
                        s->roam = src->state;
                break;
        case _CHRONY_SOURCE_MODE_MAX:
        case _CHRONY_SOURCE_MODE_INVALID:
                break;
        }
}

int chrony_sources_check(const ChronySources *s, char *reason, size_t size)
{
        /* Combined, roamd's refclock weighs in chronyd's offset beside the NTP sources: the
         * tracking is in part roamd's agreed time echoed back, so it cannot confirm or
         * dispute that time. Any other state leaves it out of chronyd's time. */
        if (s->roam == CHRONY_SOURCE_SELECTED)
                return refuse(reason, size,
                              "chronyd selects roamd's own reference clock (refid ROAM): "
                              "it would echo roamd's time");
        if (s->roam == CHRONY_SOURCE_COMBINED)
                return refuse(reason, size,
                              "chronyd combines roamd's own reference clock (refid ROAM) with "
                              "its NTP sources: its time is partly roamd's, echoed back");
        return 0;
}

const char *chrony_sources_to_string(const ChronySources *s, char *buf, size_t size)
{
        if (s->ntp_used == s->ntp)
                snprintf(buf, size, "%u NTP source%s", s->ntp, s->ntp == 1 ? "" : "s");
        else
                snprintf(buf, size, "%u NTP source%s, %u used", s->ntp, s->ntp == 1 ? "" : "s",
                         s->ntp_used);
        return buf;
}
