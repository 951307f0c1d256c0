/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "roam-macro.h"

/* Text for people, shared by the CLI, plain mode and the full-screen interface: text cut to
 * fit, durations, ages, clock times, byte counts. */

/* Whether the locale's character set is UTF-8 (LC_CTYPE as set by setlocale). */
bool roam_locale_is_utf8(void);

/* How many terminal columns s takes: UTF-8 decoded when utf8 (wide characters count two),
 * one column a byte otherwise; a byte that is no valid UTF-8 counts one (it is shown as
 * '?'). */
size_t roam_text_columns(const char *s, bool utf8);

/* s in at most width columns, in a new string (*ret): s itself when it fits, else its start
 * and its end around an ellipsis ("…" when utf8, "..." otherwise), so that long IDs that
 * share a prefix (org.example.AAAA...) still differ where they differ at the end. The end
 * gets the larger half. Characters are never split. Returns 0 or -ENOMEM. */
int roam_text_cut_middle(const char *s, size_t width, bool utf8, char **ret);

/* How long ago: "3s ago", "5m ago", "2h ago", "4d ago"; "never" when usec is 0. Also returns
 * (in *ret_next, when given) the µs from now at which the text changes next. */
void roam_format_age(uint64_t usec, uint64_t now, char *buf, size_t size, uint64_t *ret_next);

/* A duration of a probe round: "120 ms", "2.5 s". */
void roam_format_duration(uint64_t usec, char *buf, size_t size);

/* Wall clock time of day "14:02:11" in the local time zone. */
void roam_format_clock(uint64_t usec, char *buf, size_t size);

/* CLOCK_REALTIME in µs; $ROAM_TEST_NOW (µs) overrides it so screenshot tests are stable. */
uint64_t roam_now(void);

/* A byte count in SI units: "512 B", "1.2 kB", "3.4 GB". */
void roam_format_bytes(uint64_t bytes, char *buf, size_t size);

/* A time (s since the epoch) to the minute in UTC, as roamd counts budgets:
 * "2026-12-06 19:55". */
void roam_format_utc_minute(uint64_t sec, char *buf, size_t size);

/* Plain mode's announcements start with the time of day: prints "14:02:11 " to stdout. */
void roam_print_stamp(void);

/* A Bluetooth service UUID in words: the profile's name for the common ones ("audio sink
 * (A2DP)" for 0000110b-0000-1000-8000-00805f9b34fb), else NULL (show the UUID). */
const char *roam_format_bt_service(const char *uuid);

/* Appends a formatted string to the NULL-terminated list *l; -ENOMEM. */
int roam_strv_extendf(char ***l, const char *fmt, ...) _printf_(2, 3);
