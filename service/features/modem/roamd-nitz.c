/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "roamd-nitz.h"

static int refuse(const char **reason, const char *word, int r)
{
        if (reason)
                *reason = word;
        return r;
}

int nitz_check_offset(int offset_min, const char **reason)
{
        if (offset_min % 15 != 0)
                return refuse(reason, "offset-not-quarter-hour", -EINVAL);
        if (offset_min < NITZ_OFFSET_MIN_MINUTES || offset_min > NITZ_OFFSET_MAX_MINUTES)
                return refuse(reason, "offset-out-of-range", -EINVAL);
        return 0;
}

int nitz_check_dst(int dst_hours, const char **reason)
{
        if (dst_hours < 0 || dst_hours > 2)
                return refuse(reason, "dst-out-of-range", -EINVAL);
        return 0;
}

static bool is_leap(int y)
{
        return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int days_in_month(int y, int m)
{
        static const int d[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
        return m == 2 && is_leap(y) ? 29 : d[m - 1];
}

int nitz_check_date(int year, int month, int day, int hour, int minute, int second,
                    const char **reason)
{
        if (year < 2000 || year > 2099)
                return refuse(reason, "year-out-of-range", -EINVAL);
        if (month < 1 || month > 12 || day < 1 || day > days_in_month(year, month))
                return refuse(reason, "bad-date", -EINVAL);
        /* NITZ has no leap second field value 60: a modem that says :60 is broken */
        if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59)
                return refuse(reason, "bad-time-of-day", -EINVAL);
        return 0;
}

static bool all_digits(const char *s, size_t min, size_t max)
{
        size_t n = 0;
        for (; s[n]; n++)
                if (s[n] < '0' || s[n] > '9' || n >= max)
                        return false;
        return n >= min;
}

int nitz_check_mcc(const char *mcc, const char **reason)
{
        if (!mcc || !all_digits(mcc, 3, 3) || streq(mcc, "000"))
                return refuse(reason, "bad-mcc", -EINVAL);
        return 0;
}

int nitz_check_mnc(const char *mnc, const char **reason)
{
        if (!mnc || !all_digits(mnc, 2, 3))
                return refuse(reason, "bad-mnc", -EINVAL);
        return 0;
}

/* H. Hinnant's days_from_civil. */
int64_t nitz_days_from_civil(int year, int month, int day)
{
        int64_t y = (int64_t)year - (month <= 2);
        int64_t era = (y >= 0 ? y : y - 399) / 400;
        int64_t yoe = y - era * 400;
        int64_t doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
        int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        return era * 146097 + doe - 719468;
}

static void nitz_time_init(NitzTime *n)
{
        *n = (NitzTime){.dst = -1};
}

/* Reads exactly `digits` decimal digits. */
static bool read_num(const char **p, int digits, int *ret)
{
        int v = 0;
        for (int i = 0; i < digits; i++) {
                char c = (*p)[i];
                if (c < '0' || c > '9')
                        return false;
                v = v * 10 + (c - '0');
        }
        *p += digits;
        *ret = v;
        return true;
}

static bool expect(const char **p, char c)
{
        if (**p != c)
                return false;
        (*p)++;
        return true;
}

int nitz_parse_mm_time(const char *s, int zone_offset_min, NitzTime *ret, const char **reason)
{
        int year, month, day, hour, minute, second, off = 0;
        bool has_off = false;
        const char *p = s;
        NitzTime n;
        int r;

        if (!s)
                return refuse(reason, "garbage", -EINVAL);
        if (!*s)
                return refuse(reason, "unknown", -ENODATA);
        if (!read_num(&p, 4, &year) || !expect(&p, '-') || !read_num(&p, 2, &month) ||
            !expect(&p, '-') || !read_num(&p, 2, &day))
                return refuse(reason, "garbage", -EINVAL);
        if (*p != 'T' && *p != 't' && *p != ' ')
                return refuse(reason, "garbage", -EINVAL);
        p++;
        if (!read_num(&p, 2, &hour) || !expect(&p, ':') || !read_num(&p, 2, &minute) ||
            !expect(&p, ':') || !read_num(&p, 2, &second))
                return refuse(reason, "garbage", -EINVAL);
        /* a fraction: NITZ has none, GLib prints one when the modem's clock had it; dropped */
        if (*p == '.' || *p == ',') {
                size_t k = 0;
                for (p++; *p >= '0' && *p <= '9'; p++)
                        k++;
                if (k == 0 || k > 9)
                        return refuse(reason, "garbage", -EINVAL);
        }
        if (*p == 'Z' || *p == 'z') {
                has_off = true;
                p++;
        } else if (*p == '+' || *p == '-') {
                int sign = *p == '-' ? -1 : 1, oh, om = 0;
                p++;
                if (!read_num(&p, 2, &oh))
                        return refuse(reason, "garbage", -EINVAL);
                if (*p == ':') {
                        p++;
                        if (!read_num(&p, 2, &om))
                                return refuse(reason, "garbage", -EINVAL);
                } else if (*p >= '0' && *p <= '9') {
                        if (!read_num(&p, 2, &om))
                                return refuse(reason, "garbage", -EINVAL);
                }
                if (om > 59)
                        return refuse(reason, "garbage", -EINVAL);
                off = sign * (oh * 60 + om);
                has_off = true;
        }
        if (*p)
                return refuse(reason, "garbage", -EINVAL);

        r = nitz_check_date(year, month, day, hour, minute, second, reason);
        if (r < 0)
                return r;
        if (has_off) {
                r = nitz_check_offset(off, reason);
                if (r < 0)
                        return r;
                /* NetworkTimezone may disagree with the string: the modem contradicts itself */
                if (zone_offset_min != INT_MIN && zone_offset_min != off)
                        return refuse(reason, "offset-contradicts-zone", -EINVAL);
        } else if (zone_offset_min != INT_MIN) {
                r = nitz_check_offset(zone_offset_min, reason);
                if (r < 0)
                        return r;
                off = zone_offset_min;
        } else
                return refuse(reason, "no-offset", -ENOMSG);

        nitz_time_init(&n);
        int64_t secs = nitz_days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60 +
                       second - (int64_t)off * 60;
        /* after the local midnight of 2000-01-01 at UTC+14 the result is positive */
        n.utc = (usec_t)secs * USEC_PER_SEC;
        n.has_offset = true;
        n.utc_offset_min = off;
        *ret = n;
        return 0;
}

int nitz_parse_mm_zone(bool has_offset, int32_t offset_min, bool has_dst, int32_t dst_offset_min,
                       NitzTime *ret, const char **reason)
{
        NitzTime n;
        int r;

        nitz_time_init(&n);
        /* MM_NETWORK_TIMEZONE_OFFSET_UNKNOWN is G_MAXINT32: the same as absent */
        if (!has_offset || offset_min == INT32_MAX)
                return refuse(reason, "unknown", -ENODATA);
        r = nitz_check_offset(offset_min, reason);
        if (r < 0)
                return r;
        n.has_offset = true;
        n.utc_offset_min = offset_min;
        if (has_dst && dst_offset_min != INT32_MAX) {
                if (dst_offset_min % 60 != 0)
                        return refuse(reason, "dst-not-whole-hours", -EINVAL);
                r = nitz_check_dst(dst_offset_min / 60, reason);
                if (r < 0)
                        return r;
                n.dst = dst_offset_min / 60;
        }
        *ret = n;
        return 0;
}

int nitz_parse_ofono(const OfonoNetworkTime *t, NitzTime *ret, const char **reason)
{
        NitzTime n;
        int r;

        nitz_time_init(&n);
        if (t->has_utc) {
                /* 2000-01-01 .. 2099-12-31: what a two-digit NITZ year can say */
                if (t->utc < 946684800LL || t->utc > 4102444799LL)
                        return refuse(reason, "year-out-of-range", -EINVAL);
                n.utc = (usec_t)t->utc * USEC_PER_SEC;
        }
        if (t->has_timezone) {
                if (t->timezone % 60 != 0)
                        return refuse(reason, "offset-not-quarter-hour", -EINVAL);
                r = nitz_check_offset(t->timezone / 60, reason);
                if (r < 0)
                        return r;
                n.has_offset = true;
                n.utc_offset_min = t->timezone / 60;
        }
        if (t->has_dst) {
                if (t->dst > 2)
                        return refuse(reason, "dst-out-of-range", -EINVAL);
                n.dst = (int)t->dst;
        }
        if (t->mcc) {
                r = nitz_check_mcc(t->mcc, reason);
                if (r < 0)
                        return r;
                memcpy(n.mcc, t->mcc, 4);
        }
        if (t->mnc) {
                r = nitz_check_mnc(t->mnc, reason);
                if (r < 0)
                        return r;
                memcpy(n.mnc, t->mnc, strlen(t->mnc) + 1);
        }
        if (!t->has_utc && !t->has_timezone)
                return refuse(reason, "unknown", -ENODATA);
        *ret = n;
        return 0;
}

static const char *const nitz_track_verdict_table[_NITZ_TRACK_VERDICT_MAX] = {
    [NITZ_TRACK_OK] = "ok",
    [NITZ_TRACK_JUMP] = "jump",
    [NITZ_TRACK_FLAPPING] = "flapping",
};

const char *nitz_track_verdict_to_string(NitzTrackVerdict v)
{
        if ((int)v < 0 || v >= _NITZ_TRACK_VERDICT_MAX)
                return NULL;
        return nitz_track_verdict_table[v];
}

NitzTrackVerdict nitz_track_feed(NitzTracker *t, usec_t utc, usec_t boot)
{
        bool consistent;

        if (!t->have_last || boot < t->last_boot) {
                *t = (NitzTracker){.have_last = true, .last_utc = utc, .last_boot = boot};
                return NITZ_TRACK_OK;
        }
        /* the network's clock must have moved as far as ours, within the slack */
        int64_t moved = (int64_t)(utc - t->last_utc);
        int64_t elapsed = (int64_t)(boot - t->last_boot);
        int64_t diff = moved - elapsed;
        consistent =
            diff >= -(int64_t)NITZ_TRACK_SLACK_USEC && diff <= (int64_t)NITZ_TRACK_SLACK_USEC;
        t->last_utc = utc;
        t->last_boot = boot;

        if (consistent) {
                if (!t->flapping)
                        return NITZ_TRACK_OK;
                if (++t->steady >= NITZ_TRACK_RECOVER) {
                        t->flapping = false;
                        t->steady = 0;
                        t->last_jump_boot = 0;
                        return NITZ_TRACK_OK;
                }
                return NITZ_TRACK_FLAPPING;
        }

        t->steady = 0;
        if (t->flapping ||
            (t->last_jump_boot != 0 && boot - t->last_jump_boot <= NITZ_TRACK_WINDOW_USEC)) {
                t->flapping = true;
                t->last_jump_boot = boot;
                return NITZ_TRACK_FLAPPING;
        }
        t->last_jump_boot = boot ? boot : 1;
        return NITZ_TRACK_JUMP;
}

static void copy_str(char *dst, size_t size, const char *src)
{
        snprintf(dst, size, "%s", src ? src : "");
}

int nitz_to_sample(const NitzTime *n, const char *witness, const char *origin, usec_t taken,
                   TimeSample *ret)
{
        if (n->utc == 0)
                return -ENODATA;
        *ret = (TimeSample){
            .kind = TIME_SOURCE_NITZ,
            .realtime = n->utc + USEC_PER_SEC / 2, /* seconds are truncated */
            .error = NITZ_ERROR_USEC,
            .taken = taken,
        };
        copy_str(ret->witness, sizeof(ret->witness), witness);
        copy_str(ret->origin, sizeof(ret->origin), origin);
        return 0;
}

int nitz_to_hint(const NitzTime *n, const char *witness, const char *origin, usec_t taken,
                 TimeZoneHint *ret)
{
        if (!n->has_offset)
                return -ENODATA;
        *ret = (TimeZoneHint){
            .kind = TIME_SOURCE_NITZ,
            .utc_offset_min = n->utc_offset_min,
            .dst = n->dst,
            .taken = taken,
        };
        copy_str(ret->witness, sizeof(ret->witness), witness);
        copy_str(ret->origin, sizeof(ret->origin), origin);
        copy_str(ret->mcc, sizeof(ret->mcc), n->mcc);
        return 0;
}
