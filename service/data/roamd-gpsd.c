/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "roam-macro.h"
#include "roam-util.h"
#include "roamd-gpsd.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(struct json_tokener *, json_tokener_free);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct json_object *, json_object_put);

int gpsd_address_parse(const char *s, struct sockaddr_storage *ret, socklen_t *ret_len)
{
        char host[INET6_ADDRSTRLEN + 1];
        const char *port;
        size_t n;
        char *end;
        unsigned long p;
        bool bracket = false;

        if (!s)
                return -EINVAL;
        if (s[0] == '[') {
                const char *close = strchr(s, ']');
                if (!close || close[1] != ':')
                        return -EINVAL;
                n = (size_t)(close - s - 1);
                bracket = true;
                s++;
                port = close + 2;
        } else {
                const char *colon = strrchr(s, ':');
                if (!colon)
                        return -EINVAL;
                n = (size_t)(colon - s);
                port = colon + 1;
        }
        if (n == 0 || n >= sizeof(host) || *port < '0' || *port > '9')
                return -EINVAL;
        memcpy(host, s, n);
        host[n] = 0;
        errno = 0;
        p = strtoul(port, &end, 10);
        if (errno || *end || p == 0 || p > 65535)
                return -EINVAL;

        memset(ret, 0, sizeof(*ret));
        struct sockaddr_in *in = (struct sockaddr_in *)ret;
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ret;
        /* IPv4 bare, IPv6 in brackets: the port is never taken for a part of the address */
        if (!bracket && inet_pton(AF_INET, host, &in->sin_addr) == 1) {
                in->sin_family = AF_INET;
                in->sin_port = htons((uint16_t)p);
                *ret_len = sizeof(*in);
                return 0;
        }
        if (bracket && inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
                in6->sin6_family = AF_INET6;
                in6->sin6_port = htons((uint16_t)p);
                *ret_len = sizeof(*in6);
                return 0;
        }
        return -EINVAL;
}

_printf_(3, 4) static int refuse(char *reason, size_t size, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(reason, size, fmt, ap);
        va_end(ap);
        return -EINVAL;
}

/* "2026-12-06T04:30:00.000Z": ISO 8601 UTC as gpsd writes it, fraction optional. */
static int parse_time(const char *s, usec_t *ret)
{
        struct tm tm = {0};
        const char *p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
        usec_t frac = 0, scale = 100000;
        time_t t;

        if (!p)
                return -EINVAL;
        if (*p == '.') {
                p++;
                if (*p < '0' || *p > '9')
                        return -EINVAL;
                for (; *p >= '0' && *p <= '9'; p++) {
                        frac += (usec_t)(*p - '0') * scale;
                        scale /= 10;
                }
        }
        if (!streq(p, "Z"))
                return -EINVAL;
        /* GPS receivers cannot say years before the GPS epoch; beyond 2200 is garbage */
        if (tm.tm_year < 1980 - 1900 || tm.tm_year > 2200 - 1900)
                return -EINVAL;
        t = timegm(&tm);
        if (t < 0)
                return -EINVAL;
        *ret = (usec_t)t * USEC_PER_SEC + frac;
        return 0;
}

int gpsd_tpv_to_sample(const char *line, size_t len, usec_t boottime_now, TimeSample *ret,
                       char *reason, size_t size)
{
        _cleanup_(json_tokener_freep) json_tokener *tok = NULL;
        _cleanup_(json_object_putp) json_object *o = NULL;
        json_object *v;
        const char *cls, *time_s;
        usec_t realtime, ept = GPSD_EPT_DEFAULT;
        int mode;

        reason[0] = 0;
        if (len == 0 || len > GPSD_LINE_MAX || memchr(line, 0, len))
                return refuse(reason, size, "not a line of JSON");
        tok = json_tokener_new();
        if (!tok)
                return -ENOMEM;
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
        o = json_tokener_parse_ex(tok, line, (int)len);
        if (!o || json_tokener_get_error(tok) != json_tokener_success ||
            json_tokener_get_parse_end(tok) != len)
                return refuse(reason, size, "not JSON");
        if (!json_object_is_type(o, json_type_object))
                return refuse(reason, size, "not a JSON object");
        if (!json_object_object_get_ex(o, "class", &v) || !json_object_is_type(v, json_type_string))
                return refuse(reason, size, "a report without its class");
        cls = json_object_get_string(v);
        if (!streq(cls, "TPV"))
                return -ENODATA; /* VERSION, DEVICES, WATCH, SKY, ...: not a time */
        if (!json_object_object_get_ex(o, "mode", &v))
                return -ENODATA;
        if (!json_object_is_type(v, json_type_int))
                return refuse(reason, size, "a TPV whose mode is not a number");
        mode = json_object_get_int(v);
        if (mode < 0 || mode > 3)
                return refuse(reason, size, "a TPV of mode %d", mode);
        if (mode < 2)
                return -ENODATA; /* no fix: its time, if any, is the receiver's own guess */
        if (!json_object_object_get_ex(o, "time", &v))
                return -ENODATA;
        if (!json_object_is_type(v, json_type_string))
                return refuse(reason, size, "a TPV whose time is not a string");
        time_s = json_object_get_string(v);
        if (parse_time(time_s, &realtime) < 0)
                return refuse(reason, size, "a TPV whose time is not ISO 8601 UTC");
        if (json_object_object_get_ex(o, "ept", &v)) {
                double d;
                if (!json_object_is_type(v, json_type_double) &&
                    !json_object_is_type(v, json_type_int))
                        return refuse(reason, size, "a TPV whose ept is not a number");
                d = json_object_get_double(v);
                if (!isfinite(d) || d < 0 || d > 3600)
                        return refuse(reason, size, "a TPV whose ept is out of range");
                ept = (usec_t)(d * USEC_PER_SEC);
        }

        *ret = (TimeSample){
            .kind = TIME_SOURCE_GNSS,
            .realtime = realtime,
            .error = ept + GPSD_LATENCY_USEC,
            .taken = boottime_now,
        };
        snprintf(ret->witness, sizeof(ret->witness), GPSD_WITNESS);
        return 0;
}
