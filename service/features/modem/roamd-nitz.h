/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Cellular network time (NITZ, 3GPP TS 24.008 10.5.3.9) as ModemManager and oFono hand it on,
 * checked before it becomes a TimeSample or a TimeZoneHint. Pure functions: no bus, no clock.
 * Networks are often wrong (zones like "GMT+34", years in the last century, a modem that
 * answers a different time every minute), so every value is checked and every refusal names
 * its reason in one word (said in the log and on D-Bus). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "roam-macro.h"
#include "roamd-time-sample.h"

/* The NITZ time zone field counts quarter hours; real zones lie within UTC-12..UTC+14. */
#define NITZ_OFFSET_MIN_MINUTES (-12 * 60)
#define NITZ_OFFSET_MAX_MINUTES (14 * 60)

/* NITZ carries whole seconds, truncated: the true time lies in [t, t + 1 s). The network's own
 * clock is not specified by 3GPP and the answer reaches us late (ModemManager reads the
 * modem's clock, set from the last NITZ, over AT/QMI/MBIM; oFono hands on a value received
 * earlier): we take the middle of the second and allow NITZ_ERROR_USEC either side, which
 * covers the truncation, a D-Bus and modem round trip and a modem clock that has run free for
 * a while. A network that is further off is a falseticker the consensus names. */
#define NITZ_ERROR_USEC (3 * USEC_PER_SEC)

/* Two answers of one source may disagree with the elapsed CLOCK_BOOTTIME by this much. */
#define NITZ_TRACK_SLACK_USEC (3 * USEC_PER_SEC)
/* A second inconsistent jump within this window makes the source flapping ... */
#define NITZ_TRACK_WINDOW_USEC (600 * USEC_PER_SEC)
/* ... until this many answers in a row agree with the elapsed time again. */
#define NITZ_TRACK_RECOVER 3

typedef struct NitzTime {
        usec_t utc;         /* µs since the epoch; 0 when only the zone is known */
        bool has_offset;    /* utc_offset_min is known */
        int utc_offset_min; /* local time - UTC, DST included */
        int dst;            /* hours of DST (0, 1, 2); -1 unknown */
        char mcc[4];        /* oFono only: "" when unknown */
        char mnc[4];
} NitzTime;

/* Each returns 0 or -EINVAL with *reason set to one word. */
int nitz_check_offset(int offset_min, const char **reason);
int nitz_check_dst(int dst_hours, const char **reason);
/* Year 2000..2099 (NITZ sends two digits), a real calendar date and time of day. */
int nitz_check_date(int year, int month, int day, int hour, int minute, int second,
                    const char **reason);
/* Three decimal digits, not 000 (MCC) / two or three decimal digits (MNC). */
int nitz_check_mcc(const char *mcc, const char **reason);
int nitz_check_mnc(const char *mnc, const char **reason);

/* Days since 1970-01-01 of a proleptic Gregorian date (no libc, no time zone). */
int64_t nitz_days_from_civil(int year, int month, int day);

/* ModemManager's Modem.Time.GetNetworkTime / NetworkTimeChanged string: the network's local
 * date and time in ISO 8601, "YYYY-MM-DDTHH:MM:SS" with optional fraction and an optional
 * "Z", "+HH:MM", "+HHMM" or "+HH". "" means "not known" (-ENODATA). Without an offset in the
 * string, `zone_offset_min` (from NetworkTimezone, INT32_MIN when unknown) converts to UTC;
 * without either, -ENOMSG ("no-offset"): local time alone says nothing about UTC. */
int nitz_parse_mm_time(const char *s, int zone_offset_min, NitzTime *ret, const char **reason);

/* ModemManager's NetworkTimezone a{sv}: "offset" (minutes, DST included) and "dst-offset"
 * (minutes) as read from the bus; has_* say which were present. */
int nitz_parse_mm_zone(bool has_offset, int32_t offset_min, bool has_dst, int32_t dst_offset_min,
                       NitzTime *ret, const char **reason);

/* oFono's NetworkTime agent dict (NetworkTimeChanged): UTC (x, s since the epoch), Timezone
 * (i, seconds, DST included), DST (u, hours), MobileCountryCode, MobileNetworkCode (s),
 * Received (x, CLOCK_MONOTONIC seconds when it came). */
typedef struct OfonoNetworkTime {
        bool has_utc, has_timezone, has_dst, has_received;
        int64_t utc;
        int32_t timezone;
        uint32_t dst;
        int64_t received;
        const char *mcc, *mnc; /* NULL when absent */
} OfonoNetworkTime;

int nitz_parse_ofono(const OfonoNetworkTime *t, NitzTime *ret, const char **reason);

/* One source's answers in a row: do they move with CLOCK_BOOTTIME? */
typedef enum NitzTrackVerdict {
        NITZ_TRACK_OK,       /* first answer, or consistent with the last */
        NITZ_TRACK_JUMP,     /* one inconsistent jump: passed on (the network may correct) */
        NITZ_TRACK_FLAPPING, /* jumps again and again: refused until it is steady */
        _NITZ_TRACK_VERDICT_MAX,
        _NITZ_TRACK_VERDICT_INVALID = -22,
} NitzTrackVerdict;

const char *nitz_track_verdict_to_string(NitzTrackVerdict v);

typedef struct NitzTracker {
        bool have_last;
        usec_t last_utc, last_boot;
        usec_t last_jump_boot; /* CLOCK_BOOTTIME of the last inconsistent jump; 0 none */
        bool flapping;
        unsigned steady; /* consistent answers in a row while flapping */
} NitzTracker;

/* Feeds one answer (utc µs, boottime µs when taken). A boottime that goes backwards is a bug of
 * the caller's: it resets the tracker (NITZ_TRACK_OK). */
NitzTrackVerdict nitz_track_feed(NitzTracker *t, usec_t utc, usec_t boot);

/* Fill a TimeSample / TimeZoneHint from a checked NitzTime. witness and origin are copied
 * (truncated to fit). nitz_to_sample needs n->utc != 0 (-ENODATA), nitz_to_hint needs
 * has_offset (-ENODATA). */
int nitz_to_sample(const NitzTime *n, const char *witness, const char *origin, usec_t taken,
                   TimeSample *ret);
int nitz_to_hint(const NitzTime *n, const char *witness, const char *origin, usec_t taken,
                 TimeZoneHint *ret);
