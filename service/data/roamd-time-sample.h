/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What a source of time tells the time consensus (roamd-time.c): one interval, the true
 * UTC time at the moment `taken` lies within realtime ± error. Sources (HTTPS Date headers,
 * the NTP daemon, NITZ from a modem, GNSS, the saved lower bound, a manual setting) fill one
 * in and hand it over; they include nothing above this header. Samples with the same
 * `witness` are one witness: two answers through one link say one thing about that link. */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

typedef uint64_t usec_t;

typedef enum TimeSourceKind {
        TIME_SOURCE_HTTPS_DATE, /* the Date header of an HTTPS probe answer (TLS-authenticated) */
        TIME_SOURCE_NTP,        /* systemd-timesyncd's last NTP packet */
        TIME_SOURCE_NITZ,       /* cellular network time (ModemManager, oFono) */
        TIME_SOURCE_GNSS,       /* gpsd */
        TIME_SOURCE_SAVED,      /* the last known good time on disk: a lower bound only */
        TIME_SOURCE_MANUAL,     /* set by an authorized user */
        TIME_SOURCE_DHCP,       /* a lease's time zone (RFC 4833): zone hints only */
        TIME_SOURCE_CHRONY,     /* chronyd's tracking: the NTP servers it follows */
        _TIME_SOURCE_KIND_MAX,
        _TIME_SOURCE_KIND_INVALID = -EINVAL,
} TimeSourceKind;

typedef struct TimeSample {
        TimeSourceKind kind;
        char witness[64]; /* independence key: "link:wlan0", "modem:/org/.../Modem/0", "ntp" */
        char origin[128]; /* said to the user: "https://check.example/ via wlan0" */
        usec_t realtime;  /* the estimate of UTC (µs since the epoch) at `taken` */
        usec_t error;     /* half-width of the interval, µs */
        usec_t taken;     /* CLOCK_BOOTTIME when measured, so the sample can be aged */
        bool lower_bound; /* only "not earlier than realtime - error" (TIME_SOURCE_SAVED) */
} TimeSample;

/* A time zone hint (NITZ offset + the serving network's MCC, or a manual zone). */
typedef struct TimeZoneHint {
        TimeSourceKind kind;
        char witness[64];
        char origin[128];
        int utc_offset_min; /* local time - UTC, DST included, minutes */
        int dst;            /* 0, 1 or 2 hours of DST as NITZ says; -1 unknown */
        char mcc[4];        /* "262"; "" when unknown */
        char zone[64];      /* an IANA zone when the source names one (manual); "" otherwise */
        usec_t taken;       /* CLOCK_BOOTTIME */
} TimeZoneHint;
