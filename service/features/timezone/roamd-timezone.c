/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roam-log.h"
#include "roam-macro.h"
#include "roam-util.h"
#include "roamd-client-timedated.h"
#include "roamd-nitz.h"
#include "roamd-timezone.h"

static const char *const zone_state_table[_ZONE_STATE_MAX] = {
    [ZONE_STATE_UNKNOWN] = "unknown",
    [ZONE_STATE_SETTLED] = "settled",
    [ZONE_STATE_CHOOSE] = "choose",
    [ZONE_STATE_DISPUTED] = "disputed",
};

const char *zone_state_to_string(ZoneState s)
{
        if ((int)s < 0 || s >= _ZONE_STATE_MAX)
                return NULL;
        return zone_state_table[s];
}

void zone_decision_done(ZoneDecision *d)
{
        if (!d)
                return;
        d->candidates = strv_free(d->candidates);
}

/* The zones one hint allows: a named zone, or the MCC's zones at the offset. NULL *ret: the
 * hint constrains only the offset (no country, or its MCC is unknown). 1: the hint names a
 * zone that does not exist and is left out. */
static int hint_zones(TzDb *db, const TimeZoneHint *h, usec_t now, char ***ret)
{
        _cleanup_strv_free_ char **l = NULL;
        int off, r;
        bool dst;

        *ret = NULL;
        if (*h->zone) {
                r = tzdb_zone_offset(db, h->zone, now, &off, &dst);
                if (r == -ENOENT || r == -EINVAL || r == -EBADMSG) {
                        log_info("Time zone: %s names %s, which is no zone: left out", h->witness,
                                 h->zone);
                        return 1;
                }
                if (r < 0)
                        return r;
                r = strv_extend(&l, h->zone);
                if (r < 0)
                        return r;
                *ret = TAKE_PTR(l);
                return 0;
        }
        if (!*h->mcc)
                return 0;
        r = tzdb_candidates(db, h->mcc, h->utc_offset_min, h->dst, now, &l);
        if (r == -ENOENT || r == -EINVAL) {
                log_debug("Time zone: MCC %s of %s names no country", h->mcc, h->witness);
                return 0;
        }
        if (r < 0)
                return r;
        *ret = TAKE_PTR(l);
        return 0;
}

static bool zone_fits_offset(TzDb *db, const char *zone, const TimeZoneHint *h, usec_t now)
{
        int off;
        bool dst;

        if (tzdb_zone_offset(db, zone, now, &off, &dst) < 0)
                return false;
        return off == h->utc_offset_min && (h->dst < 0 || (h->dst > 0) == dst);
}

/* Independent witnesses among the usable hints: two hints of one witness are one. */
static size_t count_witnesses(const TimeZoneHint *hints, const bool *used, size_t n)
{
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
                bool seen = !used[i];
                for (size_t j = 0; j < i && !seen; j++)
                        seen = used[j] && streq(hints[i].witness, hints[j].witness);
                if (!seen)
                        k++;
        }
        return k;
}

static int decided(ZoneDecision *d, ZoneState state, const char *reason)
{
        d->state = state;
        d->reason = reason;
        return 0;
}

int timezone_decide(TzDb *db, const TimeZoneHint *hints, size_t n, const char *current, usec_t now,
                    ZoneDecision *ret)
{
        _cleanup_strv_free_ char **common = NULL, **all = NULL;
        _cleanup_free_ bool *used = NULL;
        const TimeZoneHint *manual = NULL;
        bool any_set = false;
        int r;

        *ret = (ZoneDecision){.state = ZONE_STATE_UNKNOWN, .reason = "no-witness"};
        current = current ? current : "";

        /* the user's latest choice wins */
        for (size_t i = 0; i < n; i++)
                if (hints[i].kind == TIME_SOURCE_MANUAL &&
                    (!manual || hints[i].taken >= manual->taken))
                        manual = &hints[i];
        if (manual) {
                snprintf(ret->zone, sizeof(ret->zone), "%s", manual->zone);
                ret->change = !streq(current, manual->zone);
                return decided(ret, ZONE_STATE_SETTLED, "manual");
        }
        if (n == 0)
                return 0;
        /* without the databases nothing can be said: a missing file is not an unknown MCC */
        r = tzdb_load(db);
        if (r < 0)
                return decided(ret, ZONE_STATE_UNKNOWN, "no-zone-data");
        used = calloc(n, sizeof(bool));
        if (!used)
                return -ENOMEM;

        for (size_t i = 0; i < n; i++) {
                _cleanup_strv_free_ char **z = NULL;
                r = hint_zones(db, &hints[i], now, &z);
                if (r < 0) {
                        log_debug_errno(r, "Time zone: hint of %s unusable: %m", hints[i].witness);
                        return decided(ret, ZONE_STATE_UNKNOWN, "no-zone-data");
                }
                if (r > 0)
                        continue;
                used[i] = true;
                if (!z)
                        continue;
                STRV_FOREACH (s, z)
                        if (!strv_contains(all, *s) && (r = strv_extend(&all, *s)) < 0)
                                return r;
                if (!any_set) {
                        common = TAKE_PTR(z);
                        any_set = true;
                        continue;
                }
                /* intersect */
                _cleanup_strv_free_ char **next = calloc(1, sizeof(char *));
                if (!next)
                        return -ENOMEM;
                STRV_FOREACH (s, common)
                        if (strv_contains(z, *s) && (r = strv_extend(&next, *s)) < 0)
                                return r;
                strv_free(common);
                common = TAKE_PTR(next);
        }
        /* the offsets of witnesses that name no country constrain the rest */
        if (any_set)
                for (size_t i = 0; i < n; i++) {
                        if (!used[i] || *hints[i].zone || *hints[i].mcc)
                                continue;
                        _cleanup_strv_free_ char **next = calloc(1, sizeof(char *));
                        if (!next)
                                return -ENOMEM;
                        STRV_FOREACH (s, common)
                                if (zone_fits_offset(db, *s, &hints[i], now) &&
                                    (r = strv_extend(&next, *s)) < 0)
                                        return r;
                        strv_free(common);
                        common = TAKE_PTR(next);
                }

        if (count_witnesses(hints, used, n) == 0)
                return 0;
        if (!any_set) {
                /* offsets alone: fine if the current zone fits them, else nothing to offer */
                bool fits = *current;
                for (size_t i = 0; i < n && fits; i++)
                        fits = !used[i] || zone_fits_offset(db, current, &hints[i], now);
                if (fits) {
                        snprintf(ret->zone, sizeof(ret->zone), "%s", current);
                        return decided(ret, ZONE_STATE_SETTLED, "current-zone-fits");
                }
                return decided(ret, ZONE_STATE_CHOOSE, "no-country");
        }
        if (!common || !common[0]) {
                ret->candidates = TAKE_PTR(all);
                if (!ret->candidates && !(ret->candidates = calloc(1, sizeof(char *))))
                        return -ENOMEM;
                if (count_witnesses(hints, used, n) == 1)
                        return decided(ret, ZONE_STATE_DISPUTED, "offset-fits-no-zone");
                return decided(ret, ZONE_STATE_DISPUTED, "witnesses-disagree");
        }
        if (strv_contains(common, current)) {
                snprintf(ret->zone, sizeof(ret->zone), "%s", current);
                ret->candidates = TAKE_PTR(common);
                return decided(ret, ZONE_STATE_SETTLED, "current-zone-fits");
        }
        ret->candidates = TAKE_PTR(common);
        if (strv_length(ret->candidates) > 1)
                return decided(ret, ZONE_STATE_CHOOSE, "several-candidates");
        /* one zone: change only when two independent witnesses say so */
        if (count_witnesses(hints, used, n) < 2)
                return decided(ret, ZONE_STATE_CHOOSE, "single-witness");
        snprintf(ret->zone, sizeof(ret->zone), "%s", ret->candidates[0]);
        ret->change = true;
        return decided(ret, ZONE_STATE_SETTLED, "agreed");
}

int timezone_hint_from_lease(const char *ifname, const char *tz_name, const char *tz_posix,
                             usec_t now, usec_t taken, TimeZoneHint *ret)
{
        TimeZoneHint h = {.kind = TIME_SOURCE_DHCP, .dst = -1, .taken = taken};
        bool dst;

        snprintf(h.witness, sizeof(h.witness), "link:%s", ifname);
        if (tz_name && *tz_name && tzdb_zone_name_valid(tz_name)) {
                snprintf(h.zone, sizeof(h.zone), "%s", tz_name);
                snprintf(h.origin, sizeof(h.origin), "DHCP option 101 on %s", ifname);
        } else if (tz_posix && *tz_posix &&
                   tzdb_posix_offset(tz_posix, now, &h.utc_offset_min, &dst) >= 0 &&
                   nitz_check_offset(h.utc_offset_min, NULL) >= 0) {
                h.dst = dst ? 1 : 0;
                snprintf(h.origin, sizeof(h.origin), "DHCP option 100 on %s", ifname);
        } else
                return -ENODATA;
        *ret = h;
        return 0;
}

struct Timezone {
        TzDb *db;
        TimedatedClient *timedated;
        TimeZoneHint *hints;
        size_t n_hints;
        ZoneState state;
        const char *reason;
        char **candidates;
        char pending[64]; /* SetTimezone in flight for this zone */
        WatchList watches;
};

Timezone *timezone_free(Timezone *tz)
{
        if (!tz)
                return NULL;
        watch_list_clear(&tz->watches);
        timedated_client_free(tz->timedated);
        tzdb_free(tz->db);
        strv_free(tz->candidates);
        free(tz->hints);
        free(tz);
        return NULL;
}

static void dispatch(void *callback, void *userdata, void *ctx)
{
        ((TimezoneWatchFn)callback)(ctx, userdata);
}

static void timezone_notify(Timezone *tz)
{
        watch_list_notify(&tz->watches, dispatch, tz);
}

unsigned timezone_watch_add(Timezone *tz, TimezoneWatchFn fn, void *userdata,
                            WatchDestroyFn destroy)
{
        return watch_list_add(&tz->watches, (void *)fn, userdata, destroy);
}

void timezone_watch_remove(Timezone *tz, unsigned id)
{
        if (tz)
                (void)watch_list_remove(&tz->watches, id);
}

ZoneState timezone_state(Timezone *tz)
{
        return tz->state;
}

const char *timezone_reason(Timezone *tz)
{
        return tz->reason;
}

const char *timezone_zone(Timezone *tz)
{
        return timedated_client_zone(tz->timedated);
}

char **timezone_candidates(Timezone *tz)
{
        return tz->candidates;
}

/* The one place the state changes; logs old -> new. Takes candidates. */
static void timezone_set_state(Timezone *tz, ZoneState state, const char *reason, char **candidates)
{
        bool same = state == tz->state && streq(reason, tz->reason) &&
                    strv_equal(candidates, tz->candidates);

        strv_free(tz->candidates);
        tz->candidates = candidates;
        if (same)
                return;
        log_info("Time zone: %s (%s) -> %s (%s)", zone_state_to_string(tz->state), tz->reason,
                 zone_state_to_string(state), reason);
        tz->state = state;
        tz->reason = reason;
        timezone_notify(tz);
}

static void on_set_done(TimedatedClient *c, int error, const char *message, void *userdata)
{
        Timezone *tz = userdata;
        _cleanup_free_ char *zone = strdup(tz->pending);

        (void)c;
        tz->pending[0] = 0;
        if (error < 0) {
                log_warning_errno(error, "Time zone: timedated refused %s: %s", zone ? zone : "",
                                  message ? message : "%m");
                timezone_set_state(tz, ZONE_STATE_DISPUTED, "timedated-refused",
                                   strv_copy(tz->candidates));
                return;
        }
        log_notice("Time zone: set to %s", zone ? zone : "");
}

static void timezone_reconsider(Timezone *tz);

static void on_zone(TimedatedClient *c, const char *zone, void *userdata)
{
        Timezone *tz = userdata;

        (void)c;
        (void)zone;
        timezone_notify(tz); /* the Zone property */
        timezone_reconsider(tz);
}

static void timezone_reconsider(Timezone *tz)
{
        _cleanup_(zone_decision_done) ZoneDecision d = {};
        int r;

        r = timezone_decide(tz->db, tz->hints, tz->n_hints, timezone_zone(tz),
                            clock_now_usec(CLOCK_REALTIME), &d);
        if (r < 0) {
                log_warning_errno(r, "Time zone: cannot decide: %m");
                return;
        }
        if (d.change && tz->timedated && !streq(tz->pending, d.zone)) {
                log_info("Time zone: changing %s -> %s (%s)",
                         *timezone_zone(tz) ? timezone_zone(tz) : "(unknown)", d.zone, d.reason);
                snprintf(tz->pending, sizeof(tz->pending), "%s", d.zone);
                if (timedated_client_set_zone(tz->timedated, d.zone, on_set_done, tz) < 0) {
                        tz->pending[0] = 0;
                        timezone_set_state(tz, ZONE_STATE_DISPUTED, "timedated-unreachable",
                                           TAKE_PTR(d.candidates));
                        return;
                }
        }
        timezone_set_state(tz, d.state, d.reason, TAKE_PTR(d.candidates));
}

int timezone_new(sd_bus *bus, TzDb *db, Timezone **ret)
{
        Timezone *tz = calloc(1, sizeof(*tz));
        int r;

        if (!tz)
                return -ENOMEM;
        tz->db = db;
        tz->state = ZONE_STATE_UNKNOWN;
        tz->reason = "no-witness";
        if (bus) {
                r = timedated_client_new(bus, on_zone, tz, &tz->timedated);
                if (r < 0) {
                        timezone_free(tz);
                        return r;
                }
        }
        *ret = tz;
        return 0;
}

int timezone_add_hint(Timezone *tz, const TimeZoneHint *h)
{
        size_t i;

        if (!*h->witness)
                return -EINVAL;
        if (*h->zone && !tzdb_zone_name_valid(h->zone))
                return -EINVAL;
        for (i = 0; i < tz->n_hints; i++)
                if (streq(tz->hints[i].witness, h->witness))
                        break;
        if (i < tz->n_hints && tz->hints[i].kind == h->kind &&
            tz->hints[i].utc_offset_min == h->utc_offset_min && tz->hints[i].dst == h->dst &&
            streq(tz->hints[i].mcc, h->mcc) && streq(tz->hints[i].zone, h->zone)) {
                /* the same again (a lease on every sync): nothing to decide anew */
                tz->hints[i].taken = h->taken;
                return 0;
        }
        if (i == tz->n_hints) {
                TimeZoneHint *n = realloc(tz->hints, (tz->n_hints + 1) * sizeof(*n));
                if (!n)
                        return -ENOMEM;
                tz->hints = n;
                tz->n_hints++;
        }
        tz->hints[i] = *h;
        log_debug("Time zone: hint from %s: offset %+d min, DST %d, MCC %s, zone %s", h->witness,
                  h->utc_offset_min, h->dst, *h->mcc ? h->mcc : "-", *h->zone ? h->zone : "-");
        timezone_reconsider(tz);
        return 0;
}

int timezone_drop_witness(Timezone *tz, const char *witness)
{
        for (size_t i = 0; i < tz->n_hints; i++)
                if (streq(tz->hints[i].witness, witness)) {
                        memmove(&tz->hints[i], &tz->hints[i + 1],
                                (tz->n_hints - i - 1) * sizeof(*tz->hints));
                        tz->n_hints--;
                        timezone_reconsider(tz);
                        return 1;
                }
        return 0;
}

int timezone_set_manual(Timezone *tz, const char *zone)
{
        TimeZoneHint h = {.kind = TIME_SOURCE_MANUAL, .dst = -1, .witness = "manual"};
        int off;
        bool dst;

        if (!tzdb_zone_name_valid(zone) ||
            tzdb_zone_offset(tz->db, zone, clock_now_usec(CLOCK_REALTIME), &off, &dst) < 0)
                return -EINVAL;
        snprintf(h.zone, sizeof(h.zone), "%s", zone);
        snprintf(h.origin, sizeof(h.origin), "set by the user");
        h.taken = clock_now_usec(CLOCK_BOOTTIME);
        return timezone_add_hint(tz, &h);
}
